//! The transaction manager: one backend's transactions, from begin to
//! commit or abort, and everything they hold.
//!
//! An [`Xact`] lives as long as its connection. It owns the backend's
//! proc-array session and, while a transaction runs, its (sub)transaction
//! levels: the storage each level created or dropped, the invalidations
//! its DDL will send, the xids it registered with the lock manager, the
//! redo it buffered, and the relation locks it took. The executor works
//! through it (`&mut Xact`); the connection (`Conn`) only decides when a
//! transaction begins and ends.
//!
//! Commit is written once, here, in this order (COMMIT-ORDER in the crate
//! README):
//!
//! ```text
//!   WAL: the buffered changes + COMMIT record appended as one batch, under
//!        the commit gate; flushed when synchronous_commit is on and the
//!        transaction changed anything                (WAL-FIRST, CHECKPOINT-CUT)
//!   the commit becomes visible (status log, proc array, CSN)
//!   invalidations sent                                  (PLAN-FRESH)
//!   locks released
//! ```
//!
//! A transaction's changes reach the WAL while it runs, tagged by xid,
//! whenever its buffer fills (`wal_buffer.rs`, WAL-TAGGED); the first such
//! append records where the tree starts (TREE-START), so a checkpoint
//! knows from where replay must read. Abort and ROLLBACK TO append an
//! ABORT record naming the xids they end, before those xids' locks are
//! released. Whatever ends the connection drops the `Xact`, and its
//! `Drop` runs the abort (CONNECTION-GUARD in the server's README).

mod lookup;
mod notices;
mod waits;

pub use notices::NoticeQueue;

pub use lookup::{namespace_name, namespace_oid, no_schema, Creation};

use std::sync::Arc;

use rustc_hash::FxHashMap;
use snapscale_lock::{LockMode, LockTag, WaitPolicy};
use snapscale_sinval::Invalidation;
use snapscale_sqlstate::SqlState;
use snapscale_storage::log::Lsn;
use snapscale_storage::Tid;
use snapscale_txn::{IsolationLevel, Session, Xid};
use snapscale_values::SqlError;

use crate::advisory::SessionLocks;
use crate::cancel::Cancel;
use crate::catalog::{Heap, RelEntry};
use crate::database::{Backend, Database};
use crate::errors::{lock_error, log_error, txn_error};
use crate::redo::{self, Redo};
use crate::relcache::RelCache;
use crate::wal_buffer::WalBuffer;

/// The settings the transaction manager reads, copied from the session's
/// before each statement (SET may change them between statements).
#[derive(Clone, Copy, Debug)]
pub struct XactConfig {
    /// deadlock_timeout and lock_timeout, for this transaction's waits.
    pub wait: WaitPolicy,
    /// Commit waits for its record to be durable.
    pub synchronous_commit: bool,
}

impl Default for XactConfig {
    fn default() -> Self {
        XactConfig {
            wait: WaitPolicy { deadlock_timeout: std::time::Duration::from_secs(1), lock_timeout: None },
            synchronous_commit: true,
        }
    }
}

/// What one (sub)transaction level did that its end must settle.
#[derive(Debug, Default)]
struct Level {
    /// Storage created here: freed if this level aborts.
    created: Vec<u64>,
    /// Storage dropped or replaced here: freed when the top level commits.
    dropped: Vec<u64>,
    /// Invalidations to send when the top level commits.
    invalidations: Vec<Invalidation>,
    /// Xids registered with the lock manager at this level (XID-WAITABLE).
    xids: Vec<Xid>,
    /// Transaction-level advisory locks taken at this level, one entry per
    /// take: released if it rolls back (ADVISORY-LEVELS).
    advisory: Vec<(LockTag, LockMode)>,
    /// Enum labels renamed here, with their old names: renamed back if
    /// this level aborts (the cells are shared with stored values).
    renames: Vec<(Arc<snapscale_values::EnumLabel>, Arc<str>)>,
}

/// A notice or warning to send before the statement's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub severity: &'static str,
    pub code: SqlState,
    pub message: String,
    pub detail: Option<String>,
    /// HINT (RAISE … USING HINT).
    pub hint: Option<String>,
    /// Where in the client's statement it is about (a PL/pgSQL compiler
    /// warning's place in CREATE FUNCTION), 1-based, in characters.
    pub position: Option<u32>,
    /// A SQLSTATE PostgreSQL defines no condition for (RAISE … USING
    /// ERRCODE), sent instead of `code`'s.
    pub custom_code: Option<[u8; 5]>,
}

