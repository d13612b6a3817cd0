//! A session: the owner of one proc-array slot, and its transactions.
//!
//! Mirrors a PostgreSQL backend: attached for its whole life (so idle sessions
//! are visible to the snapshot machinery), one transaction at a time, lazily
//! assigned xids, a stack of subtransactions, and the snapshots it holds.
//!
//! Snapshot lifecycle (SNAPSHOT-XMIN): REPEATABLE READ takes one snapshot at
//! the first statement and keeps it; READ COMMITTED takes one per statement.
//! The slot's advertised xmin is set when the first snapshot is built (under
//! the shared lock), is advanced when snapshots are released while older
//! ones remain, and is cleared when none remain. It never moves backwards.

use std::sync::Arc;

use crate::csn::Csn;
use crate::engine::{Engine, Taken};
use crate::error::TxnError;
use crate::horizon::GlobalVis;
use crate::procarray::{SubxidState, FLAG_IN_VACUUM};
use crate::snapshot::{Builder, Snapshot};
use crate::sync::atomic::Ordering::Relaxed;
use crate::xid::{CommandId, VirtualXid, Xid};

/// Transaction isolation levels this engine implements.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum IsolationLevel {
    /// A snapshot per statement.
    #[default]
    ReadCommitted,
    /// One snapshot for the whole transaction.
    RepeatableRead,
}

/// A registered snapshot's handle (see [`Session::register_snapshot`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct SnapshotId(u64);

/// One level of the subtransaction stack (level 0 is the top level).
#[derive(Debug, Default)]
struct Level {
    /// This level's xid, once assigned.
    xid: Xid,
    /// Xids of committed (released) subtransactions below this level.
    committed_children: Vec<Xid>,
}

#[derive(Debug)]
struct Txn {
    isolation: IsolationLevel,
    vxid: VirtualXid,
    levels: Vec<Level>,
    /// State of our slot's subxid cache (the owner's copy).
    subxid_state: SubxidState,
    cid: CommandId,
    /// REPEATABLE READ: the transaction snapshot.
    txn_snapshot: Option<Arc<Snapshot>>,
    /// READ COMMITTED: the running statement's snapshot.
    statement_snapshot: Option<Arc<Snapshot>>,
    registered: Vec<(SnapshotId, Arc<Snapshot>)>,
}

impl Txn {
    fn top_xid(&self) -> Xid {
        self.levels[0].xid
    }

    /// Every live subxid: assigned to an open level or committed below one.
    fn live_subxids(&self) -> Vec<Xid> {
        let mut out = Vec::new();
        for (i, level) in self.levels.iter().enumerate() {
            if i > 0 && level.xid.is_valid() {
                out.push(level.xid);
            }
            out.extend_from_slice(&level.committed_children);
        }
        out
    }
}

/// A session attached to an [`Engine`]. Dropping it aborts any open
/// transaction and frees the slot.
#[derive(Debug)]
pub struct Session {
    pub(crate) engine: Arc<Engine>,
    pub(crate) slot: u32,
    local_counter: u64,
    txn: Option<Txn>,
    /// The last snapshot built: reused by dense-cached, and otherwise rebuilt
    /// in place when no one else holds it (PostgreSQL's static snapshot).
    buffer: Option<Arc<Snapshot>>,
    /// xmin of the most recently taken snapshot: every xid below it finished.
    pub(crate) recent_xmin: Xid,
    global_vis: GlobalVis,
    next_snapshot_id: u64,
    counters: SessionCounters,
    /// Our vacuum flag, kept locally so ending a transaction need not read
    /// the shared copy under the lock.
    in_vacuum: bool,
    /// `csn` mode: the CSN of the last transaction this session committed
    /// with an xid (the WAL records it after the commit).
    last_commit_csn: Option<Csn>,
}

/// What a session's snapshots did, for the lab.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionCounters {
    /// Snapshots built from the proc array.
    pub built: u64,
    /// Snapshots reused (dense-cached).
    pub reused: u64,
    /// Snapshots copied from the shared cache (shared-cached).
    pub copied: u64,
}

