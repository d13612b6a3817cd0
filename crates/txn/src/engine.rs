//! The engine: the shared state every session of one server works against.

use std::fmt;
use std::str::FromStr;

use crate::clog::{Clog, XidStatus};
use crate::csn::{CsnState, Memo, ACQUIRING};
use crate::error::{HeldBy, TxnError, XidLog};
use crate::multixact::MultiXactLog;
use crate::procarray::{Members, ProcArray, SubxidState};
use crate::snapshot::{Builder, CacheOutcome, SharedCache, Snapshot};
use crate::subtrans::SubTrans;
use crate::sync::atomic::{
    fence, AtomicBool, AtomicU64,
    Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst},
};
use crate::xid::Xid;
use crate::xidmap::{Extend, XidMap, PAGE_WORDS};
use std::sync::Arc;

/// How snapshots are taken: one strategy per PostgreSQL era. Chosen when
/// the engine is built, so every strategy can be compared on one binary.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum SnapshotMode {
    /// PostgreSQL before 9.2: one large struct per session.
    PgProc,
    /// PostgreSQL 9.2–13: hot fields in a small separate struct per session.
    PgXact,
    /// PostgreSQL 14: dense xid arrays, xmin on its own line, GlobalVis.
    Dense,
    /// `dense` plus reuse while no xid-bearing transaction has completed.
    DenseCached,
    /// One snapshot cached in shared state for all sessions (seed 000).
    SharedCached,
    /// Commit-sequence-number snapshots: (xmin, xmax, csn), O(1) to take.
    /// On a primary the CSN is taken at commit; on a standby replay stamps
    /// each replayed commit with the standby's own next CSN.
    Csn,
    /// Standby only (PostgreSQL 9.0–17's hot standby): snapshots copy the
    /// sorted array of primary xids replay knows as running
    /// (KnownAssignedXids); O(running xids) to take.
    KnownAssigned,
}

impl SnapshotMode {
    /// Every primary mode, in the order the lab reports them.
    pub const ALL: [SnapshotMode; 6] = [
        SnapshotMode::PgProc,
        SnapshotMode::PgXact,
        SnapshotMode::Dense,
        SnapshotMode::DenseCached,
        SnapshotMode::SharedCached,
        SnapshotMode::Csn,
    ];

    /// The modes a standby accepts.
    pub const STANDBY: [SnapshotMode; 2] = [SnapshotMode::KnownAssigned, SnapshotMode::Csn];

    /// The setting's spelling (`snapshot_mode = dense-cached`).
    pub fn name(self) -> &'static str {
        match self {
            SnapshotMode::PgProc => "pgproc",
            SnapshotMode::PgXact => "pgxact",
            SnapshotMode::Dense => "dense",
            SnapshotMode::DenseCached => "dense-cached",
            SnapshotMode::SharedCached => "shared-cached",
            SnapshotMode::Csn => "csn",
            SnapshotMode::KnownAssigned => "known-assigned",
        }
    }

    /// True for the modes a standby accepts.
    pub fn standby_capable(self) -> bool {
        SnapshotMode::STANDBY.contains(&self)
    }

    /// True for the modes a primary accepts.
    pub fn primary_capable(self) -> bool {
        SnapshotMode::ALL.contains(&self)
    }
}

