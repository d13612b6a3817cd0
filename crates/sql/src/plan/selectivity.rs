//! Selectivity estimates from ANALYZE's statistics, as PostgreSQL's
//! planner makes them (its selfuncs): the fraction of a table's rows a
//! condition keeps, and the distinct values of a column.
//!
//! * `col = const`: the constant's frequency if it is a common value,
//!   else the rest's share spread evenly over the other distinct values
//!   (never more than the least common value's); no statistics: one over
//!   the default 200 distinct values;
//! * `col < const` (and `<=`, `>`, `>=`): the common values that pass,
//!   plus the histogram's fraction below the constant (interpolated in
//!   its bucket for numbers) times the rest's share; a histogram-less
//!   column: half the rest; no statistics: a third;
//! * a lower and an upper bound on one column: their sum less one;
//! * IS [NOT] NULL: the NULL fraction; IN lists: the sum of their
//!   equalities; AND: the product, OR: `a + b - ab`, NOT: `1 - s`;
//! * anything else: PostgreSQL's defaults.

use std::cmp::Ordering;
use std::sync::Arc;

use snapscale_engine::stats::{ColumnStats, RelStats};
use snapscale_values::Value;

use crate::expr::{Cmp, Expr};
use crate::plan::Rel;

/// PostgreSQL's default selectivities and distinct count.
pub(crate) const DEFAULT_EQ_SEL: f64 = 0.005;
pub(crate) const DEFAULT_INEQ_SEL: f64 = 0.3333333333333333;
pub(crate) const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
pub(crate) const DEFAULT_UNK_SEL: f64 = 0.005;
pub(crate) const DEFAULT_NUM_DISTINCT: f64 = 200.0;

/// What the estimates know of one scanned table: its estimated rows and
/// its last ANALYZE's statistics (if any).
#[derive(Clone)]
pub(crate) struct TableInfo {
    pub rel: Rel,
    pub rows: f64,
    pub stats: Option<Arc<RelStats>>,
}

impl TableInfo {
    pub(crate) fn new(rel: &Rel, rows: f64) -> TableInfo {
        TableInfo { rel: rel.clone(), rows, stats: rel.heap.stats.get() }
    }

    /// The statistics of column `i` (a column of the table's row).
    pub(crate) fn column(&self, i: usize) -> Option<&ColumnStats> {
        let c = self.rel.entry.columns.get(i)?;
        self.stats.as_ref()?.column(&c.name, c.ty)
    }

    /// What the estimators read of column `i`.
    pub(crate) fn col(&self, i: usize) -> Col<'_> {
        let unique = self.rel.entry.indexes.iter().any(|d| d.unique && d.columns == [i]);
        Col { stats: self.column(i), rows: self.rows, unique }
    }

    /// The distinct values of column `i` (see [`Col::n_distinct`]).
    pub(crate) fn n_distinct(&self, i: usize) -> (f64, bool) {
        self.col(i).n_distinct()
    }

    fn null_frac(&self, i: usize) -> f64 {
        self.col(i).null_frac()
    }
}

/// One column as the estimators see it: its statistics (if analyzed),
/// its table's estimated rows, and whether it alone is a unique key.
#[derive(Clone, Copy)]
pub(crate) struct Col<'a> {
    pub stats: Option<&'a ColumnStats>,
    pub rows: f64,
    pub unique: bool,
}

impl Col<'_> {
    /// The column's distinct values (PostgreSQL's get_variable_numdistinct)
    /// and whether that is a default guess.
    pub(crate) fn n_distinct(&self) -> (f64, bool) {
        if self.unique {
            return (clamp_rows(self.rows), false);
        }
        match self.stats {
            Some(c) if c.n_distinct > 0.0 => (f64::from(c.n_distinct), false),
            Some(c) if c.n_distinct < 0.0 => (clamp_rows(-f64::from(c.n_distinct) * self.rows), false),
            _ if self.rows < DEFAULT_NUM_DISTINCT => (clamp_rows(self.rows), true),
            _ => (DEFAULT_NUM_DISTINCT, true),
        }
    }

    pub(crate) fn null_frac(&self) -> f64 {
        self.stats.map_or(0.0, |c| f64::from(c.null_frac))
    }
}

/// A row count as PostgreSQL rounds its estimates: whole, at least one.
pub(crate) fn clamp_rows(n: f64) -> f64 {
    if n.is_nan() {
        return 1.0;
    }
    n.round_ties_even().max(1.0)
}

fn clamp(p: f64) -> f64 {
    p.clamp(0.0, 1.0)
}