impl Engine {
    /// Attaches a new session, taking a proc-array slot for its lifetime.
    pub fn attach(self: &Arc<Self>) -> Result<Session, TxnError> {
        let slot =
            self.procarray.attach().ok_or(TxnError::TooManySessions { max: self.procarray.capacity() })?;
        Ok(Session {
            engine: Arc::clone(self),
            slot,
            local_counter: 0,
            txn: None,
            buffer: None,
            recent_xmin: Xid::INVALID,
            global_vis: GlobalVis::default(),
            next_snapshot_id: 1,
            counters: SessionCounters::default(),
            in_vacuum: false,
            last_commit_csn: None,
        })
    }
}

impl Session {
    /// The engine this session belongs to.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// This session's proc-array slot.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Snapshot statistics.
    pub fn counters(&self) -> SessionCounters {
        self.counters
    }

    /// True inside a transaction.
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// The running transaction's virtual xid.
    pub fn vxid(&self) -> Option<VirtualXid> {
        self.txn.as_ref().map(|t| t.vxid)
    }

    /// The top-level xid, if one was assigned.
    pub fn xid(&self) -> Option<Xid> {
        self.txn.as_ref().map(|t| t.top_xid()).filter(|x| x.is_valid())
    }

    /// The running transaction's isolation level.
    pub fn isolation(&self) -> Option<IsolationLevel> {
        self.txn.as_ref().map(|t| t.isolation)
    }

    /// The current command id.
    pub fn command_id(&self) -> Option<CommandId> {
        self.txn.as_ref().map(|t| t.cid)
    }

    /// The subtransaction nesting depth (0 = top level only).
    pub fn depth(&self) -> usize {
        self.txn.as_ref().map_or(0, |t| t.levels.len() - 1)
    }

    /// The slot's advertised xmin (`Xid::INVALID` if none).
    pub fn advertised_xmin(&self) -> Xid {
        // Relaxed: we are the only writer of our own xmin.
        Xid(self.engine.procarray.xmin_cell(self.slot).load(Relaxed))
    }

    /// Starts a transaction. No xid, no snapshot yet.
    pub fn begin(&mut self, isolation: IsolationLevel) -> Result<(), TxnError> {
        if self.txn.is_some() {
            return Err(TxnError::AlreadyInTransaction);
        }
        self.local_counter += 1;
        // Relaxed: owner-written, read only by diagnostics and the lock manager.
        self.engine.procarray.procs[self.slot as usize].vxid_local.store(self.local_counter, Relaxed);
        self.txn = Some(Txn {
            isolation,
            vxid: VirtualXid { slot: self.slot, local: self.local_counter },
            levels: vec![Level::default()],
            subxid_state: SubxidState::EMPTY,
            cid: 0,
            txn_snapshot: None,
            statement_snapshot: None,
            registered: Vec::new(),
        });
        Ok(())
    }

    fn txn(&self) -> Result<&Txn, TxnError> {
        self.txn.as_ref().ok_or(TxnError::NoTransaction)
    }

    fn txn_mut(&mut self) -> Result<&mut Txn, TxnError> {
        self.txn.as_mut().ok_or(TxnError::NoTransaction)
    }

    /// The xid of the current (sub)transaction, assigning it, and any missing
    /// ancestor xids top-down, on first use: a child's xid is always greater
    /// than its parent's. On a standby: `TxnError::ReadOnly` (the primary's
    /// replayed xids are the only ones there).
    pub fn assign_xid(&mut self) -> Result<Xid, TxnError> {
        if self.engine.is_standby() {
            self.txn()?;
            return Err(TxnError::ReadOnly);
        }
        let engine = Arc::clone(&self.engine);
        let slot = self.slot;
        let txn = self.txn_mut()?;
        for depth in 0..txn.levels.len() {
            if txn.levels[depth].xid.is_valid() {
                continue;
            }
            let parent = (depth > 0).then(|| txn.levels[depth - 1].xid);
            let xid = engine.assign_xid(slot, parent, &mut txn.subxid_state)?;
            txn.levels[depth].xid = xid;
        }
        Ok(txn.levels.last().expect("level 0 exists").xid)
    }

    /// The snapshot the running statement reads with, if one was taken: the
    /// transaction snapshot (REPEATABLE READ) or the statement snapshot
    /// (READ COMMITTED). For diagnostics such as `pg_current_snapshot()`.
    pub fn current_snapshot(&self) -> Option<&Arc<Snapshot>> {
        let txn = self.txn.as_ref()?;
        txn.txn_snapshot.as_ref().or(txn.statement_snapshot.as_ref())
    }

