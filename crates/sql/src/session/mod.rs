//! One client connection's SQL session: its settings, its transaction
//! block, its prepared statements, and a COPY in progress. The transaction
//! itself, and everything it holds, is the transaction manager's
//! ([`Xact`]).
//!
//! Statement life cycle (PostgreSQL's order):
//!
//! ```text
//!   begin (implicitly, if no block is open)
//!   bind against the catalog cache, plan      (prepared.rs)
//!   lock the relations, then accept invalidations; if a relation the plan
//!     used changed meanwhile, bind again      (PLAN-FRESH)
//!   take the statement snapshot, execute, end the statement
//!   commit (implicitly, at the end of the Query message or at Sync)
//! ```

use std::sync::Arc;

use snapscale_engine::cancel::Cancel;
use snapscale_engine::database::{Backend, Database};
use snapscale_engine::xact::{Notice, Xact, XactConfig};
use snapscale_engine::{IsolationLevel, SessionView, WaitPolicy};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use crate::exec::CopyIn;
use crate::limits::StatementLimits;
use crate::output::Output;
use crate::parse::Parsed;
use crate::plan::physical::Statement;
use crate::plan::Utility;

mod control;
mod copy;
mod cursors;
mod prepared;

use prepared::Kind;

pub use prepared::Prepared;

/// Session settings the SQL layer reads and changes (SET / SHOW); the
/// server implements this over its settings.
pub trait Gucs: Clone + Send + Sync + 'static {
    /// SET name = value, or the setting's SQLSTATE.
    fn set(&mut self, name: &str, value: &str) -> Result<(), SqlError>;
    /// SHOW name.
    fn show(&self, name: &str) -> Result<String, SqlError>;
    /// default_transaction_isolation.
    fn default_isolation(&self) -> IsolationLevel;
    /// The planner's enable_* switches.
    fn planner(&self) -> crate::plan::switches::PlannerSettings {
        crate::plan::switches::PlannerSettings::default()
    }
    /// synchronous_commit: wait for the commit record to be durable.
    fn synchronous_commit(&self) -> bool {
        true
    }
    /// max_stack_depth, in bytes: how deep statement work may recurse.
    fn max_stack_depth(&self) -> usize {
        crate::stack::DEFAULT_MAX_STACK_DEPTH
    }
    /// temp_file_limit, in bytes (`None`: no limit): the most a statement
    /// may hold of what PostgreSQL would spill to temporary files.
    fn temp_file_limit(&self) -> Option<u64> {
        Some(crate::limits::DEFAULT_TEMP_FILE_LIMIT)
    }
    /// max_message_size, in bytes: also the longest row COPY buffers.
    fn max_message_size(&self) -> usize {
        64 << 20
    }
    /// The role the session authenticated as (`current_user`).
    fn session_user(&self) -> String {
        "postgres".into()
    }
    /// The database the session connected to (`current_database()`).
    fn database(&self) -> String {
        self.session_user()
    }
    /// search_path, as SHOW prints it.
    fn search_path(&self) -> String {
        "\"$user\", public".into()
    }
    /// TimeZone: where timestamptz text is read and shown.
    /// TimeZone, DateStyle and IntervalStyle: how date and time text is
    /// read and shown.
    fn style(&self) -> snapscale_values::Style {
        self.time_zone().into()
    }
    fn time_zone(&self) -> snapscale_values::Zone {
        snapscale_values::Zone::UTC
    }
    /// Every setting SHOW knows, with its context as pg_settings names it
    /// (`user`: SET changes it; `postmaster`: a restart; `internal`: never).
    fn setting_names(&self) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }
    /// statement_timeout: the longest a statement may run (`None`: no
    /// limit).
    fn statement_timeout(&self) -> Option<std::time::Duration> {
        None
    }
    /// deadlock_timeout and lock_timeout, for this session's next wait.
    fn wait_policy(&self) -> WaitPolicy {
        WaitPolicy { deadlock_timeout: std::time::Duration::from_secs(1), lock_timeout: None }
    }
}

/// statement_timeout's clock: a task that cancels the statement (as a
/// CancelRequest would, with its own message) when the time is up, and is
/// stopped when the statement ends first. A request that lands just after
/// the end is cleared by the next statement's start.
struct StatementTimer(Option<tokio::task::JoinHandle<()>>);

