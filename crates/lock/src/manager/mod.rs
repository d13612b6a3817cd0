//! The lock manager's public face: configuration, acquire and release.
//!
//! A request goes through up to three stages, each in its own module:
//!
//! 1. the fast path (`fastpath.rs`), for weak relation locks while no strong
//!    lock is announced on the relation's counter;
//! 2. for strong relation locks, the announcement and the transfer of
//!    fast-path entries (`fastpath.rs`);
//! 3. the shared table (`table.rs`), granting at once or queueing, and then
//!    the asynchronous wait with its deadlock check and timeouts (`wait.rs`,
//!    `deadlock.rs`).
//!
//! Sessions are slot numbers `0..max_sessions`, held for a session's life.
//! A session issues one request at a time; the manager relies on it (a
//! session never waits on two locks, and never ends its transaction while one
//! of its requests is in flight).

use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use tokio::sync::oneshot;

use crate::error::{deadlock_detail, LockError};
mod fastpath;
mod session;

use crate::mode::LockMode;
use crate::sync::Mutex;
use crate::table::{LockTable, Owner, Placed, Waiter};
use crate::tag::LockTag;
use fastpath::{FastPath, StrongCounters};

/// Lock-manager settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockConfig {
    /// Number of session slots; sessions are `0..max_sessions`.
    pub max_sessions: u32,
    /// How long a waiter waits before it looks for a deadlock (PostgreSQL's
    /// `deadlock_timeout`). The check runs once per wait.
    pub deadlock_timeout: Duration,
    /// How long a waiter waits before giving up with 55P03; `None` waits
    /// forever (PostgreSQL's `lock_timeout = 0`).
    pub lock_timeout: Option<Duration>,
}

impl Default for LockConfig {
    fn default() -> Self {
        Self { max_sessions: 100, deadlock_timeout: Duration::from_secs(1), lock_timeout: None }
    }
}

impl LockConfig {
    /// The timeouts a request waits under when its caller names none.
    pub fn wait_policy(&self) -> WaitPolicy {
        WaitPolicy { deadlock_timeout: self.deadlock_timeout, lock_timeout: self.lock_timeout }
    }
}

/// The timeouts of one wait. A session passes its own settings
/// (PostgreSQL's `deadlock_timeout` and `lock_timeout` are per session, and
/// `SET` changes them for the next wait).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitPolicy {
    /// How long to wait before looking for a deadlock, once.
    pub deadlock_timeout: Duration,
    /// How long to wait before giving up with 55P03; `None` waits forever.
    pub lock_timeout: Option<Duration>,
}

/// One lock a session holds, as `pg_locks` would show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeldLock {
    /// What is locked.
    pub tag: LockTag,
    /// In which mode.
    pub mode: LockMode,
    /// How many times the session took it (each needs an `unlock`).
    pub count: u32,
    /// Recorded in the session's fast-path state rather than the shared table.
    pub fast_path: bool,
}

/// The relation and transaction lock manager (PostgreSQL's lock.c, proc.c
/// waiting and deadlock.c, for one database).
#[derive(Debug)]
pub struct LockManager {
    pub(crate) config: LockConfig,
    pub(crate) table: LockTable,
    /// Per session: its fast-path mutex (fpInfoLock) and what it guards. Each
    /// on its own cache line: the owner takes it on every weak lock.
    pub(crate) sessions: Box<[CachePadded<Mutex<FastPath>>]>,
    pub(crate) strong: StrongCounters,
}

/// What the synchronous part of a request decided.
pub(crate) enum Start {
    Granted,
    NotAvailable,
    /// Queued; the receiver fires when the lock is granted.
    Wait(oneshot::Receiver<()>),
}

impl LockManager {
    /// A lock manager with `config.max_sessions` empty sessions.
    pub fn new(config: LockConfig) -> Arc<Self> {
        assert!(config.max_sessions > 0, "max_sessions must be positive");
        Arc::new(Self {
            sessions: (0..config.max_sessions).map(|_| CachePadded::new(Mutex::default())).collect(),
            table: LockTable::new(),
            strong: StrongCounters::new(),
            config,
        })
    }

    /// The settings this manager was built with.
    pub fn config(&self) -> &LockConfig {
        &self.config
    }

