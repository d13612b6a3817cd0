//! VACUUM: pruning the versions no snapshot can see (PRUNE in the crate
//! README; the cutoff and the interlocks with readers are storage's).

use snapscale_txn::Session;

use super::Executor;
use crate::catalog::Heap;
use crate::error::SqlError;
use crate::plan::Rel;
use crate::session::Output;
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
            vacuum_heap(&mut self.xact.session, &rel.heap);
        }
        Ok(Output::Command("VACUUM".into()))
    }
}

/// Prunes a heap: removes versions no snapshot can see and their index
/// entries, before their tids can be reused (INDEX-VERSIONS).
pub(crate) fn vacuum_heap(session: &mut Session, heap: &Heap) -> usize {
    let indexes = heap.all_indexes();
    heap.table.vacuum_with(session, |dead| {
        for ix in &indexes {
            for (tid, row) in dead {
                ix.remove(&ix.key_of(row), *tid);
            }
        }
    })
}