impl Notice {
    /// A notice of `severity` with `code` and `message` and nothing else.
    pub fn new(severity: &'static str, code: SqlState, message: String, detail: Option<String>) -> Notice {
        Notice { severity, code, message, detail, hint: None, position: None, custom_code: None }
    }

    /// The five-character SQLSTATE the client is sent.
    pub fn sqlstate(&self) -> &str {
        match &self.custom_code {
            Some(c) => std::str::from_utf8(c).unwrap_or(self.code.code()),
            None => self.code.code(),
        }
    }
}

/// One backend's transaction manager. See the module documentation.
pub struct Xact {
    pub db: Arc<Database>,
    pub session: Session,
    /// This backend's id (the owner of its temporary tables).
    id: u64,
    /// One per open (sub)transaction level; empty between transactions.
    levels: Vec<Level>,
    /// Relation locks this transaction holds, with the level that took each
    /// (PostgreSQL's local lock table, SUBXACT-LOCKS). Asked on every
    /// statement's relation lock: hashed with Fx, not SipHash (the keys
    /// are our own oids and modes, nothing an attacker can choose to
    /// collide).
    held: FxHashMap<(u32, LockMode), usize>,
    /// Name → relation, as of the last accepted invalidations.
    pub cache: RelCache,
    pub cancel: Arc<Cancel>,
    /// Heaps changed by this transaction (pruned after commit if due).
    touched: Vec<Arc<Heap>>,
    /// The transaction's start (now()), microseconds since 2000-01-01.
    now: i64,
    /// NOTICE-STREAM (notices.rs).
    notices: Arc<NoticeQueue>,
    pub config: XactConfig,
    /// How many connections share this backend's thread (the server's
    /// worker), where it has one: a commit whose thread serves it alone
    /// syncs the WAL itself (SYNC-HERE in the storage crate's README).
    pub thread_peers: Option<Arc<std::sync::atomic::AtomicUsize>>,
    /// The transaction's WAL records not yet appended.
    wal: WalBuffer,
    /// What the session functions read (`current_user`, `current_setting()`).
    pub session_view: Option<Arc<crate::session_view::SessionView>>,
    /// The session's open cursors, for pg_cursors (the SQL layer's copy).
    pub open_cursors: Arc<[crate::session_view::OpenCursor]>,
    /// currval / lastval and the sequence WAL this transaction wrote
    /// (shared with every session view).
    pub sequences: Arc<std::sync::Mutex<crate::sequence::SessionSequences>>,
    /// The session's advisory locks (shared with every session view, where
    /// the evaluator takes them).
    pub advisory: Arc<SessionLocks>,
    /// A search_path in force instead of the session's while the elements
    /// of a CREATE SCHEMA run (PostgreSQL's override search path).
    pub path_override: Option<Arc<[String]>>,
    /// The transition tables of the triggers firing now, innermost last
    /// (what their functions' statements read by name).
    pub transition_tables: Vec<crate::triggers::TransitionTable>,
    /// The tables whose triggers are firing now (their statements have
    /// them open): DDL on one is refused (PostgreSQL's
    /// CheckTableNotInUse).
    pub in_use: Vec<u32>,
}

pub use snapscale_values::now_micros;

impl Xact {
    /// The session's TimeZone as of its last SET.
    pub fn session_zone(&self) -> snapscale_values::Zone {
        self.session_style().zone
    }

    /// The session's TimeZone, DateStyle and IntervalStyle.
    pub fn session_style(&self) -> snapscale_values::Style {
        self.session_view.as_ref().map_or_else(snapscale_values::Style::default, |v| v.style)
    }

