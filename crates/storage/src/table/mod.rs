//! A table: row versions addressed by tid, with PostgreSQL's update
//! protocol.
//!
//! An update never changes a version in place: it stamps the old version's
//! xmax (and `next`) and appends the new version, whose xmin is the updater.
//! A reader (a `snapscale_txn::Reader`: session, snapshot, command id)
//! decides visibility per version;
//! a writer decides with [`Table::modify`], which answers like PostgreSQL's
//! HeapTupleSatisfiesUpdate and leaves waiting and re-checking to the caller:
//!
//! ```text
//!   BeingModified(x)  another running transaction x changed it: wait for x, retry
//!   Updated / Deleted a committed transaction changed it after our snapshot:
//!                     READ COMMITTED follows `latest` and re-checks the row,
//!                     REPEATABLE READ fails with 40001
//!   SelfModified      this transaction already changed it
//!   Invisible         it does not exist for us
//! ```
//!
//! xmax changes are serialised by the table's write lock (PostgreSQL's
//! exclusive buffer lock, table-wide here); readers take only the slot
//! vector's read lock to find versions and read headers lock-free.

use std::sync::Arc;

use snapscale_sync::atomic::{AtomicU64, Ordering::*};
use snapscale_sync::{Mutex, RwLock};
use snapscale_txn::{CommandId, Engine, Reader, Session, TxnError, Xid, XidState, XidStatus};

use crate::version::{Tid, Version, NO_TID};

/// What a write found (PostgreSQL's TM_Result).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// Done. For an update, the new version's tid.
    Ok(Tid),
    /// The version is not visible to this command.
    Invisible,
    /// Already changed by this transaction.
    SelfModified,
    /// Changed by a transaction still running: wait for it, then retry.
    BeingModified(Xid),
    /// Updated by a committed transaction into `next`.
    Updated { xmax: Xid, next: Tid },
    /// Deleted by a committed transaction.
    Deleted(Xid),
}

/// What a uniqueness check sees of a version: PostgreSQL's "dirty
/// snapshot", which counts in-progress changes of other transactions as
/// undecided instead of guessing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Liveness {
    /// Gone for everyone who could commit a conflicting row: inserted by an
    /// aborted transaction, or deleted by a committed one or by us.
    Dead,
    /// Present: inserted by a committed transaction or by us, not deleted.
    Live,
    /// Inserted by a transaction still running: wait for it, then re-check.
    Inserting(Xid),
    /// Deleted by a transaction still running: wait for it, then re-check.
    Deleting(Xid),
}

/// The kind of change.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Change {
    Update,
    Delete,
    Lock,
}

/// Errors of the storage layer.
#[derive(Debug)]
pub enum StorageError {
    /// From the transaction layer.
    Txn(TxnError),
    /// No transaction is running in the session.
    NoTransaction,
}

impl From<TxnError> for StorageError {
    fn from(e: TxnError) -> Self {
        StorageError::Txn(e)
    }
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Txn(e) => e.fmt(f),
            StorageError::NoTransaction => f.write_str("there is no transaction in progress"),
        }
    }
}

impl std::error::Error for StorageError {}

/// How a vacuum pass freezes and what it does with dead versions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct VacuumOptions {
    /// Freeze committed xmins (and clear finished lock-only or aborted
    /// xmaxes) older than this many xids before the newest completed xid,
    /// and below the cutoff (PostgreSQL's `vacuum_freeze_min_age`; 0 is
    /// VACUUM (FREEZE): everything below the cutoff).
    pub freeze_min_age: u64,
    /// Remove dead versions and reuse their tids. Without it they are only
    /// marked dead (invisible to all, their xids' status no longer needed):
    /// a table whose tids are held elsewhere (the catalog's), or a pass
    /// that must not touch indexes.
    pub remove: bool,
}

/// What a vacuum pass did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct VacuumStats {
    /// The data horizon it fixed at its start (VACUUM-CUTOFF).
    pub cutoff: Xid,
    /// Versions removed (with `remove`).
    pub removed: usize,
    /// Versions found dead and marked, removed or not.
    pub dead: usize,
    /// Versions kept.
    pub kept: usize,
    /// Versions frozen by this pass.
    pub frozen: usize,
    /// Finished lock-only or aborted xmaxes cleared by this pass.
    pub cleared: usize,
    /// The table's frozen xid after the pass ([`Table::frozen_xid`]).
    pub frozen_xid: Xid,
}