impl fmt::Display for SnapshotMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SnapshotMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let every = SnapshotMode::ALL.into_iter().chain([SnapshotMode::KnownAssigned]);
        every.clone().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<_> = every.map(|m| m.name()).collect();
            format!("invalid snapshot_mode \"{s}\" (valid: {})", names.join(", "))
        })
    }
}

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Proc-array capacity: the most sessions attached at once.
    pub max_sessions: usize,
    /// The snapshot strategy.
    pub snapshot_mode: SnapshotMode,
    /// Pages in the commit-status log ring (4 xids per byte: 32 768 xids
    /// per 8 kB page): the bound on how many xids may separate the oldest
    /// unfrozen one (or the horizon, if older) from the newest.
    pub status_log_pages: usize,
    /// Pages in the CSN log ring (`csn` mode; one word per xid: 1 024 xids
    /// per 8 kB page): the bound on how far the oldest snapshot or running
    /// xid may lag the next xid.
    pub csn_log_pages: usize,
    /// Pages in the parent-link ring (one word per xid, as the CSN log): the
    /// same bound for subtransactions' parent links. 0: the status log's
    /// capacity in xids (`status_log_pages` × 32).
    pub parent_link_pages: usize,
    /// Bytes per page of all three logs: a power of two, at least 64. 8 kB
    /// (PostgreSQL's SLRU page) by default; tests shrink it, with the rings,
    /// to drive many times a log's capacity through a server quickly.
    pub log_page_bytes: usize,
    /// Debug check: whenever a snapshot is reused or copied from the shared
    /// cache, also build one from scratch under the same lock and assert that
    /// both give the same answer for every listed xid (SNAPSHOT-REUSE).
    pub verify_reuse: bool,
    /// A hot standby: xids come from the primary's WAL through the
    /// [`Replayer`](crate::Replayer), sessions are read-only, and the mode
    /// must be one of [`SnapshotMode::STANDBY`].
    pub standby: bool,
    /// The first xid a primary hands out: after a restart, one past the
    /// newest xid used before it. Every xid below it has finished (the logs'
    /// truncation floor starts there, XIDMAP-FLOOR). A standby's xid space
    /// starts where its replayer's start list says instead.
    pub first_xid: Xid,
    /// Pages in the multixact log's ring (one word per member, plus one
    /// per multi): the bound on how far the oldest multi a row version
    /// still references may lag the newest (MULTI-TRUNCATE).
    pub multixact_log_pages: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            max_sessions: 100,
            // The default since it passed the model, stress and loom checks
            // and the lab (docs/results/snapshots.md, visibility.md).
            snapshot_mode: SnapshotMode::Csn,
            status_log_pages: 4096,
            csn_log_pages: 4096,
            parent_link_pages: 0,
            log_page_bytes: PAGE_WORDS * 8,
            verify_reuse: false,
            standby: false,
            first_xid: Xid::FIRST_NORMAL,
            // Loom models every ring slot as an atomic, which the map's
            // drop visits: models that do not use the log keep it small.
            multixact_log_pages: if cfg!(loom) { 4 } else { 4096 },
        }
    }
}

/// Shared transaction state: the proc array, the xid generator, the
/// commit-status log, subtransaction parents and, per mode, the shared
/// snapshot cache or the CSN state.
pub struct Engine {
    pub(crate) config: EngineConfig,
    pub(crate) procarray: ProcArray,
    pub(crate) clog: Clog,
    pub(crate) subtrans: SubTrans,
    pub(crate) shared_cache: Option<SharedCache>,
    pub(crate) csn: Option<CsnState>,
    /// Standby: set once the replayer has been created (there is one).
    replayer_taken: AtomicBool,
    /// The frozen xid (PostgreSQL's datfrozenxid): no row version needs
    /// the status of an xid below it any more (FREEZE-TRUNCATE in the
    /// storage README). Only rises; the status log is truncated to it, or
    /// to the horizon if that is older.
    frozen_xid: AtomicU64,
    /// The multixact log (multixact.rs).
    pub(crate) multis: MultiXactLog,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine").field("config", &self.config).finish_non_exhaustive()
    }
}

/// Why an xid could not be assigned (or, on a standby, observed).
pub(crate) enum Full {
    /// This log's ring is full.
    Ring(XidLog),
    /// A log needs a new page and none below its truncation point is there
    /// to reuse: truncating first may provide one (XIDMAP-REUSE).
    WouldAllocate,
}

/// The resident pages of the xid logs, and their rings.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LogPages {
    /// Bytes per page.
    pub page_bytes: usize,
    /// Status log: pages allocated, pages in its ring.
    pub status: (u64, usize),
    /// Parent links: pages allocated, pages in the ring.
    pub parent_links: (u64, usize),
    /// CSN log (`csn` mode): pages allocated, pages in the ring.
    pub csn: Option<(u64, usize)>,
}