/// The runtime statement_timeout's clocks run on, on a thread of its own.
/// Not the session's runtime: the server runs each connection on a
/// single-threaded runtime, where a timer could not fire while the
/// statement it is for computes without a pause. None if the thread could
/// not be started: the session's own runtime then keeps the clock.
fn timers() -> Option<&'static tokio::runtime::Handle> {
    static TIMERS: std::sync::OnceLock<Option<tokio::runtime::Handle>> = std::sync::OnceLock::new();
    TIMERS
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().ok()?;
            let handle = runtime.handle().clone();
            std::thread::Builder::new()
                .name("snapscale-timers".into())
                .spawn(move || runtime.block_on(std::future::pending::<()>()))
                .ok()?;
            Some(handle)
        })
        .as_ref()
}

impl StatementTimer {
    fn start(limit: std::time::Duration, cancel: &Arc<Cancel>) -> StatementTimer {
        let cancel = Arc::clone(cancel);
        let runtime = timers().cloned().or_else(|| tokio::runtime::Handle::try_current().ok());
        let task = runtime.map(|rt| {
            rt.spawn(async move {
                tokio::time::sleep(limit).await;
                cancel.request_timeout();
            })
        });
        StatementTimer(task)
    }
}

impl Drop for StatementTimer {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// Where the connection stands with respect to transactions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Block {
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

/// An open savepoint.
pub(crate) struct Savepoint<G> {
    pub(crate) name: String,
    /// How many deferred foreign-key checks were pending, and SET
    /// CONSTRAINTS' state, as the savepoint was made (ROLLBACK TO goes
    /// back to them).
    pub(crate) deferred: (usize, crate::exec::ri::Deferral),
    /// The settings (and SET LOCAL's pending restores) as the savepoint
    /// was made, taken when its level first changes them: what ROLLBACK TO
    /// goes back to. None while nothing changed since the savepoint.
    pub(crate) settings: Option<(G, Vec<(String, String)>)>,
}

/// The SQL session of one connection.
pub struct Conn<G: Gucs> {
    pub(crate) xact: Xact,
    /// The PL/pgSQL and SQL function bodies this session compiled
    /// (PL-CACHE).
    pl_functions: crate::pl_exec::Functions,
    /// The limits on each statement's work, from the settings.
    pub(crate) limits: StatementLimits,
    pub(crate) gucs: G,
    /// The settings as the transaction began: restored if it aborts (SET
    /// is transactional).
    pub(crate) saved_gucs: Option<G>,
    /// The settings the session started with: what RESET goes back to.
    pub(crate) initial_gucs: G,
    /// A statement with a plan ran in the current transaction (SET
    /// TRANSACTION ISOLATION LEVEL must come before it).
    pub(crate) queried: bool,
    /// Counts the points where the settings may have changed (see
    /// `settings_generation`).
    settings_generation: u64,
    /// Settings changed by SET LOCAL in this transaction, with the
    /// session's value to go back to when it ends.
    pub(crate) local_settings: Vec<(String, String)>,
    pub(crate) block: Block,
    /// The open savepoints, one per subtransaction level.
    pub(crate) savepoints: Vec<Savepoint<G>>,
    /// Foreign-key checks put off to COMMIT (RI-DEFER).
    pub(crate) pending: Vec<crate::exec::ri::Pending>,
    /// SET CONSTRAINTS' state in the transaction.
    pub(crate) deferral: crate::exec::ri::Deferral,
    pub(crate) copy: Option<CopyIn>,
    /// The running Query message holds more than one statement: PostgreSQL
    /// runs them in one implicit transaction block, where statements that
    /// need a block (LOCK TABLE) are allowed.
    pub(crate) multi_statement: bool,
    /// The set_config() calls of the running statement (name, value as
    /// SHOW prints it, is_local), applied when it succeeds.
    pub(crate) set_calls: Arc<std::sync::Mutex<Vec<(String, String, bool)>>>,
    /// The session's cursors (DECLARE's and PL/pgSQL's).
    pub(crate) portals: crate::portals::Portals,
    /// The query string being run (pg_cursors shows a cursor's).
    pub(crate) query_text: Arc<str>,
}

impl<G: Gucs> Conn<G> {
    /// A connection's SQL session over its backend.
    pub fn new(db: Arc<Database>, backend: Backend, gucs: G) -> Conn<G> {
        crate::install_index_keys();
        let mut conn = Conn {
            xact: Xact::new(db, backend),
            pl_functions: Default::default(),
            limits: StatementLimits::default(),
            initial_gucs: gucs.clone(),
            queried: false,
            settings_generation: 0,
            local_settings: Vec::new(),
            gucs,
            saved_gucs: None,
            block: Block::Idle,
            savepoints: Vec::new(),
            pending: Vec::new(),
            deferral: Default::default(),
            copy: None,
            multi_statement: false,
            set_calls: Arc::default(),
            portals: Default::default(),
            query_text: Arc::from(""),
        };
        conn.configure();
        conn.refresh_session_view();
        conn
    }