/// A table of `R` rows. See the module documentation.
pub struct Table<R> {
    slots: RwLock<Vec<Option<Arc<Version<R>>>>>,
    /// Freed tids, reused by later inserts (memory stays flat under updates).
    free: Mutex<Vec<Tid>>,
    /// Serialises xmax changes.
    write: Mutex<()>,
    /// PostgreSQL's relfrozenxid: no version of this table needs the status
    /// of an xid below it (FREEZE-TRUNCATE). Only rises.
    frozen_xid: AtomicU64,
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    /// An empty table. Its changes are logged by its user (the SQL layer's
    /// redo records): this layer keeps row versions in memory only.
    /// `frozen_xid` is its first frozen xid: at most every xid that may
    /// still stamp one of its versions, such as the engine's
    /// `oldest_considered_running` when it is created (FREEZE-TRUNCATE).
    pub fn new(frozen_xid: Xid) -> Self {
        Table {
            slots: RwLock::new(Vec::new()),
            free: Mutex::new(Vec::new()),
            write: Mutex::new(()),
            frozen_xid: AtomicU64::new(frozen_xid.0),
        }
    }

    /// The table's frozen xid (PostgreSQL's relfrozenxid): every version
    /// that carries an older xid has been frozen, cleared or marked dead.
    pub fn frozen_xid(&self) -> Xid {
        // Acquire (FREEZE-TRUNCATE): pairs with the Release fetch_max at
        // the end of `vacuum_with`; whoever truncates the status log below
        // the value read does so after that pass's marks.
        Xid(self.frozen_xid.load(Acquire))
    }

    fn cid(session: &Session) -> Result<CommandId, StorageError> {
        session.command_id().ok_or(StorageError::NoTransaction)
    }

    fn put(&self, version: Version<R>) -> Tid {
        let version = Arc::new(version);
        let reused = self.free.lock().pop();
        let mut slots = self.slots.write();
        match reused {
            Some(tid) => {
                slots[tid as usize] = Some(version);
                tid
            }
            None => {
                slots.push(Some(version));
                (slots.len() - 1) as Tid
            }
        }
    }

    fn get(&self, tid: Tid) -> Option<Arc<Version<R>>> {
        self.slots.read().get(tid as usize).and_then(Clone::clone)
    }

    /// Inserts `data` as a new version owned by the session's current
    /// (sub)transaction.
    pub fn insert(&self, session: &mut Session, data: R) -> Result<Tid, StorageError> {
        let xid = session.assign_xid()?;
        let cid = Self::cid(session)?;
        Ok(self.put(Version::new(xid, cid, data)))
    }

    /// Inserts a version every snapshot sees (xmin FROZEN): a recovered
    /// checkpoint image, or a standby's base backup.
    pub fn insert_frozen(&self, data: R) -> Tid {
        self.put(Version::new(Xid::FROZEN, 0, data))
    }

    /// Replay: a version inserted by `xid`, a transaction of the primary
    /// this standby replays (REPLAY-VERSIONS). Replay is the only writer of
    /// a standby's tables.
    pub fn replay_insert(&self, xid: Xid, data: R) -> Tid {
        self.put(Version::new(xid, 0, data))
    }

    /// Replay: `xid` updated the version at `tid` into `data`; returns the
    /// new version's tid. The old version's xmax is replaced whatever it
    /// held: on the primary the row was updated only after its previous
    /// updater ended, and replay sees the records in that order.
    pub fn replay_update(&self, tid: Tid, xid: Xid, data: R) -> Option<Tid> {
        let _write = self.write.lock();
        let v = self.get(tid)?;
        let new_tid = self.put(Version::new(xid, 0, data));
        v.set_xmax(xid, 0, false, new_tid);
        Some(new_tid)
    }

    /// Replay: `xid` deleted the version at `tid`. False if it is gone.
    pub fn replay_delete(&self, tid: Tid, xid: Xid) -> bool {
        let _write = self.write.lock();
        let Some(v) = self.get(tid) else { return false };
        v.set_xmax(xid, 0, false, NO_TID);
        true
    }