impl LogPages {
    /// Bytes held by the pages allocated.
    pub fn resident_bytes(&self) -> u64 {
        let pages = self.status.0 + self.parent_links.0 + self.csn.map_or(0, |c| c.0);
        pages * self.page_bytes as u64
    }
}

/// The session holding the oldest snapshot (see [`Engine::oldest_snapshot`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OldestSnapshot {
    /// Its proc-array slot.
    pub slot: u32,
    /// The xmin it advertises.
    pub xmin: Xid,
    /// How many xids have been handed out since that xmin.
    pub age_xids: u64,
}

/// What taking a snapshot did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Taken {
    /// Built from the proc array or the CSN counters (`global_xmin` is set by
    /// legacy modes).
    Built { global_xmin: Option<Xid> },
    /// The previous snapshot was reused (dense-cached).
    Reused,
    /// Copied from the shared cache (shared-cached).
    Copied,
}

impl Engine {
    /// Builds an engine.
    ///
    /// Panics on settings that contradict each other (the server validates
    /// them before): `known-assigned` on a primary, a primary-only mode on a
    /// standby, or a reserved `first_xid`.
    pub fn new(config: EngineConfig) -> Arc<Engine> {
        assert!(config.max_sessions > 0, "max_sessions must be positive");
        let mode = config.snapshot_mode;
        if config.standby {
            assert!(
                mode.standby_capable(),
                "snapshot_mode {mode} is not available on a standby (it takes known-assigned or csn)"
            );
        } else {
            assert!(
                mode.primary_capable(),
                "snapshot_mode {mode} is a standby's mode: it needs EngineConfig::standby"
            );
        }
        let first = config.first_xid;
        assert!(first.is_normal(), "first_xid {first:?} is a reserved xid");
        let page_bytes = config.log_page_bytes;
        assert!(
            page_bytes.is_power_of_two() && page_bytes >= 8 * PAGE_WORDS.min(8),
            "log_page_bytes must be a power of two of at least 64 bytes"
        );
        let page_words = page_bytes / 8;
        // Parent links use one word per xid, 32 times the status log's
        // density; by default they get the same xid capacity. They are
        // truncated as the horizon advances, so only the pages in use are
        // allocated (XIDMAP-REUSE).
        let subtrans_pages = match config.parent_link_pages {
            0 => config.status_log_pages * 32,
            n => n,
        };
        let clog = Clog::new(XidMap::with_page_words(32, config.status_log_pages, page_words));
        let subtrans = SubTrans::new(XidMap::with_page_words(1, subtrans_pages, page_words));
        let csn = (mode == SnapshotMode::Csn)
            .then(|| CsnState::new(XidMap::with_page_words(1, config.csn_log_pages, page_words), first));
        // XIDMAP-FLOOR: every xid below the first one has finished.
        clog.map().set_floor(first);
        subtrans.map().set_floor(first);
        if let Some(csn) = &csn {
            csn.log.set_floor(first);
        }
        Arc::new(Engine {
            procarray: ProcArray::new(config.max_sessions, mode, first),
            clog,
            subtrans,
            shared_cache: (mode == SnapshotMode::SharedCached).then(SharedCache::new),
            csn,
            replayer_taken: AtomicBool::new(false),
            frozen_xid: AtomicU64::new(first.0),
            multis: MultiXactLog::new(config.multixact_log_pages, page_words),
            config,
        })
    }

    /// True for a hot standby's engine (read-only sessions, xids from replay).
    pub fn is_standby(&self) -> bool {
        self.config.standby
    }

    /// `known-assigned` mode: snapshots come from KnownAssignedXids.
    pub(crate) fn is_known_assigned(&self) -> bool {
        self.config.snapshot_mode == SnapshotMode::KnownAssigned
    }