    /// Tells the transaction manager how many connections share this one's
    /// thread (SYNC-HERE: a commit alone on its thread syncs the WAL
    /// itself).
    pub fn share_thread(&mut self, peers: Option<Arc<std::sync::atomic::AtomicUsize>>) {
        self.xact.thread_peers = peers;
    }

    /// Copies the settings the transaction manager reads (after SET).
    pub(crate) fn configure(&mut self) {
        self.xact.config =
            XactConfig { wait: self.gucs.wait_policy(), synchronous_commit: self.gucs.synchronous_commit() };
        self.limits = StatementLimits {
            max_stack_depth: self.gucs.max_stack_depth(),
            max_message_size: self.gucs.max_message_size(),
            temp_file_limit: self.gucs.temp_file_limit(),
            statistics_target: self
                .gucs
                .show("default_statistics_target")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(snapscale_engine::analyze::DEFAULT_TARGET),
        };
    }

    /// Re-makes what the session functions read; after anything that may
    /// have changed the settings (a control statement, an abort restoring
    /// them), not per statement: it clones the settings.
    pub(crate) fn refresh_session_view(&mut self) {
        self.settings_generation += 1;
        // The statement's own copy of the settings: set_config() changes
        // it, so that the statement sees its change at once, and records
        // the call for the session to apply when the statement succeeds.
        let gucs = Arc::new(std::sync::Mutex::new(self.gucs.clone()));
        let (shown, calls) = (Arc::clone(&gucs), Arc::clone(&self.set_calls));
        let initial = self.initial_gucs.clone();
        let gucs = gucs.lock().expect("session settings poisoned").clone();
        self.xact.session_view = Some(Arc::new(SessionView {
            user: gucs.session_user(),
            database: gucs.database(),
            // The pid BackendKeyData carried (Backend::pid).
            pid: self.xact.session.slot() as i32 + 1,
            settings: gucs
                .setting_names()
                .into_iter()
                .filter_map(|(name, context)| gucs.show(name).ok().map(|v| (name, v, context)))
                .collect(),
            style: gucs.style(),
            search_path: snapscale_engine::names::search_path(&gucs.search_path(), &gucs.session_user())
                .into(),
            show: Box::new({
                let shown = Arc::clone(&shown);
                move |name| shown.lock().expect("session settings poisoned").show(name)
            }),
            set: Box::new(move |name, value, local| {
                let mut g = shown.lock().expect("session settings poisoned");
                let value = match value {
                    Some(v) => v.to_owned(),
                    // A custom setting's value at connection is empty.
                    None => initial.show(name).unwrap_or_default(),
                };
                g.set(name, &value)?;
                let value = g.show(name)?;
                calls.lock().expect("set_config calls poisoned").push((
                    name.to_owned(),
                    value.clone(),
                    local,
                ));
                Ok(value)
            }),
            sequences: Arc::clone(&self.xact.sequences),
            advisory: Some(Arc::clone(&self.xact.advisory)),
            replica: gucs.show("session_replication_role").is_ok_and(|r| r == "replica"),
            trigger_depth: self
                .xact
                .session_view
                .as_ref()
                .map_or_else(Default::default, |v| Arc::clone(&v.trigger_depth)),
            isolation: self.xact.session_view.as_ref().map_or_else(
                || {
                    let code = match self.xact.isolation() {
                        Some(IsolationLevel::ReadCommitted) => 1,
                        Some(IsolationLevel::RepeatableRead) => 2,
                        None => 0,
                    };
                    Arc::new(std::sync::atomic::AtomicU8::new(code))
                },
                |v| Arc::clone(&v.isolation),
            ),
        }));
    }

    // ----------------------------------------------------- pg_stat_activity

    /// The session's TimeZone: how result rows show timestamptz and how
    /// text parameters without a zone are read.
    pub fn time_zone(&self) -> snapscale_values::Zone {
        self.gucs.time_zone()
    }

    /// The session's TimeZone, DateStyle and IntervalStyle: how result
    /// rows show dates and times and how text parameters are read.
    pub fn style(&self) -> snapscale_values::Style {
        self.gucs.style()
    }

