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

use snapscale_sync::{Mutex, RwLock};
use snapscale_txn::{CommandId, Reader, Session, TxnError, Xid, XidState};

use crate::version::{Header, Tid, Version, NO_TID};

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

/// A table of `R` rows. See the module documentation.
pub struct Table<R> {
    slots: RwLock<Vec<Option<Arc<Version<R>>>>>,
    /// Freed tids, reused by later inserts (memory stays flat under updates).
    free: Mutex<Vec<Tid>>,
    /// Serialises xmax changes.
    write: Mutex<()>,
}

impl<R: Clone + Send + Sync + 'static> Default for Table<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    /// An empty table. Its changes are logged by its user (the SQL layer's
    /// redo records): this layer keeps row versions in memory only.
    pub fn new() -> Self {
        Table { slots: RwLock::new(Vec::new()), free: Mutex::new(Vec::new()), write: Mutex::new(()) }
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

    fn visible(reader: &Reader<'_>, v: &Version<R>, header: &Header) -> bool {
        let hints = v.hints_for(header);
        let visible = reader.sees(&header.xids, &hints);
        v.keep_hints(header, &hints);
        visible
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
            .filter(|(_, v)| Self::visible(reader, v, &v.header()))
            .map(|(tid, v)| (tid, v.data.clone()))
            .collect()
    }

    /// The version at `tid`, if `reader` sees it.
    pub fn fetch(&self, reader: &Reader<'_>, tid: Tid) -> Option<R> {
        let v = self.get(tid)?;
        Self::visible(reader, &v, &v.header()).then(|| v.data.clone())
    }

    /// The version at `tid` as a uniqueness check sees it (see
    /// [`Liveness`]; DIRTY-CHECK: in-progress changes count). A missing tid
    /// is `Dead`.
    pub fn liveness(&self, session: &Session, tid: Tid) -> Liveness {
        let Some(v) = self.get(tid) else { return Liveness::Dead };
        match session.xid_state(v.xmin) {
            XidState::Aborted => return Liveness::Dead,
            XidState::InProgress => return Liveness::Inserting(v.xmin),
            XidState::Current | XidState::Committed => {}
        }
        let h = v.header();
        if !h.xids.xmax.is_valid() || h.xids.xmax_lock_only {
            return Liveness::Live;
        }
        match session.xid_state(h.xids.xmax) {
            XidState::Current | XidState::Committed => Liveness::Dead,
            XidState::InProgress => Liveness::Deleting(h.xids.xmax),
            XidState::Aborted => Liveness::Live,
        }
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
            let h = v.header();
            if h.next == NO_TID
                || h.xids.xmax_lock_only
                || session.xid_state(h.xids.xmax) != XidState::Committed
            {
                return Some((tid, v.data.clone()));
            }
            match self.get(h.next) {
                Some(n) if n.xmin == h.xids.xmax => {
                    tid = h.next;
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
        let h = v.header();
        // The inserter must be visible to this command.
        if session.is_current_xid(v.xmin) {
            if v.cmin >= cid {
                return Ok(Outcome::Invisible);
            }
        } else if session.xid_state(v.xmin) != XidState::Committed {
            return Ok(Outcome::Invisible);
        }
        // The current deleter or locker, if it still counts.
        let xmax = h.xids.xmax;
        if xmax.is_valid() {
            match session.xid_state(xmax) {
                XidState::Current if h.xids.xmax_lock_only => {} // our own lock
                XidState::Current => return Ok(Outcome::SelfModified),
                XidState::InProgress => return Ok(Outcome::BeingModified(xmax)),
                XidState::Committed if h.xids.xmax_lock_only => {} // the locker ended
                XidState::Committed if h.next != NO_TID => {
                    return Ok(Outcome::Updated { xmax, next: h.next });
                }
                XidState::Committed => return Ok(Outcome::Deleted(xmax)),
                XidState::Aborted => {}
            }
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

    /// Removes versions no snapshot can see any more (PostgreSQL's VACUUM):
    /// inserted by an aborted transaction, or deleted (not merely locked) by
    /// a committed one below the data horizon. Like VACUUM it fixes one
    /// accurate cutoff at the start (OldestXmin) rather than asking GlobalVis,
    /// whose cheap test may answer "needed" conservatively; horizons can move
    /// back later, but everything below the cutoff is removable for good
    /// (pg-snapshot-internals §10.2). Returns how many were removed; their
    /// tids are reused.
    pub fn vacuum(&self, session: &mut Session) -> usize {
        self.vacuum_with(session, |_| {})
    }

    /// [`Table::vacuum`], calling `before_reuse` with the removed versions
    /// before their tids can be reused, so that indexes drop their entries
    /// first.
    pub fn vacuum_with(&self, session: &mut Session, before_reuse: impl FnOnce(&[(Tid, R)])) -> usize {
        // VACUUM-CUTOFF: one accurate horizon, fixed at the start.
        let cutoff = session.engine().compute_horizons().data_oldest_nonremovable;
        let mut dead = Vec::new();
        for (tid, v) in self.versions() {
            let h = v.header();
            let inserter_aborted =
                !session.is_current_xid(v.xmin) && session.xid_state(v.xmin) == XidState::Aborted;
            let deleted_for_all = h.xids.xmax.is_valid()
                && !h.xids.xmax_lock_only
                && h.xids.xmax < cutoff
                && session.xid_state(h.xids.xmax) == XidState::Committed;
            if inserter_aborted || deleted_for_all {
                dead.push((tid, v.data.clone()));
            }
        }
        if dead.is_empty() {
            return 0;
        }
        let mut slots = self.slots.write();
        for (tid, _) in &dead {
            slots[*tid as usize] = None;
        }
        drop(slots);
        before_reuse(&dead);
        self.free.lock().extend(dead.iter().map(|(tid, _)| *tid));
        dead.len()
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
