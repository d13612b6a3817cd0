//! The cost model: a simple one with PostgreSQL's constants
//! (seq_page_cost 1, random_page_cost 4, cpu_tuple_cost 0.01,
//! cpu_index_tuple_cost 0.005, cpu_operator_cost 0.0025), reading
//! ANALYZE's statistics where a table has them (`selectivity.rs`).
//!
//! A table's rows and pages are its last ANALYZE's reltuples and
//! relpages, scaled by how many row versions its storage holds now
//! against then (as PostgreSQL scales them by its pages now); a table
//! never analyzed counts the versions it holds, and one that holds none
//! is assumed to fill ten pages, as PostgreSQL assumes of a table never
//! vacuumed. Widths are the columns' average widths from the statistics,
//! else PostgreSQL's average widths of their types. EXPLAIN shows these
//! numbers; the planner reads them for the grouping strategy.

use snapscale_values::SqlType;

use crate::plan::Rel;

const SEQ_PAGE: f64 = 1.0;
const RANDOM_PAGE: f64 = 4.0;
const CPU_TUPLE: f64 = 0.01;
const CPU_INDEX_TUPLE: f64 = 0.005;
const CPU_OPERATOR: f64 = 0.0025;
/// PostgreSQL's selectivity of a condition it knows nothing of.
const DEFAULT_SEL: f64 = 0.3333;
/// PostgreSQL's number of distinct values of a column without statistics.
const DEFAULT_DISTINCT: f64 = 200.0;
const PAGE: f64 = 8192.0;

/// A node's estimate: startup and total cost, rows, average row width.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cost {
    pub startup: f64,
    pub total: f64,
    pub rows: f64,
    pub width: u32,
}

/// The average width PostgreSQL assumes of a value of `ty`.
pub(crate) fn type_width(ty: SqlType) -> u32 {
    match ty {
        SqlType::Bool | SqlType::Char1 => 1,
        SqlType::Int2 => 2,
        SqlType::Int4 | SqlType::Float4 | SqlType::Date | SqlType::Oid | SqlType::Reg(_) => 4,
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
        SqlType::Interval => 16,
        SqlType::Name => 64,
        SqlType::Varchar(Some(n)) | SqlType::Char(n) => {
            let most = n.saturating_mul(4).saturating_add(4);
            match most {
                m if m <= 32 || matches!(ty, SqlType::Char(_)) => m,
                m if m < 1000 => 32 + (m - 32) / 2,
                _ => 32 + (1000 - 32) / 2,
            }
        }
        _ => 32,
    }
}

/// Estimated rows and pages of a table: the versions its storage holds
/// (ten pages' worth when it holds none).
fn table_size(rel: &Rel) -> (f64, f64) {
    let versions = rel.heap.table.versions_present() as f64;
    if let Some(stats) = rel.heap.stats.get() {
        // The statistics scaled to the storage's size now.
        let scale = if stats.versions > 0.0 { versions / stats.versions } else { 1.0 };
        let pages = if stats.versions > 0.0 { (stats.relpages * scale).ceil() } else { stats.relpages };
        if stats.versions > 0.0 || versions == 0.0 {
            return (stats.reltuples * scale, pages);
        }
    }
    let width: u32 = rel.entry.columns.iter().map(|c| type_width(c.ty)).sum();
    // A row's header and line pointer, as PostgreSQL's page holds them.
    let per_page = ((PAGE - 24.0) / f64::from(width + 28)).floor().max(1.0);
    if versions == 0.0 {
        (10.0 * per_page, 10.0)
    } else {
        (versions, (versions / per_page).ceil().max(1.0))
    }
}

/// A table's estimated rows.
pub(crate) fn table_rows(rel: &Rel) -> (f64, f64) {
    table_size(rel)
}

/// A row estimate as PostgreSQL rounds one (to even, at least one).
fn rows(n: f64) -> f64 {
    n.round_ties_even().max(1.0)
}