    /// Whether `reader` sees `v`; hints it learns are kept. A status
    /// truncated meanwhile means the version was marked (FREEZE-TRUNCATE):
    /// `decide` reads it again.
    fn visible(reader: &Reader<'_>, v: &Version<R>) -> bool {
        v.decide(|header| {
            let hints = v.hints_for(header);
            let visible = reader.try_sees(&header.xids, &hints)?;
            v.keep_hints(header, &hints);
            Ok(visible)
        })
    }

    /// The versions present now, so decisions run without the slot lock.
    fn versions(&self) -> Vec<(Tid, Arc<Version<R>>)> {
        self.slots
            .read()
            .iter()
            .enumerate()
            .filter_map(|(tid, v)| v.as_ref().map(|v| (tid as Tid, Arc::clone(v))))
            .collect()
    }

    /// Every version `reader` sees, with its tid.
    pub fn scan(&self, reader: &Reader<'_>) -> Vec<(Tid, R)> {
        self.versions()
            .into_iter()
            .filter(|(_, v)| Self::visible(reader, v))
            .map(|(tid, v)| (tid, v.data.clone()))
            .collect()
    }

    /// The version at `tid`, if `reader` sees it.
    pub fn fetch(&self, reader: &Reader<'_>, tid: Tid) -> Option<R> {
        let v = self.get(tid)?;
        Self::visible(reader, &v).then(|| v.data.clone())
    }

    /// The version at `tid` as a uniqueness check sees it (see
    /// [`Liveness`]; DIRTY-CHECK: in-progress changes count). A missing tid
    /// is `Dead`.
    pub fn liveness(&self, session: &Session, tid: Tid) -> Liveness {
        let Some(v) = self.get(tid) else { return Liveness::Dead };
        v.decide(|h| {
            if h.dead {
                return Ok(Liveness::Dead);
            }
            match session.try_xid_state(h.xids.xmin)? {
                XidState::Aborted => return Ok(Liveness::Dead),
                XidState::InProgress => return Ok(Liveness::Inserting(h.xids.xmin)),
                XidState::Current | XidState::Committed => {}
            }
            if !h.xids.xmax.is_valid() || h.xids.xmax_lock_only {
                return Ok(Liveness::Live);
            }
            Ok(match session.try_xid_state(h.xids.xmax)? {
                XidState::Current | XidState::Committed => Liveness::Dead,
                XidState::InProgress => Liveness::Deleting(h.xids.xmax),
                XidState::Aborted => Liveness::Live,
            })
        })
    }

    /// The data of the version at `tid`, whatever its visibility (a
    /// uniqueness check compares keys: a tid may have been reused).
    pub fn peek(&self, tid: Tid) -> Option<R> {
        self.get(tid).map(|v| v.data.clone())
    }

    /// Every version present, whatever its visibility (to build an index:
    /// like PostgreSQL's, our indexes point at versions, not rows, and
    /// readers decide visibility on the version they reach).
    pub fn all_versions(&self) -> Vec<(Tid, R)> {
        self.versions().into_iter().map(|(tid, v)| (tid, v.data.clone())).collect()
    }

    /// Follows the update chain from `tid` to the newest version whose
    /// creator committed (READ COMMITTED's re-check, PostgreSQL's
    /// EvalPlanQual fetch). A link is followed only if its updater committed
    /// (a running one: the caller's next write answers BeingModified and
    /// waits) and the next version's xmin is that updater (a reused tid
    /// breaks the chain, as PostgreSQL's ctid check does).
    pub fn latest(&self, session: &Session, tid: Tid) -> Option<(Tid, R)> {
        let mut tid = tid;
        let mut v = self.get(tid)?;
        loop {
            let link = v.decide(|h| {
                if h.dead || h.next == NO_TID || h.xids.xmax_lock_only {
                    return Ok(None);
                }
                Ok((session.try_xid_state(h.xids.xmax)? == XidState::Committed)
                    .then_some((h.next, h.xids.xmax)))
            });
            let Some((next, updater)) = link else { return Some((tid, v.data.clone())) };
            match self.get(next) {
                Some(n) if n.raw_xmin() == updater => {
                    tid = next;
                    v = n;
                }
                _ => return Some((tid, v.data.clone())),
            }
        }
    }