    /// Marks the standby's one replayer as created; false if it already was.
    pub(crate) fn take_replayer_slot(&self) -> bool {
        // AcqRel swap: a single flag with no data behind it; the RMW alone
        // makes exactly one caller see `false`.
        !self.replayer_taken.swap(true, AcqRel)
    }

    /// The engine's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The snapshot strategy.
    pub fn mode(&self) -> SnapshotMode {
        self.config.snapshot_mode
    }

    /// The next xid that will be handed out.
    pub fn next_xid(&self) -> Xid {
        *self.procarray.next_xid.lock()
    }

    /// The newest completed xid and the completion counter, read together.
    /// (`csn` mode does not maintain them: its commits take no lock.)
    pub fn completion_state(&self) -> (Xid, u64) {
        let members = self.procarray.lock.read();
        (members.latest_completed, members.completion_count)
    }

    /// Sessions attached right now.
    pub fn attached_sessions(&self) -> usize {
        self.procarray.lock.read().slots.len()
    }

    /// The resolved commit status of `xid` (`SubCommitted` resolved).
    /// Final only once `xid` is no longer in progress (ask that first).
    /// Panics if the status log was truncated past `xid` and its page
    /// recycled: the caller promised not to ask (XIDMAP-TRUNCATE).
    pub fn status(&self, xid: Xid) -> XidStatus {
        self.clog.status(xid, &self.subtrans)
    }

    /// True if `xid`'s transaction tree committed. Panics like
    /// [`Engine::status`] for a truncated and recycled status.
    pub fn did_commit(&self, xid: Xid) -> bool {
        self.clog.did_commit(xid, &self.subtrans)
    }

    /// [`Engine::status`], answering [`StatusTruncated`](crate::StatusTruncated)
    /// for a truncated status instead of panicking (FREEZE-TRUNCATE).
    pub fn try_status(&self, xid: Xid) -> Result<XidStatus, crate::StatusTruncated> {
        match self.clog.stored_status(xid) {
            None => Err(crate::StatusTruncated(xid)),
            Some(XidStatus::SubCommitted) => {
                Ok(if self.try_did_commit(xid)? { XidStatus::Committed } else { XidStatus::InProgress })
            }
            Some(status) => Ok(status),
        }
    }

    /// [`Engine::did_commit`], answering [`StatusTruncated`](crate::StatusTruncated)
    /// for a truncated status instead of panicking (FREEZE-TRUNCATE).
    pub fn try_did_commit(&self, xid: Xid) -> Result<bool, crate::StatusTruncated> {
        self.clog.try_did_commit(xid, &self.subtrans)
    }

    /// The parent of a subtransaction xid, or `Xid::INVALID` for a top-level one.
    pub fn parent_of(&self, xid: Xid) -> Xid {
        self.subtrans.parent(xid)
    }

    /// CSN-log loads made by visibility checks so far (`csn` mode; for the lab).
    pub fn csn_log_loads(&self) -> u64 {
        // Relaxed: a statistic.
        self.csn.as_ref().map_or(0, |c| c.log_loads.load(Relaxed))
    }

    /// Hands out a new xid to `slot`, as a subxid of `parent` if given, and
    /// publishes it before the generator lock is released (XID-PUBLISH).
    /// When a log needs a new page and has none below its truncation point
    /// to reuse (XIDMAP-REUSE), or its ring is full, the logs are first
    /// truncated ([`Engine::truncate_to_floor`]) and the assignment retried
    /// once; it may then allocate. So each log holds the pages of the xids
    /// it must still describe, plus one.
    pub(crate) fn assign_xid(
        &self,
        slot: u32,
        parent: Option<Xid>,
        state: &mut SubxidState,
    ) -> Result<Xid, TxnError> {
        match self.try_assign_xid(slot, parent, state, false) {
            Ok(xid) => Ok(xid),
            Err(_) => {
                self.truncate_to_floor();
                self.try_assign_xid(slot, parent, state, true).map_err(|full| match full {
                    Full::Ring(log) => self.exhausted(log),
                    Full::WouldAllocate => unreachable!("allowed to allocate"),
                })
            }
        }
    }