/// The column and constant a comparison relates, with the operator as
/// read from the column's side.
fn column_vs_const(a: &Expr, cmp: Cmp, b: &Expr) -> Option<(usize, Cmp, Value)> {
    match (column_of(a), constant(b), column_of(b), constant(a)) {
        (Some(i), Some(v), _, _) => Some((i, cmp, v)),
        (_, _, Some(i), Some(v)) => Some((i, flip(cmp), v)),
        _ => None,
    }
}

fn column_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column(i) => Some(*i),
        Expr::Cast(inner, ..) => column_of(inner),
        _ => None,
    }
}

fn constant(e: &Expr) -> Option<Value> {
    match e {
        Expr::Const(Value::Null) => None,
        Expr::Const(v) => Some(v.clone()),
        Expr::Cast(inner, ..) => match &**inner {
            Expr::Const(v @ (Value::Int(_) | Value::Float(_) | Value::Float4(_) | Value::Numeric(_))) => {
                Some(v.clone())
            }
            _ => None,
        },
        _ => None,
    }
}

fn flip(c: Cmp) -> Cmp {
    match c {
        Cmp::Lt => Cmp::Gt,
        Cmp::Le => Cmp::Ge,
        Cmp::Gt => Cmp::Lt,
        Cmp::Ge => Cmp::Le,
        other => other,
    }
}

fn same(a: &Value, b: &Value) -> bool {
    a.compare(b) == Some(Ordering::Equal)
}

/// The fraction of rows `e` keeps (PostgreSQL's clause_selectivity; AND
/// lists pair a column's bounds into ranges as its clauselist_selectivity
/// does).
pub(crate) fn selectivity(e: &Expr, t: &TableInfo) -> f64 {
    match e {
        Expr::And(parts) => conjunction(parts.iter().collect(), t),
        Expr::Or(parts) => parts.iter().fold(0.0, |s, p| {
            let q = selectivity(p, t);
            s + q - s * q
        }),
        Expr::Not(inner) => clamp(1.0 - selectivity(inner, t)),
        Expr::Compare(a, cmp, b, _) => match column_vs_const(a, *cmp, b) {
            Some((i, Cmp::Eq, v)) => eq_sel(t.col(i), &v),
            Some((i, Cmp::Ne, v)) => clamp(1.0 - eq_sel(t.col(i), &v) - t.null_frac(i)),
            Some((i, op, v)) => ineq_sel(t.col(i), op, &v),
            None => match cmp {
                Cmp::Eq => DEFAULT_EQ_SEL,
                Cmp::Ne => 1.0 - DEFAULT_EQ_SEL,
                _ => DEFAULT_INEQ_SEL,
            },
        },
        Expr::IsNull(inner, negated) => match column_of(inner) {
            Some(i) if t.column(i).is_some() => {
                let nf = t.null_frac(i);
                if *negated {
                    1.0 - nf
                } else {
                    nf
                }
            }
            // PostgreSQL's defaults without statistics.
            _ if *negated => 1.0 - DEFAULT_UNK_SEL,
            _ => DEFAULT_UNK_SEL,
        },
        Expr::InList(inner, items, negated) => {
            let col = column_of(inner);
            let each = items.iter().map(|item| match (col, constant(item)) {
                (Some(i), Some(v)) => eq_sel(t.col(i), &v),
                _ => DEFAULT_EQ_SEL,
            });
            if *negated {
                let nulls = col.map_or(0.0, |i| t.null_frac(i));
                // `<> ALL`: the disjoint exclusions, each 1 - eq - nulls.
                clamp(each.fold(1.0, |s, q| s + (1.0 - q - nulls) - 1.0))
            } else {
                clamp(each.sum())
            }
        }
        Expr::Const(Value::Bool(b)) => f64::from(u8::from(*b)),
        Expr::Const(Value::Null) => 0.0,
        Expr::Column(i) => match t.column(*i) {
            // A boolean column: the frequency of true.
            Some(_) => eq_sel(t.col(*i), &Value::Bool(true)),
            None => 0.5,
        },
        _ => DEFAULT_INEQ_SEL,
    }
}