    /// Every live xid of the transaction: the top-level xid (if assigned)
    /// and the subtransaction xids of open or released levels, never
    /// rolled-back ones. What a commit or abort record names.
    pub fn tree_xids(&self) -> Vec<Xid> {
        let Some(txn) = &self.txn else { return Vec::new() };
        let mut out = txn.live_subxids();
        if txn.top_xid().is_valid() {
            out.insert(0, txn.top_xid());
        }
        out
    }

    /// The xids a rollback of the innermost subtransaction would abort:
    /// its own and those of subtransactions released into it.
    pub fn innermost_xids(&self) -> Vec<Xid> {
        let Some(txn) = &self.txn else { return Vec::new() };
        let Some(level) = txn.levels.last().filter(|_| txn.levels.len() > 1) else { return Vec::new() };
        let mut out = level.committed_children.clone();
        if level.xid.is_valid() {
            out.insert(0, level.xid);
        }
        out
    }

    /// Is `xid` one of this transaction's live xids (top, open levels, or
    /// committed subtransactions; never aborted ones)?
    pub fn is_current_xid(&self, xid: Xid) -> bool {
        let Some(txn) = &self.txn else { return false };
        xid.is_valid() && txn.levels.iter().any(|l| l.xid == xid || l.committed_children.contains(&xid))
    }

    /// Opens a subtransaction (SAVEPOINT).
    pub fn begin_subtransaction(&mut self) -> Result<(), TxnError> {
        self.txn_mut()?.levels.push(Level::default());
        Ok(())
    }

    /// Commits the innermost subtransaction into its parent (RELEASE).
    pub fn commit_subtransaction(&mut self) -> Result<(), TxnError> {
        let txn = self.txn_mut()?;
        if txn.levels.len() < 2 {
            return Err(TxnError::NoSubtransaction);
        }
        let level = txn.levels.pop().expect("checked");
        let parent = txn.levels.last_mut().expect("checked");
        if level.xid.is_valid() {
            parent.committed_children.push(level.xid);
        }
        parent.committed_children.extend(level.committed_children);
        Ok(())
    }

    /// Aborts the innermost subtransaction and everything committed into it
    /// (ROLLBACK TO, then the savepoint is re-opened by the caller).
    pub fn abort_subtransaction(&mut self) -> Result<(), TxnError> {
        let engine = Arc::clone(&self.engine);
        let slot = self.slot;
        let txn = self.txn_mut()?;
        if txn.levels.len() < 2 {
            return Err(TxnError::NoSubtransaction);
        }
        let level = txn.levels.pop().expect("checked");
        let mut xids = level.committed_children;
        if level.xid.is_valid() {
            xids.push(level.xid);
        }
        if !xids.is_empty() {
            // Status log first, then the running set (VISIBILITY-ORDER).
            engine.clog.abort(&xids);
            match &engine.csn {
                Some(csn) => csn.abort(&xids),
                None => {
                    let latest = *xids.iter().max().expect("non-empty");
                    txn.subxid_state = engine.procarray.end_subxids(slot, txn.subxid_state, &xids, latest);
                }
            }
        }
        Ok(())
    }

    /// Commits the transaction.
    pub fn commit(&mut self) -> Result<(), TxnError> {
        let txn = self.txn.take().ok_or(TxnError::NoTransaction)?;
        let top = txn.top_xid();
        if top.is_valid() {
            let subxids = txn.live_subxids();
            let latest = subxids.iter().copied().fold(top, Xid::max);
            // Status log before leaving the running set (VISIBILITY-ORDER).
            self.engine.clog.commit_tree(top, &subxids);
            match &self.engine.csn {
                Some(csn) => {
                    self.last_commit_csn = Some(csn.commit(self.slot, top, &subxids));
                    self.end_without_xid();
                }
                None => self.engine.procarray.end_xid_transaction(self.slot, latest),
            }
        } else {
            self.end_without_xid();
        }
        Ok(())
    }

