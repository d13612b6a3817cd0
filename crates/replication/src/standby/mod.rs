//! A hot standby: the primary's WAL received, written to the standby's own
//! log, and replayed continuously into tables that read-only sessions
//! query meanwhile.
//!
//! ```text
//!   receiver (server)  ──bytes──▶  Standby::receive   split into records, checked,
//!                                                     appended to the local WAL
//!                                      │ records
//!                                      ▼
//!                                  replay thread      Applier: versions with the
//!                                                     primary's xids; the engine's
//!                                                     Replayer: running / committed;
//!                                                     pruning; restartpoints
//! ```
//!
//! A standby starts from a checkpoint, its own (a restartpoint) or its
//! primary's (a base backup): it loads the image as frozen rows, replays
//! its local WAL from the checkpoint's redo point, and then streams from
//! where its WAL ends. Nothing is replayed that the local WAL does not
//! hold, so a standby killed at any moment restarts from its last
//! restartpoint without a new base backup.
//!
//! Dead versions are removed on the standby by its own horizon (the oldest
//! standby snapshot, and the xids replay still considers running): a
//! standby query never loses a version it needs, so there are no recovery
//! conflicts to cancel queries for (STANDBY-PRUNE in the crate README).

mod apply;
mod restartpoint;

use std::path::Path;
use std::sync::atomic::Ordering::*;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use apply::Applier;
use snapscale_engine::database::{Database, DatabaseConfig, Progress};
use snapscale_engine::durable::{lock_data_dir, read_checkpoint, write_system_identifier};
use snapscale_engine::redo;
use snapscale_storage::log::{split_records, Log, Lsn, Scan};
use snapscale_txn::RunningXacts;
use tokio::sync::mpsc;
use tracing::{info, warn};

/// How often and after how much WAL the standby takes a restartpoint.
#[derive(Clone, Copy, Debug)]
pub struct StandbyConfig {
    pub restartpoint_interval: Duration,
    pub max_wal_size: u64,
}

/// Installs a primary's checkpoint into an empty data directory (a base
/// backup), with the primary's system identifier.
pub fn install_base_backup(dir: &Path, checkpoint: &[u8], system_id: u64) -> Result<Lsn, String> {
    std::fs::create_dir_all(dir.join("wal"))
        .map_err(|e| format!("could not create \"{}\": {e}", dir.display()))?;
    write_system_identifier(dir, system_id)?;
    snapscale_storage::checkpoint::install(dir, checkpoint)
}

/// True if `dir` holds a database (a checkpoint named by a control file).
pub fn has_checkpoint(dir: &Path) -> bool {
    dir.join("control").exists()
}

/// The receiving end of a running standby (the server's WAL receiver
/// feeds it). Dropping it stops replay once what was received is applied.
pub struct Standby {
    db: Arc<Database>,
    log: Arc<Log>,
    /// Bytes of a record not yet whole, and the LSN of their first byte.
    partial: Mutex<(Lsn, Vec<u8>)>,
    records: mpsc::Sender<Vec<(Lsn, Lsn, redo::Record)>>,
    replay: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Standby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standby").finish_non_exhaustive()
    }
}

