//! The database every connection shares: the transaction engine, the lock
//! manager, the invalidation queue, the catalog, and the write-ahead log
//! with its checkpoints and recovery.
//!
//! Its public face is narrow: open it, attach backends (one per client
//! connection, holding a proc-array slot for its life), take checkpoints,
//! shut it down, and a few diagnostics. Everything else is the crate's own.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use snapscale_lock::{LockConfig, LockManager};
use snapscale_sinval::{Sinval, SinvalConfig};
use snapscale_storage::checkpoint;
use snapscale_storage::log::{Log, Lsn};
use snapscale_txn::{Engine, EngineConfig, IsolationLevel, Session, SnapshotMode};
use tracing::info;

use crate::catalog::{Catalog, Row};
use crate::error::SqlError;
use crate::redo::{self, Image};
use crate::sqlstate::SqlState;
use crate::types::Value;

/// How a database is built.
#[derive(Clone, Debug)]
pub struct DatabaseConfig {
    /// Client connections at most; one more proc-array slot is kept for the
    /// checkpointer (PostgreSQL's auxiliary process).
    pub max_connections: usize,
    pub snapshot_mode: SnapshotMode,
    /// The waits' defaults; sessions pass their own (`Gucs::wait_policy`).
    pub deadlock_timeout: Duration,
    pub lock_timeout: Option<Duration>,
    /// `None`: in memory only, nothing survives the process.
    pub durability: Option<Durability>,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            max_connections: 100,
            snapshot_mode: SnapshotMode::Csn,
            deadlock_timeout: Duration::from_secs(1),
            lock_timeout: None,
            durability: None,
        }
    }
}

/// How the write-ahead log is set up.
#[derive(Clone, Debug)]
pub struct Durability {
    pub data_dir: PathBuf,
    pub fsync: bool,
    pub segment_size: u64,
}

/// Everything the connections share.
pub struct Database {
    pub(crate) engine: Arc<Engine>,
    pub(crate) locks: Arc<LockManager>,
    pub(crate) sinval: Sinval,
    /// The write-ahead log; `None` keeps everything in memory.
    pub(crate) log: Option<Arc<Log>>,
    /// Commits hold it shared from appending their records until they are
    /// visible; a checkpoint takes it exclusively to read its redo point
    /// and take its snapshot (CHECKPOINT-CUT in the README).
    pub(crate) commit_gate: tokio::sync::RwLock<()>,
    pub(crate) catalog: Catalog,
    data_dir: Option<PathBuf>,
    /// Keeps the data directory locked against a second server.
    _lock: Option<std::fs::File>,
    /// The checkpointer's own proc-array session, attached at open.
    checkpointer: tokio::sync::Mutex<Option<Session>>,
    next_backend: AtomicU64,
    faults: Faults,
}

/// A client connection's place in the database: a proc-array slot, held
/// from startup (so that `max_connections` is enforced before
/// authentication) until its connection ends. It becomes a
/// [`crate::Conn`].
pub struct Backend {
    pub(crate) session: Session,
}

impl Backend {
    /// The process id clients see (BackendKeyData, cancel requests).
    pub fn pid(&self) -> i32 {
        self.session.slot() as i32 + 1
    }
}

impl Database {
    /// An empty database in memory only (tests).
    pub fn in_memory(config: DatabaseConfig) -> Arc<Database> {
        let db = Database::build(&config);
        Arc::new(db)
    }

    fn build(config: &DatabaseConfig) -> Database {
        let max_sessions = config.max_connections + 1;
        let engine = Engine::new(EngineConfig {
            max_sessions,
            snapshot_mode: config.snapshot_mode,
            ..EngineConfig::default()
        });
        let checkpointer = engine.attach().expect("a fresh engine has a slot for the checkpointer");
        Database {
            locks: LockManager::new(LockConfig {
                max_sessions: max_sessions as u32,
                deadlock_timeout: config.deadlock_timeout,
                lock_timeout: config.lock_timeout,
            }),
            sinval: Sinval::new(SinvalConfig { max_sessions, ..SinvalConfig::default() }),
            log: None,
            commit_gate: tokio::sync::RwLock::new(()),
            catalog: Catalog::new(),
            data_dir: None,
            _lock: None,
            checkpointer: tokio::sync::Mutex::new(Some(checkpointer)),
            next_backend: AtomicU64::new(1),
            faults: Faults::default(),
            engine,
        }
    }

