//! EXPLAIN ANALYZE's counts: for each operator, how many times it ran,
//! the rows it gave and the time it took. Only a statement EXPLAIN
//! ANALYZE runs has counters (`Executor::stats`); every other statement
//! pays one test of that `None` per operator run, none per row.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snapscale_values::SqlError;

use std::collections::HashMap;

/// What the executor counted for one operator under ANALYZE.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NodeStats {
    /// Rows it gave, over all its runs.
    pub rows: u64,
    /// How many times it ran.
    pub loops: u64,
    /// Time until its first row, over all runs (the executor's operators
    /// compute all their rows before giving the first: the total).
    pub startup: Duration,
    pub total: Duration,
}

/// The counts of a statement's operators, by their address.
pub(crate) type Stats = HashMap<usize, NodeStats>;

/// The counters a statement run under EXPLAIN ANALYZE fills.
pub(crate) type Counters = Arc<Mutex<Stats>>;

/// Runs `f`, an operator's run, counting it under `key`.
pub(super) fn measure<T>(
    counters: &Counters,
    key: usize,
    f: impl FnOnce() -> Result<T, SqlError>,
    len: impl Fn(&T) -> usize,
) -> Result<T, SqlError> {
    let start = Instant::now();
    let out = f()?;
    record(counters, key, len(&out) as u64, 1, start.elapsed());
    Ok(out)
}

/// Adds `rows` rows in `loops` runs taking `time` to the counts of `key`.
pub(crate) fn record(counters: &Counters, key: usize, rows: u64, loops: u64, time: Duration) {
    let mut stats = counters.lock().unwrap_or_else(|e| e.into_inner());
    let s = stats.entry(key).or_default();
    s.rows += rows;
    s.loops += loops;
    s.startup += time;
    s.total += time;
}

/// The rows counted so far under `key`.
pub(super) fn rows_of(counters: &Counters, key: usize) -> u64 {
    counters.lock().unwrap_or_else(|e| e.into_inner()).get(&key).map_or(0, |s| s.rows)
}

/// Counts a row-changing statement's own node (PostgreSQL's ModifyTable:
/// the rows it returns) and the scan that found its rows (the rows it
/// changed), which the executor reads without an operator of the plan.
pub(super) fn count_statement(
    counters: &Counters,
    statement: &crate::plan::physical::Statement,
    out: &crate::output::Output,
    time: Duration,
) {
    use crate::output::Output;
    use crate::plan::physical::{Source, Statement};
    let (returned, changed) = match out {
        Output::Rows { rows, tag, .. } => (rows.len() as u64, count_in(tag).unwrap_or(rows.len() as u64)),
        Output::Command(tag) => (0, count_in(tag).unwrap_or(0)),
        _ => (0, 0),
    };
    let key = statement as *const Statement as usize;
    match statement {
        Statement::With(w) => count_statement(counters, &w.main, out, time),
        Statement::Update { scan, .. } | Statement::Delete { scan, .. } => {
            record(counters, key, returned, 1, time);
            record(counters, scan as *const _ as usize, changed, 1, time);
        }
        Statement::Insert { source, .. } => {
            record(counters, key, returned, 1, time);
            if matches!(source, Source::Values(_)) {
                record(counters, key + 1, changed, 1, time);
            }
        }
        Statement::ModifyJoin(_) | Statement::InsteadOf(_) | Statement::Merge(_) => {
            record(counters, key, returned, 1, time)
        }
        _ => {}
    }
}

/// The row count at the end of a command tag ("UPDATE 3").
fn count_in(tag: &str) -> Option<u64> {
    tag.rsplit(' ').next()?.parse().ok()
}
