//! What the database keeps for freezing and autovacuum: the settings, the
//! worker's state and signals, and the diagnostics it reports. The
//! behaviour is in `autovacuum.rs`; this module names nothing of the
//! database, which holds a [`State`].

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use snapscale_txn::{MultiXactId, Session, Xid};

/// The autovacuum settings (PostgreSQL's names and defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct AutovacuumConfig {
    /// `autovacuum`: vacuum heaps with many dead versions. Off, the worker
    /// still freezes heaps older than `autovacuum_freeze_max_age`, as
    /// PostgreSQL still launches anti-wraparound vacuums.
    pub enabled: bool,
    /// `autovacuum_naptime`: the time between rounds.
    pub naptime: Duration,
    /// `autovacuum_vacuum_threshold`: dead versions (updates and deletes
    /// since the last vacuum) a heap needs before its scale factor counts.
    pub vacuum_threshold: u64,
    /// `autovacuum_vacuum_scale_factor`: and this fraction of its versions.
    pub vacuum_scale_factor: f64,
    /// `autovacuum_analyze_threshold`: rows changed since a table's last
    /// ANALYZE before its scale factor counts (autoanalyze).
    pub analyze_threshold: u64,
    /// `autovacuum_analyze_scale_factor`: and this fraction of its rows
    /// (reltuples).
    pub analyze_scale_factor: f64,
    /// `vacuum_freeze_min_age`: xids younger than this are not frozen.
    pub freeze_min_age: u64,
    /// `autovacuum_freeze_max_age`: a heap whose frozen xid is older is
    /// frozen whatever its dead versions.
    pub freeze_max_age: u64,
}

impl Default for AutovacuumConfig {
    fn default() -> Self {
        AutovacuumConfig {
            enabled: true,
            naptime: Duration::from_secs(60),
            vacuum_threshold: 50,
            vacuum_scale_factor: 0.2,
            analyze_threshold: 50,
            analyze_scale_factor: 0.1,
            freeze_min_age: 50_000_000,
            freeze_max_age: 200_000_000,
        }
    }
}

/// The xid logs' sizes (restart-only settings; txn's `EngineConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XidLogs {
    /// `status_log_pages`: the status log's ring (4 xids per byte).
    pub status_log_pages: usize,
    /// `csn_log_pages`: the CSN log's ring (`csn` mode; 8 bytes per xid).
    pub csn_log_pages: usize,
    /// `parent_link_pages`: the parent links' ring (8 bytes per xid); 0
    /// gives them the status log's capacity.
    pub parent_link_pages: usize,
    /// `xid_log_page_size`: bytes per page of all three, and of the
    /// multixact log (8kB).
    pub page_bytes: usize,
    /// `multixact_log_pages`: the multixact log's ring (8 bytes per member
    /// and per multi; MULTI-TRUNCATE).
    pub multixact_log_pages: usize,
}

impl Default for XidLogs {
    fn default() -> Self {
        let engine = snapscale_txn::EngineConfig::default();
        XidLogs {
            status_log_pages: engine.status_log_pages,
            csn_log_pages: engine.csn_log_pages,
            parent_link_pages: engine.parent_link_pages,
            page_bytes: engine.log_page_bytes,
            multixact_log_pages: engine.multixact_log_pages,
        }
    }
}

/// The effective limits, in xids, for a status log of `capacity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub capacity: u64,
    pub freeze_max_age: u64,
    pub freeze_min_age: u64,
    /// Beyond this span the log warns (three quarters of the capacity).
    pub warn_span: u64,
}

/// The worker's wake-ups.
#[derive(Default)]
pub struct Signal {
    /// (woken, stopping)
    pub state: Mutex<(bool, bool)>,
    pub cond: Condvar,
}

/// What the database keeps for freezing and autovacuum.
pub struct State {
    pub config: AutovacuumConfig,
    /// The worker's own proc-array slot, attached with the database.
    pub session: Mutex<Option<Session>>,
    pub signal: Arc<Signal>,
    /// An xid at or past this wakes the worker (datfrozenxid + the freeze
    /// max age); a hint, read Relaxed.
    pub wake_at: AtomicU64,
    /// Set by the first writer that wakes the worker, cleared by the round.
    pub wake_pending: AtomicBool,
    /// One writer at a time freezes everything when the status log is full.
    pub emergency: Mutex<()>,
    /// When the last "nearly full" warning was logged (µs since start).
    pub last_warning: AtomicI64,
    /// Rounds done (tests wait for one).
    pub rounds: AtomicU64,
}

impl State {
    pub fn new(config: AutovacuumConfig, session: Option<Session>) -> State {
        State {
            config,
            session: Mutex::new(session),
            signal: Arc::new(Signal::default()),
            wake_at: AtomicU64::new(u64::MAX),
            wake_pending: AtomicBool::new(false),
            emergency: Mutex::new(()),
            last_warning: AtomicI64::new(i64::MIN),
            rounds: AtomicU64::new(0),
        }
    }
}

/// What advancing the frozen xid found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrozenXid {
    /// The database's frozen xid (datfrozenxid).
    pub frozen: Xid,
    /// The relation holding it back: its name, or how it is reached.
    pub oldest: String,
    /// Where the status log is truncated now.
    pub status_log_from: Xid,
    /// The database's oldest multixact (datminmxid): the multixact log is
    /// truncated below it.
    pub oldest_multi: MultiXactId,
}

/// The xid logs' state (a diagnostic; the lab and tests read it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XidLogState {
    /// The next xid.
    pub next_xid: Xid,
    /// The database's frozen xid.
    pub frozen: Xid,
    /// Xids whose status is kept (next xid − the status log's truncation
    /// point), and how many the log can keep.
    pub status_span: u64,
    pub status_capacity: u64,
    /// Resident pages of the status log, the parent links and the CSN log,
    /// and their bytes.
    pub resident_pages: (u64, u64, u64),
    pub resident_bytes: u64,
}

/// The running autovacuum worker; dropping it stops it (and waits).
pub struct AutovacuumWorker {
    pub signal: Arc<Signal>,
    pub thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for AutovacuumWorker {
    fn drop(&mut self) {
        {
            let mut state = self.signal.state.lock().unwrap_or_else(|e| e.into_inner());
            state.1 = true;
        }
        self.signal.cond.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