    /// Takes `mode` on `tag` for `session`, waiting as long as needed.
    ///
    /// Must run inside a tokio runtime with the time driver enabled (the
    /// deadlock check and `lock_timeout` are timers). Waiting suspends the
    /// task, never the worker thread. Dropping the future while it waits
    /// withdraws the request and leaves nothing behind (WAIT-CANCEL).
    ///
    /// Errors: `Deadlock` (40P01) if this wait closes a cycle, `LockTimeout`
    /// (55P03) after `lock_timeout`. Either way the session holds what it held
    /// before.
    pub async fn lock(&self, session: u32, tag: LockTag, mode: LockMode) -> Result<(), LockError> {
        self.lock_with(session, tag, mode, self.config.wait_policy()).await
    }

    /// [`LockManager::lock`] with the caller's own timeouts.
    pub async fn lock_with(
        &self,
        session: u32,
        tag: LockTag,
        mode: LockMode,
        policy: WaitPolicy,
    ) -> Result<(), LockError> {
        self.lock_as(session, tag, mode, Owner::Transaction, policy).await
    }

    /// A request that may wait, in `owner`'s name.
    pub(crate) async fn lock_as(
        &self,
        session: u32,
        tag: LockTag,
        mode: LockMode,
        owner: Owner,
        policy: WaitPolicy,
    ) -> Result<(), LockError> {
        match self.start(session, tag, mode, true, owner)? {
            Start::Granted => Ok(()),
            Start::Wait(rx) => self.wait(session, tag, mode, owner, rx, policy).await,
            Start::NotAvailable => unreachable!("a request that may wait is never refused"),
        }
    }

    /// Takes `mode` on `tag` if that is possible without waiting (PostgreSQL's
    /// `dontWait`, as used by `NOWAIT`). `Ok(false)` leaves the session as it
    /// was, except that a strong request may have moved other sessions'
    /// fast-path entries into the table, where they stay.
    pub fn try_lock(&self, session: u32, tag: LockTag, mode: LockMode) -> Result<bool, LockError> {
        match self.start(session, tag, mode, false, Owner::Transaction)? {
            Start::Granted => Ok(true),
            Start::NotAvailable => Ok(false),
            Start::Wait(_) => unreachable!("a request that may not wait is never queued"),
        }
    }

    /// Drops one transaction-level hold of `mode` on `tag`. Returns false,
    /// changing nothing, if the session's transaction holds no such lock
    /// (PostgreSQL warns "you don't own a lock of type ..."); a session-level
    /// hold is never taken by this ([`LockManager::unlock_session`] is).
    pub fn unlock(&self, session: u32, tag: LockTag, mode: LockMode) -> bool {
        self.assert_session(session);
        if let LockTag::Relation(oid) = tag {
            if mode.is_weak() && self.fast_path_release(session, oid, mode) {
                return true;
            }
        }
        let released = self.table.release(session, tag, mode, Owner::Transaction);
        if released {
            self.end_strong_for(tag, mode);
        }
        released
    }

    /// Drops every lock the session's transaction holds, as at transaction
    /// end, including its transaction-id locks and its vxid lock
    /// (`end_vxid`). Session-level locks stay (SESSION-HOLDS).
    pub fn release_all(&self, session: u32) {
        self.assert_session(session);
        let tags = {
            let mut fp = self.fp(session).lock();
            // Fast-path entries block nobody (anyone who could conflict has
            // transferred them first), so dropping them wakes nobody.
            fp.clear_slots();
            fp.vxid = None;
            fp.vxid_in_table = false;
            std::mem::take(&mut fp.table_tags)
        };
        for tag in tags {
            let counts = {
                let mut part = self.table.partition(tag).lock();
                let counts = part.entries.get_mut(&tag).map(|e| e.release_transaction(session));
                part.settle(tag);
                counts
            };
            if let (Some(counts), Some(counter)) = (counts, tag.strong_counter()) {
                let strong =
                    LockMode::ALL.iter().filter(|m| m.is_strong()).map(|m| counts[*m as usize]).sum();
                self.end_strong(counter, strong);
            }
        }
    }

    /// Takes the transaction's own lock on its xid (Exclusive), at xid
    /// assignment. Nobody can know the xid before, so this never waits.
    pub fn register_xid(&self, session: u32, xid: u64) -> Result<(), LockError> {
        let granted = self.try_lock(session, LockTag::Transaction(xid), LockMode::Exclusive)?;
        assert!(granted, "XID-WAIT: xid {xid} is already locked by another session");
        Ok(())
    }

    /// Waits until transaction `xid` ends (PostgreSQL's XactLockTableWait):
    /// takes Share on its lock, which is granted once its owner released its
    /// Exclusive hold, and drops it at once. Returns at once for an xid that
    /// is not (or no longer) registered.
    pub async fn wait_for_xid(&self, session: u32, xid: u64) -> Result<(), LockError> {
        self.wait_for_xid_with(session, xid, self.config.wait_policy()).await
    }

