//! A standby's own housekeeping on the replay thread: pruning by the
//! standby's horizon, and restartpoints (a standby's checkpoints).
//!
//! A restartpoint is taken between two records, so its snapshot sees
//! exactly the commits replayed so far, and its running list is replay's
//! (`Replayer::running`). Its cut is the replay position; its redo point
//! is where the oldest transaction still running there wrote its first
//! record. It is the same file a primary writes: the standby restarts from
//! it exactly as from a base backup.

use std::sync::Arc;

use snapscale_engine::database::Database;
use snapscale_engine::redo::CheckpointHeader;
use snapscale_storage::checkpoint;
use snapscale_storage::log::{Log, Lsn};
use snapscale_txn::{IsolationLevel, Session};
use tracing::info;

use super::apply::Applier;

/// Removes versions no standby snapshot can see (and freezes those all
/// see), in every heap that changed enough since its last prune, and frees
/// dropped storage the horizon has passed (STANDBY-PRUNE). Runs on the replay thread, so
/// nothing is replayed meanwhile.
pub(super) fn prune(db: &Database, session: &mut Session, applier: &mut Applier) {
    for heap in db.catalog.storages() {
        // Relaxed: a heuristic counter (PRUNE).
        let changes = heap.changes.load(std::sync::atomic::Ordering::Relaxed);
        if changes < 1000 + heap.table.allocated_slots() as u64 / 4 {
            continue;
        }
        // Relaxed: a heuristic counter.
        heap.changes.store(0, std::sync::atomic::Ordering::Relaxed);
        // Pruning freezes too (FROZEN-XID).
        let freeze_min_age = db.xid_limits().freeze_min_age;
        heap.vacuum(session, snapscale_storage::VacuumOptions { freeze_min_age, remove: true });
    }
    applier.free_dropped(db.engine.compute_horizons().data_oldest_nonremovable);
}

/// Takes a restartpoint at replay position `applied`; returns its redo
/// point.
pub(super) fn take(
    db: &Arc<Database>,
    log: &Arc<Log>,
    applier: &Applier,
    applied: Lsn,
) -> Result<Lsn, String> {
    let dir = db.data_dir.clone().ok_or("a standby has a data directory")?;
    let started = std::time::Instant::now();
    let mut guard = db.checkpointer.blocking_lock();
    let session = guard.as_mut().ok_or("the checkpointer's session is gone")?;
    session.begin(IsolationLevel::RepeatableRead).map_err(|e| e.to_string())?;
    let snapshot = match session.statement_snapshot() {
        Ok(s) => s,
        Err(e) => {
            session.abort();
            return Err(e.to_string());
        }
    };
    let running = applier.replayer.running();
    let cut = applied;
    let redo = applier.oldest_running_start().map_or(cut, |start| start.min(cut));
    let header = CheckpointHeader { cut, next_xid: running.next_xid, running: running.xids };
    let (payload, rows) = db.image_payload(&session.reader(&snapshot), &header);
    session.abort();
    drop(guard);
    // The local WAL must reach the cut before a restartpoint names it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| format!("could not wait for the WAL: {e}"))?;
    runtime
        .block_on(log.flush(cut))
        .map_err(|e| format!("could not flush the WAL before a restartpoint: {e}"))?;
    checkpoint::write(&dir, redo, &payload).map_err(|e| format!("could not write a restartpoint: {e}"))?;
    log.remove_before(redo).map_err(|e| format!("could not remove old WAL: {e}"))?;
    info!(
        redo = format!("{redo:X}"),
        cut = format!("{cut:X}"),
        running = header.running.len(),
        rows,
        bytes = payload.len(),
        ms = started.elapsed().as_millis() as u64,
        "restartpoint done"
    );
    Ok(redo)
}
