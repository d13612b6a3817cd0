//! One client connection's SQL session: its proc-array session, its
//! transaction block, its catalog cache, and the statements it prepared.
//!
//! Statement life cycle (PostgreSQL's order):
//!
//! ```text
//!   begin (implicitly, if no block is open)
//!   bind against the catalog cache           (names → relations, types)
//!   lock the relations, then accept invalidations; if a relation the plan
//!     used changed meanwhile, bind again      (prepared plans re-plan)
//!   take the statement snapshot, execute, end the statement
//!   commit (implicitly, at the end of the Query message or at Sync)
//! ```
//!
//! At commit: the commit becomes visible, then the invalidations of our
//! DDL are sent, then the relation locks are released. Another session
//! that waited for our lock therefore finds our messages when it accepts
//! invalidations after acquiring it, and re-reads the catalog.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use snapscale_lock::{LockMode, LockTag, WaitPolicy};
use snapscale_sinval::{Invalidation, Received};
use snapscale_storage::Tid;
use snapscale_txn::{IsolationLevel, Session, Xid};
use sqlparser::ast::{self, Expr as AstExpr, Set, Statement, TransactionIsolationLevel, TransactionMode};
use tokio::sync::Notify;

use crate::bind::{bind, BoundStatement, Resolver};
use crate::catalog::{Database, RelEntry};
use crate::error::SqlError;
use crate::plan::{Column, Plan, Rel};
use crate::preparse::{CopyDirection, Parsed};
use crate::sqlstate::SqlState;
use crate::types::{SqlType, Value};

/// Session settings the SQL layer reads and changes (SET / SHOW); the
/// server implements this over its settings.
pub trait Gucs: Clone + Send + 'static {
    /// SET name = value, or the setting's SQLSTATE.
    fn set(&mut self, name: &str, value: &str) -> Result<(), SqlError>;
    /// SHOW name.
    fn show(&self, name: &str) -> Result<String, SqlError>;
    /// default_transaction_isolation.
    fn default_isolation(&self) -> IsolationLevel;
    /// synchronous_commit: wait for the commit record to be durable.
    fn synchronous_commit(&self) -> bool {
        true
    }
    /// max_stack_depth, in bytes: how deep statement work may recurse.
    fn max_stack_depth(&self) -> usize {
        crate::stack::DEFAULT_MAX_STACK_DEPTH
    }
    /// max_message_size, in bytes: also the longest row COPY buffers.
    fn max_message_size(&self) -> usize {
        64 << 20
    }
    /// deadlock_timeout and lock_timeout, for this session's next wait.
    fn wait_policy(&self) -> WaitPolicy {
        WaitPolicy { deadlock_timeout: std::time::Duration::from_secs(1), lock_timeout: None }
    }
}

/// A notice or warning to send before the statement's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub severity: &'static str,
    pub code: SqlState,
    pub message: String,
}

/// What a statement produced.
#[derive(Debug)]
pub enum Output {
    /// Rows (SELECT, SHOW, ... RETURNING) and the command tag.
    Rows { columns: Arc<[Column]>, rows: Vec<Vec<Value>>, tag: String },
    /// A command tag only.
    Command(String),
    /// COPY FROM STDIN started: feed [`Conn::copy_data`], then
    /// [`Conn::copy_done`] or [`Conn::copy_fail`].
    CopyIn { columns: usize },
    /// COPY TO STDOUT: these lines, then the tag.
    CopyOut { columns: usize, lines: Vec<Vec<u8>>, tag: String },
}

/// Cancellation of the running statement (a CancelRequest).
#[derive(Debug, Default)]
pub struct Cancel {
    requested: AtomicBool,
    wake: Notify,
}

impl Cancel {
    /// Asks the running statement, if any, to stop.
    pub fn request(&self) {
        // Release: pairs with the Acquire swap in `take`; nothing else is
        // published through the flag.
        self.requested.store(true, Ordering::Release);
        // Only current waiters: a stored permit would cancel the next
        // statement's first wait.
        self.wake.notify_waiters();
    }

    /// Consumes a pending request.
    pub(crate) fn take(&self) -> bool {
        // Acquire: pairs with the Release store in `request`.
        self.requested.swap(false, Ordering::Acquire)
    }

    /// Resolves when a cancel is requested (consuming the request).
    pub(crate) async fn wait(&self) {
        let notified = self.wake.notified();
        tokio::pin!(notified);
        // Registered before the flag is checked, so a request between the
        // check and the await still wakes us.
        notified.as_mut().enable();
        if self.take() {
            return;
        }
        notified.await;
        self.take();
    }
}

/// Where the connection stands with respect to transactions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Block {
    /// No transaction.
    Idle,
    /// A transaction started by a statement outside any block; it ends at
    /// the end of the Query message or at Sync.
    Implicit,
    /// BEGIN ... COMMIT.
    Open,
    /// A block in which a statement failed: only its end (or ROLLBACK TO)
    /// is accepted (25P02).
    Failed,
}