    /// [`LockManager::wait_for_xid`] with the caller's own timeouts.
    pub async fn wait_for_xid_with(
        &self,
        session: u32,
        xid: u64,
        policy: WaitPolicy,
    ) -> Result<(), LockError> {
        let tag = LockTag::Transaction(xid);
        self.lock_with(session, tag, LockMode::Share, policy).await?;
        self.unlock(session, tag, LockMode::Share);
        Ok(())
    }

    /// True if transaction `xid` has ended (or was never registered); false
    /// if it is still running. Never waits (`NOWAIT` and `SKIP LOCKED` ask
    /// this instead of waiting).
    pub fn xid_ended(&self, session: u32, xid: u64) -> Result<bool, LockError> {
        let tag = LockTag::Transaction(xid);
        let ended = self.try_lock(session, tag, LockMode::Share)?;
        if ended {
            self.unlock(session, tag, LockMode::Share);
        }
        Ok(ended)
    }

    /// Starts the session's virtual transaction `local` (slot, local). Its
    /// Exclusive lock lives only in the session's fast-path state until a
    /// waiter needs it in the table (LAZY-VXID); this takes no shared lock.
    pub fn begin_vxid(&self, session: u32, local: u64) {
        self.assert_session(session);
        let mut fp = self.fp(session).lock();
        assert!(
            fp.vxid.is_none(),
            "LAZY-VXID: session {session} begins vxid {local} before ending {:?}",
            fp.vxid
        );
        fp.vxid = Some(local);
        fp.vxid_in_table = false;
    }

    /// Ends the session's virtual transaction, releasing its lock in the
    /// table if a waiter materialised it there. Idempotent.
    pub fn end_vxid(&self, session: u32) {
        self.assert_session(session);
        let (local, in_table) = {
            let mut fp = self.fp(session).lock();
            let in_table = std::mem::take(&mut fp.vxid_in_table);
            (fp.vxid.take(), in_table)
        };
        if let (Some(local), true) = (local, in_table) {
            let tag = LockTag::VirtualTransaction { slot: session, local };
            let released = self.table.release(session, tag, LockMode::Exclusive, Owner::Transaction);
            assert!(released, "LAZY-VXID: materialised lock on {tag} missing from the table");
        }
    }

    /// Waits until virtual transaction (`owner`, `local`) ends (PostgreSQL's
    /// VirtualXactLock with wait = true). Returns at once if it already has.
    pub async fn wait_for_vxid(&self, session: u32, owner: u32, local: u64) -> Result<(), LockError> {
        self.check_session(session)?;
        self.check_session(owner)?;
        let tag = LockTag::VirtualTransaction { slot: owner, local };
        {
            // LAZY-VXID: under the owner's fp mutex the vxid cannot end, so
            // the lock we put in the table on its behalf is one it holds; it
            // will find `vxid_in_table` at its end and release it there.
            let mut fp = self.fp(owner).lock();
            if fp.vxid != Some(local) {
                return Ok(());
            }
            if !fp.vxid_in_table {
                // Lock order: the owner's fp mutex, then a partition (rule 1).
                self.table.partition(tag).lock().entry(tag).grant(owner, LockMode::Exclusive, 1);
                fp.vxid_in_table = true;
                fp.table_tags.insert(tag);
            }
        }
        self.lock(session, tag, LockMode::Share).await?;
        self.unlock(session, tag, LockMode::Share);
        Ok(())
    }

    /// Every lock `session` holds, sorted (diagnostics and tests).
    pub fn held_locks(&self, session: u32) -> Vec<HeldLock> {
        self.assert_session(session);
        let fp = self.fp(session).lock();
        let mut held = fp.fast_path_locks();
        if let (Some(local), false) = (fp.vxid, fp.vxid_in_table) {
            let tag = LockTag::VirtualTransaction { slot: session, local };
            held.push(HeldLock { tag, mode: LockMode::Exclusive, count: 1, fast_path: true });
        }
        // Lock order: own fp mutex, then partitions (rule 1). A tag held at
        // both levels is listed in both sets, and read once.
        let session_only = fp.session_tags.iter().filter(|t| !fp.table_tags.contains(t));
        for &tag in fp.table_tags.iter().chain(session_only) {
            let part = self.table.partition(tag).lock();
            if let Some(counts) = part.entries.get(&tag).and_then(|e| e.holders.get(&session)) {
                for mode in LockMode::ALL {
                    let count = counts[mode as usize];
                    if count != 0 {
                        held.push(HeldLock { tag, mode, count, fast_path: false });
                    }
                }
            }
        }
        held.sort();
        held
    }