/// The operator calls evaluating `e` costs, as PostgreSQL counts them
/// (cost_qual_eval): one per operator or function, none for a NULL test,
/// half the list's length for `= ANY` / IN.
pub(crate) fn qual_ops(e: &crate::expr::Expr) -> f64 {
    use crate::expr::Expr;
    match e {
        Expr::And(parts) | Expr::Or(parts) => parts.iter().map(qual_ops).sum(),
        Expr::Not(a) | Expr::IsNull(a, _) | Expr::Cast(a, _, _) => qual_ops(a),
        Expr::Compare(a, _, b, _) | Expr::Like(a, b, _) => 1.0 + qual_ops(a) + qual_ops(b),
        Expr::InList(a, items, _) => qual_ops(a) + 0.5 * items.len() as f64,
        Expr::Func(_, args) => 1.0 + args.iter().map(qual_ops).sum::<f64>(),
        Expr::Neg(a, _) => 1.0 + qual_ops(a),
        Expr::Chain(a, steps) => qual_ops(a) + steps.len() as f64,
        _ => 0.0,
    }
}

/// A sequential scan of a table of `rows_in` rows in `pages` pages,
/// evaluating `ops` operators on each row (`qual_ops`).
pub(crate) fn seq_scan((rows_in, pages): (f64, f64), width: u32, ops: f64) -> Cost {
    Cost {
        startup: 0.0,
        total: pages * SEQ_PAGE + rows_in * (CPU_TUPLE + CPU_OPERATOR * ops),
        rows: rows(rows_in),
        width,
    }
}

/// A relation without storage (a catalog view): `n` rows.
pub(crate) fn computed(n: f64, width: u32) -> Cost {
    Cost { startup: 0.0, total: n * CPU_TUPLE, rows: rows(n), width }
}

/// Equality on an index: one row for a unique index's whole key, else
/// PostgreSQL's default equality selectivity.
pub(crate) fn index_scan((rows_in, pages): (f64, f64), width: u32, unique: bool) -> Cost {
    let found = if unique { 1.0 } else { rows(rows_in * 0.005) };
    let fetched = found.min(pages);
    Cost {
        startup: 0.0,
        total: RANDOM_PAGE * (1.0 + fetched) + found * (CPU_INDEX_TUPLE + CPU_TUPLE + CPU_OPERATOR),
        rows: found,
        width,
    }
}

pub(crate) fn index_range((rows_in, pages): (f64, f64), width: u32) -> Cost {
    let found = rows(rows_in * DEFAULT_SEL);
    Cost {
        startup: 0.0,
        total: RANDOM_PAGE * (1.0 + found.min(pages)) + found * (CPU_INDEX_TUPLE + CPU_TUPLE + CPU_OPERATOR),
        rows: found,
        width,
    }
}

/// Rows left by `quals` more conditions nothing is known of.
pub(crate) fn filtered(n: f64, quals: usize) -> f64 {
    rows(n * DEFAULT_SEL.powi(quals as i32))
}

/// Rows of a table of `n` rows that pass a condition of selectivity `sel`.
pub(crate) fn selected(n: f64, sel: f64) -> f64 {
    rows(n * sel)
}

pub(crate) fn result() -> Cost {
    Cost { startup: 0.0, total: CPU_TUPLE, rows: 1.0, width: 0 }
}

pub(crate) fn values(n: usize, columns: usize) -> Cost {
    let n = n as f64;
    Cost {
        startup: 0.0,
        total: n * (CPU_TUPLE + CPU_OPERATOR * columns as f64),
        rows: n,
        width: 4 * columns as u32,
    }
}

/// A set-returning function: PostgreSQL's default of 1000 rows.
pub(crate) fn function_scan(width: u32) -> Cost {
    Cost { startup: 0.0, total: 1000.0 * CPU_TUPLE, rows: 1000.0, width }
}

pub(crate) fn append(parts: &[&Cost]) -> Cost {
    Cost {
        startup: parts.first().map_or(0.0, |c| c.startup),
        total: parts.iter().map(|c| c.total).sum(),
        rows: parts.iter().map(|c| c.rows).sum(),
        width: parts.iter().map(|c| c.width).max().unwrap_or(0),
    }
}

/// A node that passes its input's rows on, `ops` operations per row.
pub(crate) fn pass(input: &Cost, ops: f64) -> Cost {
    Cost { total: input.total + input.rows * CPU_OPERATOR * ops, ..*input }
}

pub(crate) fn plain_aggregate(input: &Cost, aggs: usize) -> Cost {
    let total = input.total + input.rows * CPU_OPERATOR * aggs as f64;
    Cost { startup: total, total: total + CPU_TUPLE, rows: 1.0, width: 0 }
}