    /// The connection started: who it is (pg_stat_activity's row).
    pub fn report_connected(&self, info: snapscale_engine::activity::ClientInfo) {
        let now = snapscale_values::now_micros();
        self.xact.db.activity.set(
            self.xact.slot(),
            Some(snapscale_engine::activity::BackendStatus {
                user: self.gucs.session_user(),
                database: self.gucs.database(),
                application_name: info.application_name,
                client_addr: info.client_addr,
                client_port: info.client_port,
                backend_start: now,
                xact_start: None,
                query_start: None,
                state_change: now,
                state: snapscale_engine::activity::State::Idle,
                query: Arc::from(""),
                ssl: info.ssl,
            }),
        );
    }

    /// A query starts (the text a Query message carried, or a prepared
    /// statement's).
    pub fn report_query(&mut self, text: &Arc<str>) {
        self.query_text = Arc::clone(text);
        let now = snapscale_values::now_micros();
        let in_block = matches!(self.block, Block::Open | Block::Failed);
        self.xact.db.activity.update(self.xact.slot(), |s| {
            s.state = snapscale_engine::activity::State::Active;
            s.query = Arc::clone(text);
            s.query_start = Some(now);
            s.state_change = now;
            if !in_block || s.xact_start.is_none() {
                s.xact_start = Some(now);
            }
        });
    }

    /// The session waits for the client (ReadyForQuery), or for COPY data.
    pub fn report_idle(&self) {
        let now = snapscale_values::now_micros();
        let (state, in_xact) = match (self.copy.is_some(), self.block) {
            (true, _) => (snapscale_engine::activity::State::Copying, true),
            (false, Block::Idle) => (snapscale_engine::activity::State::Idle, false),
            (false, Block::Open | Block::Implicit) => {
                (snapscale_engine::activity::State::IdleInTransaction, true)
            }
            (false, Block::Failed) => (snapscale_engine::activity::State::IdleInTransactionAborted, true),
        };
        self.xact.db.activity.update(self.xact.slot(), |s| {
            if s.state != state {
                s.state_change = now;
            }
            s.state = state;
            if !in_xact {
                s.xact_start = None;
            }
        });
    }

    /// The handle a CancelRequest uses.
    pub fn cancel_handle(&self) -> Arc<Cancel> {
        Arc::clone(&self.xact.cancel)
    }

    /// The session settings.
    pub fn gucs(&self) -> &G {
        &self.gucs
    }

    /// The process id clients see (BackendKeyData).
    pub fn pid(&self) -> i32 {
        self.xact.slot() as i32 + 1
    }

    /// Resolves when the invalidation queue asks this (idle) session to
    /// catch up; then call [`Conn::catch_up`].
    pub async fn catchup_requested(&self) {
        self.xact.db.sinval.catchup_requested(self.xact.slot()).await
    }

    /// Reads the invalidation queue (an idle session asked to catch up).
    pub fn catch_up(&mut self) {
        self.xact.accept_invalidations();
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
        self.xact.take_notices()
    }

    /// Where this session's notices are queued as they are raised
    /// (NOTICE-STREAM): the protocol layer sends them while a statement
    /// runs.
    pub fn notice_queue(&self) -> Arc<snapscale_engine::NoticeQueue> {
        self.xact.notice_queue()
    }

    // --------------------------------------------------------- execution

    /// Parses a query string into statements.
    pub fn parse(&self, sql: &str) -> Result<Vec<Parsed>, SqlError> {
        crate::parse::parse(sql, self.gucs.max_stack_depth())
    }