    /// The transaction manager of a new connection's backend; it joins the
    /// invalidation queue.
    pub fn new(db: Arc<Database>, backend: Backend) -> Xact {
        let session = backend.session;
        db.sinval.attach(session.slot());
        let id = db.new_backend_id();
        let advisory = Arc::new(SessionLocks::new(Arc::clone(&db.locks), session.slot()));
        let cancel = Arc::new(Cancel::default());
        // A shutdown wakes the idle connection through its catch-up wait.
        // Weak: a handle that outlives the connection (a statement timer
        // not yet reaped) must not keep the database, and its data
        // directory's lock, alive.
        let (db_weak, slot) = (Arc::downgrade(&db), session.slot());
        cancel.set_idle_wake(move || {
            if let Some(db) = db_weak.upgrade() {
                db.sinval.wake_idle(slot);
            }
        });
        Xact {
            advisory,
            db,
            session,
            id,
            levels: Vec::new(),
            held: FxHashMap::default(),
            cache: RelCache::default(),
            cancel,
            touched: Vec::new(),
            now: 0,
            notices: Arc::default(),
            config: XactConfig::default(),
            thread_peers: None,
            session_view: None,
            open_cursors: Arc::from(Vec::new()),
            sequences: Arc::default(),
            wal: WalBuffer::default(),
            path_override: None,
            transition_tables: Vec::new(),
            in_use: Vec::new(),
        }
    }

    /// This backend's id (temporary tables' owner).
    pub fn backend_id(&self) -> u64 {
        self.id
    }

    /// The proc-array slot.
    pub fn slot(&self) -> u32 {
        self.session.slot()
    }

    /// The transaction's timestamp (now()).
    pub fn now(&self) -> i64 {
        self.now
    }

    /// The open transaction's isolation level.
    pub fn isolation(&self) -> Option<IsolationLevel> {
        self.session.isolation()
    }

    // ------------------------------------------------------------ notices

    pub fn notice(&mut self, code: SqlState, message: impl Into<String>) {
        self.notices.push(Notice::new("NOTICE", code, message.into(), None));
    }

    pub fn notice_with_detail(&mut self, code: SqlState, message: impl Into<String>, detail: Option<String>) {
        self.notices.push(Notice::new("NOTICE", code, message.into(), detail));
    }

    /// A message of `severity` (NOTICE, WARNING, INFO) for the client.
    pub fn notice_at(
        &mut self,
        severity: &'static str,
        code: SqlState,
        message: String,
        detail: Option<String>,
    ) {
        self.notices.push(Notice::new(severity, code, message, detail));
    }

    /// A message for the client, with every field it has.
    pub fn notice_full(&mut self, n: Notice) {
        self.notices.push(n);
    }

    pub fn warning(&mut self, code: SqlState, message: impl Into<String>) {
        self.notices.push(Notice::new("WARNING", code, message.into(), None));
    }

    pub fn take_notices(&mut self) -> Vec<Notice> {
        for message in self.advisory.take_warnings() {
            self.warning(SqlState::WARNING, message);
        }
        self.notices.take()
    }

    /// Where the notices go as they are raised (NOTICE-STREAM), for the
    /// connection to send while a statement runs.
    pub fn notice_queue(&self) -> Arc<NoticeQueue> {
        Arc::clone(&self.notices)
    }

    // ---------------------------------------------------------- lifecycle

    /// Begins a transaction: a new top level, the transaction's timestamp,
    /// and the invalidations sent since the last one.
    pub fn begin(&mut self, isolation: IsolationLevel) -> Result<(), SqlError> {
        self.session.begin(isolation).map_err(txn_error)?;
        if let Some(v) = &self.session_view {
            let code = match isolation {
                IsolationLevel::ReadCommitted => 1,
                IsolationLevel::RepeatableRead => 2,
            };
            // Relaxed: a value only this session writes and reads (its
            // statements run one at a time); it publishes no other data.
            // Pairs with the load in current_setting() (sql's expr/func.rs).
            v.isolation.store(code, std::sync::atomic::Ordering::Relaxed);
        }
        self.levels = vec![Level::default()];
        self.wal.reset();
        self.now = now_micros();
        self.accept_invalidations();
        Ok(())
    }

    /// How many levels are open: 1 for the top transaction, one more per
    /// open subtransaction.
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Whether a subtransaction (a savepoint, an EXCEPTION block) is open.
    pub fn in_subtransaction(&self) -> bool {
        self.levels.len() > 1
    }

    /// Opens a subtransaction level (SAVEPOINT).
    pub fn savepoint(&mut self) -> Result<(), SqlError> {
        self.session.begin_subtransaction().map_err(txn_error)?;
        self.collect_advisory();
        self.levels.push(Level::default());
        Ok(())
    }

    /// ADVISORY-LEVELS: the transaction-level advisory locks the
    /// evaluator took since the levels last changed belong to the
    /// innermost level (a statement runs within one level).
    fn collect_advisory(&mut self) {
        let taken = self.advisory.collect_taken();
        if let Some(level) = self.levels.last_mut() {
            level.advisory.extend(taken);
        }
    }