    /// Truncates the parent links and the CSN log to the current horizon,
    /// and the status log to the frozen xid or the horizon, whichever is
    /// older. Safe for the first two because no snapshot looks below its
    /// xmin and instantaneous checks go by the finished floor
    /// (XIDMAP-FLOOR); for the status log by the frozen xid's promise
    /// (FREEZE-TRUNCATE). Returns the status log's truncation point.
    pub fn truncate_to_floor(&self) -> Xid {
        let horizon = self.compute_horizons().oldest_considered_running;
        let status = horizon.min(self.frozen_xid());
        let _generator = self.procarray.next_xid.lock();
        self.clog.map().truncate(status);
        self.subtrans.map().truncate(horizon);
        if let Some(csn) = &self.csn {
            csn.log.truncate(horizon);
        }
        status
    }

    /// Extends the page of `xid` in `map`, allocating only if `may_allocate`
    /// or the map holds fewer than two pages (generator lock held).
    fn extend_log(map: &XidMap, log: XidLog, xid: Xid, may_allocate: bool) -> Result<(), Full> {
        match map.extend_with(xid, may_allocate || map.resident_pages() < 2) {
            Extend::Ready => Ok(()),
            Extend::Full => Err(Full::Ring(log)),
            Extend::WouldAllocate => Err(Full::WouldAllocate),
        }
    }

    /// Extends every log's page for `xid` (generator lock held), before the
    /// xid exists anywhere, so nobody can look it up on a page that is not
    /// ready (XIDMAP-EXTEND).
    pub(crate) fn extend_logs(&self, xid: Xid, may_allocate: bool) -> Result<(), Full> {
        Self::extend_log(self.clog.map(), XidLog::Status, xid, may_allocate)?;
        Self::extend_log(self.subtrans.map(), XidLog::ParentLinks, xid, may_allocate)?;
        if let Some(csn) = &self.csn {
            Self::extend_log(&csn.log, XidLog::Csn, xid, may_allocate)?;
        }
        Ok(())
    }

    fn try_assign_xid(
        &self,
        slot: u32,
        parent: Option<Xid>,
        state: &mut SubxidState,
        may_allocate: bool,
    ) -> Result<Xid, Full> {
        let mut next = self.procarray.next_xid.lock();
        let xid = *next;
        self.extend_logs(xid, may_allocate)?;
        *next = xid.next();
        if let Some(parent) = parent {
            self.subtrans.set_parent(xid, parent);
        }
        match &self.csn {
            // CSN mode publishes into the CSN log, not the proc array.
            Some(csn) => csn.on_assign(xid, parent),
            None => match parent {
                None => self.procarray.publish_top_xid(slot, xid),
                Some(_) => *state = self.procarray.publish_subxid(slot, *state, xid),
            },
        }
        Ok(xid)
    }

    /// The error for a full ring, naming what holds it back: the oldest
    /// snapshot or running transaction when the horizon does, or the frozen
    /// xid when the status log waits for tables to be frozen.
    pub(crate) fn exhausted(&self, log: XidLog) -> TxnError {
        let map = match (log, &self.csn) {
            (XidLog::Status, _) => self.clog.map(),
            (XidLog::ParentLinks, _) => self.subtrans.map(),
            (XidLog::Csn, Some(csn)) => &csn.log,
            (XidLog::Csn, None) => unreachable!("a CSN log only in csn mode"),
        };
        let next = self.lock_free_next_xid();
        let horizon = self.compute_horizons().oldest_considered_running;
        let frozen = self.frozen_xid();
        let held_by = if log == XidLog::Status && frozen < horizon {
            HeldBy::Unfrozen { frozen, age: next.0.saturating_sub(frozen.0) }
        } else {
            self.horizon_holder(horizon, next)
        };
        TxnError::XidSpaceExhausted { log, oldest: map.oldest(), capacity: map.capacity_xids(), held_by }
    }

