//! ANALYZE: the statistics of the named tables (every table when none
//! is named), from a sample of the rows the statement's snapshot sees;
//! each table's replace its last ANALYZE's whole (STATS-SLOT in the
//! engine's README). The computation is the engine's (`analyze.rs`,
//! `autoanalyze.rs`), shared with autovacuum's autoanalyze.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use snapscale_engine::autoanalyze::{analyze_rel, sample_seed};
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::Executor;
use crate::output::Output;
use crate::plan::Rel;

impl Executor<'_> {
    /// ANALYZE [VERBOSE] of `targets` (each with the columns named, none:
    /// all), under `default_statistics_target`. Allowed in a transaction
    /// block, as in PostgreSQL.
    pub(crate) fn analyze(
        &mut self,
        targets: &[(Rel, Vec<usize>)],
        verbose: bool,
    ) -> Result<Output, SqlError> {
        self.ensure_snapshot()?;
        let snapshot = Arc::clone(self.snapshot()?);
        let named = !targets.is_empty();
        let rels: Vec<(Rel, Vec<usize>)> = if named {
            targets.to_vec()
        } else {
            let reader = self.xact.session.reader(&snapshot);
            let catalog = &self.xact.db.catalog;
            catalog
                .table
                .scan(&reader)
                .into_iter()
                .filter(|(_, e)| e.sequence.is_none() && !e.is_view() && e.temp_owner.is_none())
                .filter_map(|(tid, e)| {
                    let heap = catalog.storage(e.storage)?;
                    Some((Rel { entry: e, heap, catalog_tid: tid }, Vec::new()))
                })
                .collect()
        };
        let target = self.limits.statistics_target;
        let cancel = Arc::clone(&self.xact.cancel);
        for (rel, columns) in rels {
            if rel.entry.sequence.is_some() || rel.entry.is_view() {
                self.xact.warning(
                    SqlState::WARNING,
                    format!(
                        "skipping \"{}\" --- cannot analyze non-tables or special system tables",
                        rel.entry.name
                    ),
                );
                continue;
            }
            if verbose {
                let schema = if rel.entry.temp_owner.is_some() { "pg_temp" } else { "public" };
                self.xact.notice_at(
                    "INFO",
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("analyzing \"{schema}.{}\"", rel.entry.name),
                    None,
                );
            }
            let partial = !columns.is_empty();
            let columns = if partial { columns } else { (0..rel.entry.columns.len()).collect() };
            // Relaxed: a heuristic counter (STATS-SLOT); changes made while
            // the rows are read count towards the next autoanalyze.
            let modified = rel.heap.stats.modified.load(Relaxed);
            let reader = self.xact.session.reader(&snapshot);
            let stats =
                analyze_rel(&rel, &reader, &columns, target, sample_seed(), || match cancel.take() {
                    true => Err(cancel.error()),
                    false => Ok(()),
                })?;
            rel.heap.stats.publish(stats, partial, false, modified);
        }
        Ok(Output::Command("ANALYZE".into()))
    }
}