    /// Attaches a backend for a new connection: 53300 when every slot is
    /// taken.
    pub fn attach(&self) -> Result<Backend, SqlError> {
        let session = self
            .engine
            .attach()
            .map_err(|e| SqlError::new(SqlState::from_code(e.sqlstate()), e.to_string()))?;
        Ok(Backend { session })
    }

    /// A new backend id (temporary tables' owner).
    pub(crate) fn new_backend_id(&self) -> u64 {
        // Relaxed: only uniqueness matters.
        self.next_backend.fetch_add(1, Relaxed)
    }

    /// The snapshot strategy this database runs.
    pub fn snapshot_mode(&self) -> SnapshotMode {
        self.engine.mode()
    }

    /// Sessions attached now: connections, the checkpointer, and any
    /// recovery or maintenance session.
    pub fn attached_sessions(&self) -> usize {
        self.engine.attached_sessions()
    }

    /// Row-version slots allocated over all storages, and versions present
    /// in them (memory checks: pruning keeps both flat under updates).
    pub fn version_counts(&self) -> (usize, usize) {
        self.catalog.version_counts()
    }

    /// Number of storages (tests: rolled-back DDL leaves none behind).
    pub fn storage_count(&self) -> usize {
        self.catalog.storage_count()
    }

    /// How many locks all sessions hold (leak checks: none once every
    /// connection has gone).
    pub fn locks_held(&self) -> usize {
        (0..self.locks.config().max_sessions).map(|s| self.locks.held_locks(s).len()).sum()
    }

    /// How many lock requests are queued now (tests observe blocking here,
    /// not by sleeping).
    pub fn lock_waits(&self) -> usize {
        self.locks.waiting().len()
    }

    /// The proc-array slots whose sessions are queued for a lock now.
    pub fn waiting_slots(&self) -> Vec<u32> {
        let mut slots: Vec<u32> = self.locks.waiting().into_iter().map(|(s, _, _)| s).collect();
        slots.dedup();
        slots
    }
}

impl Database {
    /// How many lock waits the session in `slot` has begun, ever (see
    /// [`snapscale_lock::LockManager::waits_begun`]).
    pub fn waits_begun(&self, slot: u32) -> u64 {
        self.locks.waits_begun(slot)
    }
}

/// Test-only faults.
#[derive(Default)]
struct Faults {
    /// A statement whose text contains this panics after taking its locks
    /// (PANIC-CONTAINED is tested with it).
    panic_marker: RwLock<Option<String>>,
    /// Whether `panic_marker` is set: every statement reads this flag, so
    /// it is a plain load of a line nobody writes, not a lock.
    panic_armed: AtomicBool,
}

impl Database {
    /// Tests only: makes the WAL's next write or fsync fail.
    #[doc(hidden)]
    pub fn inject_wal_fault(&self, fault: snapscale_storage::log::Fault) {
        if let Some(log) = &self.log {
            log.inject_fault(fault);
        }
    }

    /// Tests only: makes every statement whose text contains `marker`
    /// panic once it holds its relation locks (`None` stops it).
    #[doc(hidden)]
    pub fn inject_panic(&self, marker: Option<&str>) {
        *self.faults.panic_marker.write().expect("panic marker poisoned") = marker.map(str::to_owned);
        // Relaxed: the marker itself is read under its lock; a statement
        // that sees the flag late merely runs before the fault is armed.
        self.faults.panic_armed.store(marker.is_some(), Relaxed);
    }

    /// Panics if `statement` carries the injected marker.
    pub(crate) fn maybe_panic(&self, statement: &dyn std::fmt::Display) {
        // Relaxed: see `inject_panic`.
        if !self.faults.panic_armed.load(Relaxed) {
            return;
        }
        let marker = self.faults.panic_marker.read().expect("panic marker poisoned");
        if let Some(m) = marker.as_deref() {
            if statement.to_string().contains(m) {
                panic!("injected panic ({m})");
            }
        }
    }
}