    /// Updates the version at `tid` to `data`.
    pub fn update(&self, session: &mut Session, tid: Tid, data: R) -> Result<Outcome, StorageError> {
        self.modify(session, tid, Change::Update, Some(data))
    }

    /// Deletes the version at `tid`.
    pub fn delete(&self, session: &mut Session, tid: Tid) -> Result<Outcome, StorageError> {
        self.modify(session, tid, Change::Delete, None)
    }

    /// Locks the version at `tid` (SELECT FOR UPDATE; FOR SHARE is treated
    /// as FOR UPDATE until multixacts exist).
    pub fn lock_row(&self, session: &mut Session, tid: Tid) -> Result<Outcome, StorageError> {
        self.modify(session, tid, Change::Lock, None)
    }

    /// UPDATE-OUTCOME: decides as PostgreSQL's HeapTupleSatisfiesUpdate and
    /// leaves waiting and re-checking to the caller.
    fn modify(
        &self,
        session: &mut Session,
        tid: Tid,
        change: Change,
        data: Option<R>,
    ) -> Result<Outcome, StorageError> {
        // The xid first: assignment may wait on nothing but must not happen
        // under our write lock (it takes the xid generator lock).
        let xid = session.assign_xid()?;
        let cid = Self::cid(session)?;
        let _write = self.write.lock();
        let Some(v) = self.get(tid) else { return Ok(Outcome::Invisible) };
        // `Err(outcome)`: decided without a change. Vacuum may freeze or
        // mark the version meanwhile, but not clear its xmax: that needs
        // the write lock we hold.
        let decided = v.decide(|h| {
            if h.dead {
                return Ok(Err(Outcome::Invisible));
            }
            // The inserter must be visible to this command.
            if session.is_current_xid(h.xids.xmin) {
                if v.cmin >= cid {
                    return Ok(Err(Outcome::Invisible));
                }
            } else if session.try_xid_state(h.xids.xmin)? != XidState::Committed {
                return Ok(Err(Outcome::Invisible));
            }
            // The current deleter or locker, if it still counts.
            let xmax = h.xids.xmax;
            if xmax.is_valid() {
                match session.try_xid_state(xmax)? {
                    XidState::Current if h.xids.xmax_lock_only => {} // our own lock
                    XidState::Current => return Ok(Err(Outcome::SelfModified)),
                    XidState::InProgress => return Ok(Err(Outcome::BeingModified(xmax))),
                    XidState::Committed if h.xids.xmax_lock_only => {} // the locker ended
                    XidState::Committed if h.next != NO_TID => {
                        return Ok(Err(Outcome::Updated { xmax, next: h.next }));
                    }
                    XidState::Committed => return Ok(Err(Outcome::Deleted(xmax))),
                    XidState::Aborted => {}
                }
            }
            Ok(Ok(()))
        });
        if let Err(outcome) = decided {
            return Ok(outcome);
        }
        match change {
            Change::Lock => {
                v.set_xmax(xid, cid, true, NO_TID);
                Ok(Outcome::Ok(tid))
            }
            Change::Delete => {
                v.set_xmax(xid, cid, false, NO_TID);
                Ok(Outcome::Ok(tid))
            }
            Change::Update => {
                let new = Version::new(xid, cid, data.expect("an update carries a row"));
                let new_tid = self.put(new);
                v.set_xmax(xid, cid, false, new_tid);
                Ok(Outcome::Ok(new_tid))
            }
        }
    }

    /// Removes versions no snapshot can see any more (PostgreSQL's VACUUM)
    /// and freezes those every snapshot sees, with `freeze_min_age` 0 (see
    /// [`Table::vacuum_with`]). Returns how many were removed; their tids
    /// are reused.
    pub fn vacuum(&self, session: &mut Session) -> usize {
        self.vacuum_with(session, VacuumOptions { freeze_min_age: 0, remove: true }, |_| {}).removed
    }