    /// The sessions queued on `tag`, in queue order, with the modes they await.
    pub fn waiters(&self, tag: LockTag) -> Vec<(u32, LockMode)> {
        let part = self.table.partition(tag).lock();
        part.entries
            .get(&tag)
            .map_or_else(Vec::new, |e| e.waiters.iter().map(|w| (w.session, w.mode)).collect())
    }

    /// How many times `session` has queued a request and waited, since the
    /// manager was built (a diagnostic count: a wait shows here even after
    /// it ended). 0 for a session number out of range.
    pub fn waits_begun(&self, session: u32) -> u64 {
        self.sessions.get(session as usize).map_or(0, |fp| fp.lock().waits_begun)
    }

    /// Every queued request: (session, what it waits for, in which mode),
    /// sorted. Each partition is read under its own lock in turn, so this is
    /// a diagnostic view (pg_locks' ungranted rows), not one instant.
    pub fn waiting(&self) -> Vec<(u32, LockTag, LockMode)> {
        let mut out = Vec::new();
        for part in self.table.all() {
            let part = part.lock();
            for (tag, entry) in &part.entries {
                out.extend(entry.waiters.iter().map(|w| (w.session, *tag, w.mode)));
            }
        }
        out.sort();
        out
    }

    /// The synchronous part of a request: fast path, strong announcement and
    /// transfer, then grant or (if `may_wait`) enqueue in the table, in
    /// `owner`'s name. A session-level request lists its tag in
    /// `session_tags` first, so that a grant made while it waits is found
    /// by `release_session_locks`; a refusal takes it out again.
    fn start(
        &self,
        session: u32,
        tag: LockTag,
        mode: LockMode,
        may_wait: bool,
        owner: Owner,
    ) -> Result<Start, LockError> {
        self.check_session(session)?;
        if owner == Owner::Session {
            // SESSION-HOLDS: never in the fast path, never strong-counted, so
            // only the table and `session_tags` know about it.
            assert!(
                tag.strong_counter().is_none(),
                "SESSION-HOLDS: a session-level lock on {tag}, which may use the fast path"
            );
            self.fp(session).lock().session_tags.insert(tag);
        }
        match (tag, tag.strong_counter()) {
            (LockTag::Relation(oid), Some(counter)) if mode.is_weak() => {
                if self.fast_path_acquire(session, oid, mode, counter) {
                    return Ok(Start::Granted);
                }
            }
            (LockTag::Relation(oid), Some(counter)) if mode.is_strong() => {
                self.fp(session).lock().table_tags.insert(tag);
                self.begin_strong(oid, counter);
            }
            _ if owner == Owner::Session => {}
            _ => {
                self.fp(session).lock().table_tags.insert(tag);
            }
        }
        let mut part = self.table.partition(tag).lock();
        let entry = part.entry(tag);
        if entry.try_grant(session, mode, owner) {
            return Ok(Start::Granted);
        }
        let deadlock = if may_wait {
            let (wake, rx) = oneshot::channel();
            match entry.place(Waiter { session, mode, owner, wake }) {
                Placed::Queued => return Ok(Start::Wait(rx)),
                Placed::Granted => return Ok(Start::Granted),
                Placed::Deadlock { other, other_mode } => {
                    Some(deadlock_detail(&[(session, tag, mode), (other, tag, other_mode)]))
                }
            }
        } else {
            None
        };
        part.settle(tag);
        drop(part);
        self.end_strong_for(tag, mode);
        self.request_failed(session, tag, owner);
        match deadlock {
            Some(detail) => Err(LockError::Deadlock { detail }),
            None => Ok(Start::NotAvailable),
        }
    }

    /// Withdraws the strong announcement a request for `mode` on `tag` made.
    pub(crate) fn end_strong_for(&self, tag: LockTag, mode: LockMode) {
        if let (Some(counter), true) = (tag.strong_counter(), mode.is_strong()) {
            self.end_strong(counter, 1);
        }
    }

    pub(crate) fn fp(&self, session: u32) -> &Mutex<FastPath> {
        &self.sessions[session as usize]
    }

    fn check_session(&self, session: u32) -> Result<(), LockError> {
        if session < self.config.max_sessions {
            Ok(())
        } else {
            Err(LockError::SessionOutOfRange { session, max_sessions: self.config.max_sessions })
        }
    }

    /// For calls without a `Result`: a bad slot is a caller bug.
    fn assert_session(&self, session: u32) {
        if let Err(e) = self.check_session(session) {
            panic!("{e}");
        }
    }
}
