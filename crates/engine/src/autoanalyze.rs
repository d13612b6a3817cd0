//! ANALYZE of one relation (the rows a snapshot sees, sampled and
//! summarised by `analyze.rs`, published in the heap's statistics slot:
//! STATS-SLOT), and autovacuum's autoanalyze: a table whose rows changed
//! more than `autovacuum_analyze_threshold + autovacuum_analyze_scale_factor
//! × reltuples` times since its last ANALYZE is analyzed again, as
//! PostgreSQL's autovacuum does, so that plans do not go stale after a
//! load.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use snapscale_txn::{IsolationLevel, Reader, Session};
use snapscale_values::{SqlType, Value};

use crate::analyze::{column_stats, Reservoir, DEFAULT_TARGET, ROWS_PER_TARGET};
use crate::catalog::{Heap, Rel, RelEntry};
use crate::database::Database;
use crate::stats::{ColumnStats, RelStats};

/// PostgreSQL's 8kB page less its header, and a row's line pointer:
/// what relpages is estimated from.
const PAGE_SPACE: f64 = 8192.0 - 24.0;
const LINE_POINTER: usize = 4;

/// The alignment PostgreSQL gives a stored value of `ty` (a short text is
/// stored unaligned, with a 1-byte header).
fn alignment(ty: SqlType, width: i32) -> usize {
    match ty {
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz | SqlType::Interval => 8,
        SqlType::Int4 | SqlType::Float4 | SqlType::Date | SqlType::Oid | SqlType::Reg(_) => 4,
        SqlType::Int2 => 2,
        SqlType::Bool | SqlType::Char1 | SqlType::Name | SqlType::Uuid => 1,
        _ if width < 127 => 1,
        _ => 4,
    }
}

/// The bytes a row of these column statistics fills on a page: the
/// header (with a NULL bitmap if any column has NULLs), each value at
/// its alignment, the whole at 8-byte alignment, and its line pointer.
fn row_bytes(columns: &[ColumnStats]) -> usize {
    let align = |n: usize, to: usize| n.div_ceil(to) * to;
    let bitmap = if columns.iter().any(|c| c.null_frac > 0.0) { columns.len().div_ceil(8) } else { 0 };
    let mut at = align(23 + bitmap, 8);
    for c in columns.iter().filter(|c| c.null_frac < 1.0) {
        at = align(at, alignment(c.ty, c.avg_width)) + c.avg_width.max(0) as usize;
    }
    align(at, 8) + LINE_POINTER
}

/// The statistics target of column `c` of `entry` under the default
/// `default_target` (0: the column is not analyzed).
pub fn column_target(entry: &RelEntry, c: usize, default_target: i32) -> usize {
    match entry.columns[c].stats_target {
        Some(n) if n >= 0 => n as usize,
        _ => default_target.max(0) as usize,
    }
}

/// Samples the rows `reader` sees of `rel` and computes the statistics of
/// its `columns` (each with its own target); `seed` drives the sample.
/// `check` runs now and then (cancellation). The caller publishes them.
pub fn analyze_rel<E>(
    rel: &Rel,
    reader: &Reader<'_>,
    columns: &[usize],
    default_target: i32,
    seed: u64,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<RelStats, E> {
    let targets: Vec<usize> = columns.iter().map(|&c| column_target(&rel.entry, c, default_target)).collect();
    let most = targets.iter().copied().max().unwrap_or(0).max(1);
    let mut sample = Reservoir::new(ROWS_PER_TARGET * most, seed);
    check()?;
    for (k, (_, row)) in rel.scan(reader).into_iter().enumerate() {
        if k % 65_536 == 0 {
            check()?;
        }
        sample.offer(row);
    }
    let (rows, live) = sample.finish();
    let total = live as f64;
    let versions = rel.heap.table.versions_present() as f64;
    let mut stats = RelStats { reltuples: total, relpages: 0.0, versions, columns: Vec::new() };
    for (&c, &target) in columns.iter().zip(&targets) {
        if target == 0 {
            continue;
        }
        check()?;
        let col = &rel.entry.columns[c];
        let values: Vec<&Value> = rows.iter().map(|r| r.get(c).unwrap_or(&Value::Null)).collect();
        stats.columns.push(column_stats(&col.name, col.ty, &values, target, total));
    }
    let per_page = (PAGE_SPACE / row_bytes(&stats.columns) as f64).floor().max(1.0);
    stats.relpages = (total / per_page).ceil();
    Ok(stats)
}

/// A seed for a sample: the clock's nanoseconds.
pub fn sample_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

/// Whether `heap`, with `reltuples` live rows at its last ANALYZE (none:
/// never analyzed), is due an autoanalyze.
pub fn analyze_due(heap: &Heap, threshold: f64, scale: f64) -> bool {
    let reltuples = heap.stats.get().map_or(0.0, |s| s.reltuples);
    heap.stats.changes_since_analyze() as f64 > threshold + scale * reltuples
}

impl Database {
    /// Autoanalyze (see the module documentation): every permanent table
    /// due one is analyzed under a snapshot of the worker's own, taken
    /// for it; the number analyzed. Errors end the pass quietly (the next
    /// round tries again).
    pub fn autoanalyze(&self, session: &mut Session) -> usize {
        let config = &self.autovacuum.config;
        if !config.enabled {
            return 0;
        }
        if session.begin(IsolationLevel::ReadCommitted).is_err() {
            return 0;
        }
        let catalog = match session.register_snapshot() {
            Ok((_, snapshot)) => self.catalog.table.scan(&session.reader(&snapshot)),
            Err(_) => Vec::new(),
        };
        session.abort();
        let mut analyzed = 0;
        for (tid, entry) in catalog {
            if entry.sequence.is_some() || entry.is_view() || entry.temp_owner.is_some() {
                continue;
            }
            let Some(heap) = self.catalog.storage(entry.storage) else { continue };
            let param = |name: &str| entry.option(name).and_then(|v| v.trim().parse::<f64>().ok());
            if entry.option("autovacuum_enabled").is_some_and(|v| snapscale_values::pg_bool(v) == Some(false))
            {
                continue;
            }
            let threshold = param("autovacuum_analyze_threshold").unwrap_or(config.analyze_threshold as f64);
            let scale = param("autovacuum_analyze_scale_factor").unwrap_or(config.analyze_scale_factor);
            if !analyze_due(&heap, threshold, scale) {
                continue;
            }
            if session.begin(IsolationLevel::ReadCommitted).is_err() {
                return analyzed;
            }
            // Relaxed: see StatsSlot::note_change.
            let modified = heap.stats.modified.load(Relaxed);
            let result = match session.register_snapshot() {
                Ok((_, snapshot)) => {
                    let rel = Rel { entry: Arc::clone(&entry), heap: Arc::clone(&heap), catalog_tid: tid };
                    let columns: Vec<usize> = (0..rel.entry.columns.len()).collect();
                    analyze_rel(
                        &rel,
                        &session.reader(&snapshot),
                        &columns,
                        DEFAULT_TARGET,
                        sample_seed(),
                        || Ok::<(), ()>(()),
                    )
                    .ok()
                }
                Err(_) => None,
            };
            session.abort();
            if let Some(stats) = result {
                heap.stats.publish(stats, false, true, modified);
                analyzed += 1;
            }
        }
        analyzed
    }
}
