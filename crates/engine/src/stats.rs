//! A relation's planner statistics, as ANALYZE leaves them (PostgreSQL's
//! pg_statistic rows and pg_class's reltuples / relpages), and the
//! counters that say when they are due again (pg_stat_all_tables'
//! analyze columns, autovacuum's autoanalyze).
//!
//! STATS-SLOT: each heap holds one slot with the statistics of its last
//! ANALYZE. An ANALYZE computes a whole new [`RelStats`] and publishes it
//! by replacing the slot's `Arc` under a short mutex: a reader (the
//! planner, the views) clones the `Arc` and sees one ANALYZE's statistics
//! whole, never a mix of two. Unlike PostgreSQL's pg_statistic the slot
//! is not transactional (an ANALYZE in a transaction that aborts still
//! leaves its statistics, as they describe the rows, not the
//! transaction), is not WAL-logged (a restart or a standby starts
//! without statistics until the next ANALYZE or autoanalyze), and lives
//! and dies with the storage: dropping a table drops them.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use snapscale_values::{SqlType, Value};

/// One column's statistics (a pg_statistic row). Values are kept as the
/// column held them; the ones wider than PostgreSQL's 1024-byte limit are
/// never kept.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnStats {
    /// The column's name and type when it was analyzed: statistics of a
    /// column since dropped or retyped name no column of the definition
    /// and are ignored (ALTER COLUMN TYPE discards them).
    pub name: String,
    pub ty: SqlType,
    /// The fraction of the rows that are NULL.
    pub null_frac: f32,
    /// The average width in bytes of the non-NULL values.
    pub avg_width: i32,
    /// Distinct values: a count, or (negative) minus a fraction of the
    /// rows when the count grows with the table; 0 for unknown.
    pub n_distinct: f32,
    /// The most common values, most common first, and their fractions.
    pub mcv: Vec<Value>,
    pub mcf: Vec<f32>,
    /// The bounds of equally populated buckets of the values not in `mcv`
    /// (a sortable type only).
    pub histogram: Vec<Value>,
    /// The correlation of the values' order with the rows' physical
    /// order (a sortable type with two or more values only).
    pub correlation: Option<f32>,
}

/// What one ANALYZE found of a relation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelStats {
    /// The live rows the ANALYZE counted (pg_class.reltuples).
    pub reltuples: f64,
    /// The pages those rows fill, as PostgreSQL's 8kB pages would hold
    /// them (pg_class.relpages).
    pub relpages: f64,
    /// The row versions the heap held then (live and dead): the planner
    /// scales reltuples and relpages by how many it holds now, as
    /// PostgreSQL scales them by the pages the table has now.
    pub versions: f64,
    pub columns: Vec<ColumnStats>,
}

impl RelStats {
    /// The statistics of the column `name` of type `ty`, if the last
    /// ANALYZE gathered them for a column of that name and type.
    pub fn column(&self, name: &str, ty: SqlType) -> Option<&ColumnStats> {
        self.columns.iter().find(|c| c.name == name && c.ty == ty)
    }
}

/// A heap's statistics slot (STATS-SLOT) and its analyze counters.
#[derive(Debug, Default)]
pub struct StatsSlot {
    current: Mutex<Option<Arc<RelStats>>>,
    /// Rows inserted, updated or deleted in this heap, ever (counted as
    /// they are written, committed or not, as PostgreSQL counts changes
    /// for autoanalyze).
    pub modified: AtomicU64,
    /// `modified` when the last ANALYZE started.
    pub modified_at_analyze: AtomicU64,
    pub count: AtomicU64,
    pub auto_count: AtomicU64,
    /// Microseconds since 2000-01-01, or 0 for never.
    pub last: AtomicI64,
    pub last_auto: AtomicI64,
}

impl StatsSlot {
    /// The statistics of the last ANALYZE, if any.
    pub fn get(&self) -> Option<Arc<RelStats>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Publishes a new ANALYZE's statistics whole (STATS-SLOT) and counts
    /// it; `modified_then` is `modified` as it was when the rows were read.
    /// `partial`: an ANALYZE of named columns, after which the statistics
    /// of the other columns stay.
    pub fn publish(&self, mut stats: RelStats, partial: bool, auto: bool, modified_then: u64) {
        let mut slot = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.as_ref().filter(|_| partial) {
            for c in &old.columns {
                if !stats.columns.iter().any(|n| n.name == c.name) {
                    stats.columns.push(c.clone());
                }
            }
        }
        *slot = Some(Arc::new(stats));
        drop(slot);
        let now = snapscale_values::now_micros();
        // Relaxed (all): statistics counters, nothing is published through
        // them; the statistics themselves went through the mutex.
        self.modified_at_analyze.store(modified_then, Relaxed);
        if auto {
            self.auto_count.fetch_add(1, Relaxed);
            self.last_auto.store(now, Relaxed);
        } else {
            self.count.fetch_add(1, Relaxed);
            self.last.store(now, Relaxed);
        }
    }

    /// Counts one written row (insert, update or delete).
    pub fn note_change(&self) {
        // Relaxed: a heuristic counter, read by autoanalyze and the views.
        self.modified.fetch_add(1, Relaxed);
    }

    /// Changes since the last ANALYZE (n_mod_since_analyze).
    pub fn changes_since_analyze(&self) -> u64 {
        // Relaxed (both): see `note_change`.
        self.modified.load(Relaxed).saturating_sub(self.modified_at_analyze.load(Relaxed))
    }

    /// Drops the statistics of every column not named with its type in
    /// `columns` (a dropped or retyped column), keeping the rest.
    pub fn retain_columns(&self, columns: &[(String, SqlType)]) {
        let mut slot = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.as_ref() {
            if old.columns.iter().all(|c| columns.iter().any(|(n, t)| *n == c.name && *t == c.ty)) {
                return;
            }
            let mut kept = (**old).clone();
            kept.columns.retain(|c| columns.iter().any(|(n, t)| *n == c.name && *t == c.ty));
            *slot = Some(Arc::new(kept));
        }
    }

    /// Takes the statistics of `from` (a table's storage before a
    /// rewrite) for the columns in `columns`; the counters start anew.
    pub fn inherit(&self, from: &StatsSlot, columns: &[(String, SqlType)]) {
        let Some(old) = from.get() else { return };
        let mut kept = (*old).clone();
        kept.columns.retain(|c| columns.iter().any(|(n, t)| *n == c.name && *t == c.ty));
        // The new storage holds only live rows.
        kept.versions = kept.reltuples;
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(kept));
    }
}