    /// One vacuum pass (PostgreSQL's lazy VACUUM), by one accurate cutoff
    /// fixed at its start, the data horizon (VACUUM-CUTOFF: OldestXmin; not
    /// GlobalVis, whose cheap test may answer "needed" conservatively;
    /// horizons can move back later, but everything below the cutoff is
    /// removable for good, pg-snapshot-internals §10.2):
    ///
    /// * a version whose inserter aborted, or whose deleter (not a mere
    ///   locker) committed below the cutoff, is dead: marked so, and with
    ///   `remove` taken out of the table, `before_reuse` getting the
    ///   removed versions before their tids can be reused (so that indexes
    ///   drop their entries first);
    /// * a kept version whose inserter committed below the freeze limit
    ///   (the cutoff, or `freeze_min_age` xids before the newest completed
    ///   xid if that is older) is frozen, and a finished lock-only or
    ///   aborted xmax below it is cleared, under the write lock;
    /// * the table's frozen xid rises to the oldest xid a kept version
    ///   still shows, or the cutoff (FREEZE-TRUNCATE): every version that
    ///   shows an older one was marked, and versions added later carry xids
    ///   of transactions running at the cutoff or after, none below it.
    pub fn vacuum_with(
        &self,
        session: &mut Session,
        options: VacuumOptions,
        before_reuse: impl FnOnce(&[(Tid, R)]),
    ) -> VacuumStats {
        let horizons = session.engine().compute_horizons();
        let cutoff = horizons.data_oldest_nonremovable;
        let newest = horizons.latest_completed.next().0;
        let freeze_limit = cutoff.min(Xid(newest.saturating_sub(options.freeze_min_age)));
        let mut stats = VacuumStats { cutoff, ..VacuumStats::default() };
        // The oldest xid a kept version still shows.
        let mut oldest = cutoff;
        let mut dead = Vec::new();
        let mut clear = Vec::new();
        for (tid, v) in self.versions() {
            let verdict = v.decide(|h| {
                if h.dead {
                    return Ok(None);
                }
                let xmin = h.xids.xmin;
                let xmin_state = session.try_xid_state(xmin)?;
                if xmin_state == XidState::Aborted {
                    return Ok(None);
                }
                let xmax = h.xids.xmax;
                let xmax_state = if xmax.is_valid() { Some(session.try_xid_state(xmax)?) } else { None };
                if xmax_state == Some(XidState::Committed) && !h.xids.xmax_lock_only && xmax < cutoff {
                    return Ok(None);
                }
                let freeze = xmin_state == XidState::Committed && xmin.is_normal() && xmin < freeze_limit;
                let finished_lock = h.xids.xmax_lock_only && xmax_state == Some(XidState::Committed);
                let clear = xmax < freeze_limit && (finished_lock || xmax_state == Some(XidState::Aborted));
                Ok(Some((freeze, clear, xmin, xmax)))
            });
            let Some((freeze, clear_xmax, xmin, xmax)) = verdict else {
                v.mark_dead();
                stats.dead += 1;
                dead.push((tid, v));
                continue;
            };
            stats.kept += 1;
            if freeze {
                v.mark_frozen();
                stats.frozen += 1;
            } else if xmin.is_normal() {
                oldest = oldest.min(xmin);
            }
            if clear_xmax {
                clear.push((v, xmax));
            } else if xmax.is_valid() {
                oldest = oldest.min(xmax);
            }
        }
        if !clear.is_empty() {
            // Under the write lock, as every xmax change: a writer that
            // installed another xmax meanwhile (a transaction running now,
            // so at or above the cutoff) keeps it.
            let _write = self.write.lock();
            for (v, xmax) in clear {
                let h = v.header();
                if h.xids.xmax == xmax {
                    v.set_xmax(Xid::INVALID, 0, false, NO_TID);
                    stats.cleared += 1;
                } else if h.xids.xmax.is_valid() {
                    oldest = oldest.min(h.xids.xmax);
                }
            }
        }
        // Release (FREEZE-TRUNCATE): pairs with the Acquire load in
        // `frozen_xid`; whoever truncates the status log by the new value
        // sees every mark and cleared xmax of this pass.
        let before = self.frozen_xid.fetch_max(oldest.0, Release);
        stats.frozen_xid = Xid(before.max(oldest.0));
        if options.remove && !dead.is_empty() {
            let mut removed = Vec::with_capacity(dead.len());
            let mut slots = self.slots.write();
            for (tid, v) in &dead {
                // Another pass may have removed it (and the tid be reused).
                let slot = &mut slots[*tid as usize];
                if slot.as_ref().is_some_and(|held| Arc::ptr_eq(held, v)) {
                    *slot = None;
                    removed.push((*tid, v.data.clone()));
                }
            }
            drop(slots);
            before_reuse(&removed);
            stats.removed = removed.len();
            self.free.lock().extend(removed.iter().map(|(tid, _)| *tid));
        }
        stats
    }

