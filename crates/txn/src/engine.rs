//! The engine: the shared state every session of one server works against.

use std::fmt;
use std::str::FromStr;

use crate::clog::{Clog, XidStatus};
use crate::error::TxnError;
use crate::procarray::{ProcArray, SubxidState};
use crate::snapshot::{Builder, SharedCache, Snapshot};
use crate::subtrans::SubTrans;
use crate::sync::atomic::Ordering::Relaxed;
use crate::xid::Xid;
use std::sync::Arc;

/// How snapshots are taken (DESIGN.md decision 3). Chosen when the engine is
/// built, so every strategy can be compared on one binary.
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
}

impl SnapshotMode {
    /// Every mode, in the order the lab reports them.
    pub const ALL: [SnapshotMode; 5] = [
        SnapshotMode::PgProc,
        SnapshotMode::PgXact,
        SnapshotMode::Dense,
        SnapshotMode::DenseCached,
        SnapshotMode::SharedCached,
    ];

    /// The setting's spelling (`snapshot_mode = dense-cached`).
    pub fn name(self) -> &'static str {
        match self {
            SnapshotMode::PgProc => "pgproc",
            SnapshotMode::PgXact => "pgxact",
            SnapshotMode::Dense => "dense",
            SnapshotMode::DenseCached => "dense-cached",
            SnapshotMode::SharedCached => "shared-cached",
        }
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
        SnapshotMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = SnapshotMode::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "invalid snapshot_mode \"{s}\" (valid: {})",
                    names.join(", ")
                )
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
    /// Pages in the commit-status log ring (32 768 xids each): the bound on
    /// how many xids may separate the oldest unfinished one from the newest.
    pub status_log_pages: usize,
    /// Debug check: whenever a snapshot is reused or copied from the shared
    /// cache, also build one from scratch under the same lock and assert that
    /// both give the same answer for every listed xid (SNAPSHOT-REUSE).
    pub verify_reuse: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            max_sessions: 100,
            snapshot_mode: SnapshotMode::Dense,
            status_log_pages: 4096,
            verify_reuse: false,
        }
    }
}

/// Shared transaction state: the proc array, the xid generator, the
/// commit-status log and subtransaction parents.
pub struct Engine {
    pub(crate) config: EngineConfig,
    pub(crate) procarray: ProcArray,
    pub(crate) clog: Clog,
    pub(crate) subtrans: SubTrans,
    pub(crate) shared_cache: Option<SharedCache>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What taking a snapshot did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Taken {
    /// Built from the proc array (`global_xmin` is set by legacy modes).
    Built { global_xmin: Option<Xid> },
    /// The previous snapshot was reused (dense-cached).
    Reused,
    /// Copied from the shared cache (shared-cached).
    Copied,
}

impl Engine {
    /// Builds an engine.
    pub fn new(config: EngineConfig) -> Arc<Engine> {
        assert!(config.max_sessions > 0, "max_sessions must be positive");
        // Parent links use one word per xid, 32 times the status log's
        // density; give them the same xid capacity.
        let subtrans_pages = config.status_log_pages * 32;
        Arc::new(Engine {
            procarray: ProcArray::new(config.max_sessions, config.snapshot_mode),
            clog: Clog::new(config.status_log_pages),
            subtrans: SubTrans::new(subtrans_pages),
            shared_cache: (config.snapshot_mode == SnapshotMode::SharedCached)
                .then(SharedCache::new),
            config,
        })
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
    pub fn status(&self, xid: Xid) -> XidStatus {
        self.clog.status(xid, &self.subtrans)
    }

    /// True if `xid`'s transaction tree committed.
    pub fn did_commit(&self, xid: Xid) -> bool {
        self.clog.did_commit(xid, &self.subtrans)
    }

    /// The parent of a subtransaction xid, or `Xid::INVALID` for a top-level one.
    pub fn parent_of(&self, xid: Xid) -> Xid {
        self.subtrans.parent(xid)
    }

    /// Hands out a new xid to `slot`, as a subxid of `parent` if given, and
    /// publishes it before the generator lock is released (XID-PUBLISH).
    pub(crate) fn assign_xid(
        &self,
        slot: u32,
        parent: Option<Xid>,
        state: &mut SubxidState,
    ) -> Result<Xid, TxnError> {
        let mut next = self.procarray.next_xid.lock();
        let xid = *next;
        // Extend both logs before the xid exists anywhere, so nobody can look
        // it up on a page that is not ready (XIDMAP-EXTEND).
        if !self.clog.map().extend(xid) || !self.subtrans.map().extend(xid) {
            return Err(TxnError::XidSpaceExhausted {
                oldest: self.clog.map().oldest(),
                capacity: self.clog.map().capacity_xids(),
            });
        }
        *next = xid.next();
        match parent {
            None => self.procarray.publish_top_xid(slot, xid),
            Some(parent) => {
                self.subtrans.set_parent(xid, parent);
                *state = self.procarray.publish_subxid(slot, *state, xid);
            }
        }
        Ok(xid)
    }

    /// Takes a snapshot for `me`, into (or reusing) `buffer`.
    pub(crate) fn take_snapshot(
        &self,
        me: Builder,
        own_subxids: &[Xid],
        buffer: &mut Option<Arc<Snapshot>>,
    ) -> Taken {
        let members = self.procarray.lock.read();
        if self.config.snapshot_mode == SnapshotMode::DenseCached {
            if let Some(prev) = buffer.as_ref() {
                // SNAPSHOT-REUSE: no xid-bearing transaction completed since
                // `prev` was built, so a rebuild would mean the same thing.
                if prev.completion_count == members.completion_count {
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
                *buffer = Some(Arc::new(Snapshot {
                    xip: Vec::with_capacity(capacity),
                    ..Snapshot::default()
                }));
                Arc::get_mut(buffer.as_mut().expect("just set")).expect("fresh Arc is unique")
            }
        };
        match &self.shared_cache {
            Some(cache) => {
                let outcome = cache.snapshot(&self.procarray, &members, me, own_subxids, snap);
                if self.config.verify_reuse && outcome == crate::snapshot::CacheOutcome::Copied {
                    self.verify_equivalent(&members, me, snap);
                }
                match outcome {
                    crate::snapshot::CacheOutcome::Copied => Taken::Copied,
                    crate::snapshot::CacheOutcome::Built => Taken::Built { global_xmin: None },
                }
            }
            None => {
                let info = self.procarray.build(&members, me, false, snap);
                Taken::Built {
                    global_xmin: info.global_xmin,
                }
            }
        }
    }

    /// SNAPSHOT-REUSE check: `snap` must answer like a fresh build would.
    fn verify_equivalent(&self, members: &crate::procarray::Members, me: Builder, snap: &Snapshot) {
        let mut fresh = Snapshot::default();
        self.procarray.build(members, me, false, &mut fresh);
        assert_eq!(
            (snap.xmin, snap.xmax),
            (fresh.xmin, fresh.xmax),
            "SNAPSHOT-REUSE violated: bounds differ"
        );
        let probes = snap
            .xip
            .iter()
            .chain(&snap.subxip)
            .chain(&fresh.xip)
            .chain(&fresh.subxip);
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
}
