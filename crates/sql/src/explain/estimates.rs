//! The estimates EXPLAIN's upper nodes take from the scans below them: a
//! column of a node's row traced back to the table it was read from
//! (`Col::Var`), whose statistics give the distinct values a grouping
//! finds and an equijoin's selectivity (plan/selectivity.rs), as
//! PostgreSQL's estimate_num_groups and eqjoinsel do.

use std::collections::HashMap;

use super::deparse::Col;
use crate::plan::selectivity::{clamp_rows, TableInfo, DEFAULT_NUM_DISTINCT};

/// A table as one scan read it: what is known of the table, and the rows
/// the scan is estimated to return.
pub(super) struct Scanned {
    pub info: TableInfo,
    pub rows: f64,
}

/// The scans of the statement by the name its columns carry.
pub(super) type Tables = HashMap<String, Scanned>;

/// The scan and column number `col` was read from, if it is a table's.
fn traced<'t>(tables: &'t Tables, col: &Col) -> Option<(&'t str, &'t Scanned, usize)> {
    let Col::Var { rel, name } = col else { return None };
    let (key, s) = tables.get_key_value(rel)?;
    let i = s.info.rel.entry.column(name)?;
    Some((key.as_str(), s, i))
}

/// The distinct values of column `i` among the rows the scan returns: the
/// table's, reduced as a random selection of its rows would reduce them.
fn distinct_in(s: &Scanned, i: usize) -> f64 {
    let (mut nd, _) = s.info.n_distinct(i);
    let (tuples, rows) = (s.info.rows, s.rows);
    if nd > 0.0 && rows < tuples && tuples > 0.0 {
        nd *= 1.0 - ((tuples - rows) / tuples).powf(tuples / nd);
    }
    clamp_rows(nd)
}

/// The groups of `input_rows` rows grouped by `keys` (each traced to its
/// column, `None` where it is not one): per table the product of its
/// columns' distinct values, at most the rows its scan returns; over
/// tables the product; at most the input. `None`: nothing is known.
pub(super) fn groups(tables: &Tables, keys: &[Option<&Col>], input_rows: f64) -> Option<f64> {
    let mut per_table: Vec<(&str, f64, f64)> = Vec::new();
    let mut total = 1.0;
    let mut known = false;
    for k in keys {
        match k.and_then(|c| traced(tables, c)) {
            Some((name, s, i)) => {
                known = true;
                let nd = distinct_in(s, i);
                match per_table.iter_mut().find(|t| t.0 == name) {
                    Some(t) => t.1 *= nd,
                    None => per_table.push((name, nd, s.rows)),
                }
            }
            None => total *= DEFAULT_NUM_DISTINCT,
        }
    }
    if !known {
        return None;
    }
    for (_, nd, rows) in per_table {
        total *= nd.min(clamp_rows(rows));
    }
    Some(clamp_rows(total.min(input_rows)))
}

/// The selectivity of equalities between `pairs` of columns (each side
/// traced, `None` where it is not a table's column): per pair the
/// fraction of non-NULL pairs over the larger distinct count. `None`:
/// no pair is known.
pub(super) fn join_selectivity(tables: &Tables, pairs: &[(Option<&Col>, Option<&Col>)]) -> Option<f64> {
    let mut sel = 1.0;
    let mut known = false;
    for (a, b) in pairs {
        let a = a.and_then(|c| traced(tables, c));
        let b = b.and_then(|c| traced(tables, c));
        let side = |t: Option<(&str, &Scanned, usize)>| match t {
            Some((_, s, i)) => {
                let col = s.info.col(i);
                (col.n_distinct().0.min(clamp_rows(s.rows)), col.null_frac(), col.stats.is_some())
            }
            None => (DEFAULT_NUM_DISTINCT, 0.0, false),
        };
        let (nd1, nf1, k1) = side(a);
        let (nd2, nf2, k2) = side(b);
        known |= k1 || k2;
        sel *= (1.0 - nf1) * (1.0 - nf2) / nd1.max(nd2);
    }
    known.then_some(sel)
}

/// The fraction of the inner side's rows one hash bucket holds, from the
/// first key (PostgreSQL's estimate_hash_bucketsize): one over its
/// distinct values, or over the buckets if there are fewer, scaled up by
/// its most common value's excess frequency. `None`: not a table's
/// column with statistics.
pub(super) fn bucket_fraction(tables: &Tables, key: Option<&Col>, inner_rows: f64) -> Option<f64> {
    let (_, s, i) = traced(tables, key?)?;
    let col = s.info.col(i);
    let stats = col.stats?;
    let buckets = (inner_rows.max(1.0) as u64).next_power_of_two().max(1024) as f64;
    let nd = distinct_in(s, i);
    let mut fraction = if nd > buckets { 1.0 / buckets } else { 1.0 / nd };
    let avg = (1.0 - f64::from(stats.null_frac)) / nd;
    if let Some(&top) = stats.mcf.first() {
        if avg > 0.0 && f64::from(top) > avg {
            fraction *= f64::from(top) / avg;
        }
    }
    Some(fraction.clamp(1.0e-6, 1.0))
}