    /// Executes a prepared statement with `params` (already decoded to the
    /// statement's parameter types). On error the transaction is marked
    /// failed (a block) or aborted (an implicit transaction).
    pub async fn execute(&mut self, p: &Prepared, params: &[Value]) -> Result<Output, SqlError> {
        if let Some(text) = &p.text {
            self.report_query(text);
        }
        self.xact.cancel.clear();
        self.configure();
        let _timer = self.gucs.statement_timeout().map(|d| StatementTimer::start(d, &self.xact.cancel));
        let mut result = self.execute_inner(p, params).await;
        if let Ok(Output::Rows { rows, .. }) = &result {
            // The client receives the rows' text (TEXT-SIZE): one PostgreSQL
            // could not write fails the statement, as its output function
            // would.
            let style = self.style();
            if let Err(e) = rows.iter().flat_map(|r| r.iter()).try_for_each(|v| v.check_text(style)) {
                result = Err(e);
            }
        }
        let calls = std::mem::take(&mut *self.set_calls.lock().expect("set_config calls poisoned"));
        if !calls.is_empty() {
            if result.is_ok() {
                if let Err(e) = self.keep_set_config(calls) {
                    result = Err(e);
                }
            }
            // The statement's copy of the settings saw its calls: a new
            // one starts from the session's.
            self.configure();
            self.refresh_session_view();
        }
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// Runs one parsed statement of a simple Query message.
    /// Changes whenever the settings may have changed (SET, RESET, an
    /// abort that restored them): the protocol layer re-reads the
    /// reported ones only then, not per message.
    pub fn settings_generation(&self) -> u64 {
        self.settings_generation
    }

    /// Tells the session whether the Query message being run holds more
    /// than one statement (see `multi_statement`); the server sets it
    /// before the first and clears it after the last.
    pub fn set_multi_statement(&mut self, multi: bool) {
        self.multi_statement = multi;
    }

    /// LOCK TABLE outside a transaction block is refused before its names
    /// are looked up, as PostgreSQL does: a lock released at once by the
    /// statement's own commit is a mistake, not a request.
    fn refuse_lock_outside_block(&self, parsed: &Parsed) -> Result<(), SqlError> {
        let lock_table =
            matches!(parsed, Parsed::Sql(s) if matches!(**s, sqlparser::ast::Statement::Lock(_)));
        if lock_table && self.block == Block::Idle && !self.multi_statement {
            return Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "LOCK TABLE can only be used in transaction blocks",
            ));
        }
        Ok(())
    }

    pub async fn execute_parsed(&mut self, parsed: Parsed) -> Result<Output, SqlError> {
        let parsed = match parsed {
            Parsed::Tag(tag) if self.block == Block::Failed => {
                let _ = tag;
                return Err(aborted_block());
            }
            Parsed::Tag(tag) => return Ok(Output::Command(tag.into())),
            Parsed::InSchema { schema, statement, place } => {
                // PostgreSQL's override search path: the new schema first.
                if let Some(schema) = schema {
                    let path: Vec<String> = std::iter::once(schema).chain(self.xact.search_path()).collect();
                    self.xact.path_override = Some(path.into());
                }
                let out = Box::pin(self.execute_parsed(*statement)).await;
                self.xact.path_override = None;
                return match out {
                    Ok(_) => Ok(Output::Silent),
                    Err(e) => Err(match e.position {
                        Some(at) => SqlError::from(snapscale_values::ErrorData {
                            position: Some(place.map(at)),
                            ..e.into_data()
                        }),
                        None => e,
                    }),
                };
            }
            parsed => parsed,
        };
        if let Err(e) = self.refuse_lock_outside_block(&parsed) {
            self.fail();
            return Err(e);
        }
        let mut p = match self.prepare(parsed, &[]) {
            Ok(p) => p,
            Err(e) => {
                self.fail();
                return Err(e);
            }
        };
        if let Some(p) = Arc::get_mut(&mut p) {
            p.fixed_result = false;
        }
        if !p.param_types().is_empty() {
            self.fail();
            return Err(SqlError::new(SqlState::UNDEFINED_PARAMETER, "there is no parameter $1"));
        }
        self.execute(&p, &[]).await
    }

