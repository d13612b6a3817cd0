//! VACUUM: pruning the versions no snapshot can see and freezing the rest
//! (PRUNE and FROZEN-XID in the crate README; the cutoff and the
//! interlocks with readers are storage's).

use std::sync::Arc;

use snapscale_values::SqlError;

use super::Executor;
use crate::output::Output;
use crate::plan::Rel;

impl Executor<'_> {
    /// VACUUM [(FREEZE)] [tables]: every relation when none is named, the
    /// catalog's own table too; FREEZE freezes every version all snapshots
    /// see. Then the database's frozen xid advances (FROZEN-XID). Not
    /// inside a transaction block, as in PostgreSQL.
    /// With ANALYZE, the relations are analyzed after their vacuum.
    pub(crate) fn vacuum(&mut self, rels: &[Rel], analyze: bool, freeze: bool) -> Result<Output, SqlError> {
        self.refuse_in_block("VACUUM")?;
        let heaps = (!rels.is_empty()).then(|| rels.iter().map(|r| Arc::clone(&r.heap)).collect());
        let db = Arc::clone(&self.xact.db);
        let cancel = Arc::clone(&self.xact.cancel);
        db.vacuum_relations(&mut self.xact.session, heaps, freeze, || match cancel.take() {
            true => Err(cancel.error()),
            false => Ok(()),
        })?;
        if analyze {
            let targets: Vec<(Rel, Vec<usize>)> = rels.iter().map(|r| (r.clone(), Vec::new())).collect();
            self.analyze(&targets, false)?;
        }
        Ok(Output::Command("VACUUM".into()))
    }
}