/// What one (sub)transaction level did that its end must settle.
#[derive(Debug, Default)]
pub(crate) struct Level {
    /// Storage created here: freed if this level aborts.
    pub(crate) created: Vec<u64>,
    /// Storage dropped or replaced here: freed when the top level commits.
    pub(crate) dropped: Vec<u64>,
    /// Invalidations to send when the top level commits.
    pub(crate) invalidations: Vec<Invalidation>,
    /// Xids registered with the lock manager at this level.
    pub(crate) xids: Vec<Xid>,
    /// Changes to log at commit (dropped if this level aborts).
    pub(crate) redo: Vec<crate::durable::Redo>,
}

/// A prepared statement. Binding happens at prepare time; a plan whose
/// relations changed is bound again at execution.
pub struct Prepared {
    kind: Kind,
    declared: Vec<Option<SqlType>>,
    params: Vec<SqlType>,
    columns: Option<Arc<[Column]>>,
    bound: Mutex<Option<Arc<BoundStatement>>>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("params", &self.params).field("columns", &self.columns).finish()
    }
}

#[derive(Debug)]
enum Kind {
    /// BEGIN/COMMIT/SAVEPOINT/SET/SHOW ...: executed by the session itself.
    Control(crate::preparse::Ast),
    /// A statement with a plan.
    Plan(Parsed),
    /// An empty query string.
    Empty,
}

impl Prepared {
    /// Parameter types (declared, or inferred).
    pub fn param_types(&self) -> &[SqlType] {
        &self.params
    }

    /// Result columns, if the statement returns rows.
    pub fn columns(&self) -> Option<&Arc<[Column]>> {
        self.columns.as_ref()
    }

    /// True for the empty query.
    pub fn is_empty(&self) -> bool {
        matches!(self.kind, Kind::Empty)
    }
}

/// The SQL session of one connection.
pub struct Conn<G: Gucs> {
    pub(crate) db: Arc<Database>,
    pub(crate) session: Session,
    /// This connection's id (owner of its temporary tables).
    pub(crate) id: u64,
    gucs: G,
    saved_gucs: Option<G>,
    pub(crate) block: Block,
    savepoints: Vec<String>,
    pub(crate) levels: Vec<Level>,
    /// Name → relation, as of the last accepted invalidations.
    pub(crate) cache: HashMap<String, Rel>,
    pub(crate) notices: Vec<Notice>,
    /// The transaction's start (now()), microseconds since 2000-01-01.
    pub(crate) now: i64,
    pub(crate) cancel: Arc<Cancel>,
    pub(crate) copy: Option<crate::exec::CopyIn>,
    /// Heaps changed by this transaction (pruned after commit if due).
    pub(crate) touched: Vec<Arc<crate::catalog::Heap>>,
    received: Vec<Invalidation>,
    /// Relation locks this transaction holds, with the level that took
    /// each (PostgreSQL's local lock table): a lock already held is not
    /// asked for again, and ROLLBACK TO releases what its levels took
    /// (SUBXACT-LOCKS).
    held: HashMap<(u32, LockMode), usize>,
}

/// PostgreSQL's epoch (2000-01-01) in Unix seconds.
const PG_EPOCH: i64 = 946_684_800;

fn now_micros() -> i64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    d.as_micros() as i64 - PG_EPOCH * 1_000_000
}

impl<G: Gucs> Conn<G> {
    /// A connection's SQL session over `session`.
    pub fn new(db: Arc<Database>, session: Session, gucs: G) -> Conn<G> {
        db.sinval.attach(session.slot());
        let id = db.new_connection_id();
        Conn {
            db,
            session,
            id,
            gucs,
            saved_gucs: None,
            block: Block::Idle,
            savepoints: Vec::new(),
            levels: Vec::new(),
            cache: HashMap::new(),
            notices: Vec::new(),
            now: 0,
            cancel: Arc::new(Cancel::default()),
            copy: None,
            touched: Vec::new(),
            received: Vec::new(),
            held: HashMap::new(),
        }
    }

    /// The handle a CancelRequest uses.
    pub fn cancel_handle(&self) -> Arc<Cancel> {
        Arc::clone(&self.cancel)
    }

    /// The session settings.
    pub fn gucs(&self) -> &G {
        &self.gucs
    }

    /// The shared database.
    pub fn database(&self) -> Arc<Database> {
        Arc::clone(&self.db)
    }

    /// Reads the invalidation queue (an idle session asked to catch up).
    pub fn catch_up(&mut self) {
        self.accept_invalidations();
    }

    /// The session's proc-array slot.
    pub fn slot(&self) -> u32 {
        self.session.slot()
    }

    /// ReadyForQuery's status byte: I, T or E.
    pub fn status(&self) -> u8 {
        match self.block {
            Block::Idle => b'I',
            Block::Implicit | Block::Open => b'T',
            Block::Failed => b'E',
        }
    }