    /// Commits the innermost level into its parent (RELEASE): the parent
    /// inherits what it created, dropped, logged, registered and locked.
    pub fn release(&mut self) -> Result<(), SqlError> {
        self.session.commit_subtransaction().map_err(txn_error)?;
        self.collect_advisory();
        let done = self.levels.pop().expect("a subtransaction level");
        let level = self.levels.len();
        for owner in self.held.values_mut() {
            if *owner == level {
                *owner = level - 1;
            }
        }
        let parent = self.levels.last_mut().expect("the top level");
        parent.created.extend(done.created);
        parent.dropped.extend(done.dropped);
        parent.invalidations.extend(done.invalidations);
        parent.xids.extend(done.xids);
        parent.advisory.extend(done.advisory);
        parent.renames.extend(done.renames);
        Ok(())
    }

    /// Aborts the innermost level (ROLLBACK TO): its rows die, its buffered
    /// records are dropped and an ABORT record names its xids, its storage
    /// is freed, and its xid and relation locks are released so that
    /// whoever waited for them goes on (SUBXACT-LOCKS).
    pub fn rollback_level(&mut self) -> Result<(), SqlError> {
        let aborted = self.session.innermost_xids();
        self.session.abort_subtransaction().map_err(txn_error)?;
        self.wal.forget(&aborted);
        // WAL-TAGGED: the ABORT record precedes the release of the xid
        // locks below, so a transaction that waited for these xids logs
        // its changes after it.
        self.log_abort(&aborted);
        self.collect_advisory();
        let done = self.levels.pop().expect("a subtransaction level");
        let slot = self.session.slot();
        for xid in &done.xids {
            self.db.locks.unlock(slot, LockTag::Transaction(xid.0), LockMode::Exclusive);
        }
        // As PostgreSQL's resource owners release them: the advisory locks
        // the aborted level took at transaction level; session-level ones
        // stay (SESSION-HOLDS).
        for &(tag, mode) in &done.advisory {
            let released = self.db.locks.unlock(slot, tag, mode);
            debug_assert!(released, "ADVISORY-LEVELS: {mode} on {tag} was not held");
        }
        let level = self.levels.len();
        let locks = &self.db.locks;
        self.held.retain(|&(oid, mode), owner| {
            if *owner < level {
                return true;
            }
            locks.unlock(slot, LockTag::Relation(oid), mode);
            false
        });
        self.forget(std::slice::from_ref(&done));
        Ok(())
    }

    /// Whether this backend's commit syncs the WAL itself (SYNC-HERE): its
    /// thread serves no other connection, so nothing waits on the thread
    /// while it syncs.
    fn sync_here(&self) -> bool {
        // Relaxed: a count that steers a choice; both choices are correct.
        // Pairs with the server's fetch_add/fetch_sub as connections come
        // and go.
        self.thread_peers.as_ref().is_some_and(|n| n.load(std::sync::atomic::Ordering::Relaxed) == 1)
    }

    /// Commits the transaction (COMMIT-ORDER in the module docs).
    pub async fn commit(&mut self) -> Result<(), SqlError> {
        let db = Arc::clone(&self.db);
        // SEQ-DURABLE: values nextval handed out are durable before a
        // commit is acknowledged. A transaction whose COMMIT record is
        // waited for below covers them (their records come first); one
        // with no such wait waits for them here.
        let sequences = self.sequences.lock().expect("session sequences poisoned").take_unflushed();
        if let (Some(log), Some(end)) = (&db.log, sequences) {
            let covered = self.session.xid().is_some() && self.wal.changed;
            if !self.config.synchronous_commit {
                log.flush_soon(end);
            } else if !covered {
                if let Err(e) = log.flush_as(end, self.sync_here()).await.map_err(log_error) {
                    self.abort();
                    return Err(e);
                }
            }
        }
        let mut gate = None;
        if let (Some(log), Some(_)) = (&db.log, self.session.xid()) {
            // The gate keeps a checkpoint's cut from falling between the
            // COMMIT record and the commit's visibility (CHECKPOINT-CUT).
            gate = Some(db.commit_gate.read().await);
            let logged = match self.append_commit() {
                Ok(end) if self.wal.changed && self.config.synchronous_commit => {
                    log.flush_as(end, self.sync_here()).await
                }
                Ok(end) => {
                    // Nothing to wait for: a commit that changed nothing
                    // (an xid for a row lock, a temporary table) is not
                    // made durable first, as in PostgreSQL.
                    log.flush_soon(end);
                    Ok(())
                }
                Err(e) => Err(e),
            }
            .map_err(log_error);
            if let Err(e) = logged {
                // Never acknowledged: the transaction aborts here (its
                // record may still be on disk; after a restart it would
                // count).
                drop(gate);
                self.abort();
                return Err(e);
            }
        }
        let committed = self.finish_commit();
        drop(gate);
        committed
    }

