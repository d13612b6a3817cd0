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
//! exclusive buffer lock, table-wide here); readers take no lock: they find
//! versions in the slot vector (`slots.rs`, SLOTS-READ) and read headers
//! lock-free.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_sync::atomic::{AtomicU64, Ordering::*};
use snapscale_sync::Mutex;
use snapscale_txn::{CommandId, Engine, MultiXactId, Reader, RowLockMode, Session, TupleXids, TxnError, Xid};
use snapscale_txn::{XidState, XidStatus};

use crate::version::{Gone, Header, NewXmax, Tid, Version, NO_TID};

mod modify;
pub(crate) mod slots;
mod vacuum;

use slots::Slots;

pub use vacuum::{VacuumOptions, VacuumStats};

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

impl StorageError {
    /// PostgreSQL's SQLSTATE for this error.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            StorageError::Txn(e) => e.sqlstate(),
            StorageError::NoTransaction => SqlState::NO_ACTIVE_SQL_TRANSACTION,
        }
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
    slots: Slots<Version<R>>,
    /// Freed tids, reused by later inserts (memory stays flat under updates).
    /// Vacuum's removals hold it while they empty cells, which serialises
    /// them (`Slots::take_if`).
    free: Mutex<Vec<Tid>>,
    /// Serialises xmax changes.
    write: Mutex<()>,
    /// PostgreSQL's relfrozenxid: no version of this table needs the status
    /// of an xid below it (FREEZE-TRUNCATE). Only rises.
    frozen_xid: AtomicU64,
    /// PostgreSQL's relminmxid: no version of this table names a multixact
    /// below it (MULTI-TRUNCATE). Only rises.
    min_multi: AtomicU64,
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    /// An empty table. Its changes are logged by its user (the SQL layer's
    /// redo records): this layer keeps row versions in memory only.
    /// `frozen_xid` is its first frozen xid: at most every xid that may
    /// still stamp one of its versions, such as the engine's
    /// `oldest_considered_running` when it is created (FREEZE-TRUNCATE).
    /// Its oldest multixact starts at 0, "any", until a vacuum pass raises
    /// it ([`Table::with_min_multi`] starts it at the engine's next one).
    pub fn new(frozen_xid: Xid) -> Self {
        Self::with_min_multi(frozen_xid, MultiXactId::INVALID)
    }

    /// [`Table::new`], whose versions will name no multixact below
    /// `min_multi`: at most the engine's next multi when it is created,
    /// before anyone can lock its rows (MULTI-TRUNCATE).
    pub fn with_min_multi(frozen_xid: Xid, min_multi: MultiXactId) -> Self {
        Table {
            slots: Slots::new(),
            free: Mutex::new(Vec::new()),
            write: Mutex::new(()),
            frozen_xid: AtomicU64::new(frozen_xid.0),
            min_multi: AtomicU64::new(min_multi.0),
        }
    }

    /// The table's oldest multixact (PostgreSQL's relminmxid): no version
    /// names an older one.
    pub fn min_multi(&self) -> MultiXactId {
        // Acquire (MULTI-TRUNCATE): pairs with the Release fetch_max at the
        // end of `vacuum_with`; whoever truncates the multixact log below
        // the value read does so after that pass's replacements.
        MultiXactId(self.min_multi.load(Acquire))
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
        match reused {
            Some(tid) => {
                self.slots.set(tid, version);
                tid
            }
            None => self.slots.push(version),
        }
    }

    fn get(&self, tid: Tid) -> Option<Arc<Version<R>>> {
        self.slots.get(tid)
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
        v.set_xmax(NewXmax::Xid { xid, mode: RowLockMode::Update, lock_only: false }, 0, new_tid);
        Some(new_tid)
    }

    /// Replay: `xid` deleted the version at `tid`. False if it is gone.
    pub fn replay_delete(&self, tid: Tid, xid: Xid) -> bool {
        let _write = self.write.lock();
        let Some(v) = self.get(tid) else { return false };
        v.set_xmax(NewXmax::Xid { xid, mode: RowLockMode::Update, lock_only: false }, 0, NO_TID);
        true
    }

    /// Whether `reader` sees `v`; hints it learns are kept. A status
    /// truncated meanwhile means the version was marked (FREEZE-TRUNCATE):
    /// `decide` reads it again.
    fn visible(reader: &Reader<'_>, v: &Version<R>) -> bool {
        v.decide(|header| {
            let hints = v.hints_for(header);
            let xids = Self::readers_xids(reader.session.engine(), header)?;
            let visible = reader.try_sees(&xids, &hints).map_err(|t| Self::gone(header, t.0))?;
            v.keep_hints(header, &hints);
            Ok(visible)
        })
    }

    /// The header as a reader decides on it: a multixact xmax is its
    /// updater member (XMAX-MULTI: the lockers do not matter to readers),
    /// or no xmax at all for a multi of lockers only.
    fn readers_xids(engine: &Engine, h: &Header) -> Result<TupleXids, Gone> {
        let Some(multi) = h.multi else { return Ok(h.xids) };
        let updater = if h.xids.xmax_lock_only { None } else { engine.try_multi_updater(multi)? };
        Ok(match updater {
            Some(u) => TupleXids { xmax: u.xid, xmax_lock_only: false, ..h.xids },
            None => TupleXids { xmax: Xid::INVALID, xmax_lock_only: true, ..h.xids },
        })
    }

    /// A truncated status: the header's own xid's, or a member's.
    fn gone(h: &Header, xid: Xid) -> Gone {
        if h.multi.is_some() && xid != h.xids.xmin {
            Gone::Member(xid)
        } else {
            Gone::Status(xid)
        }
    }

    /// The xid of the header's updater or deleter (a multi's updater
    /// member), if it has one.
    fn updater(engine: &Engine, h: &Header) -> Result<Option<Xid>, Gone> {
        let xids = Self::readers_xids(engine, h)?;
        Ok((xids.xmax.is_valid() && !xids.xmax_lock_only).then_some(xids.xmax))
    }

    /// The versions present now, so decisions run without the slot lock.
    fn versions(&self) -> Vec<(Tid, Arc<Version<R>>)> {
        self.slots.present()
    }

    /// Every version `reader` sees, with its tid.
    pub fn scan(&self, reader: &Reader<'_>) -> Vec<(Tid, R)> {
        // Decided on the borrowed versions, as `fetch` decides on one.
        let mut out = Vec::new();
        self.slots.each(|tid, v| {
            if Self::visible(reader, v) {
                out.push((tid, v.data.clone()));
            }
        });
        out
    }

    /// The version at `tid`, if `reader` sees it.
    pub fn fetch(&self, reader: &Reader<'_>, tid: Tid) -> Option<R> {
        self.slots.with(tid, |v| Self::visible(reader, v).then(|| v.data.clone())).flatten()
    }

    /// The version at `tid` as a uniqueness check sees it (see
    /// [`Liveness`]; DIRTY-CHECK: in-progress changes count). A missing tid
    /// is `Dead`.
    pub fn liveness(&self, session: &Session, tid: Tid) -> Liveness {
        self.slots.with(tid, |v| Self::liveness_of(session, v)).unwrap_or(Liveness::Dead)
    }

    fn liveness_of(session: &Session, v: &Version<R>) -> Liveness {
        v.decide(|h| {
            if h.dead {
                return Ok(Liveness::Dead);
            }
            match session.try_xid_state(h.xids.xmin)? {
                XidState::Aborted => return Ok(Liveness::Dead),
                XidState::InProgress => return Ok(Liveness::Inserting(h.xids.xmin)),
                XidState::Current | XidState::Committed => {}
            }
            let Some(updater) = Self::updater(session.engine(), h)? else { return Ok(Liveness::Live) };
            Ok(match session.try_xid_state(updater).map_err(|t| Self::gone(h, t.0))? {
                XidState::Current | XidState::Committed => Liveness::Dead,
                XidState::InProgress => Liveness::Deleting(updater),
                XidState::Aborted => Liveness::Live,
            })
        })
    }

    /// The data of the version at `tid`, whatever its visibility (a
    /// uniqueness check compares keys: a tid may have been reused).
    pub fn peek(&self, tid: Tid) -> Option<R> {
        self.slots.with(tid, |v| v.data.clone())
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
                let Some(updater) = Self::updater(session.engine(), h)? else { return Ok(None) };
                let state = session.try_xid_state(updater).map_err(|t| Self::gone(h, t.0))?;
                Ok((state == XidState::Committed).then_some((h.next, updater)))
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

    /// The version of the row at `tid` that `reader` sees: `tid`'s own, or
    /// one newer along its update chain, whoever made it (WHERE CURRENT
    /// OF: a cursor names the version it read, and the row may have been
    /// updated since, by this transaction too; PostgreSQL's TID scan
    /// follows the chain the same way). `None` if the chain ends in a
    /// delete, or in versions the reader cannot see. A link is followed
    /// only to a version its updater made (a reused tid breaks the chain,
    /// as in [`Table::latest`]), so the walk ends.
    pub fn visible_along(&self, reader: &Reader<'_>, tid: Tid) -> Option<(Tid, R)> {
        let mut tid = tid;
        let mut v = self.get(tid)?;
        loop {
            if Self::visible(reader, &v) {
                return Some((tid, v.data.clone()));
            }
            let link = v.decide(|h| {
                if h.dead || h.next == NO_TID || h.xids.xmax_lock_only {
                    return Ok(None);
                }
                Ok(Self::updater(reader.session.engine(), h)?.map(|updater| (h.next, updater)))
            });
            let (next, updater) = link?;
            match self.get(next) {
                Some(n) if n.raw_xmin() == updater => {
                    tid = next;
                    v = n;
                }
                _ => return None,
            }
        }
    }

    /// Whether the version at `tid` ends its row: deleted, not updated
    /// (no newer version), by a committed transaction or by us. What
    /// [`Table::latest`] returns may be such a version: READ COMMITTED's
    /// re-check then has no row (PostgreSQL's TM_Deleted). A version
    /// updated since `latest` looked is not: its chain goes on.
    pub fn deleted(&self, session: &Session, tid: Tid) -> bool {
        self.slots
            .with(tid, |v| {
                v.decide(|h| {
                    if h.dead || h.next != NO_TID {
                        return Ok(false);
                    }
                    let Some(updater) = Self::updater(session.engine(), h)? else { return Ok(false) };
                    let state = session.try_xid_state(updater).map_err(|t| Self::gone(h, t.0))?;
                    Ok(matches!(state, XidState::Committed | XidState::Current))
                })
            })
            .unwrap_or(false)
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
                let Some(updater) = Self::updater(engine, h)? else { return Ok(false) };
                engine.try_did_commit(updater).map_err(|t| Self::gone(h, t.0))
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
        self.slots.present().len()
    }

    /// Slots in use, dead or alive (for memory checks).
    pub fn allocated_slots(&self) -> usize {
        self.slots.len() as usize
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