    /// Notices produced since the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    pub(crate) fn notice(&mut self, code: SqlState, message: impl Into<String>) {
        self.notices.push(Notice { severity: "NOTICE", code, message: message.into() });
    }

    fn warning(&mut self, code: SqlState, message: impl Into<String>) {
        self.notices.push(Notice { severity: "WARNING", code, message: message.into() });
    }

    // ------------------------------------------------------- preparation

    /// Parses a query string into statements.
    pub fn parse(&self, sql: &str) -> Result<Vec<Parsed>, SqlError> {
        crate::preparse::parse(sql, self.gucs.max_stack_depth())
    }

    /// Prepares one statement; `declared` are the parameter types the
    /// client sent (`None`: infer). The empty string is the empty query.
    pub fn prepare_sql(
        &mut self,
        sql: &str,
        declared: &[Option<SqlType>],
    ) -> Result<Arc<Prepared>, SqlError> {
        let mut parsed = self.parse(sql)?;
        if parsed.len() > 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        match parsed.pop() {
            None => Ok(Arc::new(Prepared {
                kind: Kind::Empty,
                declared: Vec::new(),
                params: Vec::new(),
                columns: None,
                bound: Mutex::new(None),
            })),
            Some(p) => self.prepare(p, declared),
        }
    }

    /// Prepares a parsed statement.
    pub fn prepare(
        &mut self,
        parsed: Parsed,
        declared: &[Option<SqlType>],
    ) -> Result<Arc<Prepared>, SqlError> {
        let control = match &parsed {
            Parsed::Sql(s) => is_control(s),
            _ => false,
        };
        if control {
            let Parsed::Sql(s) = parsed else { unreachable!("checked above") };
            let columns = match &*s {
                Statement::ShowVariable { variable } => {
                    Some(Arc::from(vec![Column { name: show_column(variable), ty: SqlType::Text }]))
                }
                _ => None,
            };
            return Ok(Arc::new(Prepared {
                kind: Kind::Control(s),
                declared: declared.to_vec(),
                params: declared.iter().map(|t| t.unwrap_or(SqlType::Text)).collect(),
                columns,
                bound: Mutex::new(None),
            }));
        }
        if self.block == Block::Failed {
            return Err(aborted_block());
        }
        // Binding reads the catalog, which needs a transaction; on error
        // the caller fails it (`Conn::fail`).
        self.ensure_transaction()?;
        let bound = self.bind_parsed(&parsed, declared)?;
        Ok(Arc::new(Prepared {
            columns: bound.plan.columns(),
            params: bound.params.clone(),
            kind: Kind::Plan(parsed),
            declared: declared.to_vec(),
            bound: Mutex::new(Some(Arc::new(bound))),
        }))
    }

    fn bind_parsed(
        &mut self,
        parsed: &Parsed,
        declared: &[Option<SqlType>],
    ) -> Result<BoundStatement, SqlError> {
        match parsed {
            Parsed::Sql(s) => {
                let depth = self.gucs.max_stack_depth();
                bind(self, s, declared, depth)
            }
            Parsed::Analyze => {
                Ok(BoundStatement { plan: Plan::Analyze, params: Vec::new(), deps: Vec::new() })
            }
            Parsed::Vacuum { tables, analyze } => {
                let mut rels = Vec::new();
                let mut deps = Vec::new();
                for t in tables {
                    let rel = self.resolve(t)?.ok_or_else(|| {
                        SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{t}\" does not exist"))
                    })?;
                    deps.push(crate::plan::Dep {
                        name: t.clone(),
                        rel: rel.clone(),
                        mode: LockMode::ShareUpdateExclusive,
                    });
                    rels.push(rel);
                }
                Ok(BoundStatement {
                    plan: Plan::Vacuum { rels, analyze: *analyze },
                    params: Vec::new(),
                    deps,
                })
            }
            Parsed::Copy { table, columns, direction } => {
                let rel = self.resolve(table)?.ok_or_else(|| {
                    SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist"))
                })?;
                let positions = if columns.is_empty() {
                    (0..rel.entry.columns.len()).collect()
                } else {
                    columns
                        .iter()
                        .map(|c| {
                            rel.entry.column(c).ok_or_else(|| {
                                SqlError::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("column \"{c}\" of relation \"{table}\" does not exist"),
                                )
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?
                };
                let (plan, mode) = match direction {
                    CopyDirection::FromStdin => {
                        (Plan::CopyFrom { rel: rel.clone(), columns: positions }, LockMode::RowExclusive)
                    }
                    CopyDirection::ToStdout => {
                        (Plan::CopyTo { rel: rel.clone(), columns: positions }, LockMode::AccessShare)
                    }
                };
                let deps = vec![crate::plan::Dep { name: table.clone(), rel, mode }];
                Ok(BoundStatement { plan, params: Vec::new(), deps })
            }
        }
    }

    // --------------------------------------------------------- execution

    /// Executes a prepared statement with `params` (already decoded to the
    /// statement's parameter types). On error the transaction is marked
    /// failed (a block) or aborted (an implicit transaction).
    pub async fn execute(&mut self, p: &Prepared, params: &[Value]) -> Result<Output, SqlError> {
        self.cancel.take();
        let result = self.execute_inner(p, params).await;
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// Runs one parsed statement of a simple Query message.
    pub async fn execute_parsed(&mut self, parsed: Parsed) -> Result<Output, SqlError> {
        let p = match self.prepare(parsed, &[]) {
            Ok(p) => p,
            Err(e) => {
                self.fail();
                return Err(e);
            }
        };
        if !p.params.is_empty() {
            self.fail();
            return Err(SqlError::new(SqlState::UNDEFINED_PARAMETER, "there is no parameter $1"));
        }
        self.execute(&p, &[]).await
    }

    async fn execute_inner(&mut self, p: &Prepared, params: &[Value]) -> Result<Output, SqlError> {
        match &p.kind {
            Kind::Empty => Ok(Output::Command(String::new())),
            Kind::Control(s) => self.control(s).await,
            Kind::Plan(parsed) => {
                if self.block == Block::Failed {
                    return Err(aborted_block());
                }
                self.ensure_transaction()?;
                let bound = self.ready(p, parsed).await?;
                if let Parsed::Sql(ast) = parsed {
                    self.db.maybe_panic(&**ast);
                }
                let out = self.run(&bound.plan, params).await?;
                if !matches!(out, Output::CopyIn { .. }) {
                    self.end_statement()?;
                }
                Ok(out)
            }
        }
    }

    pub(crate) fn end_statement(&mut self) -> Result<(), SqlError> {
        self.session.end_statement().map_err(txn_error)
    }

    /// Locks the plan's relations, accepts invalidations and re-binds if a
    /// relation changed, until the plan is current.
    async fn ready(&mut self, p: &Prepared, parsed: &Parsed) -> Result<Arc<BoundStatement>, SqlError> {
        loop {
            let bound = {
                let mut slot = p.bound.lock().expect("prepared statement lock poisoned");
                match slot.as_ref() {
                    Some(b) => Arc::clone(b),
                    None => {
                        drop(slot);
                        let b = Arc::new(self.bind_parsed(parsed, &p.declared)?);
                        slot = p.bound.lock().expect("prepared statement lock poisoned");
                        *slot = Some(Arc::clone(&b));
                        b
                    }
                }
            };
            for dep in &bound.deps {
                self.lock_relation(dep.rel.entry.oid, dep.mode).await?;
            }
            self.accept_invalidations();
            let mut stale = false;
            for dep in &bound.deps {
                match self.resolve(&dep.name)? {
                    Some(now) if Arc::ptr_eq(&now.entry, &dep.rel.entry) => {}
                    _ => stale = true,
                }
            }
            if !stale {
                return Ok(bound);
            }
            let fresh = self.bind_parsed(parsed, &p.declared)?;
            if fresh.params != p.params || fresh.plan.columns() != p.columns {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cached plan must not change result type",
                ));
            }
            *p.bound.lock().expect("prepared statement lock poisoned") = Some(Arc::new(fresh));
        }
    }

    /// Takes a relation lock until the end of the transaction (or of the
    /// subtransaction, if it rolls back). A lock this transaction already
    /// holds in `mode` costs nothing: the lock manager is not asked again.
    pub(crate) async fn lock_relation(&mut self, oid: u32, mode: LockMode) -> Result<(), SqlError> {
        if self.held.contains_key(&(oid, mode)) {
            return Ok(());
        }
        let slot = self.session.slot();
        let locks = Arc::clone(&self.db.locks);
        let cancel = Arc::clone(&self.cancel);
        let policy = self.gucs.wait_policy();
        tokio::select! {
            r = locks.lock_with(slot, LockTag::Relation(oid), mode, policy) => r.map_err(lock_error)?,
            () = cancel.wait() => return Err(canceled()),
        }
        self.held.insert((oid, mode), self.levels.len().saturating_sub(1));
        Ok(())
    }

    /// Waits until transaction `xid` ends (a row or key it holds).
    pub(crate) async fn wait_for_xid(&mut self, xid: Xid) -> Result<(), SqlError> {
        let slot = self.session.slot();
        let locks = Arc::clone(&self.db.locks);
        let cancel = Arc::clone(&self.cancel);
        if self.cancel.take() {
            return Err(canceled());
        }
        let policy = self.gucs.wait_policy();
        tokio::select! {
            r = locks.wait_for_xid_with(slot, xid.0, policy) => r.map_err(lock_error)?,
            () = cancel.wait() => return Err(canceled()),
        }
        // The owner registers its xid just after assigning it: a waiter
        // that came in between found no lock. Yield so it does not spin.
        tokio::task::yield_now().await;
        Ok(())
    }

    /// Before a write: the xid exists and other sessions can wait for it.
    /// A broken WAL refuses every write until the server restarts.
    pub(crate) fn prepare_write(&mut self) -> Result<Xid, SqlError> {
        if let Some(e) = self.db.log.as_ref().and_then(|l| l.broken()) {
            return Err(SqlError::new(SqlState::from_code(e.sqlstate), e.message));
        }
        let xid = self.session.assign_xid().map_err(txn_error)?;
        let level = self.levels.last_mut().expect("a transaction is open");
        if !level.xids.contains(&xid) && !self.levels.iter().any(|l| l.xids.contains(&xid)) {
            self.db.locks.register_xid(self.session.slot(), xid.0).map_err(lock_error)?;
            self.levels.last_mut().expect("a transaction is open").xids.push(xid);
        }
        Ok(xid)
    }

    /// Drops cached entries other sessions invalidated (PostgreSQL's
    /// AcceptInvalidationMessages).
    pub(crate) fn accept_invalidations(&mut self) {
        self.received.clear();
        match self.db.sinval.receive(self.session.slot(), &mut self.received) {
            Received::Nothing => {}
            Received::Reset => self.cache.clear(),
            Received::Messages(_) => {
                for m in std::mem::take(&mut self.received) {
                    match m {
                        Invalidation::Relation(oid) | Invalidation::Index(oid) => {
                            self.cache.retain(|_, r| r.entry.oid != oid);
                        }
                        Invalidation::All => self.cache.clear(),
                    }
                }
            }
        }
    }

    // ------------------------------------------------------ transactions

    /// Starts an implicit transaction if none is open. True if it did.
    pub(crate) fn ensure_transaction(&mut self) -> Result<bool, SqlError> {
        if self.block != Block::Idle {
            return Ok(false);
        }
        self.begin_transaction(self.gucs.default_isolation())?;
        self.block = Block::Implicit;
        Ok(true)
    }

    fn begin_transaction(&mut self, isolation: IsolationLevel) -> Result<(), SqlError> {
        self.session.begin(isolation).map_err(txn_error)?;
        self.levels = vec![Level::default()];
        self.now = now_micros();
        self.saved_gucs = Some(self.gucs.clone());
        self.accept_invalidations();
        Ok(())
    }

    /// End of a Query message or Sync: an implicit transaction commits.
    pub async fn sync(&mut self) -> Result<(), SqlError> {
        if self.block == Block::Implicit {
            self.block = Block::Idle;
            return self.commit_transaction().await;
        }
        Ok(())
    }

    /// A statement failed (also for errors found outside the session,
    /// such as a syntax error in a Query message).
    pub fn fail(&mut self) {
        self.copy = None;
        match self.block {
            Block::Idle => {}
            Block::Implicit => {
                self.abort_transaction();
                self.block = Block::Idle;
            }
            Block::Open | Block::Failed => {
                self.block = Block::Failed;
                if self.savepoints.is_empty() {
                    // Nothing can resume this transaction: abort it now, so
                    // that others stop waiting for its rows and locks; the
                    // client's ROLLBACK only ends the block.
                    self.abort_transaction();
                }
            }
        }
    }

    async fn commit_transaction(&mut self) -> Result<(), SqlError> {
        let redo: Vec<crate::durable::Redo> = self.levels.iter_mut().flat_map(|l| l.redo.drain(..)).collect();
        let mut committed = Ok(());
        // WAL-FIRST: the changes and the commit record are appended as one
        // batch, and (synchronous_commit) made durable, before the commit
        // becomes visible. The gate keeps a checkpoint's cut from falling
        // between the append and the visibility (CHECKPOINT-CUT).
        let db = Arc::clone(&self.db);
        let mut gate = None;
        if let (Some(log), Some(xid)) = (&db.log, self.session.xid()) {
            if !redo.is_empty() {
                gate = Some(db.commit_gate.read().await);
                let subxids: Vec<u64> = self
                    .levels
                    .iter()
                    .flat_map(|l| l.xids.iter().map(|x| x.0))
                    .filter(|&x| x != xid.0)
                    .collect();
                let encoded: Vec<(u8, Vec<u8>)> = redo.iter().map(crate::durable::encode).collect();
                let commit = crate::durable::encode_commit(xid.0, &subxids);
                let mut batch: Vec<(u8, &[u8])> = encoded.iter().map(|(k, p)| (*k, p.as_slice())).collect();
                batch.push((crate::durable::COMMIT, &commit));
                committed = match log.append(&batch) {
                    Ok(end) if self.gucs.synchronous_commit() => log.flush(end).await,
                    Ok(end) => {
                        log.flush_soon(end);
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
                .map_err(|e| SqlError::new(SqlState::from_code(e.sqlstate), e.message));
            }
        }
        if let Err(e) = committed {
            // Never acknowledged: the transaction aborts here (its record
            // may still be on disk; after a restart it would count).
            drop(gate);
            self.abort_transaction();
            return Err(e);
        }
        self.finish_commit(gate.is_some())
    }

    /// The synchronous tail of a commit, once its WAL (if any) is written:
    /// visibility, then the CSN record, then invalidations, then the locks
    /// (PLAN-FRESH's order). `logged` says the commit record was appended
    /// (under the commit gate the caller still holds).
    fn finish_commit(&mut self, logged: bool) -> Result<(), SqlError> {
        let db = Arc::clone(&self.db);
        let xid = self.session.xid();
        let committed = self.session.commit().map_err(txn_error);
        if let (Some(log), Some(xid), Some(csn), true) =
            (&db.log, xid, self.session.last_commit_csn(), logged)
        {
            // Never waited for: the next flush takes it along.
            let _ = log.append(&[(crate::durable::CSN, &crate::durable::encode_csn(xid.0, csn))]);
        }
        let levels = std::mem::take(&mut self.levels);
        match &committed {
            Ok(()) => {
                let invalidations: Vec<Invalidation> =
                    levels.iter().flat_map(|l| l.invalidations.iter().copied()).collect();
                if !invalidations.is_empty() {
                    self.db.sinval.send(&invalidations);
                }
                for l in &levels {
                    for &s in &l.dropped {
                        self.db.drop_storage(s);
                    }
                }
            }
            Err(_) => self.forget(&levels),
        }
        self.db.locks.release_all(self.session.slot());
        self.held.clear();
        self.saved_gucs = None;
        self.savepoints.clear();
        if committed.is_ok() {
            self.prune_touched();
        }
        self.touched.clear();
        committed
    }

    fn abort_transaction(&mut self) {
        let xid = self.session.xid();
        self.session.abort();
        if let (Some(log), Some(xid)) = (&self.db.log, xid) {
            // Informational (recovery treats a missing commit as abort);
            // never waited for. A broken log has nothing to add.
            let _ = log.append(&[(crate::durable::ABORT, &crate::durable::encode_abort(xid.0))]);
        }
        let levels = std::mem::take(&mut self.levels);
        self.forget(&levels);
        self.db.locks.release_all(self.session.slot());
        self.held.clear();
        if let Some(g) = self.saved_gucs.take() {
            self.gucs = g;
        }
        self.savepoints.clear();
        self.touched.clear();
        self.copy = None;
    }

    /// Undoes the non-MVCC side of aborted levels: storage they created is
    /// freed, and the cache forgets what our own DDL put there.
    fn forget(&mut self, levels: &[Level]) {
        let mut ddl = false;
        for l in levels {
            for &s in &l.created {
                self.db.drop_storage(s);
            }
            ddl |= !l.invalidations.is_empty();
        }
        if ddl {
            self.cache.clear();
        }
    }

    async fn control(&mut self, s: &Statement) -> Result<Output, SqlError> {
        let ends_block = matches!(s, Statement::Commit { .. } | Statement::Rollback { savepoint: None, .. });
        let rolls_back_to = matches!(s, Statement::Rollback { savepoint: Some(_), .. });
        if self.block == Block::Failed && !ends_block && !rolls_back_to {
            return Err(aborted_block());
        }
        match s {
            Statement::StartTransaction { modes, begin, .. } => self.begin(modes, *begin),
            Statement::Commit { .. } => self.commit().await,
            Statement::Rollback { savepoint: None, .. } => Ok(self.rollback()),
            Statement::Rollback { savepoint: Some(name), .. } => self.rollback_to(&name.value),
            Statement::Savepoint { name } => self.savepoint(&name.value),
            Statement::ReleaseSavepoint { name } => self.release(&name.value),
            Statement::ShowVariable { variable } => self.show(variable),
            Statement::Set(set) => self.set(set),
            other => Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{other} is not supported"))),
        }
    }

    fn begin(&mut self, modes: &[TransactionMode], begin: bool) -> Result<Output, SqlError> {
        let mut isolation = self.gucs.default_isolation();
        for mode in modes {
            if let TransactionMode::IsolationLevel(level) = mode {
                isolation = match level {
                    TransactionIsolationLevel::ReadUncommitted | TransactionIsolationLevel::ReadCommitted => {
                        IsolationLevel::ReadCommitted
                    }
                    TransactionIsolationLevel::RepeatableRead => IsolationLevel::RepeatableRead,
                    TransactionIsolationLevel::Serializable => {
                        return Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            "SERIALIZABLE isolation is not supported yet",
                        ));
                    }
                    other => {
                        return Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            format!("isolation level {other} is not supported"),
                        ))
                    }
                };
            }
        }
        let tag = if begin { "BEGIN" } else { "START TRANSACTION" };
        match self.block {
            Block::Open | Block::Failed => {
                self.warning(SqlState::ACTIVE_SQL_TRANSACTION, "there is already a transaction in progress");
            }
            Block::Implicit => {
                // BEGIN inside a multi-statement Query turns its implicit
                // transaction into a block, as in PostgreSQL.
                self.block = Block::Open;
            }
            Block::Idle => {
                self.begin_transaction(isolation)?;
                self.block = Block::Open;
            }
        }
        Ok(Output::Command(tag.into()))
    }

    async fn commit(&mut self) -> Result<Output, SqlError> {
        match self.block {
            Block::Idle => {
                self.warning(SqlState::NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress");
                Ok(Output::Command("COMMIT".into()))
            }
            Block::Failed => Ok(self.rollback()),
            Block::Open | Block::Implicit => {
                self.block = Block::Idle;
                self.commit_transaction().await?;
                Ok(Output::Command("COMMIT".into()))
            }
        }
    }

    fn rollback(&mut self) -> Output {
        if self.block == Block::Idle {
            self.warning(SqlState::NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress");
        } else {
            self.abort_transaction();
            self.block = Block::Idle;
        }
        Output::Command("ROLLBACK".into())
    }

    fn require_block(&self, what: &str) -> Result<(), SqlError> {
        if matches!(self.block, Block::Idle | Block::Implicit) {
            return Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                format!("{what} can only be used in transaction blocks"),
            ));
        }
        Ok(())
    }

    fn savepoint(&mut self, name: &str) -> Result<Output, SqlError> {
        self.require_block("SAVEPOINT")?;
        self.session.begin_subtransaction().map_err(txn_error)?;
        self.savepoints.push(name.to_owned());
        self.levels.push(Level::default());
        Ok(Output::Command("SAVEPOINT".into()))
    }

    fn find_savepoint(&self, name: &str) -> Result<usize, SqlError> {
        self.savepoints.iter().rposition(|n| n == name).ok_or_else(|| {
            SqlError::new(
                SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                format!("savepoint \"{name}\" does not exist"),
            )
        })
    }

    fn release(&mut self, name: &str) -> Result<Output, SqlError> {
        self.require_block("RELEASE SAVEPOINT")?;
        let at = self.find_savepoint(name)?;
        while self.savepoints.len() > at {
            self.session.commit_subtransaction().map_err(txn_error)?;
            self.savepoints.pop();
            let done = self.levels.pop().expect("one level per savepoint");
            // The parent now owns what this level locked.
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
            parent.redo.extend(done.redo);
        }
        Ok(Output::Command("RELEASE".into()))
    }

    fn rollback_to(&mut self, name: &str) -> Result<Output, SqlError> {
        self.require_block("ROLLBACK TO SAVEPOINT")?;
        if self.savepoints.is_empty() && self.block == Block::Failed {
            return Err(SqlError::new(
                SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                format!("savepoint \"{name}\" does not exist"),
            ));
        }
        let at = self.find_savepoint(name)?;
        while self.savepoints.len() > at {
            self.session.abort_subtransaction().map_err(txn_error)?;
            self.savepoints.pop();
            let done = self.levels.pop().expect("one level per savepoint");
            for xid in &done.xids {
                // Waiters for the aborted subtransaction may go on now.
                self.db.locks.unlock(self.session.slot(), LockTag::Transaction(xid.0), LockMode::Exclusive);
            }
            // SUBXACT-LOCKS: so may those of the relations it locked.
            let level = self.levels.len();
            let slot = self.session.slot();
            let locks = &self.db.locks;
            self.held.retain(|&(oid, mode), owner| {
                if *owner < level {
                    return true;
                }
                locks.unlock(slot, LockTag::Relation(oid), mode);
                false
            });
            self.forget(std::slice::from_ref(&done));
        }
        // The savepoint stays, re-opened, as in PostgreSQL.
        self.session.begin_subtransaction().map_err(txn_error)?;
        self.savepoints.push(name.to_owned());
        self.levels.push(Level::default());
        self.block = Block::Open;
        self.copy = None;
        Ok(Output::Command("ROLLBACK".into()))
    }

    fn show(&mut self, variable: &[ast::Ident]) -> Result<Output, SqlError> {
        let name = variable.iter().map(|i| i.value.to_ascii_lowercase()).collect::<Vec<_>>().join(" ");
        let value = match name.as_str() {
            "transaction isolation level" | "transaction_isolation" => {
                let level = self.session.isolation().unwrap_or(self.gucs.default_isolation());
                match level {
                    IsolationLevel::ReadCommitted => "read committed".to_owned(),
                    IsolationLevel::RepeatableRead => "repeatable read".to_owned(),
                }
            }
            _ => self.gucs.show(&name)?,
        };
        Ok(Output::Rows {
            columns: Arc::from(vec![Column { name: show_column(variable), ty: SqlType::Text }]),
            rows: vec![vec![Value::Text(value)]],
            tag: "SHOW".into(),
        })
    }

    fn set(&mut self, set: &Set) -> Result<Output, SqlError> {
        let Set::SingleAssignment { variable, values, .. } = set else {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("{set} is not supported yet"),
            ));
        };
        let name = variable.to_string().to_ascii_lowercase();
        let value = match values.as_slice() {
            [AstExpr::Value(v)] => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::Number(s, _) => s.clone(),
                other => other.to_string(),
            },
            [AstExpr::Identifier(ident)] => ident.value.clone(),
            _ => values.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
        };
        self.gucs.set(&name, &value)?;
        Ok(Output::Command("SET".into()))
    }

    /// A statement panicked: whatever it left half done is abandoned. The
    /// transaction aborts, whatever its savepoints (their state cannot be
    /// trusted), the cache is emptied, and an open block stays failed until
    /// the client ends it.
    pub fn abandon(&mut self) {
        self.abort_transaction();
        self.cache.clear();
        self.notices.clear();
        self.block = match self.block {
            Block::Idle | Block::Implicit => Block::Idle,
            Block::Open | Block::Failed => Block::Failed,
        };
    }

    /// Drops this connection's temporary tables, in a transaction of its
    /// own. Synchronous (it runs from `Drop`): nothing here waits, because
    /// no other session can name these tables, and nothing is logged,
    /// because temporary tables never are.
    fn drop_temp_tables(&mut self) -> Result<(), SqlError> {
        self.begin_transaction(IsolationLevel::ReadCommitted)?;
        self.block = Block::Implicit;
        let temps: Vec<(Tid, Arc<RelEntry>)> =
            self.catalog_entries()?.into_iter().filter(|(_, e)| e.temp_owner == Some(self.id)).collect();
        if temps.is_empty() {
            self.abort_transaction();
            self.block = Block::Idle;
            return Ok(());
        }
        for (tid, entry) in temps {
            let granted = self
                .db
                .locks
                .try_lock(self.session.slot(), LockTag::Relation(entry.oid), LockMode::AccessExclusive)
                .map_err(lock_error)?;
            if !granted {
                tracing::warn!(table = %entry.name, "a temporary table was locked by another session at disconnect");
            }
            self.prepare_write()?;
            match self
                .db
                .catalog
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
            let level = self.levels.last_mut().expect("a transaction is open");
            level.dropped.push(entry.storage);
            level.invalidations.push(Invalidation::Relation(entry.oid));
        }
        debug_assert!(self.levels.iter().all(|l| l.redo.is_empty()), "temporary tables are never logged");
        self.block = Block::Idle;
        self.finish_commit(false)
    }

    /// Every catalog row visible now, with its tid.
    pub(crate) fn catalog_entries(&mut self) -> Result<Vec<(Tid, Arc<RelEntry>)>, SqlError> {
        let (id, snapshot) = self.session.register_snapshot().map_err(txn_error)?;
        let cid = self.session.command_id().unwrap_or(0);
        let rows = self.db.catalog.scan(&self.session, &snapshot, cid);
        self.session.unregister_snapshot(id).map_err(txn_error)?;
        Ok(rows)
    }

    /// Checks for a pending cancel request.
    pub(crate) fn check_cancel(&self) -> Result<(), SqlError> {
        if self.cancel.take() {
            return Err(canceled());
        }
        Ok(())
    }

    /// Buffers a change of a permanent relation for the commit's WAL batch.
    pub(crate) fn redo(&mut self, rel: &crate::catalog::RelEntry, change: crate::durable::Redo) {
        if rel.temp_owner.is_none() && self.db.log.is_some() {
            self.levels.last_mut().expect("a transaction is open").redo.push(change);
        }
    }

    /// Inserted rows of this transaction's heaps get pruned after commit.
    pub(crate) fn touch(&mut self, heap: &Arc<crate::catalog::Heap>) {
        if !self.touched.iter().any(|h| Arc::ptr_eq(h, heap)) {
            self.touched.push(Arc::clone(heap));
        }
    }

    /// Opportunistic pruning: a heap that saw many updates and deletes
    /// since its last prune is vacuumed by the committer that notices.
    fn prune_touched(&mut self) {
        for heap in std::mem::take(&mut self.touched) {
            // Relaxed: pairs with the Relaxed increments in exec.rs; a stale
            // count only delays or advances a prune, never decides safety
            // (vacuum computes its own cutoff).
            let changes = heap.changes.load(Ordering::Relaxed);
            let due = 1000 + heap.table.allocated_slots() as u64 / 4;
            if changes < due {
                continue;
            }
            let Ok(_guard) = heap.pruning.try_lock() else { continue };
            // Relaxed: a heuristic counter, no data is published through it.
            heap.changes.store(0, Ordering::Relaxed);
            crate::exec::vacuum_heap(&mut self.session, &heap);
        }
    }
}

