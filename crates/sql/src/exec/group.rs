//! GROUP BY and aggregates: rows grouped by their keys, each group's
//! aggregates computed.
//!
//! Groups come out in key order (the order of an index key: NULLs last),
//! as the planner and the tests expect of them. Keys that are columns of
//! the input row (GROUP BY c, and DISTINCT, which groups by its columns)
//! are compared where they are: building each row's key copied its values,
//! an allocation per row for text. Other keys are evaluated per row into
//! an ordered map.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use snapscale_engine::catalog::Row;
use snapscale_engine::index::Key;
use snapscale_values::{SqlError, Value};

use super::agg::Acc;
use super::query::{sort_by_keys, Run};
use crate::expr::{passes, Ctx, Expr};
use crate::plan::Aggregate;

/// The column each key reads, if every key is a column alone.
fn columns(keys: &[Expr]) -> Option<Vec<usize>> {
    keys.iter().map(|e| if let Expr::Column(i) = e { Some(*i) } else { None }).collect()
}

/// How two rows' keys (columns `cols`) order, as their [`Key`]s would.
fn key_order(cols: &[usize], a: &Row, b: &Row) -> Ordering {
    for &c in cols {
        let o = match (&a[c], &b[c]) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            (x, y) => x.compare(y).unwrap_or_else(|| Key(vec![x.clone()]).cmp(&Key(vec![y.clone()]))),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

impl Run<'_, '_> {
    /// Groups `rows` by `keys` and computes each group's aggregates: one row
    /// per group, its key values then its aggregates, if it passes `having`.
    pub(super) fn aggregate<'r>(
        &self,
        rows: impl Iterator<Item = &'r Row>,
        keys: &[Expr],
        aggs: &[Aggregate],
        having: Option<&Expr>,
    ) -> Result<Vec<Row>, SqlError> {
        // User-defined aggregates with the same arguments and transition
        // share one state, each finishing it (PostgreSQL's shared
        // transition states): `leader[i]` is the aggregate that computes
        // aggregate i's state.
        let leader: Vec<usize> = (0..aggs.len())
            .map(|i| (0..i).find(|&j| super::user_agg::shares_state(&aggs[j], &aggs[i])).unwrap_or(i))
            .collect();
        let fresh = || aggs.iter().map(|_| Acc::default()).collect::<Vec<Acc>>();
        let groups: Vec<(Key, Vec<Acc>)> = match columns(keys) {
            // No keys: one group, whatever the rows.
            Some(cols) if cols.is_empty() => {
                let mut accs = fresh();
                for row in rows {
                    self.feed(&self.ctx(row), aggs, &leader, &mut accs)?;
                }
                vec![(Key(Vec::new()), accs)]
            }
            // Keys that are columns: the rows' positions sorted by them
            // (stably), each run of equal keys a group whose key is read
            // in place and copied once; then the rows are fed in their
            // order, as the map fed them (a volatile argument's calls
            // follow the input).
            Some(cols) => {
                let rows: Vec<&Row> = rows.collect();
                let mut order: Vec<usize> = (0..rows.len()).collect();
                order.sort_by(|&a, &b| key_order(&cols, rows[a], rows[b]));
                let mut groups: Vec<(Key, Vec<Acc>)> = Vec::new();
                let mut group_of = vec![0; rows.len()];
                let mut first: Option<&Row> = None;
                for i in order {
                    let row = rows[i];
                    if first.is_none_or(|f| key_order(&cols, f, row) != Ordering::Equal) {
                        groups.push((Key(cols.iter().map(|&c| row[c].clone()).collect()), fresh()));
                        first = Some(row);
                    }
                    group_of[i] = groups.len() - 1;
                }
                for (row, g) in rows.into_iter().zip(group_of) {
                    self.feed(&self.ctx(row), aggs, &leader, &mut groups[g].1)?;
                }
                groups
            }
            None => {
                let mut groups: BTreeMap<Key, Vec<Acc>> = BTreeMap::new();
                for row in rows {
                    let cx = self.ctx(row);
                    let key = Key(keys.iter().map(|k| k.eval(&cx)).collect::<Result<_, _>>()?);
                    let accs = groups.entry(key).or_insert_with(fresh);
                    self.feed(&cx, aggs, &leader, accs)?;
                }
                groups.into_iter().collect()
            }
        };
        let mut out = Vec::with_capacity(groups.len());
        for (key, accs) in groups {
            let mut values = key.0;
            let mut states: Vec<Option<super::user_agg::UserState>> = vec![None; aggs.len()];
            for (k, (mut acc, agg)) in accs.into_iter().zip(aggs).enumerate() {
                if let Some(u) = &agg.user {
                    if leader[k] != k {
                        let state = states[leader[k]].as_ref().expect("the leader comes first");
                        values.push(self.user_finish(u, state)?);
                        continue;
                    }
                    let mut state = match acc.user.take() {
                        Some(s) => *s,
                        None => self.user_start(u)?,
                    };
                    // ORDER BY (and DISTINCT, sorted by its arguments too):
                    // the rows in order, stably; DISTINCT feeds each
                    // argument list once.
                    let mut rows = std::mem::take(&mut acc.user_rows);
                    sort_by_keys(&mut rows, &agg.order, |(keys, _)| keys)?;
                    let mut last: Option<Vec<Value>> = None;
                    for (_, args) in rows {
                        if u.distinct {
                            if last.as_deref().is_some_and(|l| super::user_agg::same_arguments(l, &args)) {
                                continue;
                            }
                            last = Some(args.clone());
                        }
                        self.user_step(u, &mut state, args)?;
                    }
                    values.push(self.user_finish(u, &state)?);
                    states[k] = Some(state);
                    continue;
                }
                // `agg(x ORDER BY …)`: the group's rows, sorted (stably:
                // equal keys keep their input order), then fed.
                let mut deferred = acc.take_deferred();
                sort_by_keys(&mut deferred, &agg.order, |(keys, _, _)| keys)?;
                let mut last: Option<(Value, Option<Value>)> = None;
                for (_, v, delimiter) in deferred {
                    if agg.distinct {
                        // Equal arguments are adjacent (their keys lead
                        // the sort): the first of each run is fed.
                        let same = last.as_ref().is_some_and(|(lv, ld)| {
                            super::user_agg::same_arguments(
                                std::slice::from_ref(lv),
                                std::slice::from_ref(&v),
                            ) && super::user_agg::same_arguments(ld.as_slice(), delimiter.as_slice())
                        });
                        if same {
                            continue;
                        }
                        last = Some((v.clone(), delimiter.clone()));
                    }
                    acc.add(agg.func, v, delimiter)?;
                }
                values.push(acc.finish(agg.func, agg.ty)?);
            }
            let row = Row::from(values);
            if let Some(h) = having {
                if !passes(h, &self.ctx(&row))? {
                    continue;
                }
            }
            out.push(row);
        }
        Ok(out)
    }

    /// Adds one row (its context `cx`) to its group's aggregates `accs`.
    fn feed(
        &self,
        cx: &Ctx<'_>,
        aggs: &[Aggregate],
        leader: &[usize],
        accs: &mut [Acc],
    ) -> Result<(), SqlError> {
        for (k, (acc, agg)) in accs.iter_mut().zip(aggs).enumerate() {
            if leader[k] != k {
                continue;
            }
            if let Some(f) = &agg.filter {
                if !passes(f, cx)? {
                    continue;
                }
            }
            if let Some(u) = &agg.user {
                let args = u.args.iter().map(|e| e.eval(cx)).collect::<Result<Vec<_>, _>>()?;
                if agg.order.is_empty() {
                    if acc.user.is_none() {
                        acc.user = Some(Box::new(self.user_start(u)?));
                    }
                    self.user_step(u, acc.user.as_mut().expect("just set"), args)?;
                } else {
                    let keys = agg.order.iter().map(|k| k.expr.eval(cx)).collect::<Result<Vec<_>, _>>()?;
                    acc.user_rows.push((keys, args));
                }
                continue;
            }
            let v = match &agg.arg {
                Some(e) => e.operand(cx)?,
                None => std::borrow::Cow::Owned(Value::Bool(true)),
            };
            if agg.order.is_empty() && agg.delimiter.is_none() && acc.add_counted(agg.func, &v)? {
                continue;
            }
            let v = v.into_owned();
            let delimiter = agg.delimiter.as_ref().map(|d| d.eval(cx)).transpose()?;
            if agg.order.is_empty() {
                acc.add(agg.func, v, delimiter)?;
            } else {
                let sort_keys = agg.order.iter().map(|k| k.expr.eval(cx)).collect::<Result<Vec<_>, _>>()?;
                acc.defer(sort_keys, v, delimiter);
            }
        }
        Ok(())
    }
}