    /// Appends the buffered records and the COMMIT record as one batch
    /// (WAL-FIRST) and forgets where the tree started (TREE-START). Returns
    /// the LSN after the batch.
    fn append_commit(&mut self) -> Result<Lsn, snapscale_storage::log::LogError> {
        let log = self.db.log.as_ref().expect("called with a log");
        let xids = self.session.tree_xids();
        let (&xid, subxids) = xids.split_first().expect("called with an xid");
        let record = redo::encode_commit(xid, subxids, now_micros());
        let appended = self.wal.append(log, &[(redo::COMMIT, &record)]);
        self.db.end_tree(self.session.slot());
        appended.map(|(_, end)| end)
    }

    /// Appends an ABORT record for `xids` (never waited for: replay treats
    /// a missing commit as abort anyway; the record lets a standby forget
    /// them at once). A broken log has nothing to add.
    fn log_abort(&mut self, xids: &[Xid]) {
        if let (Some(log), false) = (&self.db.log, xids.is_empty()) {
            if let Ok(end) = log.append(&[(redo::ABORT, &redo::encode_abort(xids))]) {
                log.flush_soon(end);
            }
        }
    }

    /// The synchronous tail of a commit, once its WAL (if any) is written
    /// (under the commit gate the caller still holds): visibility, then
    /// invalidations, then the locks.
    fn finish_commit(&mut self) -> Result<(), SqlError> {
        let committed = self.session.commit().map_err(txn_error);
        let levels = std::mem::take(&mut self.levels);
        match &committed {
            Ok(()) => {
                let invalidations: Vec<Invalidation> =
                    levels.iter().flat_map(|l| l.invalidations.iter().copied()).collect();
                if !invalidations.is_empty() {
                    // PLAN-FRESH: sent after the commit is visible and
                    // before the locks go, so whoever waited for our locks
                    // finds them when it accepts invalidations.
                    self.db.sinval.send(&invalidations);
                }
                for l in &levels {
                    for &s in &l.dropped {
                        self.db.catalog.drop_storage(s);
                    }
                }
            }
            Err(_) => self.forget(&levels),
        }
        self.db.locks.release_all(self.session.slot());
        self.held.clear();
        self.advisory.collect_taken();
        if committed.is_ok() {
            self.prune_touched();
        }
        self.touched.clear();
        committed
    }

    /// Aborts the transaction, if one is open: its rows die, its storage is
    /// freed, its locks and xid locks are released (FAIL-FAST).
    pub fn abort(&mut self) {
        let xids = self.session.tree_xids();
        self.session.abort();
        self.wal.reset();
        // Before the locks go (WAL-TAGGED, as in `rollback_level`).
        self.log_abort(&xids);
        self.db.end_tree(self.session.slot());
        let levels = std::mem::take(&mut self.levels);
        self.forget(&levels);
        self.db.locks.release_all(self.session.slot());
        self.held.clear();
        self.advisory.collect_taken();
        self.touched.clear();
    }

    /// Undoes the non-MVCC side of aborted levels: storage they created is
    /// freed, and the cache forgets what our own DDL put there (CACHE-OWN).
    fn forget(&mut self, levels: &[Level]) {
        let mut ddl = false;
        for l in levels {
            for &s in &l.created {
                self.db.catalog.drop_storage(s);
            }
            ddl |= !l.invalidations.is_empty();
        }
        for l in levels.iter().rev() {
            for (cell, old) in l.renames.iter().rev() {
                cell.rename(Arc::clone(old));
            }
        }
        if ddl {
            self.cache.clear();
        }
    }

    // ------------------------------------------------- what a level holds

