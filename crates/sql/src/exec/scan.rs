//! Finding a relation's rows: by a sequential scan of every version, or by
//! an index's equality or range lookup, and then the filter on each row.

use std::ops::Bound;

use snapscale_engine::catalog::Row;
use snapscale_engine::Tid;
use snapscale_values::{SqlError, Value};

use super::query::Run;
use crate::expr::{passes, Expr};
use crate::plan::physical::{Access, IndexArm, ScanNode};
use snapscale_engine::index::Index;

impl Run<'_, '_> {
    /// Rows of `scan` visible to the statement snapshot that pass its
    /// filter, with their tids.
    pub(super) fn scan(&self, scan: &ScanNode) -> Result<Vec<(Tid, Row)>, SqlError> {
        self.scan_upto(scan, usize::MAX)
    }

    /// The first `want` rows of `scan` that pass its filter: the filter is
    /// not evaluated past them (a Limit above needs no more, and the
    /// filter may do something: `WHERE pg_try_advisory_lock(id) LIMIT 1`
    /// takes one lock, as in PostgreSQL, where the scan stops when the
    /// Limit does).
    pub(super) fn scan_upto(&self, scan: &ScanNode, want: usize) -> Result<Vec<(Tid, Row)>, SqlError> {
        let snapshot = self.ex.snapshot()?;
        let table = &scan.rel;
        let reader = self.ex.xact.session.reader(snapshot);
        let tids = match &scan.access {
            Access::Seq => None,
            Access::CurrentOf(_) => {
                let found = self.ex.current_of.and_then(|t| table.visible_along(&reader, t));
                return self.filtered(scan, found.into_iter().collect(), want);
            }
            Access::IndexEq { index, probes } => {
                let cx = self.ctx(&[]);
                let mut key = Vec::with_capacity(probes.len());
                for (i, p) in probes.iter().enumerate() {
                    let v = p.eval(&cx)?;
                    if matches!(v, Value::Null) {
                        return Ok(Vec::new());
                    }
                    key.push(index.normalize_probe(i, v));
                }
                if index.unique && key.len() == index.columns.len() {
                    // UNIQUE-ONE-VISIBLE: a snapshot sees at most one
                    // version under a whole key of a unique index (the
                    // versions of one row follow each other in time, and
                    // two rows never hold the key at once), so the search
                    // stops at it. Newest first, as the index gives a
                    // unique key's entries: a recent snapshot sees the
                    // newest, where the walk of a hot row's versions in tid
                    // order cost one visibility test each.
                    let visible = index.find_in_key(&key, |t| {
                        // A tid reused under another key (INDEX-VERSIONS)
                        // holds a row this snapshot cannot see; the key
                        // check makes that not matter.
                        table.fetch(&reader, t).filter(|row| index.row_has_key(row, &key)).map(|row| (t, row))
                    });
                    return self.filtered(scan, visible.into_iter().collect(), want);
                }
                Some(index.lookup_prefix(&key))
            }
            Access::IndexRange { index, lower, upper } => {
                let cx = self.ctx(&[]);
                let bound = |b: &Bound<Expr>| -> Result<Option<Bound<Value>>, SqlError> {
                    Ok(Some(match b {
                        Bound::Unbounded => Bound::Unbounded,
                        Bound::Included(e) | Bound::Excluded(e) => {
                            let v = e.eval(&cx)?;
                            if matches!(v, Value::Null) {
                                return Ok(None);
                            }
                            let v = index.normalize_probe(0, v);
                            if matches!(b, Bound::Included(_)) {
                                Bound::Included(v)
                            } else {
                                Bound::Excluded(v)
                            }
                        }
                    }))
                };
                let (Some(lo), Some(hi)) = (bound(lower)?, bound(upper)?) else { return Ok(Vec::new()) };
                Some(index.lookup_range(lo, hi))
            }
            Access::IndexAny { index, arms } => Some(self.index_arms(index, arms)?),
        };
        let found: Vec<(Tid, Row)> = match tids {
            None => table.scan(&reader),
            Some(mut tids) => {
                tids.sort_unstable();
                tids.dedup();
                let fetched = tids.into_iter().filter_map(|t| table.fetch(&reader, t).map(|r| (t, r)));
                if want == usize::MAX {
                    fetched.collect()
                } else {
                    // A few rows wanted (a Limit, an EXISTS): versions are
                    // fetched only until that many pass.
                    return self.first_passing(scan, fetched, want);
                }
            }
        };
        self.filtered(scan, found, want)
    }