impl Standby {
    /// Opens a standby's data directory (which holds a checkpoint: its own
    /// restartpoint or a base backup), replays its local WAL, and starts
    /// the replay thread. Reads files: call it where blocking is allowed.
    pub fn open(config: DatabaseConfig, standby: StandbyConfig) -> Result<(Arc<Database>, Standby), String> {
        let durability =
            config.durability.clone().ok_or_else(|| "a standby needs a data directory".to_owned())?;
        let started = Instant::now();
        let dir = durability.data_dir.clone();
        let lock = lock_data_dir(&dir)?;
        let (redo, header, image) = read_checkpoint(&dir)?;
        let system_id = snapscale_engine::durable::system_identifier(&dir)?;
        let wal_dir = dir.join("wal");
        std::fs::create_dir_all(&wal_dir).map_err(|e| format!("could not create the WAL directory: {e}"))?;
        let mut db = Database::build_standby(&config);
        db.system_id = system_id;
        db.data_dir = Some(dir.clone());
        db._lock = Some(lock);
        let progress = Arc::new(Progress::default());
        db.recovery = Some(Arc::clone(&progress));
        let db = Arc::new(db);
        db.load(image)?;
        let start = RunningXacts {
            next_xid: header.next_xid,
            oldest_running: header.running.iter().map(|&(x, _)| x).min().unwrap_or(header.next_xid),
            xids: header.running.clone(),
        };
        let replayer = db.engine.replayer(&start);
        let mut applier = Applier::new(Arc::clone(&db), replayer, redo, header.cut, &start);
        // Replay's own session, for pruning and freezing: attached before
        // any client can take the slots.
        let mut session =
            db.engine.attach().map_err(|e| format!("replay could not attach a session: {e}"))?;
        // The local WAL from the redo point: what this standby received
        // before it stopped.
        let mut scan = Scan::new(&wal_dir, redo).map_err(|e| format!("could not read the WAL: {e}"))?;
        let mut replayed = 0u64;
        while let Some(r) = scan.next_record().map_err(|e| format!("could not read the WAL: {e}"))? {
            let Some(record) =
                redo::decode(r.kind, &r.payload).map_err(|e| format!("LSN {:X}: {e}", r.lsn))?
            else {
                continue;
            };
            applier.apply(r.lsn, record)?;
            replayed += 1;
            if replayed.is_multiple_of(FREEZE_CHECK_RECORDS) {
                db.standby_freeze(&mut session);
            }
        }
        if let (Some(why), false) = (scan.stopped(), scan.torn_tail()) {
            return Err(format!("the WAL is damaged before its end ({why}); refusing to start"));
        }
        let end = scan.end().max(redo);
        progress.received.store(end, Relaxed);
        progress.applied.store(end, Relaxed);
        if let Some(t) = applier.last_commit_time {
            progress.last_commit.store(t, Relaxed);
        }
        let log = Log::open(&wal_dir, end, durability.segment_size, durability.fsync)
            .map_err(|e| format!("could not open the WAL: {e}"))?;
        info!(
            checkpoint_redo = format!("{redo:X}"),
            wal_end = format!("{end:X}"),
            records = replayed,
            snapshot_mode = %db.engine.mode(),
            ms = started.elapsed().as_millis() as u64,
            "standby replayed its local WAL; streaming resumes at its end"
        );
        let (tx, rx) = mpsc::channel(64);
        let thread_db = Arc::clone(&db);
        let thread_log = Arc::clone(&log);
        let replay = std::thread::Builder::new()
            .name("replay".into())
            .spawn(move || replay_loop(thread_db, thread_log, applier, session, rx, standby, redo))
            .map_err(|e| format!("could not start the replay thread: {e}"))?;
        let handle = Standby {
            db: Arc::clone(&db),
            log,
            partial: Mutex::new((end, Vec::new())),
            records: tx,
            replay: Some(replay),
        };
        Ok((db, handle))
    }

    /// Where streaming must resume: the end of the WAL received (whole
    /// records).
    pub fn resume_lsn(&self) -> Lsn {
        self.partial.lock().expect("partial record poisoned").0
    }

    /// The system identifier the standby's data came from.
    pub fn system_id(&self) -> u64 {
        self.db.system_id
    }

    /// The end of the WAL written locally, made durable locally, and
    /// replayed (a standby status update's three positions).
    pub fn positions(&self) -> (Lsn, Lsn, Lsn) {
        let progress = self.db.recovery.as_ref().expect("a standby");
        // Relaxed: progress reports; a stale value only under-reports.
        let written = progress.received.load(Relaxed);
        let flushed = self.log.durable().unwrap_or(0);
        (written, flushed, progress.applied.load(Relaxed))
    }