/// Every exit path of a connection ends here: an orderly close, a client
/// that vanished, a task dropped at shutdown, a panic that unwound through
/// the connection. Its transaction aborts (releasing its locks and xid
/// locks), its temporary tables are dropped, and it leaves the
/// invalidation queue; its proc-array slot is released when `session`
/// drops, after this.
impl<G: Gucs> Drop for Conn<G> {
    fn drop(&mut self) {
        self.abort_transaction();
        self.block = Block::Idle;
        self.cache.clear();
        if let Err(e) = self.drop_temp_tables() {
            tracing::warn!(error = %e, "dropping temporary tables at disconnect failed");
            self.abort_transaction();
        }
        self.db.sinval.detach(self.session.slot());
    }
}

impl<G: Gucs> Resolver for Conn<G> {
    fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
        if let Some(rel) = self.cache.get(name) {
            return Ok(Some(rel.clone()));
        }
        let mut found: Option<(Tid, Arc<RelEntry>)> = None;
        for (tid, entry) in self.catalog_entries()? {
            if entry.name != name {
                continue;
            }
            match entry.temp_owner {
                // Our temporary table hides a permanent one (pg_temp is
                // searched first).
                Some(owner) if owner == self.id => found = Some((tid, entry)),
                Some(_) => {}
                None if found.is_none() => found = Some((tid, entry)),
                None => {}
            }
        }
        let Some((tid, entry)) = found else { return Ok(None) };
        let heap = self.db.storage(entry.storage).ok_or_else(|| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("storage of relation \"{name}\" is missing"))
        })?;
        let rel = Rel { entry, heap, catalog_tid: tid };
        self.cache.insert(name.to_owned(), rel.clone());
        Ok(Some(rel))
    }
}

fn is_control(s: &Statement) -> bool {
    matches!(
        s,
        Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::Savepoint { .. }
            | Statement::ReleaseSavepoint { .. }
            | Statement::ShowVariable { .. }
            | Statement::Set(_)
    )
}

/// The column `SHOW name` returns (PostgreSQL names it after the setting).
fn show_column(variable: &[ast::Ident]) -> String {
    let name = variable.iter().map(|i| i.value.to_ascii_lowercase()).collect::<Vec<_>>().join(" ");
    if name == "transaction isolation level" {
        "transaction_isolation".to_owned()
    } else {
        name
    }
}

pub(crate) fn aborted_block() -> SqlError {
    SqlError::new(
        SqlState::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

pub(crate) fn canceled() -> SqlError {
    SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to user request")
}

pub(crate) fn txn_error(e: snapscale_txn::TxnError) -> SqlError {
    SqlError::new(SqlState::from_code(e.sqlstate()), e.to_string())
}

pub(crate) fn lock_error(e: snapscale_lock::LockError) -> SqlError {
    let detail = e.detail().map(str::to_owned);
    let mut err = SqlError::new(SqlState::from_code(e.sqlstate()), e.to_string());
    err.detail = detail;
    err
}