fn startup_error(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

impl Database {
    /// Opens the database: with `config.durability`, in its data
    /// directory, loading the latest checkpoint and replaying the WAL after
    /// it to its end (stopping at a torn or corrupt tail; transactions
    /// without a commit record are dropped), then opening the log for
    /// appending. A corrupt checkpoint stops here. Reads files: call it
    /// where blocking is allowed.
    pub fn open(config: DatabaseConfig) -> Result<Arc<Database>, String> {
        let Some(durability) = config.durability.clone() else { return Ok(Database::in_memory(config)) };
        let started = Instant::now();
        let dir = &durability.data_dir;
        std::fs::create_dir_all(dir)
            .map_err(|e| startup_error(&format!("could not create \"{}\"", dir.display()), e))?;
        let lock_path = dir.join("snapscale.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| startup_error("could not open the lock file", e))?;
        lock.try_lock().map_err(|_| {
            format!(
                "data directory \"{}\" is in use by another server (lock file {})",
                dir.display(),
                lock_path.display()
            )
        })?;
        let (redo, mut image) = match checkpoint::read_latest(dir)? {
            Some((redo, payload)) => {
                (redo, Image::decode(&payload).map_err(|e| format!("the latest checkpoint: {e}"))?)
            }
            None => (0, Image::default()),
        };
        let wal_dir = dir.join("wal");
        std::fs::create_dir_all(&wal_dir)
            .map_err(|e| startup_error("could not create the WAL directory", e))?;
        let read = snapscale_storage::log::read(&wal_dir, redo)
            .map_err(|e| startup_error("could not read the WAL", e))?;
        if let (Some(why), false) = (&read.stopped, read.torn_tail) {
            // Not a torn tail: committed WAL after this point would be lost.
            return Err(format!("the WAL is damaged before its end ({why}); refusing to start"));
        }
        let bytes = read.end.saturating_sub(redo);
        let mut pending: Vec<(u8, &[u8], Lsn)> = Vec::new();
        let mut committed = 0u64;
        for r in &read.records {
            match r.kind {
                redo::COMMIT => {
                    for (kind, payload, _) in pending.drain(..) {
                        image.apply(kind, payload).map_err(|e| format!("replaying LSN {:X}: {e}", r.lsn))?;
                    }
                    committed += 1;
                }
                redo::ABORT => pending.clear(),
                redo::CSN => {}
                kind => pending.push((kind, &r.payload, r.lsn)),
            }
        }
        // Changes with no commit after them (a batch torn after some whole
        // records) are cut off with the tail: left in place, the next
        // transaction's COMMIT would follow them and adopt them.
        let mut end = pending.first().map_or(read.end, |(_, _, lsn)| *lsn);
        let without_commit = !pending.is_empty();
        if let Some(why) = &read.stopped {
            info!(reason = %why, "the WAL ends with a torn tail; replay stops there");
        }
        if end < redo {
            // The WAL lost its tail beyond the checkpoint (fsync = off and a
            // machine crash): the checkpoint alone is consistent.
            info!(
                wal_end = format!("{end:X}"),
                redo = format!("{redo:X}"),
                "the WAL ends before the checkpoint; starting at its redo point"
            );
            end = redo;
        }
        let log = Log::open(&wal_dir, end, durability.segment_size, durability.fsync)
            .map_err(|e| startup_error("could not open the WAL", e))?;
        let mut db = Database::build(&config);
        db.log = Some(log);
        db.data_dir = Some(dir.clone());
        db._lock = Some(lock);
        let db = Arc::new(db);
        db.load(image)?;
        let elapsed = started.elapsed();
        info!(
            checkpoint_redo = format!("{redo:X}"),
            wal_end = format!("{end:X}"),
            replayed_bytes = bytes,
            transactions = committed,
            dropped_uncommitted_tail = without_commit,
            ms = elapsed.as_millis() as u64,
            mb_per_s = format!("{:.1}", bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9)),
            "recovery done"
        );
        Ok(db)
    }

    /// Loads a recovered image into tables, as one bootstrap transaction.
    fn load(&self, image: Image) -> Result<(), String> {
        self.catalog.resume_ids(image.next_oid, image.next_storage);
        if image.catalog.is_empty() {
            return Ok(());
        }
        let mut session = self.engine.attach().map_err(|e| startup_error("recovery", e))?;
        session.begin(IsolationLevel::ReadCommitted).map_err(|e| startup_error("recovery", e))?;
        let mut storages = image.storages;
        for entry in image.catalog.into_values() {
            let heap = self.catalog.create_storage_with_id(entry.storage);
            let mut max_id = 0;
            for (id, row) in storages.remove(&entry.storage).unwrap_or_default() {
                max_id = max_id.max(id);
                heap.table.insert(&mut session, Row::from(row)).map_err(|e| startup_error("recovery", e))?;
            }
            // Relaxed: before any session can insert (ROW-ID).
            heap.next_row_id.store(max_id + 1, Relaxed);
            self.catalog
                .table
                .insert(&mut session, Arc::new(entry))
                .map_err(|e| startup_error("recovery", e))?;
        }
        session.commit().map_err(|e| startup_error("recovery", e))?;
        Ok(())
    }

    /// Takes a checkpoint with the checkpointer's session: a consistent
    /// image of every permanent table as of one snapshot, taken at a redo
    /// point no commit straddles; then older WAL is removed. `None` without
    /// a WAL.
    pub async fn checkpoint(&self) -> Result<Option<Lsn>, String> {
        let (Some(log), Some(dir)) = (&self.log, &self.data_dir) else { return Ok(None) };
        let mut guard = self.checkpointer.lock().await;
        let Some(session) = guard.as_mut() else { return Ok(None) };
        let started = Instant::now();
        let (redo, snapshot) = {
            let _cut = self.commit_gate.write().await;
            let redo = log.insert_lsn();
            session.begin(IsolationLevel::RepeatableRead).map_err(|e| e.to_string())?;
            match session.statement_snapshot() {
                Ok(snapshot) => (redo, snapshot),
                Err(e) => {
                    session.abort();
                    return Err(e.to_string());
                }
            }
        };
        let (next_oid, next_storage) = self.catalog.next_ids();
        let mut image = Image { next_oid, next_storage, ..Image::default() };
        let mut rows = 0usize;
        let reader = session.reader(&snapshot);
        for (_, entry) in self.catalog.table.scan(&reader) {
            if entry.temp_owner.is_some() {
                continue;
            }
            let Some(heap) = self.catalog.storage(entry.storage) else { continue };
            let stored = image.storages.entry(entry.storage).or_default();
            for (_, row) in heap.table.scan(&reader) {
                if let Some(Value::Int(id)) = row.last() {
                    stored.insert(*id, row.to_vec());
                    rows += 1;
                }
            }
            image.catalog.insert(entry.oid, (*entry).clone());
        }
        // Read-only: ending it by abort changes nothing.
        session.abort();
        drop(guard);
        // The WAL up to the redo point must be durable before a checkpoint
        // names it: records below it (aborts, CSNs, asynchronous commits)
        // may not have been flushed yet, and recovery must find the log
        // reaching the redo point.
        log.flush(redo).await.map_err(|e| format!("could not flush the WAL before a checkpoint: {e}"))?;
        let payload = image.encode();
        let dir = dir.clone();
        let log2 = Arc::clone(log);
        let bytes = payload.len();
        tokio::task::spawn_blocking(move || -> Result<(), String> {
            checkpoint::write(&dir, redo, &payload)
                .map_err(|e| format!("could not write a checkpoint: {e}"))?;
            log2.remove_before(redo).map_err(|e| format!("could not remove old WAL: {e}"))?;
            Ok(())
        })
        .await
        .map_err(|e| e.to_string())??;
        info!(
            redo = format!("{redo:X}"),
            rows,
            bytes,
            ms = started.elapsed().as_millis() as u64,
            "checkpoint done"
        );
        Ok(Some(redo))
    }

    /// Where the next WAL record will go (0 without a WAL).
    pub fn wal_insert_lsn(&self) -> Lsn {
        self.log.as_ref().map_or(0, |l| l.insert_lsn())
    }

    /// Bytes of WAL written since `lsn` (the checkpointer's volume trigger).
    pub fn wal_since(&self, lsn: Lsn) -> u64 {
        self.log.as_ref().map_or(0, |l| l.bytes_since(lsn))
    }

    /// Stops the WAL after a last sync (the server's shutdown, after its
    /// final checkpoint).
    pub fn shutdown(&self) {
        if let Some(log) = &self.log {
            log.shutdown();
        }
    }

    /// The data directory, if the database is durable.
    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }
}