    /// What holds the horizon at `horizon` back: the oldest running
    /// transaction if it is that old (a snapshot's xmin then only follows
    /// it), else the oldest snapshot.
    pub fn horizon_holder(&self, horizon: Xid, next: Xid) -> HeldBy {
        let age = |x: Xid| next.0.saturating_sub(x.0);
        match self.oldest_running_xid() {
            Some((xid, slot)) if xid <= horizon => return HeldBy::Transaction { slot, xid, age: age(xid) },
            _ => {}
        }
        match self.oldest_snapshot().filter(|o| o.xmin <= horizon) {
            Some(o) => HeldBy::Snapshot { slot: o.slot, xmin: o.xmin, age: o.age_xids },
            None => HeldBy::Transaction { slot: None, xid: horizon, age: age(horizon) },
        }
    }

    /// The oldest running xid, with its session's slot where the proc array
    /// knows it (not in `csn` mode, nor on a standby).
    fn oldest_running_xid(&self) -> Option<(Xid, Option<u32>)> {
        if let Some(csn) = &self.csn {
            let oldest = csn.oldest_active();
            return (oldest < csn.next_xid()).then_some((oldest, None));
        }
        let members = self.procarray.lock.read();
        if let Some(ka) = &members.ka {
            return ka.first_valid().map(|x| (x, None));
        }
        members
            .slots
            .iter()
            .enumerate()
            .filter_map(|(pos, &slot)| {
                // Relaxed: a diagnostic; a stale value is a recent truth.
                let xid = Xid(self.procarray.xid_cell(slot, pos).load(Relaxed));
                xid.is_valid().then_some((xid, Some(slot)))
            })
            .min_by_key(|&(xid, _)| xid)
    }

    /// The next xid, without the generator lock in `csn` mode.
    pub(crate) fn lock_free_next_xid(&self) -> Xid {
        match &self.csn {
            Some(csn) => csn.next_xid(),
            None => self.next_xid(),
        }
    }

    /// The frozen xid's cell (`truncate_logs` raises it too).
    pub(crate) fn frozen_xid_cell(&self) -> &AtomicU64 {
        &self.frozen_xid
    }

    /// The frozen xid (see [`Engine::advance_frozen_xid`]).
    pub fn frozen_xid(&self) -> Xid {
        // Acquire (FREEZE-TRUNCATE): pairs with the Release fetch_max in
        // `advance_frozen_xid`; a truncation below the value read comes
        // after the freezing its caller promised.
        Xid(self.frozen_xid.load(Acquire))
    }

    /// Raises the frozen xid to `xid` (PostgreSQL's datfrozenxid): the
    /// caller promises that no row version still needs the status of an
    /// older xid, because every version that carries one was frozen,
    /// cleared or marked dead after its table's vacuum cutoff was computed
    /// (FREEZE-TRUNCATE). The logs are then truncated
    /// ([`Engine::truncate_to_floor`]); returns the status log's truncation
    /// point.
    pub fn advance_frozen_xid(&self, xid: Xid) -> Xid {
        // Release (FREEZE-TRUNCATE): pairs with the Acquire load in
        // `frozen_xid`: whoever truncates by the new value, in this thread
        // or another, comes after the freezing that the caller did (or
        // observed with Acquire) before this call.
        self.frozen_xid.fetch_max(xid.0, Release);
        self.truncate_to_floor()
    }

    /// The xid logs' resident pages and rings.
    pub fn log_pages(&self) -> LogPages {
        let pages = |m: &XidMap| (m.resident_pages(), m.ring_pages());
        LogPages {
            page_bytes: self.clog.map().page_bytes(),
            status: pages(self.clog.map()),
            parent_links: pages(self.subtrans.map()),
            csn: self.csn.as_ref().map(|c| pages(&c.log)),
        }
    }

    /// How many xids the status log's ring describes.
    pub fn status_log_capacity(&self) -> u64 {
        self.clog.map().capacity_xids()
    }