/// A hashed grouping into `groups` groups (`None`: unknown, PostgreSQL's
/// default of 200 at most).
pub(crate) fn hash_aggregate(input: &Cost, exprs: usize, groups: Option<f64>) -> Cost {
    let groups = groups.unwrap_or(DEFAULT_DISTINCT).min(input.rows);
    let startup = input.total + input.rows * CPU_OPERATOR * exprs as f64;
    Cost { startup, total: startup + groups * CPU_TUPLE, rows: rows(groups), width: input.width }
}

pub(crate) fn unique(input: &Cost, groups: Option<f64>) -> Cost {
    Cost { rows: rows(input.rows.min(groups.unwrap_or(DEFAULT_DISTINCT))), ..pass(input, 1.0) }
}

pub(crate) fn project_set(input: &Cost) -> Cost {
    Cost { rows: input.rows * 10.0, total: input.total + input.rows * 10.0 * CPU_TUPLE, ..*input }
}

pub(crate) fn sort(input: &Cost) -> Cost {
    let n = input.rows.max(2.0);
    let startup = input.total + 2.0 * CPU_OPERATOR * n * n.log2();
    Cost { startup, total: startup + CPU_OPERATOR * n, ..*input }
}

pub(crate) fn limit(input: &Cost, offset: Option<f64>, limit: Option<f64>) -> Cost {
    let skip = offset.unwrap_or(0.0).min(input.rows);
    let take = limit.map_or(input.rows - skip, |l| l.min(input.rows - skip)).max(0.0);
    let per_row = if input.rows > 0.0 { (input.total - input.startup) / input.rows } else { 0.0 };
    let startup = input.startup + per_row * skip;
    Cost { startup, total: startup + per_row * take, rows: rows(take), width: input.width }
}

pub(crate) fn materialize(input: &Cost) -> Cost {
    Cost { total: input.total + 2.0 * CPU_OPERATOR * input.rows, ..*input }
}

pub(crate) fn hash(input: &Cost) -> Cost {
    Cost { startup: input.total, ..*input }
}

/// A hash join on `keys` equalities of selectivity `sel` together
/// (`None`: PostgreSQL's default per key), the inner side's rows
/// spreading over hash buckets each holding `bucket` of them (`None`:
/// PostgreSQL's guess without statistics, a tenth). The build hashes
/// every inner row; each outer row is hashed and compared with its
/// bucket's rows.
pub(crate) fn hash_join(
    outer: &Cost,
    hash: &Cost,
    keys: usize,
    sel: Option<f64>,
    bucket: Option<f64>,
) -> Cost {
    let sel = sel.unwrap_or_else(|| (1.0 / DEFAULT_DISTINCT).powi(keys as i32));
    let n = rows(outer.rows * hash.rows * sel);
    let per_key = CPU_OPERATOR * keys as f64;
    let startup = hash.total + (per_key + CPU_TUPLE) * hash.rows + outer.startup;
    let bucket = bucket.unwrap_or(0.1).max(1.0e-6);
    let compared = outer.rows * (hash.rows * bucket).round_ties_even() * 0.5;
    Cost {
        startup,
        total: startup + outer.total - outer.startup
            + per_key * outer.rows
            + per_key * compared
            + n * CPU_TUPLE,
        rows: n,
        width: outer.width + hash.width,
    }
}

pub(crate) fn index_join(outer: &Cost, inner: &Cost) -> Cost {
    let n = rows(outer.rows * inner.rows);
    Cost {
        startup: outer.startup + inner.startup,
        total: outer.total + outer.rows * inner.total + n * CPU_TUPLE,
        rows: n,
        width: outer.width + inner.width,
    }
}

/// A nested loop: the inner side read once (and kept), or run again per
/// outer row (`rerun`: LATERAL).
pub(crate) fn nest_loop(outer: &Cost, inner: &Cost, filtered: bool, rerun: bool) -> Cost {
    let pairs = outer.rows * inner.rows;
    let n = if filtered { rows(pairs * DEFAULT_SEL) } else { rows(pairs) };
    let inner_cost = if rerun { outer.rows * inner.total } else { inner.total + pairs * CPU_OPERATOR };
    Cost {
        startup: outer.startup + inner.startup,
        total: outer.total + inner_cost + n * CPU_TUPLE,
        rows: n,
        width: outer.width + inner.width,
    }
}

/// INSERT, UPDATE, DELETE: their input's cost; they return no rows.
pub(crate) fn modify(input: &Cost) -> Cost {
    Cost { startup: input.startup, total: input.total, rows: 0.0, width: 0 }
}