    async fn execute_inner(&mut self, p: &Prepared, params: &[Value]) -> Result<Output, SqlError> {
        match &p.kind {
            Kind::Empty => Ok(Output::Command(String::new())),
            Kind::PrepareNamed { .. } | Kind::ExecuteNamed { .. } if self.block == Block::Failed => {
                Err(aborted_block())
            }
            Kind::PrepareNamed { name, statement } => {
                Ok(Output::Prepared { name: name.clone(), statement: Arc::clone(statement) })
            }
            Kind::ExecuteNamed { name, args } => {
                Ok(Output::ExecuteNamed { name: name.clone(), args: args.clone() })
            }
            Kind::Control(s) => self.control(s).await,
            Kind::Plan(parsed) => {
                if self.block == Block::Failed {
                    return Err(aborted_block());
                }
                self.refuse_lock_outside_block(parsed)?;
                self.ensure_transaction()?;
                self.queried = true;
                if let Parsed::Do { language, code } = parsed {
                    return self.run_do(language, code).await;
                }
                let planned = self.ready(p, parsed).await?;
                let runs = planned.explain.as_ref().is_none_or(|x| x.options.analyze);
                if let Some(command) =
                    self.xact.db.in_recovery().then(|| planned.statement.writes()).flatten().filter(|_| runs)
                {
                    // A hot standby serves reads only (PostgreSQL's
                    // PreventCommandIfReadOnly / during recovery).
                    let message = if command == "VACUUM" || command == "LOCK TABLE" {
                        format!("cannot execute {command} during recovery")
                    } else {
                        format!("cannot execute {command} in a read-only transaction")
                    };
                    return Err(SqlError::new(SqlState::READ_ONLY_SQL_TRANSACTION, message));
                }
                if let Parsed::Sql(ast) = parsed {
                    self.xact.db.maybe_panic(&**ast);
                }
                if let Statement::Utility(Utility::SetConstraints { oids, deferred }) = &planned.statement {
                    return self.set_constraints(oids.as_deref(), *deferred).await;
                }
                if let Statement::Utility(Utility::Call { routine, args }) = &planned.statement {
                    let mut values = Vec::with_capacity(args.len());
                    for a in args {
                        values.push(crate::exec::evaluate_alone(
                            &mut self.xact,
                            self.limits,
                            a,
                            params,
                            &[],
                        )?);
                    }
                    let mut spi = self.top_spi();
                    let ran = crate::pl_exec::call(&mut spi, routine, values).await;
                    let put_off = std::mem::take(&mut spi.put_off);
                    let ended = spi.ended;
                    self.pending.extend(put_off);
                    self.after_top_call(ended);
                    let value = ran?;
                    self.xact.end_statement()?;
                    // A procedure with output parameters answers one row
                    // of them.
                    let outputs = routine.routine.as_ref().map(|r| r.output_columns()).unwrap_or_default();
                    if outputs.is_empty() {
                        return Ok(Output::Command("CALL".into()));
                    }
                    let row: Vec<snapscale_values::Value> = match value {
                        snapscale_values::Value::Record(fields) if outputs.len() > 1 => fields.to_vec(),
                        snapscale_values::Value::Null if outputs.len() > 1 => {
                            vec![snapscale_values::Value::Null; outputs.len()]
                        }
                        v => vec![v],
                    };
                    let columns: Vec<crate::plan::Column> =
                        outputs.into_iter().map(|(name, ty)| crate::plan::Column { name, ty }).collect();
                    return Ok(Output::Rows {
                        columns: columns.into(),
                        rows: vec![row.into()],
                        tag: "CALL".into(),
                    });
                }
                if let Statement::Utility(Utility::CopyFrom {
                    rel,
                    columns,
                    defaults,
                    enums,
                    checks,
                    table_checks,
                    foreign_keys,
                    options,
                }) = &planned.statement
                {
                    // The rows arrive in CopyData messages: the statement
                    // stays open until CopyDone.
                    self.xact.statement_snapshot()?;
                    let binary = options.format == crate::copy::CopyFormat::Binary;
                    let mut copy = CopyIn::new(
                        rel.clone(),
                        columns.clone(),
                        defaults.clone(),
                        options.clone(),
                        self.xact.session_style(),
                    );
                    copy.enums = enums.clone();
                    copy.checks = checks.clone();
                    copy.table_checks = table_checks.clone();
                    copy.foreign_keys = Arc::clone(foreign_keys);
                    copy.waits = planned.waits;
                    self.copy = Some(copy);
                    return Ok(Output::CopyIn { columns: columns.len(), binary });
                }
                if let Parsed::Sql(ast) = parsed {
                    if let Some(declare) = &ast.pre.declare {
                        return self.declare(declare, &planned, params).await;
                    }
                }
                self.run_planned(&planned, params, None).await
            }
            Kind::Fetch(fetch) => self.fetch(fetch),
        }
    }