    /// `csn` mode: the commit sequence number the last commit with an xid
    /// received (`None` in other modes, or before such a commit).
    pub fn last_commit_csn(&self) -> Option<Csn> {
        self.last_commit_csn
    }

    /// Aborts the transaction (a no-op outside one).
    pub fn abort(&mut self) {
        let Some(txn) = self.txn.take() else { return };
        let top = txn.top_xid();
        if top.is_valid() {
            let mut xids = txn.live_subxids();
            xids.push(top);
            let latest = xids.iter().copied().fold(top, Xid::max);
            self.engine.clog.abort(&xids);
            match &self.engine.csn {
                Some(csn) => {
                    csn.abort(&xids);
                    self.end_without_xid();
                }
                None => self.engine.procarray.end_xid_transaction(self.slot, latest),
            }
        } else {
            self.end_without_xid();
        }
    }

    /// Ends a transaction that leaves no trace in the running set (no xid,
    /// or `csn` mode, whose running set is the CSN log): clear the vacuum
    /// flag if set, then the advertised bounds, without a lock (XMIN-CLEAR).
    fn end_without_xid(&mut self) {
        if std::mem::take(&mut self.in_vacuum) {
            self.engine.set_flags(self.slot, 0);
        }
        self.engine.clear_advert(self.slot);
    }

    /// Marks this session as running a lazy VACUUM: snapshots and the data
    /// horizon ignore its xid and xmin. Only for work that stamps no row
    /// versions. Cleared at transaction end.
    pub fn set_in_vacuum(&mut self, on: bool) -> Result<(), TxnError> {
        self.txn()?;
        self.engine.set_flags(self.slot, if on { FLAG_IN_VACUUM } else { 0 });
        self.in_vacuum = on;
        Ok(())
    }

    /// Builds (or reuses) a snapshot now. The session's advertised xmin is
    /// set if it had none; it is the caller's job to hold the snapshot as
    /// statement, transaction or registered snapshot.
    fn take_snapshot(&mut self) -> Result<Arc<Snapshot>, TxnError> {
        let txn = self.txn.as_ref().ok_or(TxnError::NoTransaction)?;
        let me = Builder { slot: self.slot, xid: txn.top_xid() };
        // Only the shared cache lists our own subxids and must drop them.
        let own_subxids = if me.xid.is_valid() && self.engine.shared_cache.is_some() {
            txn.live_subxids()
        } else {
            Vec::new()
        };
        match self.engine.take_snapshot(me, &own_subxids, &mut self.buffer) {
            Taken::Built { global_xmin } => {
                self.counters.built += 1;
                let snap = self.buffer.as_ref().expect("built into the buffer");
                match global_xmin {
                    Some(g) => self.global_vis.set_exact(g),
                    None => self.global_vis.after_build(snap.xmin, self.engine.oldest_tracked_xid()),
                }
            }
            Taken::Reused => self.counters.reused += 1,
            Taken::Copied => {
                self.counters.copied += 1;
                let xmin = self.buffer.as_ref().expect("copied into the buffer").xmin;
                self.global_vis.after_build(xmin, self.engine.oldest_tracked_xid());
            }
        }
        let snap = Arc::clone(self.buffer.as_ref().expect("set above"));
        self.recent_xmin = snap.xmin;
        Ok(snap)
    }

    /// The snapshot for the next statement: READ COMMITTED builds a new one
    /// (held until [`Session::end_statement`]); REPEATABLE READ builds one at
    /// the first statement and returns it for every later one.
    pub fn statement_snapshot(&mut self) -> Result<Arc<Snapshot>, TxnError> {
        let txn = self.txn()?;
        match txn.isolation {
            IsolationLevel::RepeatableRead => {
                if let Some(s) = &txn.txn_snapshot {
                    return Ok(Arc::clone(s));
                }
                let snap = self.take_snapshot()?;
                self.txn_mut()?.txn_snapshot = Some(Arc::clone(&snap));
                Ok(snap)
            }
            IsolationLevel::ReadCommitted => {
                let snap = self.take_snapshot()?;
                self.txn_mut()?.statement_snapshot = Some(Arc::clone(&snap));
                Ok(snap)
            }
        }
    }