    fn level(&mut self) -> &mut Level {
        self.levels.last_mut().expect("a transaction is open")
    }

    /// Storage created by this level: freed if it aborts.
    pub fn created_storage(&mut self, id: u64) {
        self.level().created.push(id);
    }

    /// Storage this level dropped or replaced: freed at commit.
    pub fn dropped_storage(&mut self, id: u64) {
        self.level().dropped.push(id);
    }

    /// Renames an enum label for every value that holds it, until this
    /// level aborts. The caller holds the type's DDL lock.
    pub fn rename_label(&mut self, cell: &Arc<snapscale_values::EnumLabel>, name: Arc<str>) {
        let old = cell.rename(name);
        self.level().renames.push((Arc::clone(cell), old));
    }

    /// The running transaction's top-level xid, if it has one.
    pub fn top_xid(&self) -> Option<u64> {
        self.session.xid().map(|x| x.0)
    }

    /// An invalidation to send at commit.
    pub fn invalidate(&mut self, oid: u32) {
        self.level().invalidations.push(Invalidation::Relation(oid));
        self.cache.bump();
    }

    /// The catalog changes this backend has made or heard of (a kept plan
    /// made at another generation is made again: PL-CACHE).
    pub fn catalog_generation(&self) -> u64 {
        self.cache.generation()
    }

    /// At commit, every backend forgets every name it resolved: what a
    /// name without a schema finds may have changed (a relation made,
    /// renamed or moved where a search_path looks first, a schema made or
    /// gone: REL-KEY).
    pub fn invalidate_names(&mut self) {
        self.level().invalidations.push(Invalidation::All);
        self.cache.bump();
    }

    /// Logs a change of a permanent relation, tagged with the writing
    /// (sub)transaction's xid (WAL-TAGGED); temporary tables are never
    /// logged. The buffer is appended when it fills.
    pub async fn log_change(&mut self, rel: &RelEntry, change: Redo) -> Result<(), SqlError> {
        if rel.temp_owner.is_some() || self.db.log.is_none() {
            return Ok(());
        }
        let xid = self.prepare_write()?;
        self.wal.change(xid, &change);
        if self.wal.full() {
            self.spill().await?;
        }
        Ok(())
    }

    /// Appends the buffered records before the commit. The tree's first
    /// append registers where it starts, under the commit gate that a
    /// checkpoint takes exclusively to read the starts (TREE-START).
    async fn spill(&mut self) -> Result<(), SqlError> {
        let db = Arc::clone(&self.db);
        let Some(log) = &db.log else { return Ok(()) };
        // Each spill is also asked to become durable without waiting (as
        // PostgreSQL's WAL writer does): a standby streams only durable WAL,
        // and a long transaction's changes should reach it as they happen.
        if self.wal.appended {
            let (_, end) = self.wal.append(log, &[]).map_err(log_error)?;
            log.flush_soon(end);
            return Ok(());
        }
        let _gate = db.commit_gate.read().await;
        let (start, end) = self.wal.append(log, &[]).map_err(log_error)?;
        db.begin_tree(self.session.slot(), start);
        self.wal.appended = true;
        log.flush_soon(end);
        Ok(())
    }

    /// A heap this transaction changed: pruned after commit if due.
    pub fn touch(&mut self, heap: &Arc<Heap>) {
        // Each written row counts towards autoanalyze (STATS-SLOT).
        heap.stats.note_change();
        if !self.touched.iter().any(|h| Arc::ptr_eq(h, heap)) {
            self.touched.push(Arc::clone(heap));
        }
    }

    /// Opportunistic pruning (PRUNE): a heap that saw many updates and
    /// deletes since its last prune is vacuumed by the committer that
    /// notices.
    fn prune_touched(&mut self) {
        for heap in std::mem::take(&mut self.touched) {
            // Relaxed: pairs with the Relaxed increments of the executor; a
            // stale count only delays or advances a prune, never decides
            // safety (vacuum computes its own cutoff).
            let changes = heap.changes.load(std::sync::atomic::Ordering::Relaxed);
            let due = 1000 + heap.table.allocated_slots() as u64 / 4;
            if changes < due {
                continue;
            }
            let Ok(_guard) = heap.pruning.try_lock() else { continue };
            // Relaxed: a heuristic counter, no data is published through it.
            heap.changes.store(0, std::sync::atomic::Ordering::Relaxed);
            // Pruning freezes too, as vacuum does (FROZEN-XID).
            let freeze_min_age = self.db.xid_limits().freeze_min_age;
            heap.vacuum(&mut self.session, snapscale_storage::VacuumOptions { freeze_min_age, remove: true });
        }
    }

