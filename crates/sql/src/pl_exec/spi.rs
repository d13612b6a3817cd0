//! How PL/pgSQL runs SQL (PostgreSQL's SPI): a statement bound with the
//! variables it reads as parameters of declared types, planned once and
//! kept, made current before each run as a session's prepared statement is
//! (PLAN-FRESH: its relations locked, invalidations accepted, bound again
//! if one changed), and run in the session's transaction, each statement
//! then seeing the changes of those before it.
//!
//! An expression with no FROM and no subquery (`i + 1`, `x > 0`) is not
//! run as a query: its bound expression is evaluated directly, with the
//! variables' values as its parameters (the fast path a loop needs).

use std::sync::Arc;

use snapscale_engine::xact::Xact;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use crate::bind::{bind_parsed, BoundStatement};
use crate::exec::ri;
use crate::expr::quick::Quick;
use crate::expr::Expr;
use crate::limits::StatementLimits;
use crate::output::Output;
use crate::parse::Parsed;
use crate::plan::physical::{Node, Query, Statement};
use crate::plan::switches::PlannerSettings;
use crate::plan::{planner, Dep};
use crate::stack::StackDepth;

/// What a session lends PL/pgSQL to run statements with.
pub(crate) struct Spi<'c> {
    pub xact: &'c mut Xact,
    pub limits: StatementLimits,
    pub planner: PlannerSettings,
    pub in_block: bool,
    pub deferral: ri::Deferral,
    /// Foreign-key checks put off to COMMIT by the statements run.
    pub put_off: Vec<ri::Pending>,
    /// How many PL/pgSQL calls deep the session is.
    pub depth: usize,
    /// The session's compiled functions (PL-CACHE).
    pub functions: &'c mut super::Functions,
    /// The session's cursors.
    pub portals: &'c mut crate::portals::Portals,
    /// For the next statement run: where its query leaves its rows' tids
    /// (a cursor's query).
    pub capture: Option<crate::exec::TidSlot>,
    /// For the next statement run: the portal its WHERE CURRENT OF names
    /// (a PL/pgSQL cursor variable's value), if not the name written.
    pub current_of: Option<String>,
    /// The stack where the session lent this (PL-DEPTH: nested calls
    /// stop with 54001 once they used max_stack_depth below it).
    pub stack: (std::thread::ThreadId, usize),
    /// Whether the call may end its transaction (PL-TXN, run/txn.rs).
    pub nonatomic: bool,
    /// The transaction a COMMIT or ROLLBACK begins next, without AND CHAIN.
    pub default_isolation: snapscale_engine::IsolationLevel,
    /// A COMMIT or ROLLBACK ended the transaction the call began in.
    pub ended: bool,
    /// Where the PL/pgSQL code running now is, and the calls it is in
    /// (GET DIAGNOSTICS … PG_CONTEXT).
    pub context: CallStack,
}