    /// Versions present, live and dead: dead if vacuum marked it, if its
    /// inserter aborted, or if a deleter (not a locker) committed
    /// (PostgreSQL's n_dead_tup: some may still be visible to old
    /// snapshots). Asks the status log, not the running set, so a running
    /// transaction's versions count as live.
    pub fn count_versions(&self, engine: &Engine) -> (usize, usize) {
        let (mut live, mut dead) = (0, 0);
        for (_, v) in self.versions() {
            let is_dead = v.decide(|h| {
                if h.dead || engine.try_status(h.xids.xmin)? == XidStatus::Aborted {
                    return Ok(true);
                }
                Ok(h.xids.xmax.is_valid() && !h.xids.xmax_lock_only && engine.try_did_commit(h.xids.xmax)?)
            });
            if is_dead {
                dead += 1;
            } else {
                live += 1;
            }
        }
        (live, dead)
    }

    /// Versions present (not yet removed by vacuum).
    pub fn versions_present(&self) -> usize {
        self.slots.read().iter().filter(|v| v.is_some()).count()
    }

    /// Slots in use, dead or alive (for memory checks).
    pub fn allocated_slots(&self) -> usize {
        self.slots.read().len()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use snapscale_txn::{EngineConfig, IsolationLevel, SnapshotMode};

    use super::*;

    /// FREEZE-TRUNCATE's re-read, deterministically: a reader reads a
    /// header (not frozen yet), then vacuum freezes the version, the
    /// engine's frozen xid passes it, and the status log reuses its page,
    /// all before the reader asks the status log. The reader is told the
    /// status is gone, reads the header again and finds it frozen.
    #[test]
    fn a_reader_that_finds_a_status_gone_reads_the_header_again() {
        for mode in SnapshotMode::ALL {
            let e = Engine::new(EngineConfig {
                max_sessions: 4,
                snapshot_mode: mode,
                status_log_pages: 2,
                csn_log_pages: 64,
                log_page_bytes: 64,
                ..EngineConfig::default()
            });
            let t = Table::<u8>::new(e.compute_horizons().oldest_considered_running);
            let mut w = e.attach().unwrap();
            w.begin(IsolationLevel::ReadCommitted).unwrap();
            let tid = t.insert(&mut w, 1).unwrap();
            w.commit().unwrap();
            let per_page = 256;
            for _ in 0..per_page {
                w.begin(IsolationLevel::ReadCommitted).unwrap();
                w.assign_xid().unwrap();
                w.commit().unwrap();
            }
            let mut r = e.attach().unwrap();
            r.begin(IsolationLevel::RepeatableRead).unwrap();
            let snap = r.statement_snapshot().unwrap();
            let reader = r.reader(&snap);
            let v = t.get(tid).unwrap();
            let mut calls = 0;
            let seen = v.decide(|h| {
                calls += 1;
                if calls == 1 {
                    assert_ne!(h.xids.xmin, Xid::FROZEN, "{mode}");
                    // Everything happens between the header read and the
                    // status lookup.
                    let mut vac = e.attach().unwrap();
                    let options = VacuumOptions { freeze_min_age: 0, remove: true };
                    assert_eq!(t.vacuum_with(&mut vac, options, |_| {}).frozen, 1, "{mode}");
                    e.advance_frozen_xid(t.frozen_xid());
                    for _ in 0..per_page {
                        w.begin(IsolationLevel::ReadCommitted).unwrap();
                        w.assign_xid().unwrap();
                        w.commit().unwrap();
                    }
                    assert!(e.try_did_commit(v.raw_xmin()).is_err(), "{mode}: the status is gone");
                } else {
                    assert_eq!(h.xids.xmin, Xid::FROZEN, "{mode}: read again, frozen");
                }
                reader.try_sees(&h.xids, &v.hints_for(h))
            });
            assert!(seen, "{mode}");
            assert_eq!(calls, 2, "{mode}: one re-read");
        }
    }
}