    /// Ends the running statement: releases a READ COMMITTED statement
    /// snapshot and advances the command counter.
    pub fn end_statement(&mut self) -> Result<(), TxnError> {
        let txn = self.txn_mut()?;
        txn.statement_snapshot = None;
        txn.cid = txn.cid.checked_add(1).filter(|&c| c < u32::MAX).ok_or(TxnError::TooManyCommands)?;
        self.reset_xmin();
        Ok(())
    }

    /// Takes a fresh snapshot and keeps it registered (its xmin held back)
    /// until [`Session::unregister_snapshot`] or the end of the transaction.
    pub fn register_snapshot(&mut self) -> Result<(SnapshotId, Arc<Snapshot>), TxnError> {
        let snap = self.take_snapshot()?;
        let id = SnapshotId(self.next_snapshot_id);
        self.next_snapshot_id += 1;
        self.txn_mut()?.registered.push((id, Arc::clone(&snap)));
        Ok((id, snap))
    }

    /// A statement's snapshot kept across statements nested in it (a
    /// trigger's, which end their statements and so release the statement
    /// snapshot): registered until [`Session::restore_statement_snapshot`],
    /// so the horizon stays held for the statement that fired them.
    pub fn hold_statement_snapshot(&mut self) -> Result<Option<SnapshotId>, TxnError> {
        let Some(snap) = self.txn()?.statement_snapshot.clone() else { return Ok(None) };
        let id = SnapshotId(self.next_snapshot_id);
        self.next_snapshot_id += 1;
        self.txn_mut()?.registered.push((id, snap));
        Ok(Some(id))
    }

    /// The snapshot [`Session::hold_statement_snapshot`] kept is the
    /// statement's again.
    pub fn restore_statement_snapshot(&mut self, held: Option<SnapshotId>) -> Result<(), TxnError> {
        let Some(id) = held else { return Ok(()) };
        let txn = self.txn_mut()?;
        if let Some(at) = txn.registered.iter().position(|(i, _)| *i == id) {
            let (_, snap) = txn.registered.remove(at);
            txn.statement_snapshot = Some(snap);
        }
        self.reset_xmin();
        Ok(())
    }

    /// Releases a registered snapshot.
    pub fn unregister_snapshot(&mut self, id: SnapshotId) -> Result<(), TxnError> {
        let txn = self.txn_mut()?;
        txn.registered.retain(|(i, _)| *i != id);
        self.reset_xmin();
        Ok(())
    }

    /// Advances or clears the advertised xmin after a snapshot was released
    /// (PostgreSQL's SnapshotResetXmin). Never moves it backwards.
    fn reset_xmin(&mut self) {
        let Some(txn) = &self.txn else { return };
        let held = || {
            txn.txn_snapshot
                .iter()
                .chain(&txn.statement_snapshot)
                .chain(txn.registered.iter().map(|(_, s)| s))
        };
        let Some(xmin) = held().map(|s| s.xmin).min() else {
            self.engine.clear_advert(self.slot);
            return;
        };
        let pa = &self.engine.procarray;
        if self.engine.csn.is_some() {
            let csn = held().map(|s| s.csn()).min().expect("a held snapshot");
            // Relaxed: owner-only; advancing a lower bound is XMIN-CLEAR.
            pa.advert(self.slot).csn.store(csn, Relaxed);
        }
        let cell = pa.xmin_cell(self.slot);
        // Relaxed: owner-only writes; advancing without a lock only makes
        // horizons more permissive (XMIN-CLEAR). Never backwards.
        if xmin.0 > cell.load(Relaxed) {
            cell.store(xmin.0, Relaxed);
        }
    }

    /// GlobalVis test: is a row version deleted by committed `xid` invisible
    /// to every current and future snapshot?
    pub fn is_removable(&mut self, xid: Xid) -> bool {
        if let Some(answer) = self.global_vis.quick_test(xid) {
            return answer;
        }
        if self.global_vis.worth_recomputing(self.recent_xmin) {
            let horizons = self.engine.compute_horizons();
            self.global_vis.apply(&horizons, self.recent_xmin);
        }
        xid < self.global_vis.maybe_needed
    }

    /// The current GlobalVis bounds (diagnostics and tests).
    pub fn global_vis(&self) -> GlobalVis {
        self.global_vis
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.abort();
        self.buffer = None;
        self.engine.procarray.detach(self.slot);
    }
}