/// The PL/pgSQL calls a statement runs in, innermost last: each caller's
/// name and the line and kind of the statement it is at; and the
/// statement the running body is at now.
#[derive(Default)]
pub(crate) struct CallStack {
    /// The running body's name, as CONTEXT lines give it.
    pub current: Option<Arc<str>>,
    /// Its statement's line and kind (set by each statement that may
    /// call a function).
    pub here: (usize, &'static str),
    pub callers: Vec<(Arc<str>, usize, &'static str)>,
}

/// A statement bound and planned for its parameters' types.
pub(crate) struct Planned {
    statement: Statement,
    subplans: Vec<Query>,
    deps: Vec<Dep>,
    waits: bool,
    pl_calls: Vec<crate::plan::PlCall>,
    /// The catalog generation it was made at (PL-CACHE).
    generation: u64,
    /// The expression alone and its type, when the statement is `SELECT
    /// expr` with nothing to read, not even the catalog.
    simple: Option<(Expr, SqlType)>,
    /// The simple expression's quick shape, if it has one.
    quick: Option<Quick>,
    /// `SELECT expr` with no table, subquery or lock: what PostgreSQL
    /// evaluates as a simple expression, outside SPI, so that an error
    /// while it runs names no query (PL-SPI-ERRORS). Wider than `simple`:
    /// the expression may call functions and read the catalog.
    expression_only: bool,
    /// EXPLAIN of the statement: what it shows, and how.
    explain: Option<crate::explain::Explained>,
}

impl Planned {
    /// The result's column types, if it returns rows.
    pub(crate) fn columns(&self) -> Option<Arc<[crate::plan::Column]>> {
        match &self.explain {
            Some(x) => Some(x.columns()),
            None => self.statement.columns(),
        }
    }

    /// The catalog generation it was made at.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether a run may use it again: a query or a row change, not a
    /// utility statement (bound against the catalog as it was).
    fn reusable(&self) -> bool {
        !matches!(self.statement, Statement::Utility(_) | Statement::CreateTableAs(_))
    }

    /// The expression alone and its type, when the statement is `SELECT
    /// expr` reading nothing.
    pub(crate) fn simple(&self) -> Option<(&Expr, SqlType)> {
        self.simple.as_ref().map(|(e, ty)| (e, *ty))
    }

    /// The simple expression's quick shape, if it has one.
    pub(crate) fn quick(&self) -> Option<&Quick> {
        self.quick.as_ref()
    }

    /// The query it is, if it is one.
    pub(crate) fn query(&self) -> Option<&Query> {
        match &self.statement {
            Statement::Query(q) => Some(q),
            _ => None,
        }
    }

    /// Whether it is a query PostgreSQL's executor could run backward (a
    /// cursor over it scrolls unless declared NO SCROLL).
    pub(crate) fn scrollable(&self) -> bool {
        matches!(&self.statement, Statement::Query(q) if crate::portals::backward_capable(&q.root))
    }

    /// Whether PostgreSQL would run it as a simple expression.
    pub(crate) fn expression_only(&self) -> bool {
        self.expression_only
    }
}

/// Whether evaluating `e` reads the catalog or a snapshot (an oid alias
/// type's names, the catalog functions, a domain's checks): such an
/// expression runs as a statement, which has a snapshot to read them by.
fn reads_catalog(e: &Expr, stack: StackDepth) -> bool {
    use crate::expr::user_types::TypeOp;
    use crate::expr::{Func, Step};
    let mut reads = false;
    let visited = e.visit(&stack, &mut |x| {
        reads |= match x {
            Expr::Func(Func::Catalog(_) | Func::CurrentSchema | Func::CurrentSnapshot, _) => true,
            Expr::Cast(_, SqlType::Reg(_), _) => true,
            Expr::Chain(_, steps) => steps.iter().any(|s| matches!(s, Step::Cast(SqlType::Reg(_), _))),
            Expr::UserType(op, _) => !matches!(**op, TypeOp::Enum(..)),
            _ => false,
        }
    });
    reads || visited.is_err()
}

impl Spi<'_> {
    /// Binds and plans `parsed` with parameters of `declared` types.
    pub(crate) fn plan(
        &mut self,
        parsed: &Parsed,
        declared: &[Option<SqlType>],
    ) -> Result<Planned, SqlError> {
        let depth = self.limits.max_stack_depth;
        let generation = self.xact.catalog_generation();
        let started = std::time::Instant::now();
        let (parsed, mut explain) = crate::explain::Explained::of(parsed);
        let BoundStatement { plan, deps, subqueries, waits, pl_calls, .. } =
            bind_parsed(&mut *self.xact, parsed, declared, depth)?;
        let (statement, subplans) = planner::plan(plan, subqueries, StackDepth::here(depth), self.planner)?;
        if let Some(x) = &mut explain {
            x.planning = started.elapsed();
        }
        let simple = match &statement {
            _ if explain.is_some() => None,
            Statement::Query(q) if subplans.is_empty() && !waits && pl_calls.is_empty() => match &q.root {
                Node::Project { input, exprs }
                    if matches!(**input, Node::Result)
                        && exprs.len() == 1
                        && !reads_catalog(&exprs[0], StackDepth::here(depth)) =>
                {
                    statement.columns().and_then(|c| Some((exprs[0].clone(), c.first()?.ty)))
                }
                _ => None,
            },
            _ => None,
        };
        let quick = simple.as_ref().and_then(|(e, _)| Quick::of(e));
        let expression_only = explain.is_none()
            && matches!(&statement, Statement::Query(q) if subplans.is_empty() && !waits
            && matches!(&q.root, Node::Project { input, exprs } if matches!(**input, Node::Result) && exprs.len() == 1));
        Ok(Planned {
            statement,
            subplans,
            deps,
            waits,
            pl_calls,
            generation,
            simple,
            quick,
            expression_only,
            explain,
        })
    }

    /// Makes `planned` current (PLAN-FRESH): true if it is, false if a
    /// relation it uses changed and it must be planned again.
    /// `fresh`: just planned (a utility statement is run only so: it is
    /// bound against the catalog as it was, what DROP … IF EXISTS found).
    pub(crate) async fn current(&mut self, planned: &Planned, fresh: bool) -> Result<bool, SqlError> {
        if !fresh && !planned.reusable() {
            return Ok(false);
        }
        if planned.deps.is_empty() {
            // Nothing to lock; a type or function it uses may have changed.
            self.xact.accept_invalidations();
            return Ok(planned.generation == self.xact.catalog_generation());
        }
        for dep in &planned.deps {
            self.xact.lock_relation(dep.rel.entry.oid, dep.mode).await?;
        }
        self.xact.accept_invalidations();
        for dep in &planned.deps {
            match crate::bind::Resolver::resolve(&mut *self.xact, &dep.name)? {
                Some(now) if Arc::ptr_eq(&now.entry, &dep.rel.entry) => {}
                _ => return Ok(false),
            }
        }
        Ok(planned.generation == self.xact.catalog_generation())
    }

    /// Runs `planned` with `params`; the statements after it see its
    /// changes.
    ///
    /// Boxed: the executor's future is kilobytes, and every future of
    /// the interpreter that runs a statement would hold it inline, to be
    /// copied whole each time one of them is boxed (a trigger's call per
    /// row, a statement of a body: a tenth of an empty trigger's cost was
    /// that copy). Here it is copied once per statement run.
    pub(crate) fn run<'a>(
        &'a mut self,
        planned: &'a Planned,
        params: &'a [Value],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Output, SqlError>> + Send + 'a>> {
        Box::pin(self.run_here(planned, params))
    }

    async fn run_here(&mut self, planned: &Planned, params: &[Value]) -> Result<Output, SqlError> {
        self.xact.check_cancel()?;
        if let Some((e, _)) = &planned.simple {
            let value = crate::exec::evaluate_simple(self.xact, self.limits, e, params)?;
            let columns = planned.statement.columns().expect("a query");
            return Ok(Output::Rows { columns, rows: vec![vec![value].into()], tag: "SELECT 1".into() });
        }
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
        if let Some(command) = self.xact.db.in_recovery().then(|| planned.statement.writes()).flatten() {
            return Err(SqlError::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                format!("cannot execute {command} in a read-only transaction"),
            ));
        }
        if let Statement::Utility(crate::plan::Utility::Call { routine, args }) = &planned.statement {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                values.push(crate::exec::evaluate_alone(self.xact, self.limits, a, params, &[])?);
            }
            super::call(self, routine, values).await?;
            return Ok(Output::Command("CALL".into()));
        }
        let called = if planned.pl_calls.is_empty() {
            Vec::new()
        } else {
            super::call_all(self, &planned.pl_calls, params).await?
        };
        let mode = crate::exec::RunMode {
            in_block: self.in_block,
            waits: planned.waits,
            deferral: self.deferral.clone(),
            called,
            routines: planned.pl_calls.iter().map(|c| Arc::clone(&c.routine)).collect(),
            cursor: Default::default(),
            stats: counters.clone(),
        };
        let out = self.execute(&planned.statement, &planned.subplans, params, mode).await;
        match &planned.explain {
            Some(x) => {
                out?;
                let stack = crate::stack::StackDepth::here(depth);
                x.answer(&planned.statement, &planned.subplans, counters.as_ref(), started.elapsed(), stack)
            }
            None => out,
        }
    }

    /// Runs a planned statement, lending the executor this session's
    /// functions to fire triggers and make per-row calls with
    /// (TRIGGER-FIRE); the statements after it see its changes.
    pub(crate) async fn execute(
        &mut self,
        statement: &Statement,
        subplans: &[Query],
        params: &[Value],
        mode: crate::exec::RunMode,
    ) -> Result<Output, SqlError> {
        // PostgreSQL's CommandCounterIncrement before a function's query:
        // it sees what the statement that called it (a trigger's, or one
        // calling it per row) changed so far.
        self.xact.end_statement()?;
        // The statement may read pg_cursors.
        self.portals.publish(self.xact);
        let mut mode = mode;
        mode.cursor = crate::exec::CursorLink { current_of: None, tid_slot: self.capture.take() };
        let named = self.current_of.take();
        if let Statement::Update { scan, .. } | Statement::Delete { scan, .. } = statement {
            if let crate::plan::physical::Access::CurrentOf(written) = &scan.access {
                let name = named.unwrap_or_else(|| written.to_string());
                let portal = self.portals.get(&name).ok_or_else(|| {
                    SqlError::new(SqlState::INVALID_CURSOR_NAME, format!("cursor \"{name}\" does not exist"))
                })?;
                let table = (scan.rel.entry.oid, scan.rel.entry.name.as_str());
                mode.cursor.current_of = Some(portal.current_tid(&name, table)?);
            }
        }
        let mut host = super::trigger::Host::new(
            self.limits,
            self.planner,
            self.in_block,
            self.deferral.clone(),
            self.depth,
            (&mut *self.functions, &mut *self.portals),
            self.stack,
        );
        let ran =
            crate::exec::run(self.xact, self.limits, statement, subplans, params, mode, Some(&mut host))
                .await;
        self.put_off.append(&mut host.put_off);
        let (out, put_off) = ran?;
        self.put_off.extend(put_off);
        self.xact.end_statement()?;
        Ok(out)
    }
}
