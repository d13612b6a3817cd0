//! The database every connection shares: the transaction engine, the lock
//! manager, the invalidation queue, the catalog, and the write-ahead log
//! with its checkpoints and recovery.
//!
//! Its public face is narrow: open it, attach backends (one per client
//! connection, holding a proc-array slot for its life), take checkpoints,
//! shut it down, and a few diagnostics. Everything else is the crate's own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use snapscale_lock::{LockConfig, LockManager};
use snapscale_sinval::{Sinval, SinvalConfig};
use snapscale_storage::log::{Log, Lsn};
use snapscale_txn::{Engine, EngineConfig, Session, SnapshotMode, Xid};
use snapscale_values::SqlError;

use crate::catalog::Catalog;

/// How a database is built.
#[derive(Clone, Debug)]
pub struct DatabaseConfig {
    /// Client connections at most; two more proc-array slots are kept for
    /// the checkpointer and autovacuum (PostgreSQL's auxiliary processes).
    pub max_connections: usize,
    pub snapshot_mode: SnapshotMode,
    /// The waits' defaults; sessions pass their own (`Gucs::wait_policy`).
    pub deadlock_timeout: Duration,
    pub lock_timeout: Option<Duration>,
    /// `None`: in memory only, nothing survives the process.
    pub durability: Option<Durability>,
    /// The xid logs' sizes (restart-only).
    pub xid_logs: crate::vacuum_state::XidLogs,
    /// Freezing and autovacuum.
    pub autovacuum: crate::vacuum_state::AutovacuumConfig,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            max_connections: 100,
            snapshot_mode: SnapshotMode::Csn,
            deadlock_timeout: Duration::from_secs(1),
            lock_timeout: None,
            durability: None,
            xid_logs: crate::vacuum_state::XidLogs::default(),
            autovacuum: crate::vacuum_state::AutovacuumConfig::default(),
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
    pub engine: Arc<Engine>,
    pub locks: Arc<LockManager>,
    pub sinval: Sinval,
    /// The write-ahead log; `None` keeps everything in memory.
    pub log: Option<Arc<Log>>,
    /// Commits hold it shared from appending their records until they are
    /// visible; a checkpoint takes it exclusively to read its redo point
    /// and take its snapshot (CHECKPOINT-CUT in the README).
    pub commit_gate: tokio::sync::RwLock<()>,
    pub catalog: Catalog,
    pub data_dir: Option<PathBuf>,
    /// Keeps the data directory locked against a second server.
    pub _lock: Option<std::fs::File>,
    /// The checkpointer's own proc-array session, attached at open.
    pub checkpointer: tokio::sync::Mutex<Option<Session>>,
    /// Per proc-array slot: 1 + the LSN of the first record its running
    /// transaction tree appended, or 0 (TREE-START).
    trees: Box<[AtomicU64]>,
    /// Standbys streaming from this server (WAL-RETAIN).
    pub senders: crate::wal_retention::Senders,
    /// Chosen when the data directory was created (IDENTIFY_SYSTEM).
    pub system_id: u64,
    /// A standby's replay progress; `None` on a primary.
    pub recovery: Option<Arc<Progress>>,
    next_backend: AtomicU64,
    faults: Faults,
    /// When this server started (`pg_postmaster_start_time()`), in
    /// microseconds since 2000-01-01 UTC.
    started_at: i64,
    /// What each backend is doing (pg_stat_activity).
    pub activity: crate::activity::Activity,
    /// Freezing and autovacuum's state (autovacuum.rs).
    pub autovacuum: crate::vacuum_state::State,
    /// Enum labels by oid, for recovery and replay to share them.
    pub enums: crate::user_types::EnumRegistry,
    /// Reloads asked for by `pg_reload_conf()`, for the server's reload
    /// loop (which also reloads at SIGHUP). A `Notify` keeps one permit:
    /// requests made while a reload runs lead to one more, not to none.
    pub reloads: tokio::sync::Notify,
}

