//! VACUUM: pruning the versions no snapshot can see (PRUNE in the crate
//! README; the cutoff and the interlocks with readers are storage's).

use super::Executor;
use crate::error::SqlError;
use crate::output::Output;
use crate::plan::Rel;
use crate::sqlstate::SqlState;

impl Executor<'_> {
    /// VACUUM [tables]: every relation this backend can see when none is
    /// named. Not inside a transaction block, as in PostgreSQL.
    pub(crate) fn vacuum(&mut self, rels: &[Rel], _analyze: bool) -> Result<Output, SqlError> {
        if self.in_block {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "VACUUM cannot run inside a transaction block",
            ));
        }
        let rels: Vec<Rel> = if rels.is_empty() {
            let me = self.xact.backend_id();
            let mut all = Vec::new();
            for (_, entry) in self.xact.catalog_entries()? {
                if entry.temp_owner.is_some_and(|o| o != me) {
                    continue;
                }
                if let Some(heap) = self.xact.db.catalog.storage(entry.storage) {
                    all.push(Rel { entry, heap, catalog_tid: 0 });
                }
            }
            all
        } else {
            rels.to_vec()
        };
        for rel in &rels {
            self.xact.check_cancel()?;
            rel.heap.prune(&mut self.xact.session);
        }
        Ok(Output::Command("VACUUM".into()))
    }
}