    /// Runs a planned statement: its PL/pgSQL calls first (PL-CALLS),
    /// then the statement, lending it the session's functions.
    /// `capture`: where a cursor's query leaves its rows' tids.
    pub(crate) async fn run_planned(
        &mut self,
        planned: &prepared::Planned,
        params: &[Value],
        capture: Option<crate::exec::TidSlot>,
    ) -> Result<Output, SqlError> {
        let depth = self.limits.max_stack_depth;
        let counters = match &planned.explain {
            Some(x) if !x.options.analyze => {
                return x.answer(
                    &planned.statement,
                    &planned.subplans,
                    None,
                    Default::default(),
                    crate::stack::StackDepth::here(depth),
                )
            }
            Some(_) => Some(crate::exec::instrument::Counters::default()),
            None => None,
        };
        let started = std::time::Instant::now();
        let called = if planned.pl_calls.is_empty() {
            Vec::new()
        } else {
            let mut spi = self.spi();
            let called = crate::pl_exec::call_all(&mut spi, &planned.pl_calls, params).await;
            let put_off = std::mem::take(&mut spi.put_off);
            self.pending.extend(put_off);
            called?
        };
        let mode = crate::exec::RunMode {
            in_block: self.block == Block::Open,
            waits: planned.waits,
            deferral: self.deferral.clone(),
            called,
            routines: planned.pl_calls.iter().map(|c| Arc::clone(&c.routine)).collect(),
            cursor: Default::default(),
            stats: counters.clone(),
        };
        let mut spi = self.spi();
        spi.capture = capture;
        let ran = spi.execute(&planned.statement, &planned.subplans, params, mode).await;
        let mut put_off = std::mem::take(&mut spi.put_off);
        self.pending.append(&mut put_off);
        match &planned.explain {
            Some(x) => {
                ran?;
                let stack = crate::stack::StackDepth::here(depth);
                x.answer(&planned.statement, &planned.subplans, counters.as_ref(), started.elapsed(), stack)
            }
            None => ran,
        }
    }