    /// How many xids separate the status log's truncation point from the
    /// next xid: the span of xids whose status is kept, which must stay
    /// below [`Engine::status_log_capacity`].
    pub fn status_log_span(&self) -> u64 {
        self.lock_free_next_xid().0.saturating_sub(self.clog.map().oldest().0)
    }

    /// What session `slot` advertises: its top-level xid and its xmin, if
    /// any (pg_stat_activity's backend_xid and backend_xmin). A diagnostic:
    /// the values are read under the proc-array lock, which pins the slot's
    /// position, but may be stale by the time they are shown.
    pub fn backend_xids(&self, slot: u32) -> (Option<Xid>, Option<Xid>) {
        let members = self.procarray.lock.read();
        if !members.slots.contains(&slot) {
            return (None, None);
        }
        let pos = self.procarray.pos(slot);
        // Relaxed: a diagnostic; a stale value is a recent truth.
        let xid = Xid(self.procarray.xid_cell(slot, pos).load(Relaxed));
        // Relaxed: as above.
        let xmin = self.procarray.xmin_cell(slot).load(Relaxed);
        drop(members);
        (xid.is_valid().then_some(xid), (xmin != 0 && xmin != ACQUIRING).then_some(Xid(xmin)))
    }

    /// The session whose snapshots reach furthest back, and how far: what
    /// holds back every horizon and the CSN log.
    pub fn oldest_snapshot(&self) -> Option<OldestSnapshot> {
        let next = match &self.csn {
            Some(csn) => csn.next_xid(),
            None => self.next_xid(),
        };
        let members = self.procarray.lock.read();
        members
            .slots
            .iter()
            .filter_map(|&slot| {
                // Relaxed: a diagnostic; a stale value is a recent truth.
                let xmin = self.procarray.xmin_cell(slot).load(Relaxed);
                (xmin != 0 && xmin != ACQUIRING).then_some((slot, Xid(xmin)))
            })
            .min_by_key(|&(_, xmin)| xmin)
            .map(|(slot, xmin)| OldestSnapshot { slot, xmin, age_xids: next.0.saturating_sub(xmin.0) })
    }

    /// Takes a snapshot for `me`, into (or reusing) `buffer`.
    pub(crate) fn take_snapshot(
        &self,
        me: Builder,
        own_subxids: &[Xid],
        buffer: &mut Option<Arc<Snapshot>>,
    ) -> Taken {
        if let Some(csn) = &self.csn {
            self.take_csn_snapshot(csn, me, buffer);
            return Taken::Built { global_xmin: None };
        }
        let members = self.procarray.lock.read();
        if self.is_known_assigned() {
            // Standby, KnownAssignedXids (KA-CONSISTENCY): a copy of the
            // valid entries below xmax under the shared lock.
            let snap = match buffer.as_mut().and_then(Arc::get_mut) {
                Some(snap) => snap,
                None => {
                    *buffer = Some(Arc::new(Snapshot::default()));
                    Arc::get_mut(buffer.as_mut().expect("just set")).expect("fresh Arc is unique")
                }
            };
            self.procarray.build_known_assigned(&members, me, snap);
            return Taken::Built { global_xmin: None };
        }
        if self.config.snapshot_mode == SnapshotMode::DenseCached {
            if let Some(prev) = buffer.as_ref() {
                // SNAPSHOT-REUSE: no xid-bearing transaction completed since
                // `prev` was built, so a rebuild would mean the same thing.
                if prev.completion_count() == members.completion_count {
                    self.procarray.advertise_xmin(me.slot, prev.xmin);
                    if self.config.verify_reuse {
                        self.verify_equivalent(&members, me, prev);
                    }
                    return Taken::Reused;
                }
            }
        }
        let snap = match buffer.as_mut().and_then(Arc::get_mut) {
            Some(snap) => snap,
            None => {
                let capacity = members.slots.len();
                let mut fresh = Snapshot::default();
                fresh.xids_mut().xip.reserve(capacity);
                *buffer = Some(Arc::new(fresh));
                Arc::get_mut(buffer.as_mut().expect("just set")).expect("fresh Arc is unique")
            }
        };
        match &self.shared_cache {
            Some(cache) => {
                let outcome = cache.snapshot(&self.procarray, &members, me, own_subxids, snap);
                if self.config.verify_reuse && outcome == CacheOutcome::Copied {
                    self.verify_equivalent(&members, me, snap);
                }
                match outcome {
                    CacheOutcome::Copied => Taken::Copied,
                    CacheOutcome::Built => Taken::Built { global_xmin: None },
                }
            }
            None => {
                let info = self.procarray.build(&members, me, false, snap);
                Taken::Built { global_xmin: info.global_xmin }
            }
        }
    }