    // ------------------------------------------------------------ writing

    /// Before a write: the xid exists and other sessions can wait for it
    /// (XID-WAITABLE). A broken WAL refuses every write until a restart.
    pub fn prepare_write(&mut self) -> Result<Xid, SqlError> {
        if let Some(e) = self.db.log.as_ref().and_then(|l| l.broken()) {
            return Err(log_error(e));
        }
        let xid = match self.session.assign_xid() {
            Ok(xid) => xid,
            // FROZEN-XID: a status log that is full only because tables
            // are not frozen yet is freed first, by this writer; one pinned
            // by a session is named.
            Err(e @ snapscale_txn::TxnError::XidSpaceExhausted { .. }) => {
                self.db.freeze_for_xid_space(&mut self.session, &e);
                self.session.assign_xid().map_err(|e| self.db.xid_space_error(e))?
            }
            Err(e) => return Err(txn_error(e)),
        };
        if !self.levels.iter().any(|l| l.xids.contains(&xid)) {
            self.db.note_xid(xid);
            self.db.locks.register_xid(self.session.slot(), xid.0).map_err(lock_error)?;
            self.level().xids.push(xid);
            if let Some(top) = self.session.xid().filter(|&top| top != xid) {
                // A subtransaction's first record is preceded by the one
                // naming its parent (PostgreSQL's XLOG_XACT_ASSIGNMENT).
                self.wal.assignment(top, xid);
            }
        }
        Ok(xid)
    }

    // --------------------------------------------------------- disconnect

    /// Drops this backend's temporary tables, in a transaction of its own.
    /// Synchronous (it runs from `Drop`): nothing here waits, because no
    /// other session can name these tables, and nothing is logged, because
    /// temporary tables never are.
    pub fn drop_temp_tables(&mut self) -> Result<(), SqlError> {
        self.begin(IsolationLevel::ReadCommitted)?;
        let temps: Vec<(Tid, Arc<RelEntry>)> =
            self.catalog_entries()?.into_iter().filter(|(_, e)| e.temp_owner == Some(self.id)).collect();
        if temps.is_empty() {
            self.abort();
            return Ok(());
        }
        for (tid, entry) in temps {
            if !self.try_lock_relation(entry.oid, LockMode::AccessExclusive)? {
                tracing::warn!(table = %entry.name, "a temporary table was locked by another session at disconnect");
            }
            self.prepare_write()?;
            match self
                .db
                .catalog
                .table
                .delete(&mut self.session, tid)
                .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?
            {
                snapscale_storage::Outcome::Ok(_) => {}
                other => {
                    return Err(SqlError::new(
                        SqlState::INTERNAL_ERROR,
                        format!("temporary table row: {other:?}"),
                    ))
                }
            }
            self.dropped_storage(entry.storage);
            self.invalidate(entry.oid);
        }
        debug_assert!(!self.wal.changed, "temporary tables are never logged");
        if self.db.log.is_some() {
            // Not waited for, and outside the commit gate (this runs from
            // Drop): the transaction changed nothing a checkpoint image or
            // a standby holds (CHECKPOINT-CUT in the README says why that
            // is enough).
            if let Err(e) = self.append_commit() {
                tracing::warn!(error = %e, "could not log the commit of dropping temporary tables");
            }
        }
        self.finish_commit()
    }
}

/// CONNECTION-GUARD: every exit path of a connection ends here (an orderly
/// close, a client that vanished, a task dropped at shutdown, a panic that
/// unwound through the connection). The transaction aborts (releasing its
/// locks and xid locks), temporary tables are dropped, and the backend
/// leaves the invalidation queue; its proc-array slot is released when
/// `session` drops, after this.
impl Drop for Xact {
    fn drop(&mut self) {
        self.abort();
        // The session's own advisory locks end with it.
        self.advisory.unlock_all();
        self.cache.clear();
        if let Err(e) = self.drop_temp_tables() {
            tracing::warn!(error = %e, "dropping temporary tables at disconnect failed");
            self.abort();
        }
        self.db.sinval.detach(self.session.slot());
        self.db.activity.set(self.session.slot(), None);
    }
}