    /// The tids the lookups of an [`Access::IndexAny`] find, duplicates
    /// included (the caller sorts them and drops those).
    fn index_arms(&self, index: &Index, arms: &[IndexArm]) -> Result<Vec<Tid>, SqlError> {
        let cx = self.ctx(&[]);
        let mut tids = Vec::new();
        let probe = |v: Value, tids: &mut Vec<Tid>| {
            // Equality with NULL holds for no row.
            if !matches!(v, Value::Null) {
                tids.extend(index.lookup_prefix(&[index.normalize_probe(0, v)]));
            }
        };
        for arm in arms {
            match arm {
                IndexArm::Eq(e) => probe(e.eval(&cx)?, &mut tids),
                IndexArm::EachOf(e) => {
                    // A NULL array finds nothing.
                    if let Value::Array(a) = e.eval(&cx)? {
                        for v in a.items() {
                            probe(v.clone(), &mut tids);
                        }
                    }
                }
                IndexArm::Range { lower, upper } => {
                    let bound = |b: &Bound<Expr>| -> Result<Option<Bound<Value>>, SqlError> {
                        Ok(Some(match b {
                            Bound::Unbounded => Bound::Unbounded,
                            Bound::Included(e) | Bound::Excluded(e) => match e.eval(&cx)? {
                                Value::Null => return Ok(None),
                                v if matches!(b, Bound::Included(_)) => {
                                    Bound::Included(index.normalize_probe(0, v))
                                }
                                v => Bound::Excluded(index.normalize_probe(0, v)),
                            },
                        }))
                    };
                    if let (Some(lo), Some(hi)) = (bound(lower)?, bound(upper)?) {
                        tids.extend(index.lookup_range(lo, hi));
                    }
                }
            }
        }
        Ok(tids)
    }

    /// The first `want` rows of `found` that pass `scan`'s filter, taken
    /// from it one by one.
    fn first_passing(
        &self,
        scan: &ScanNode,
        found: impl Iterator<Item = (Tid, Row)>,
        want: usize,
    ) -> Result<Vec<(Tid, Row)>, SqlError> {
        let mut out = Vec::new();
        for (tid, row) in found {
            if out.len() >= want {
                break;
            }
            if scan.filter.as_ref().map_or(Ok(true), |f| passes(f, &self.ctx(&row)))? {
                out.push((tid, row));
            }
        }
        Ok(out)
    }

    /// The first `want` of `found` that pass `scan`'s filter.
    fn filtered(
        &self,
        scan: &ScanNode,
        mut found: Vec<(Tid, Row)>,
        want: usize,
    ) -> Result<Vec<(Tid, Row)>, SqlError> {
        let Some(filter) = &scan.filter else {
            found.truncate(want);
            return Ok(found);
        };
        // Index paths re-check the whole filter: a tid may have been reused
        // for another row (INDEX-VERSIONS). In place; the first error ends
        // the scan, and so does the `want`th row that passes.
        let mut error = None;
        let mut passed = 0;
        found.retain(|(_, row)| {
            let keep = passed < want
                && error.is_none()
                && passes(filter, &self.ctx(row)).unwrap_or_else(|e| {
                    error = Some(e);
                    false
                });
            passed += usize::from(keep);
            keep
        });
        match error {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }
}