    /// CSN-SNAPSHOT with the CSN-ACQUIRING handshake: no lock, O(1).
    fn take_csn_snapshot(&self, csn: &CsnState, me: Builder, buffer: &mut Option<Arc<Snapshot>>) {
        let advert = self.procarray.advert(me.slot);
        // Relaxed: only this session writes its own advert.
        let advertising = advert.xmin.load(Relaxed) == 0;
        if advertising {
            // Relaxed store, then a SeqCst fence (CSN-ACQUIRING step 0),
            // pairing with the fence in CsnState::horizon_start: if that
            // fence comes first in the SeqCst order, our counter loads see
            // the horizon's counter RMWs or later values; if ours comes
            // first, the horizon scan sees ACQUIRING (or what replaces it)
            // and waits for the xmin we publish.
            advert.xmin.store(ACQUIRING, Relaxed);
            fence(SeqCst);
        }
        let acquired = csn.acquire();
        if advertising {
            // Relaxed: published by the Release xmin store below.
            advert.csn.store(acquired.csn, Relaxed);
            // Release: clears ACQUIRING; pairs with the horizon scan's
            // Acquire load, which then also sees the CSN.
            advert.xmin.store(acquired.xmin.0, Release);
        }
        let fresh = Snapshot::csn_based(
            acquired.xmin,
            acquired.xmax,
            acquired.csn,
            Some(Memo::new(acquired.xmin, acquired.xmax)),
        );
        match buffer.as_mut().and_then(Arc::get_mut) {
            Some(snap) => *snap = fresh,
            None => *buffer = Some(Arc::new(fresh)),
        }
    }

    /// SNAPSHOT-REUSE check: `snap` must answer like a fresh build would.
    fn verify_equivalent(&self, members: &Members, me: Builder, snap: &Snapshot) {
        let mut fresh = Snapshot::default();
        self.procarray.build(members, me, false, &mut fresh);
        assert_eq!(
            (snap.xmin, snap.xmax),
            (fresh.xmin, fresh.xmax),
            "SNAPSHOT-REUSE violated: bounds differ"
        );
        let probes = snap.xip().iter().chain(snap.subxip()).chain(fresh.xip()).chain(fresh.subxip());
        for &xid in probes {
            assert_eq!(
                self.xid_in_snapshot(xid, snap),
                self.xid_in_snapshot(xid, &fresh),
                "SNAPSHOT-REUSE violated for {xid:?}: reused {snap:?}, fresh {fresh:?}"
            );
        }
    }

    /// Marks a session's vacuum flag (PostgreSQL's PROC_IN_VACUUM).
    pub(crate) fn set_flags(&self, slot: u32, flags: u8) {
        let _members = self.procarray.lock.read();
        let pos = self.procarray.pos(slot);
        // Relaxed: the owner is the only writer of its own entry; builders
        // tolerate either value (see build_dense).
        self.procarray.flags_cell(slot, pos).store(flags, Relaxed);
    }

    /// Clears a session's advertised snapshot bounds without a lock
    /// (XMIN-CLEAR).
    pub(crate) fn clear_advert(&self, slot: u32) {
        self.procarray.clear_xmin(slot);
        if self.csn.is_some() {
            // Relaxed: owner-only; a stale CSN bound is only conservative.
            self.procarray.advert(slot).csn.store(0, Relaxed);
        }
    }
}