/// The selectivity of an AND of `parts`: the product, except that a
/// column's lower and upper bounds combine into one range.
pub(crate) fn conjunction(parts: Vec<&Expr>, t: &TableInfo) -> f64 {
    // (column, lower bound's selectivity, upper bound's)
    let mut ranges: Vec<(usize, Option<f64>, Option<f64>)> = Vec::new();
    let mut s = 1.0;
    for p in parts {
        if let Expr::Compare(a, cmp, b, _) = p {
            if let Some((i, op @ (Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge), v)) = column_vs_const(a, *cmp, b) {
                let q = ineq_sel(t.col(i), op, &v);
                let slot = match ranges.iter().position(|r| r.0 == i) {
                    Some(k) => k,
                    None => {
                        ranges.push((i, None, None));
                        ranges.len() - 1
                    }
                };
                let r = &mut ranges[slot];
                let side = if matches!(op, Cmp::Gt | Cmp::Ge) { &mut r.1 } else { &mut r.2 };
                // Two bounds on one side: the tighter one.
                *side = Some(side.map_or(q, |old: f64| old.min(q)));
                continue;
            }
        }
        s *= selectivity(p, t);
    }
    for (i, lo, hi) in ranges {
        s *= match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let mut r = lo + hi - 1.0;
                // Both bounds excluded the NULLs: add them back once.
                r += t.null_frac(i);
                if r <= 0.0 {
                    if r < -0.01 {
                        DEFAULT_RANGE_INEQ_SEL
                    } else {
                        1.0e-10
                    }
                } else {
                    r
                }
            }
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => 1.0,
        };
    }
    clamp(s)
}

/// `column i = v` (PostgreSQL's var_eq_const).
pub(crate) fn eq_sel(col: Col<'_>, v: &Value) -> f64 {
    if col.unique {
        return 1.0 / clamp_rows(col.rows);
    }
    let Some(c) = col.stats else {
        return 1.0 / col.n_distinct().0;
    };
    if let Some(k) = c.mcv.iter().position(|m| same(m, v)) {
        return f64::from(c.mcf[k]);
    }
    if c.mcv.is_empty() {
        return clamp(1.0 / col.n_distinct().0);
    }
    let common: f64 = c.mcf.iter().map(|&f| f64::from(f)).sum();
    let mut s = clamp(1.0 - common - f64::from(c.null_frac));
    let others = col.n_distinct().0 - c.mcv.len() as f64;
    if others > 1.0 {
        s /= others;
    }
    s.min(f64::from(*c.mcf.last().unwrap_or(&1.0)))
}

/// `column i op v` for an ordering operator (PostgreSQL's scalarineqsel).
pub(crate) fn ineq_sel(col: Col<'_>, op: Cmp, v: &Value) -> f64 {
    let Some(c) = col.stats else { return DEFAULT_INEQ_SEL };
    let holds = |x: &Value| x.compare(v).is_some_and(|o| op.holds(o));
    let mut mcv_sel = 0.0;
    let mut common = 0.0;
    for (m, &f) in c.mcv.iter().zip(&c.mcf) {
        common += f64::from(f);
        if holds(m) {
            mcv_sel += f64::from(f);
        }
    }
    let mut s = 1.0 - f64::from(c.null_frac) - common;
    match histogram_sel(col, c, op, v) {
        Some(h) => s *= h,
        None => s *= 0.5,
    }
    clamp(s + mcv_sel)
}

/// The fraction of the histogram's population that passes `op v`, or
/// `None` without a histogram (PostgreSQL's
/// ineq_histogram_selectivity, without its look at an index's actual
/// end values).
fn histogram_sel(col: Col<'_>, c: &ColumnStats, op: Cmp, v: &Value) -> Option<f64> {
    let h = &c.histogram;
    if h.len() < 2 {
        return None;
    }
    let is_gt = matches!(op, Cmp::Gt | Cmp::Ge);
    let is_eq = matches!(op, Cmp::Le | Cmp::Ge);
    // The first bound for which `bound op v` fails (flipped for >).
    let (mut lo, mut hi) = (0usize, h.len());
    while lo < hi {
        let probe = (lo + hi) / 2;
        let mut lt = h[probe].compare(v).is_some_and(|o| op.holds(o));
        if is_gt {
            lt = !lt;
        }
        if lt {
            lo = probe + 1;
        } else {
            hi = probe;
        }
    }
    let n = h.len() as f64;
    let fraction = if lo == 0 {
        0.0
    } else if lo >= h.len() {
        1.0
    } else {
        let k = lo;
        let bin = match (number(v), number(&h[k - 1]), number(&h[k])) {
            (Some(x), Some(low), Some(high)) => {
                if high <= low {
                    0.5
                } else if x <= low {
                    0.0
                } else if x >= high {
                    1.0
                } else {
                    let f = (x - low) / (high - low);
                    if f.is_nan() || !(0.0..=1.0).contains(&f) {
                        0.5
                    } else {
                        f
                    }
                }
            }
            _ => 0.5,
        };
        // The estimate of `= v` among the values not common: the first
        // bin is narrower by it, and `<` / `>=` exclude it.
        let mut eq = 0.0;
        if k == 1 || is_gt == is_eq {
            let others = col.n_distinct().0 - c.mcv.len() as f64;
            if others > 1.0 {
                eq = 1.0 / others;
            }
        }
        let mut f = ((k - 1) as f64 + bin) / (n - 1.0);
        if k == 1 {
            f += eq * (1.0 - bin);
        }
        if is_gt == is_eq {
            f -= eq;
        }
        f
    };
    let s = if is_gt { 1.0 - fraction } else { fraction };
    // The bounds are a sample's: believe nothing closer to 0 or 1 than
    // a hundredth of a bucket.
    let cutoff = 0.01 / (n - 1.0);
    Some(s.clamp(cutoff, 1.0 - cutoff))
}

