//! Joins: nested loop, hash join and index join, each for inner, left,
//! right and full joins (the index join for inner and left), and for semi
//! and anti joins, whose rows are the left rows with (without) a partner.
//!
//! A joined row is the left row then the right row. A row of the preserved
//! side without a partner is completed with NULLs.

use std::collections::BTreeMap;
use std::sync::Arc;

use snapscale_engine::catalog::Row;
use snapscale_engine::index::{Index, Key};
use snapscale_values::{SqlError, Value};

use super::query::{with_tid, Run};
use crate::expr::{passes, Expr};
use crate::plan::physical::{JoinNode, Node, ScanNode};
use crate::plan::JoinKind;

/// `left` then `right` as one row.
fn joined(left: &[Value], right: &[Value]) -> Row {
    let mut values = Vec::with_capacity(left.len() + right.len());
    values.extend_from_slice(left);
    values.extend_from_slice(right);
    Row::from(values)
}

fn nulls(n: usize) -> Vec<Value> {
    vec![Value::Null; n]
}

/// What a left row gives once its partners are found (`matched`: it has
/// one): a left or full join's row without a partner completed with
/// NULLs; a semi join's row with one, and an anti join's without, alone.
fn finish_left(kind: JoinKind, left: &Row, matched: bool, right_width: usize, out: &mut Vec<Row>) {
    match kind {
        JoinKind::Left | JoinKind::Full if !matched => out.push(joined(left, &nulls(right_width))),
        JoinKind::Semi if matched => out.push(left.clone()),
        JoinKind::Anti if !matched => out.push(left.clone()),
        _ => {}
    }
}

impl Run<'_, '_> {
    fn holds(&self, cond: Option<&Expr>, row: &[Value]) -> Result<bool, SqlError> {
        match cond {
            None => Ok(true),
            Some(c) => passes(c, &self.ctx(row)),
        }
    }

    /// Every left row against every right row.
    pub(super) fn nest_loop(&self, j: &JoinNode) -> Result<Vec<Row>, SqlError> {
        let left = self.rows(&j.left)?.into_rows();
        let right = self.rows(&j.right)?.into_rows();
        let mut right_matched = vec![false; right.len()];
        let mut out = Vec::new();
        for l in &left {
            self.ex.xact.check_cancel()?;
            let mut matched = false;
            for (r, seen) in right.iter().zip(right_matched.iter_mut()) {
                let row = joined(l, r);
                if self.holds(j.cond.as_ref(), &row)? {
                    matched = true;
                    if j.kind.left_only() {
                        break;
                    }
                    *seen = true;
                    out.push(row);
                }
            }
            finish_left(j.kind, l, matched, j.right_width, &mut out);
        }
        self.unmatched_right(j, &right, &right_matched, &mut out);
        Ok(out)
    }

    /// LATERAL: the right side run again for each left row, with `args`
    /// over that row as its outer values (an inner or left join).
    pub(super) fn lateral(&self, j: &JoinNode, args: &[Expr]) -> Result<Vec<Row>, SqlError> {
        let left = self.rows(&j.left)?.into_rows();
        let mut out = Vec::new();
        for l in &left {
            self.ex.xact.check_cancel()?;
            let cx = self.ctx(l);
            let outer = args.iter().map(|a| a.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
            let inner = super::query::Run { ex: self.ex, outer: &outer, stack: self.stack };
            let mut matched = false;
            for r in inner.rows(&j.right)?.into_rows() {
                let row = joined(l, &r);
                if self.holds(j.cond.as_ref(), &row)? {
                    matched = true;
                    out.push(row);
                }
            }
            if !matched && j.kind == JoinKind::Left {
                out.push(joined(l, &nulls(j.right_width)));
            }
        }
        Ok(out)
    }

    /// Right and full joins: each right row without a partner, with NULLs
    /// on the left.
    fn unmatched_right(&self, j: &JoinNode, right: &[Row], matched: &[bool], out: &mut Vec<Row>) {
        if matches!(j.kind, JoinKind::Right | JoinKind::Full) {
            for (r, seen) in right.iter().zip(matched) {
                if !seen {
                    out.push(joined(&nulls(j.left_width), r));
                }
            }
        }
    }

    /// The right rows in a table by their keys (a row with a NULL key
    /// matches nothing), probed with each left row's keys.
    pub(super) fn hash_join(
        &self,
        j: &JoinNode,
        left_keys: &[Expr],
        right_keys: &[Expr],
    ) -> Result<Vec<Row>, SqlError> {
        let right = self.rows(&j.right)?.into_rows();
        let mut table: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
        for (i, r) in right.iter().enumerate() {
            if let Some(key) = self.key(right_keys, r)? {
                table.entry(key).or_default().push(i);
            }
        }
        let left = self.rows(&j.left)?.into_rows();
        let mut right_matched = vec![false; right.len()];
        let mut out = Vec::new();
        for l in &left {
            self.ex.xact.check_cancel()?;
            let mut matched = false;
            if let Some(key) = self.key(left_keys, l)? {
                for &i in table.get(&key).map(Vec::as_slice).unwrap_or_default() {
                    let row = joined(l, &right[i]);
                    if self.holds(j.cond.as_ref(), &row)? {
                        matched = true;
                        if j.kind.left_only() {
                            break;
                        }
                        right_matched[i] = true;
                        out.push(row);
                    }
                }
            }
            finish_left(j.kind, l, matched, j.right_width, &mut out);
        }
        self.unmatched_right(j, &right, &right_matched, &mut out);
        Ok(out)
    }

    /// A row's join key, `None` if a part is NULL.
    fn key(&self, exprs: &[Expr], row: &[Value]) -> Result<Option<Key>, SqlError> {
        let cx = self.ctx(row);
        let mut key = Vec::with_capacity(exprs.len());
        for e in exprs {
            match e.eval(&cx)? {
                Value::Null => return Ok(None),
                v => key.push(v),
            }
        }
        Ok(Some(Key(key)))
    }

    /// For each left row, the right table's versions the index finds for
    /// `probes` (evaluated over the left row), visible and passing the
    /// table's own filter, then `cond` over the joined row.
    pub(super) fn index_join(
        &self,
        left: &Node,
        right: &ScanNode,
        index: &Arc<Index>,
        probes: &[Expr],
        kind: JoinKind,
        cond: Option<&Expr>,
    ) -> Result<Vec<Row>, SqlError> {
        let left_rows = self.rows(left)?.into_rows();
        let snapshot = self.ex.snapshot()?;
        let reader = self.ex.xact.session.reader(snapshot);
        let table = &right.rel;
        let right_width = right.rel.entry.columns.len() + 1 + usize::from(right.with_tid);
        let mut out = Vec::new();
        for l in &left_rows {
            self.ex.xact.check_cancel()?;
            let mut matched = false;
            if let Some(key) = self.key(probes, l)? {
                let key: Vec<Value> =
                    key.0.into_iter().enumerate().map(|(i, v)| index.normalize_probe(i, v)).collect();
                let mut tids = index.lookup_prefix(&key);
                tids.sort_unstable();
                tids.dedup();
                for tid in tids {
                    let Some(r) = table.fetch(&reader, tid) else { continue };
                    if !self.holds(right.filter.as_ref(), &r)? {
                        continue;
                    }
                    let r = if right.with_tid { with_tid(&r, tid) } else { r };
                    let row = joined(l, &r);
                    if self.holds(cond, &row)? {
                        matched = true;
                        if kind.left_only() {
                            break;
                        }
                        out.push(row);
                    }
                }
            }
            finish_left(kind, l, matched, right_width, &mut out);
        }
        Ok(out)
    }
}