/// A client connection's place in the database: a proc-array slot, held
/// from startup (so that `max_connections` is enforced before
/// authentication) until its connection ends. It becomes a
/// `Conn` (snapscale-sql).
pub struct Backend {
    pub session: Session,
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
        let db = Database::build(&config, Xid::FIRST_NORMAL);
        Arc::new(db)
    }

    pub fn build(config: &DatabaseConfig, first_xid: Xid) -> Database {
        // Two more slots: the checkpointer and the autovacuum worker
        // (PostgreSQL's auxiliary processes).
        let max_sessions = config.max_connections + 2;
        let engine = Engine::new(EngineConfig {
            max_sessions,
            snapshot_mode: config.snapshot_mode,
            first_xid,
            ..Database::engine_config(config)
        });
        let autovacuum = engine.attach().expect("a fresh engine has a slot for autovacuum");
        Database::with_engine(config, engine, Some(autovacuum))
    }

    /// A standby's database: its engine replays the primary's xids.
    pub fn build_standby(config: &DatabaseConfig) -> Database {
        // Two more slots: the checkpointer (restartpoints) and replay's
        // pruning and freezing session.
        let max_sessions = config.max_connections + 2;
        let engine = Engine::new(EngineConfig {
            max_sessions,
            snapshot_mode: config.snapshot_mode,
            standby: true,
            ..Database::engine_config(config)
        });
        Database::with_engine(config, engine, None)
    }

    /// The engine settings the database's configuration implies.
    fn engine_config(config: &DatabaseConfig) -> EngineConfig {
        let logs = config.xid_logs;
        EngineConfig {
            status_log_pages: logs.status_log_pages,
            csn_log_pages: logs.csn_log_pages,
            parent_link_pages: logs.parent_link_pages,
            log_page_bytes: logs.page_bytes,
            multixact_log_pages: logs.multixact_log_pages,
            ..EngineConfig::default()
        }
    }

    fn with_engine(config: &DatabaseConfig, engine: Arc<Engine>, autovacuum: Option<Session>) -> Database {
        let max_sessions = engine.config().max_sessions;
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
            catalog: Catalog::new(Arc::clone(&engine)),
            data_dir: None,
            _lock: None,
            checkpointer: tokio::sync::Mutex::new(Some(checkpointer)),
            next_backend: AtomicU64::new(1),
            trees: (0..max_sessions).map(|_| AtomicU64::new(0)).collect(),
            senders: crate::wal_retention::Senders::default(),
            system_id: 0,
            recovery: None,
            faults: Faults::default(),
            started_at: snapscale_values::now_micros(),
            activity: crate::activity::Activity::new(max_sessions),
            autovacuum: crate::vacuum_state::State::new(config.autovacuum.clone(), autovacuum),
            enums: Default::default(),
            reloads: tokio::sync::Notify::new(),
            engine,
        }
    }

    /// Attaches a backend for a new connection: 53300 when every slot is
    /// taken.
    pub fn attach(&self) -> Result<Backend, SqlError> {
        let session = self.engine.attach().map_err(crate::errors::txn_error)?;
        Ok(Backend { session })
    }

    /// A new backend id (temporary tables' owner).
    pub fn new_backend_id(&self) -> u64 {
        // Relaxed: only uniqueness matters.
        self.next_backend.fetch_add(1, Relaxed)
    }

    /// When the server started, in microseconds since 2000-01-01 UTC.
    pub fn started_at(&self) -> i64 {
        self.started_at
    }

    /// True on a standby (PostgreSQL's `pg_is_in_recovery()`).
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }

    /// A standby's WAL positions: received (written locally) and replayed,
    /// and the commit time of the last transaction replayed (microseconds
    /// since 2000-01-01). `None` on a primary.
    pub fn replay_progress(&self) -> Option<(Lsn, Lsn, Option<i64>)> {
        let p = self.recovery.as_ref()?;
        // Relaxed: progress reports; a stale value is a recent truth.
        let last = p.last_commit.load(Relaxed);
        Some((p.received.load(Relaxed), p.applied.load(Relaxed), (last != i64::MIN).then_some(last)))
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
    /// TREE-START: the transaction tree of `slot` appended its first record
    /// at `lsn`. Called under the commit gate held shared, with the append.
    pub fn begin_tree(&self, slot: u32, lsn: Lsn) {
        // Relaxed: written under the commit gate held shared and read under
        // it held exclusively (`oldest_tree_start`); the gate orders them.
        self.trees[slot as usize].store(lsn + 1, Relaxed);
    }

    /// The transaction tree of `slot` ended (its COMMIT or ABORT record is
    /// appended).
    pub fn end_tree(&self, slot: u32) {
        // Relaxed: a checkpoint that still reads the old start keeps more
        // WAL than it needs, never less; the next start of this slot is
        // stored under the gate.
        self.trees[slot as usize].store(0, Relaxed);
    }

    /// The first record of the oldest transaction tree that has appended
    /// any; called under the commit gate held exclusively.
    pub fn oldest_tree_start(&self) -> Option<Lsn> {
        // Relaxed: see `begin_tree`.
        self.trees.iter().map(|t| t.load(Relaxed)).filter(|&v| v != 0).min().map(|v| v - 1)
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
    pub fn maybe_panic(&self, statement: &dyn std::fmt::Display) {
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

/// A standby's replay progress, read by `pg_last_wal_receive_lsn()` and
/// friends. Each field is a report written by one thread (the WAL receiver
/// or the replay thread) and read Relaxed: a stale value is a recent truth,
/// and nothing else is published through them.
#[derive(Debug)]
pub struct Progress {
    /// The end of the WAL received and written locally.
    pub received: AtomicU64,
    /// The end of the last record replayed.
    pub applied: AtomicU64,
    /// The commit time of the last transaction replayed (microseconds since
    /// 2000-01-01), or `i64::MIN` before the first.
    pub last_commit: AtomicI64,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            received: AtomicU64::new(0),
            applied: AtomicU64::new(0),
            last_commit: AtomicI64::new(i64::MIN),
        }
    }
}