/// A value as a number on a scale its order agrees with (numbers, dates,
/// times), for interpolation within a histogram bucket.
fn number(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Float4(f) => f64::from(*f),
        Value::Numeric(_) => v.to_text()?.parse().ok()?,
        Value::Date(d) => f64::from(*d),
        Value::Timestamp(t) | Value::TimestampTz(t) => *t as f64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(mcv: &[(i64, f32)], bounds: &[i64], n_distinct: f32, null_frac: f32) -> ColumnStats {
        ColumnStats {
            name: "a".into(),
            ty: snapscale_values::SqlType::Int4,
            null_frac,
            avg_width: 4,
            n_distinct,
            mcv: mcv.iter().map(|m| Value::Int(m.0)).collect(),
            mcf: mcv.iter().map(|m| m.1).collect(),
            histogram: bounds.iter().map(|&b| Value::Int(b)).collect(),
            correlation: Some(1.0),
        }
    }

    fn col(s: &ColumnStats, rows: f64) -> Col<'_> {
        Col { stats: Some(s), rows, unique: false }
    }

    #[test]
    fn equality_reads_common_values_then_spreads_the_rest() {
        let s = stats(&[(1, 0.5), (2, 0.25)], &[], 4.0, 0.0);
        assert_eq!(eq_sel(col(&s, 1000.0), &Value::Int(1)), 0.5);
        // The remaining quarter over the two other values.
        assert!((eq_sel(col(&s, 1000.0), &Value::Int(7)) - 0.125).abs() < 1e-9);
        let none = Col { stats: None, rows: 10_000.0, unique: false };
        assert_eq!(eq_sel(none, &Value::Int(1)), DEFAULT_EQ_SEL);
    }

    #[test]
    fn unique_values_scale_with_rows() {
        let s = stats(&[], &(0..=100).map(|i| i * 10).collect::<Vec<_>>(), -1.0, 0.0);
        assert_eq!(col(&s, 1000.0).n_distinct().0, 1000.0);
        assert!((eq_sel(col(&s, 1000.0), &Value::Int(5)) - 0.001).abs() < 1e-12);
    }

    #[test]
    fn ranges_read_the_histogram() {
        // 101 bounds 0, 10, …, 1000 over 1000 unique values.
        let s = stats(&[], &(0..=100).map(|i| i * 10).collect::<Vec<_>>(), -1.0, 0.0);
        let below = ineq_sel(col(&s, 1000.0), Cmp::Lt, &Value::Int(500));
        assert!((below - 0.499).abs() < 0.002, "{below}");
        let above = ineq_sel(col(&s, 1000.0), Cmp::Gt, &Value::Int(500));
        assert!((above - 0.5).abs() < 0.002, "{above}");
        // Outside the bounds: a hundredth of a bucket, not zero.
        let none = ineq_sel(col(&s, 1000.0), Cmp::Lt, &Value::Int(-5));
        assert!((none - 0.0001).abs() < 1e-9, "{none}");
        // No histogram, no common values: half the rows.
        let bare = stats(&[], &[], 1.0, 0.0);
        assert_eq!(ineq_sel(col(&bare, 10.0), Cmp::Lt, &Value::Int(3)), 0.5);
    }

    #[test]
    fn common_values_count_whole_in_ranges() {
        let s = stats(&[(1, 0.5), (9, 0.5)], &[], 2.0, 0.0);
        assert_eq!(ineq_sel(col(&s, 100.0), Cmp::Lt, &Value::Int(5)), 0.5);
        assert_eq!(ineq_sel(col(&s, 100.0), Cmp::Ge, &Value::Int(0)), 1.0);
    }

    #[test]
    fn defaults_without_statistics() {
        let none = Col { stats: None, rows: 100.0, unique: false };
        assert_eq!(ineq_sel(none, Cmp::Lt, &Value::Int(1)), DEFAULT_INEQ_SEL);
        // A small table: as many distinct values as rows.
        assert_eq!(none.n_distinct(), (100.0, true));
        assert_eq!(Col { rows: 5000.0, ..none }.n_distinct(), (DEFAULT_NUM_DISTINCT, true));
    }
}