    /// WAL bytes from the primary starting at `lsn` (where the previous
    /// ones ended). Whole records are checked, written to the local WAL
    /// and queued for replay; a trailing partial record waits for the
    /// rest. Waits while replay is far behind (the queue is bounded).
    ///
    /// A stream that starts again at [`Standby::resume_lsn`] (the primary
    /// went away, say it crashed, in the middle of a record) sends that
    /// record again from its start: what was kept of it is dropped.
    pub async fn receive(&self, lsn: Lsn, bytes: &[u8]) -> Result<(), String> {
        let batch = {
            let mut partial = self.partial.lock().expect("partial record poisoned");
            let (start, buffer) = &mut *partial;
            if lsn == *start {
                buffer.clear();
            }
            let expected = *start + buffer.len() as u64;
            if lsn != expected {
                return Err(format!(
                    "the primary sent WAL at {} but the standby expected {}",
                    snapscale_engine::format_lsn(lsn),
                    snapscale_engine::format_lsn(expected)
                ));
            }
            buffer.extend_from_slice(bytes);
            let (records, whole) = split_records(*start, buffer)
                .map_err(|e| format!("the primary sent a damaged WAL record: {e}"))?;
            if whole > 0 {
                self.log.append_raw(&buffer[..whole]).map_err(|e| e.to_string())?;
                *start += whole as u64;
                buffer.drain(..whole);
                let progress = self.db.recovery.as_ref().expect("a standby");
                // Relaxed: a progress report.
                progress.received.store(*start, Relaxed);
                self.log.flush_soon(*start);
            }
            let mut batch = Vec::with_capacity(records.len());
            for r in records {
                if let Some(record) =
                    redo::decode(r.kind, &r.payload).map_err(|e| format!("LSN {:X}: {e}", r.lsn))?
                {
                    let end = r.lsn + (snapscale_storage::log::HEADER + r.payload.len()) as u64;
                    batch.push((r.lsn, end, record));
                }
            }
            batch
        };
        if !batch.is_empty() {
            self.records.send(batch).await.map_err(|_| "the replay thread has stopped".to_owned())?;
        }
        Ok(())
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let (tx, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.records, tx));
        if let Some(t) = self.replay.take() {
            let _ = t.join();
        }
    }
}

/// How many records replay applies between two looks at the status log
/// (`Database::standby_freeze`: a round when it is half full).
const FREEZE_CHECK_RECORDS: u64 = 64;

/// The replay thread: applies batches of records (each tagged with the LSN
/// just after it), prunes, and takes restartpoints.
fn replay_loop(
    db: Arc<Database>,
    log: Arc<Log>,
    mut applier: Applier,
    mut session: snapscale_txn::Session,
    mut rx: mpsc::Receiver<Vec<(Lsn, Lsn, redo::Record)>>,
    config: StandbyConfig,
    mut redo: Lsn,
) {
    let progress = Arc::clone(db.recovery.as_ref().expect("a standby"));
    let mut last_restartpoint = Instant::now();
    let mut last_prune = Instant::now();
    while let Some(batch) = rx.blocking_recv() {
        for (i, (lsn, end, record)) in batch.into_iter().enumerate() {
            // FROZEN-XID: replay's xids fill the status log as a primary's
            // do; it is frozen and truncated here, between records.
            if (i as u64).is_multiple_of(FREEZE_CHECK_RECORDS) {
                db.standby_freeze(&mut session);
            }
            if let Err(e) = applier.apply(lsn, record) {
                // A record replay cannot apply means the standby no longer
                // mirrors the primary: stop, loudly, rather than serve it.
                tracing::error!(error = %e, "replay failed; the standby stops replaying");
                return;
            }
            // Relaxed: a progress report.
            progress.applied.store(end, Relaxed);
        }
        if let Some(t) = applier.last_commit_time {
            // Relaxed: a progress report.
            progress.last_commit.store(t, Relaxed);
        }
        if last_prune.elapsed() >= Duration::from_millis(200) {
            restartpoint::prune(&db, &mut session, &mut applier);
            last_prune = Instant::now();
        }
        let applied = progress.applied.load(Relaxed);
        if last_restartpoint.elapsed() >= config.restartpoint_interval
            || applied.saturating_sub(redo) >= config.max_wal_size
        {
            match restartpoint::take(&db, &log, &applier, applied) {
                Ok(at) => redo = at,
                Err(e) => warn!(error = %e, "restartpoint failed; the WAL is kept"),
            }
            last_restartpoint = Instant::now();
        }
    }
}