    /// What PL/pgSQL runs its statements with: this session's transaction
    /// and settings.
    fn spi(&mut self) -> crate::pl_exec::spi::Spi<'_> {
        crate::pl_exec::spi::Spi {
            xact: &mut self.xact,
            limits: self.limits,
            planner: self.gucs.planner(),
            in_block: self.block == Block::Open,
            deferral: self.deferral.clone(),
            put_off: Vec::new(),
            depth: 0,
            functions: &mut self.pl_functions,
            portals: &mut self.portals,
            capture: None,
            current_of: None,
            stack: crate::stack::mark(),
            nonatomic: false,
            default_isolation: self.gucs.default_isolation(),
            ended: false,
            context: Default::default(),
        }
    }

    /// The `Spi` for a CALL or DO at the top of a statement: it may end the
    /// transaction (PL-TXN) when the statement is the transaction, that is
    /// alone in an implicit one. The foreign-key checks the transaction put
    /// off so far go with it, for a COMMIT to run.
    fn top_spi(&mut self) -> crate::pl_exec::spi::Spi<'_> {
        let nonatomic = self.block == Block::Implicit && !self.multi_statement;
        let pending = if nonatomic { std::mem::take(&mut self.pending) } else { Vec::new() };
        let mut spi = self.spi();
        spi.nonatomic = nonatomic;
        spi.put_off = pending;
        spi
    }

    /// After a CALL or DO: if it ended the transaction it began in, what
    /// the session kept for that transaction goes (PL-TXN).
    fn after_top_call(&mut self, ended: bool) {
        if ended {
            self.deferral = crate::exec::ri::Deferral::default();
            self.savepoints.clear();
            self.saved_gucs = None;
        }
    }

    /// DO: the code block run as a PL/pgSQL function of no arguments
    /// returning void, in the session's transaction.
    async fn run_do(&mut self, language: &str, code: &str) -> Result<Output, SqlError> {
        let name = crate::plpgsql::DO_NAME;
        // The query string holds the code (PostgreSQL's DO places a
        // syntax error in it).
        let source = crate::statement::Origin { text: self.query_text.to_string(), chars_before: 0 };
        let (block, warnings) = crate::plpgsql::compile_do(
            language,
            code,
            self.xact.session_view.as_deref(),
            self.limits.max_stack_depth / 1024,
            Some(&source),
        )?;
        for w in warnings {
            self.xact.notice_full(crate::plpgsql::compile_warning(w, code, Some(&source)));
        }
        let mut spi = self.top_spi();
        let ran = crate::pl_exec::Interp::new(
            &mut spi,
            &crate::pl_exec::CallName::new(name.into(), ""),
            snapscale_values::SqlType::Void,
        )
        .run(&block)
        .await;
        let put_off = std::mem::take(&mut spi.put_off);
        let ended = spi.ended;
        self.pending.extend(put_off);
        self.after_top_call(ended);
        ran.0?;
        Ok(Output::Command("DO".into()))
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

    pub(crate) fn begin_transaction(&mut self, isolation: IsolationLevel) -> Result<(), SqlError> {
        self.xact.begin(isolation)?;
        self.queried = false;
        // The settings are saved when the transaction first changes them
        // (control.rs), not here: most transactions never do.
        self.saved_gucs = None;
        Ok(())
    }

    /// The last statement of a Query message ran: an implicit transaction
    /// with foreign-key checks put off commits now, so that their failure
    /// is the statement's, as PostgreSQL reports it (RI-DEFER).
    pub async fn commit_deferred_checks(&mut self) -> Result<(), SqlError> {
        if self.block == Block::Implicit && !self.pending.is_empty() {
            return self.sync().await;
        }
        Ok(())
    }

    /// End of a Query message or Sync: an implicit transaction commits.
    pub async fn sync(&mut self) -> Result<(), SqlError> {
        if self.block == Block::Implicit {
            self.block = Block::Idle;
            return self.commit_transaction().await;
        }
        if self.block == Block::Idle {
            // SET LOCAL in a multi-statement message that never opened a
            // transaction ends with the message.
            self.end_local_settings();
        }
        Ok(())
    }

    /// The end of a transaction: SET LOCAL's values give way to the
    /// session's.
    fn end_local_settings(&mut self) {
        if self.local_settings.is_empty() {
            return;
        }
        for (name, value) in std::mem::take(&mut self.local_settings) {
            // The value came from SHOW of the same setting: it parses.
            let _ = self.gucs.set(&name, &value);
        }
        self.configure();
        self.refresh_session_view();
    }

    pub(crate) async fn commit_transaction(&mut self) -> Result<(), SqlError> {
        // Deferred foreign-key checks run first: one that fails rolls the
        // transaction back, and COMMIT answers its error (RI-DEFER).
        let pending = std::mem::take(&mut self.pending);
        if let Err(e) = crate::exec::run_pending(&mut self.xact, self.limits, pending).await {
            self.abort_transaction();
            return Err(e);
        }
        self.deferral = crate::exec::ri::Deferral::default();
        self.savepoints.clear();
        self.copy = None;
        let result = self.xact.commit().await;
        if result.is_ok() {
            self.portals.committed();
        } else {
            self.portals.aborted();
        }
        // A commit that failed aborted: SET in it is undone too.
        if let (Err(_), Some(g)) = (&result, self.saved_gucs.take()) {
            self.gucs = g;
            self.local_settings.clear();
            self.configure();
            self.refresh_session_view();
        }
        self.saved_gucs = None;
        self.end_local_settings();
        result
    }

    /// SET CONSTRAINTS: the foreign keys named (`None`: all) are deferred
    /// or not from now on; those made IMMEDIATE have their put-off checks
    /// run now, as in PostgreSQL (RI-DEFER).
    async fn set_constraints(&mut self, oids: Option<&[u32]>, deferred: bool) -> Result<Output, SqlError> {
        if self.block == Block::Implicit {
            self.xact.warning(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "SET CONSTRAINTS can only be used in transaction blocks",
            );
        }
        match oids {
            None => {
                self.deferral.all = Some(deferred);
                self.deferral.named.clear();
            }
            Some(oids) => self.deferral.named.extend(oids.iter().map(|&o| (o, deferred))),
        }
        if !deferred {
            let (still, now): (Vec<_>, Vec<_>) =
                std::mem::take(&mut self.pending).into_iter().partition(|p| p.deferred_under(&self.deferral));
            self.pending = still;
            crate::exec::run_pending(&mut self.xact, self.limits, now).await?;
        }
        Ok(Output::Command("SET CONSTRAINTS".into()))
    }

    pub(crate) fn abort_transaction(&mut self) {
        self.xact.abort();
        self.portals.aborted();
        self.pending.clear();
        self.deferral = crate::exec::ri::Deferral::default();
        // The saved settings predate every SET LOCAL of the transaction.
        if self.saved_gucs.is_some() {
            self.local_settings.clear();
        }
        if let Some(g) = self.saved_gucs.take() {
            self.gucs = g;
            self.configure();
            self.refresh_session_view();
        }
        self.savepoints.clear();
        self.copy = None;
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
                    // FAIL-FAST: nothing can resume this transaction: abort
                    // it now, so that others stop waiting for its rows and
                    // locks; the client's ROLLBACK only ends the block.
                    self.abort_transaction();
                }
            }
        }
    }

    /// A statement panicked: whatever it left half done is abandoned. The
    /// transaction aborts, whatever its savepoints (their state cannot be
    /// trusted), the cache is emptied, and an open block stays failed until
    /// the client ends it.
    pub fn abandon(&mut self) {
        self.abort_transaction();
        self.xact.cache.clear();
        self.xact.take_notices();
        self.block = match self.block {
            Block::Idle | Block::Implicit => Block::Idle,
            Block::Open | Block::Failed => Block::Failed,
        };
    }
}

pub(crate) fn aborted_block() -> SqlError {
    SqlError::new(
        SqlState::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}
