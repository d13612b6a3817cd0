//! The executor: runs planned statements against MVCC storage, through a
//! transaction (`&mut Xact`), with PostgreSQL's concurrent-update rules.
//!
//! A query runs as a tree of operators (`query.rs`, over
//! [`crate::plan::physical::Node`]). A write that meets a row version
//! changed by a running transaction waits for it (through the lock manager,
//! so deadlocks are detected) and tries again. If that transaction
//! committed an update, READ COMMITTED follows the update chain to the
//! newest version, re-checks the WHERE clause on it and, if it still
//! matches, changes that version (PostgreSQL's EvalPlanQual: EPQ);
//! REPEATABLE READ fails with 40001 instead (`modify.rs`).
//!
//! `scan.rs` finds rows by an access path; `agg.rs` holds the aggregates'
//! running state; `ddl.rs`, `copy.rs` and `vacuum.rs` run those statements.

mod agg;
mod alter_table;
mod analyze;
mod copy;
mod ddl;
mod group;
pub(crate) mod instrument;
mod join;
mod merge;
mod modify;
mod query;
pub(crate) mod ri;
mod routines;
mod scan;
mod schema;
mod setop;
mod sort;
mod subplan;
pub(crate) mod triggers;
mod types;
mod upsert;
mod user_agg;
mod vacuum;
mod window;

use std::sync::Arc;

use snapscale_engine::xact::Xact;
use snapscale_engine::Snapshot;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use crate::expr::{Ctx, Replay};
use crate::limits::StatementLimits;
use crate::output::Output;
use crate::plan::physical::{Query, Statement};
use crate::plan::Utility;
use crate::stack::StackDepth;
use snapscale_engine::triggers::TriggerTiming;

pub(crate) use copy::CopyIn;

/// One statement's execution: the transaction it runs in, its parameters
/// and its subplans.
pub(crate) struct Executor<'x> {
    pub(crate) xact: &'x mut Xact,
    /// The session's limits on the statement's work.
    pub(crate) limits: StatementLimits,
    pub(crate) params: &'x [Value],
    /// Inside BEGIN … COMMIT (VACUUM refuses to run there).
    in_block: bool,
    /// The statement's snapshot, taken once by its first read: every scan
    /// and subquery of one statement sees the same data.
    snapshot: Option<Arc<Snapshot>>,
    /// The subqueries its expressions use, and the last rows each gave.
    subplans: subplan::Subplans<'x>,
    /// The catalog as the statement's snapshot sees it, read on first use.
    catalog: std::sync::OnceLock<crate::catalog_views::CatalogState>,
    /// The rows each recursive WITH item's current round reads
    /// (`Run::recursive_union`), by work table id.
    work_tables: std::cell::RefCell<std::collections::HashMap<usize, Vec<snapscale_engine::catalog::Row>>>,
    /// The journal of volatile calls, if the statement may stop to wait
    /// for an advisory lock (EVAL-REPLAY).
    replay: Option<Replay>,
    /// The foreign-key work its writes queue (exec/ri.rs).
    pub(crate) ri: Option<ri::Ri>,
    /// Which foreign keys' checks are put off to COMMIT (`None`: none, as
    /// when put-off work itself runs).
    pub(crate) deferral: Option<ri::Deferral>,
    /// The checks put off, for the session to keep.
    pub(crate) put_off: Vec<ri::Pending>,
    /// What the statement's PL/pgSQL calls returned (PL-CALLS).
    pub(crate) called: Vec<Value>,
    /// What runs its triggers' functions (TRIGGER-FIRE), where it may
    /// fire them.
    pub(crate) triggers: Option<&'x mut dyn triggers::TriggerHost>,
    /// The AFTER ROW triggers its changes queued.
    after: triggers::AfterQueue,
    /// The rows its changes keep for transition tables.
    captured: Vec<triggers::Captured>,
    /// The functions its expressions call per row (PL-ROW-CALLS).
    routines: Vec<Arc<snapscale_engine::catalog::RelEntry>>,
    /// The version WHERE CURRENT OF names (`None`: the cursor's row is
    /// not there to change).
    pub(crate) current_of: Option<snapscale_engine::Tid>,
    /// Where a cursor's query leaves the tids of its rows.
    pub(crate) tid_slot: Option<TidSlot>,
    /// EXPLAIN ANALYZE's counters, when the statement runs under it.
    pub(crate) stats: Option<instrument::Counters>,
}

/// Where a cursor's query leaves the table its rows come from and their
/// versions' tids, one per row (WHERE CURRENT OF reads them), when the
/// query is a simply updatable scan of one table.
pub(crate) type TidSlot = Arc<std::sync::Mutex<Option<(u32, Vec<snapscale_engine::Tid>)>>>;

/// A statement's part in cursors: the version WHERE CURRENT OF names, and
/// where a cursor's query leaves its tids.
#[derive(Default)]
pub(crate) struct CursorLink {
    pub current_of: Option<snapscale_engine::Tid>,
    pub tid_slot: Option<TidSlot>,
}

impl<'x> Executor<'x> {
    /// An execution in `xact` with `params`; `in_block` inside BEGIN;
    /// `waits` if its expressions may wait for a lock.
    pub(crate) fn new(
        xact: &'x mut Xact,
        limits: StatementLimits,
        params: &'x [Value],
        in_block: bool,
        waits: bool,
    ) -> Executor<'x> {
        Executor {
            xact,
            limits,
            params,
            in_block,
            snapshot: None,
            subplans: subplan::Subplans::new(&[], &StackDepth::here(limits.max_stack_depth)),
            catalog: std::sync::OnceLock::new(),
            work_tables: Default::default(),
            replay: waits.then(Replay::default),
            ri: None,
            deferral: None,
            put_off: Vec::new(),
            called: Vec::new(),
            triggers: None,
            after: Default::default(),
            captured: Vec::new(),
            routines: Vec::new(),
            current_of: None,
            tid_slot: None,
            stats: None,
        }
    }

    /// Runs a synchronous evaluation `f` to its end (EVAL-REPLAY): when it
    /// stops for an advisory lock it could not take at once, waits for
    /// that lock (as any lock wait: queue order, deadlock detection,
    /// lock_timeout, cancel) and runs it again, its volatile calls so far
    /// replayed from the journal. Every synchronous evaluation the
    /// executor starts goes through here; without a journal it is one
    /// call of `f`.
    pub(crate) async fn evaluate<T>(
        &mut self,
        f: impl Fn(&Executor<'x>) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        if self.replay.is_none() {
            return f(self);
        }
        loop {
            let replay = self.replay.as_ref().expect("checked above");
            replay.rewind();
            let result = f(self);
            let replay = self.replay.as_ref().expect("checked above");
            if let Some((func, args)) = replay.take_call() {
                let value = self.call_per_row(func, args.clone()).await?;
                self.replay.as_ref().expect("checked above").called(func, args, value);
                continue;
            }
            match (result, replay.take_pending()) {
                (result, None) => {
                    replay.finish()?;
                    return result;
                }
                (_, Some(pending)) => {
                    self.xact.wait_advisory(pending.tag, pending.mode, pending.xact).await?;
                    self.replay.as_ref().expect("checked above").granted(pending);
                }
            }
        }
    }

    /// Makes the PL/pgSQL call an evaluation stopped for (PL-ROW-CALLS),
    /// its statements run beside the statement's, whose snapshot stays
    /// held meanwhile.
    async fn call_per_row(&mut self, func: crate::expr::Func, args: Vec<Value>) -> Result<Value, SqlError> {
        let crate::expr::Func::PlRow(k) = func else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a stop for a call that is no function's"));
        };
        let Some(routine) = self.routines.get(k).cloned() else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a call of a function the statement lacks"));
        };
        let Some(host) = self.triggers.as_deref_mut() else {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("calling function {} here is not supported", routine.name),
            ));
        };
        let held = self.xact.hold_statement_snapshot()?;
        let result = host.call(self.xact, &routine, args).await;
        self.xact.restore_statement_snapshot(held)?;
        result
    }

    /// Takes the statement's snapshot if it has none yet.
    pub(crate) fn ensure_snapshot(&mut self) -> Result<(), SqlError> {
        if self.snapshot.is_none() {
            self.snapshot = Some(self.xact.statement_snapshot()?);
        }
        Ok(())
    }

    /// The statement's snapshot (taken by `ensure_snapshot`).
    pub(crate) fn snapshot(&self) -> Result<&Arc<Snapshot>, SqlError> {
        self.snapshot
            .as_ref()
            .ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, "a read before the statement's snapshot"))
    }
}

/// Runs `statement` in `xact`, its subqueries being `subplans`.
///
/// OFF-THE-WORKER: a statement whose work is not bounded by its plan
/// (`Statement::is_bounded`) runs with the runtime worker handed to
/// another thread first (`block_in_place`): the worker's other
/// connections go on being served while it computes, on this thread,
/// which then leaves the runtime's workers when the statement's task next
/// waits. Its waits (locks, WAL) block this thread meanwhile, not the
/// worker. A bounded statement runs where it is (a hand-off costs more
/// than a point lookup). On a single-threaded runtime (tests) there is no
/// worker to hand off.
/// How a statement runs: inside BEGIN … COMMIT or not, whether its
/// expressions may wait for a lock (EVAL-REPLAY), and which foreign keys'
/// checks are put off to COMMIT.
pub(crate) struct RunMode {
    pub in_block: bool,
    pub waits: bool,
    pub deferral: ri::Deferral,
    /// What the statement's PL/pgSQL calls returned (PL-CALLS).
    pub called: Vec<Value>,
    /// The functions of the statement's PL/pgSQL calls, by number (those
    /// called per row: PL-ROW-CALLS).
    pub routines: Vec<Arc<snapscale_engine::catalog::RelEntry>>,
    pub cursor: CursorLink,
    /// EXPLAIN ANALYZE's counters (`None`: not counted).
    pub stats: Option<instrument::Counters>,
}

pub(crate) async fn run<'x>(
    xact: &'x mut Xact,
    limits: StatementLimits,
    statement: &'x Statement,
    subplans: &'x [Query],
    params: &'x [Value],
    mode: RunMode,
    host: Option<&'x mut dyn triggers::TriggerHost>,
) -> Result<(Output, Vec<ri::Pending>), SqlError> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let handle = Handle::try_current().ok().filter(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    // A statement nested in one already off the worker (a trigger's) runs
    // where it is: the thread is the outer statement's already.
    let off = handle.filter(|_| !statement.is_bounded(subplans) && !OFF_WORKER.get());
    // Only a statement run off the worker watches the notice queue.
    let notices = off.as_ref().map(|_| xact.notice_queue());
    let running = run_here(xact, limits, statement, subplans, params, mode, host);
    match (off, notices) {
        (Some(handle), Some(notices)) => {
            let mut running = std::pin::pin!(running);
            loop {
                let done = tokio::task::block_in_place(|| {
                    struct Off;
                    impl Drop for Off {
                        fn drop(&mut self) {
                            OFF_WORKER.set(false);
                        }
                    }
                    OFF_WORKER.set(true);
                    let _off = Off;
                    handle.block_on(async {
                        tokio::select! {
                            biased;
                            out = &mut running => Some(out),
                            // Waiting, with notices raised: NOTICE-STREAM.
                            () = notices.pushed() => None,
                        }
                    })
                });
                match done {
                    Some(out) => return out,
                    // The connection's task sends them in this turn.
                    None => tokio::task::yield_now().await,
                }
            }
        }
        _ => running.await,
    }
}

thread_local! {
    /// This thread runs a statement handed off its worker (OFF-THE-WORKER).
    static OFF_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

async fn run_here<'x>(
    xact: &'x mut Xact,
    limits: StatementLimits,
    statement: &'x Statement,
    subplans: &'x [Query],
    params: &'x [Value],
    mode: RunMode,
    host: Option<&'x mut dyn triggers::TriggerHost>,
) -> Result<(Output, Vec<ri::Pending>), SqlError> {
    let RunMode { in_block, waits, deferral, called, routines, cursor, stats } = mode;
    snapscale_values::json::set_max_stack_depth(limits.max_stack_depth);
    let mut exec = Executor {
        xact,
        limits,
        params,
        in_block,
        snapshot: None,
        subplans: subplan::Subplans::new(subplans, &StackDepth::here(limits.max_stack_depth)),
        catalog: std::sync::OnceLock::new(),
        work_tables: Default::default(),
        replay: waits.then(Replay::default),
        ri: None,
        deferral: Some(deferral),
        put_off: Vec::new(),
        called,
        triggers: host,
        after: Default::default(),
        captured: Vec::new(),
        routines,
        current_of: cursor.current_of,
        tid_slot: cursor.tid_slot,
        stats,
    };
    // The transition tables of the triggers firing around it, read as
    // work tables by name (innermost wins).
    for t in &exec.xact.transition_tables {
        let id = snapscale_engine::triggers::TransitionTable::id_of(&t.name);
        exec.work_tables.get_mut().insert(id, t.rows.to_vec());
    }
    let started = exec.stats.as_ref().map(|_| std::time::Instant::now());
    if !subplans.is_empty() {
        exec.ensure_snapshot()?;
    }
    let out = match statement {
        // Each data-modifying item runs to its end, its foreign keys kept,
        // before the statement: its RETURNING rows become the work table
        // that references to it read. All read through the statement's one
        // snapshot, so none sees what another changed, as in PostgreSQL.
        Statement::With(w) => {
            // The snapshot is the statement's from its start: an item that
            // waits (an upsert's conflict) leaves the others' reads as
            // they would have been.
            exec.ensure_snapshot()?;
            for (id, item) in &w.items {
                let rows = match exec.execute(item).await? {
                    Output::Rows { rows, .. } => rows,
                    _ => Vec::new(),
                };
                exec.work_tables.borrow_mut().insert(*id, rows);
            }
            exec.execute(&w.main).await?
        }
        other => exec.execute(other).await?,
    };
    if let (Some(c), Some(started)) = (&exec.stats, started) {
        instrument::count_statement(c, statement, &out, started.elapsed());
    }
    Ok((out, exec.put_off))
}

/// Runs foreign-key checks put off earlier (at COMMIT, or SET CONSTRAINTS
/// … IMMEDIATE): a 23503 among them fails the caller.
pub(crate) async fn run_pending(
    xact: &mut Xact,
    limits: StatementLimits,
    pending: Vec<ri::Pending>,
) -> Result<(), SqlError> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut exec = Executor::new(xact, limits, &[], false, false);
    exec.ri_run_pending(pending).await
}

impl Executor<'_> {
    /// Runs one statement (not a WITH of data-modifying items), its
    /// foreign keys checked and cascaded to once its own changes are done
    /// (exec/ri.rs).
    async fn execute(&mut self, statement: &Statement) -> Result<Output, SqlError> {
        let exec = self;
        exec.ri = statement.foreign_keys().and_then(|f| ri::Ri::new(Arc::clone(f)));
        let fires = statement_events(statement);
        for (rel, event, set) in &fires {
            exec.statement_triggers(rel, TriggerTiming::Before, *event, set.as_deref()).await?;
        }
        let out = match statement {
            Statement::Query(q) => {
                // Every statement reads with a snapshot, even one with no
                // table (what `SELECT pg_current_snapshot()` shows).
                let rows = exec.query(q).await?;
                let tag = crate::output::counted_tag("SELECT", rows.len());
                Ok(Output::Rows { columns: Arc::clone(&q.columns), rows, tag })
            }
            Statement::Insert { rel, targets, defaults, source, returning, checks, on_conflict, .. } => {
                let insert =
                    modify::InsertInto { rel, targets, defaults, checks, on_conflict: on_conflict.as_ref() };
                exec.insert(&insert, source, returning.as_ref()).await
            }
            Statement::Update { scan, sets, returning, checks, .. } => {
                exec.update(scan, sets, returning.as_ref(), checks).await
            }
            Statement::Delete { scan, returning, .. } => exec.delete(scan, returning.as_ref()).await,
            Statement::Utility(u) => exec.utility(u).await,
            Statement::CreateTableAs(c) => exec.create_table_as(c).await,
            Statement::ModifyJoin(m) => exec.modify_join(m).await,
            Statement::InsteadOf(m) => exec.instead_of(m).await,
            Statement::Merge(m) => exec.merge(m).await,
            Statement::CopyQuery { query, options } => {
                let rows = exec.query(query).await?;
                let zone = exec.xact.session_style();
                crate::exec::copy::copy_out(&query.columns, rows.iter().map(|r| &r[..]), options, zone)
            }
            Statement::With(_) => {
                Err(SqlError::new(SqlState::INTERNAL_ERROR, "a WITH of data-modifying items inside another"))
            }
        }?;
        exec.ri_finish().await?;
        exec.fire_after_rows().await?;
        let after: Vec<_> = match statement {
            Statement::Insert { .. } | Statement::Merge(_) => fires.iter().rev().collect(),
            _ => fires.iter().collect(),
        };
        for (rel, event, set) in after {
            exec.statement_triggers(rel, TriggerTiming::After, *event, set.as_deref()).await?;
        }
        Ok(out)
    }
}

/// The tables and events whose statement-level triggers `statement` fires
/// (MERGE: each kind of action it has), with an UPDATE's SET columns
/// (an UPDATE OF trigger fires for a statement that sets one of them).
fn statement_events(statement: &Statement) -> Vec<(&crate::plan::Rel, u8, Option<Vec<usize>>)> {
    use snapscale_engine::triggers::events;
    let fires = |rel: &crate::plan::Rel| !rel.entry.triggers.is_empty();
    let columns = |sets: &[(usize, crate::expr::Expr)]| Some(sets.iter().map(|(c, _)| *c).collect());
    match statement {
        // ON CONFLICT DO UPDATE fires UPDATE's too (AFTER: UPDATE's first).
        Statement::Insert { rel, on_conflict, .. } if fires(rel) => match on_conflict {
            Some(crate::plan::OnConflict {
                action: crate::plan::ConflictAction::Update { sets, .. },
                ..
            }) => {
                vec![(rel, events::INSERT, None), (rel, events::UPDATE, columns(sets))]
            }
            _ => vec![(rel, events::INSERT, None)],
        },
        Statement::Update { scan, sets, .. } if fires(&scan.rel) => {
            vec![(&scan.rel, events::UPDATE, columns(sets))]
        }
        Statement::Delete { scan, .. } if fires(&scan.rel) => vec![(&scan.rel, events::DELETE, None)],
        Statement::InsteadOf(m) if fires(&m.view) => match m.delete {
            true => vec![(&m.view, events::DELETE, None)],
            false => vec![(&m.view, events::UPDATE, columns(&m.sets))],
        },
        Statement::ModifyJoin(m) if fires(&m.rel) => match m.delete {
            true => vec![(&m.rel, events::DELETE, None)],
            false => vec![(&m.rel, events::UPDATE, columns(&m.sets))],
        },
        // MERGE: each kind of action it has, INSERT, UPDATE, DELETE (AFTER:
        // the other way round), as PostgreSQL fires them.
        Statement::Merge(m) if fires(&m.rel) => {
            let mut out = Vec::new();
            if m.not_matched.iter().any(|c| c.insert.is_some()) {
                out.push((&m.rel, events::INSERT, None));
            }
            let sets: Vec<usize> = m
                .matched
                .iter()
                .filter_map(|c| match &c.action {
                    crate::plan::MatchedAction::Update(sets) => Some(sets.iter().map(|(c, _)| *c)),
                    _ => None,
                })
                .flatten()
                .collect();
            if m.matched.iter().any(|c| matches!(c.action, crate::plan::MatchedAction::Update(_))) {
                out.push((&m.rel, events::UPDATE, Some(sets)));
            }
            if m.matched.iter().any(|c| matches!(c.action, crate::plan::MatchedAction::Delete)) {
                out.push((&m.rel, events::DELETE, None));
            }
            out
        }
        Statement::Utility(Utility::Truncate(rels, _)) => {
            rels.iter().filter(|r| fires(r)).map(|r| (r, events::TRUNCATE, None)).collect()
        }
        _ => Vec::new(),
    }
}

/// Evaluates `e`, which reads no relation and has no subquery, over `row`
/// (a trigger's WHEN condition over OLD and NEW).
pub(crate) fn evaluate_over(
    xact: &mut Xact,
    limits: StatementLimits,
    e: &crate::expr::Expr,
    row: &[Value],
) -> Result<Value, SqlError> {
    let ex = Executor::new(xact, limits, &[], false, false);
    e.eval(&ex.ctx(row))
}

/// Evaluates `e`, which reads no relation and has no subquery, with
/// `params` (PL/pgSQL's simple expressions: no statement machinery, no
/// snapshot).
pub(crate) fn evaluate_alone(
    xact: &mut Xact,
    limits: StatementLimits,
    e: &crate::expr::Expr,
    params: &[Value],
    called: &[Value],
) -> Result<Value, SqlError> {
    snapscale_values::json::set_max_stack_depth(limits.max_stack_depth);
    let mut ex = Executor::new(xact, limits, params, false, false);
    if !called.is_empty() {
        ex.called = called.to_vec();
    }
    e.eval(&ex.ctx(&[]))
}

/// Evaluates a PL/pgSQL simple expression (`Planned::simple`: it reads no
/// rows, no subquery, no catalog and no snapshot, and calls no PL/pgSQL
/// function) with `params`, without setting up an executor: what a loop
/// of assignments costs per turn.
pub(crate) fn evaluate_simple(
    xact: &Xact,
    limits: StatementLimits,
    e: &crate::expr::Expr,
    params: &[Value],
) -> Result<Value, SqlError> {
    snapscale_values::json::set_max_stack_depth(limits.max_stack_depth);
    let cx = Ctx {
        row: &[],
        params,
        called: &[],
        now: xact.now(),
        stack: StackDepth::here(limits.max_stack_depth),
        db: Some(&xact.db),
        snapshot: None,
        session: xact.session_view.as_deref(),
        outer: &[],
        subqueries: None,
        catalog: None,
        replay: None,
    };
    e.eval(&cx)
}

impl Executor<'_> {
    /// The context to evaluate an expression over `row`: the statement's
    /// parameters, the transaction's timestamp, and a recursion root.
    pub(crate) fn ctx<'a>(&'a self, row: &'a [Value]) -> Ctx<'a> {
        Ctx {
            row,
            params: self.params,
            called: &self.called,
            now: self.xact.now(),
            stack: StackDepth::here(self.limits.max_stack_depth),
            db: Some(&self.xact.db),
            snapshot: self.xact.session.current_snapshot().map(|s| &**s),
            session: self.xact.session_view.as_deref(),
            outer: &[],
            subqueries: Some(self),
            catalog: Some(self),
            replay: self.replay.as_ref(),
        }
    }

    async fn utility(&mut self, u: &Utility) -> Result<Output, SqlError> {
        match u {
            Utility::CreateTable(c) => self.create_table(c).await,
            Utility::CreateView { create, replace, notice } => {
                if let Some(n) = notice {
                    self.xact.notice(SqlState::SUCCESSFUL_COMPLETION, n.clone());
                }
                self.create_view(create, replace.as_ref()).await
            }
            Utility::DropTable { targets, kind, detach, cascaded } => {
                if let Some((notice, detail)) = cascaded {
                    self.xact.notice_with_detail(
                        SqlState::SUCCESSFUL_COMPLETION,
                        notice.clone(),
                        detail.clone(),
                    );
                }
                let out = self.drop_tables(targets, *kind).await?;
                self.detach_foreign_keys(targets, detach).await?;
                Ok(out)
            }
            Utility::AddIndex { rel, index, if_not_exists, concurrently, tag } => {
                if *concurrently {
                    self.refuse_in_block("CREATE INDEX CONCURRENTLY")?;
                }
                self.not_in_use(&rel.entry, "CREATE INDEX")?;
                self.add_index(rel, index, *if_not_exists).await?;
                Ok(Output::Command((*tag).into()))
            }
            Utility::DropIndex { drops, notices, concurrently } => {
                if *concurrently {
                    self.refuse_in_block("DROP INDEX CONCURRENTLY")?;
                }
                for n in notices {
                    self.xact.notice(SqlState::SUCCESSFUL_COMPLETION, n.clone());
                }
                for (rel, names) in drops {
                    self.rewrite_indexes(rel, |indexes| indexes.retain(|i| !names.contains(&i.name))).await?;
                }
                Ok(Output::Command("DROP INDEX".into()))
            }
            Utility::SetOptions { rel, index, options, tag } => {
                self.rewrite_entry(rel, |entry| match index {
                    Some(name) => {
                        for i in entry.indexes.iter_mut().filter(|i| i.name == *name) {
                            i.options = options.clone();
                        }
                    }
                    None => {
                        entry.options = options.clone();
                        if let Some(view) = entry.view.as_mut().filter(|v| v.materialized.is_none()) {
                            view.check_option = crate::bind::reloptions::check_option_of(options);
                        }
                    }
                })
                .await?;
                Ok(Output::Command((*tag).into()))
            }
            Utility::Trigger { rel, change, tag } => {
                let oid = match change {
                    crate::plan::TriggerChange::Create(_) => self.xact.db.catalog.new_oid(),
                    _ => 0,
                };
                self.rewrite_entry(rel, |entry| change_triggers(entry, change, oid)).await?;
                Ok(Output::Command((*tag).into()))
            }
            Utility::Comment { rel, on, text } => {
                self.rewrite_entry(rel, |entry| entry.set_comment(on.clone(), text.clone())).await?;
                Ok(Output::Command("COMMENT".into()))
            }
            Utility::AlterConstraint { rel, oid, deferrable, initially_deferred } => {
                self.rewrite_entry(rel, |entry| {
                    for fk in entry.foreign_keys.iter_mut().filter(|f| f.oid == *oid) {
                        fk.deferrable = *deferrable;
                        fk.initially_deferred = *initially_deferred;
                    }
                })
                .await?;
                Ok(Output::Command("ALTER TABLE".into()))
            }
            Utility::RenameIndex { rel, old, new } => {
                self.rewrite_entry(rel, |entry| {
                    use snapscale_engine::catalog::Described;
                    entry.rename_commented(&Described::Index(old.clone()), Described::Index(new.clone()));
                    if entry.indexes.iter().any(|i| i.constraint && i.name == *old) {
                        let (from, to) =
                            (Described::Constraint(old.clone()), Described::Constraint(new.clone()));
                        entry.rename_commented(&from, to);
                    }
                    for i in entry.indexes.iter_mut().filter(|i| i.name == *old) {
                        i.name = new.clone();
                    }
                })
                .await?;
                Ok(Output::Command("ALTER INDEX".into()))
            }
            Utility::Reindex { targets, notices, concurrently } => {
                if *concurrently {
                    self.refuse_in_block("REINDEX CONCURRENTLY")?;
                }
                for n in notices {
                    self.xact.notice(SqlState::SUCCESSFUL_COMPLETION, n.clone());
                }
                for (rel, names) in targets {
                    self.reindex(rel, names).await?;
                }
                Ok(Output::Command("REINDEX".into()))
            }
            Utility::SetConstraints { .. } => {
                Err(SqlError::new(SqlState::INTERNAL_ERROR, "SET CONSTRAINTS is the session's to run"))
            }
            Utility::AlterSequence { rel, def, restart } => {
                self.alter_sequence(rel, def, *restart).await?;
                Ok(Output::Command("ALTER SEQUENCE".into()))
            }
            Utility::Truncate(rels, cascaded) => {
                for name in cascaded {
                    self.xact.notice(
                        SqlState::SUCCESSFUL_COMPLETION,
                        format!("truncate cascades to table \"{name}\""),
                    );
                }
                self.truncate(rels).await
            }
            Utility::AlterTable(a) => {
                self.not_in_use(&a.rel.entry, "ALTER TABLE")?;
                self.alter_table(a).await
            }
            Utility::Skip { code, notice, tag } => {
                if !notice.is_empty() {
                    self.xact.notice(*code, notice.clone());
                }
                Ok(Output::Command((*tag).into()))
            }
            Utility::Vacuum { rels, analyze, freeze } => self.vacuum(rels, *analyze, *freeze),
            Utility::Analyze { targets, verbose } => self.analyze(targets, *verbose),
            Utility::Checkpoint => self.checkpoint().await,
            Utility::LockTable { .. } => Ok(Output::Command("LOCK TABLE".into())),
            Utility::CopyTo { rel, columns, options } => self.copy_to(rel, columns, options),
            Utility::CreateType { name, spec } => self.create_type(name, spec).await,
            Utility::CreateRoutine { key, def, replace } => self.create_routine(key, def, *replace).await,
            Utility::AlterRoutine { oid, def, tag, rename } => {
                self.alter_routine(*oid, def, tag, rename.as_deref()).await
            }
            Utility::DropRoutines { targets, tag, cascade } => {
                self.drop_routines(targets, tag, *cascade).await
            }
            Utility::CommentRoutine { oid, text } => self.comment_routine(*oid, text.clone()).await,
            Utility::MoveRoutine { oid, namespace, tag } => self.move_routine(*oid, *namespace, tag).await,
            Utility::Call { .. } => {
                Err(SqlError::new(SqlState::INTERNAL_ERROR, "CALL is the session's to run"))
            }
            Utility::CreateSchema { name, if_not_exists } => self.create_schema(name, *if_not_exists).await,
            Utility::DropSchema { schemas, relations, types, routines, cascaded } => {
                self.drop_schema(schemas, relations, types, routines, cascaded).await
            }
            Utility::AlterSchema { oid, new } => self.alter_schema(*oid, new.as_deref()).await,
            Utility::SetSchema { oid, namespace, tag } => self.set_schema(*oid, *namespace, tag).await,
            Utility::AlterType { oid, op, domain } => self.alter_type(*oid, op, *domain).await,
            Utility::DropType { targets, domain } => self.drop_types(targets, *domain).await,
            Utility::CopyFrom { .. } => Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                "COPY FROM STDIN runs through the session's COPY sub-protocol",
            )),
        }
    }
}

impl Executor<'_> {
    /// CHECKPOINT: a checkpoint now, as the checkpointer takes them (a
    /// server without a data directory has nothing to write).
    async fn checkpoint(&mut self) -> Result<Output, SqlError> {
        let db = Arc::clone(&self.xact.db);
        if db.in_recovery() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "CHECKPOINT on a standby is not supported: restartpoints follow checkpoint_timeout",
            ));
        }
        db.checkpoint().await.map_err(|e| SqlError::new(SqlState::IO_ERROR, e))?;
        Ok(Output::Command("CHECKPOINT".into()))
    }
}

/// `change` applied to a table's catalog row; a new trigger gets `oid`.
impl Executor<'_> {
    /// 55006 for DDL (`what`) on a table whose triggers are firing: the
    /// statement that fired them has it open.
    fn not_in_use(&self, entry: &snapscale_engine::catalog::RelEntry, what: &str) -> Result<(), SqlError> {
        if self.xact.in_use.contains(&entry.oid) {
            return Err(SqlError::new(
                SqlState::OBJECT_IN_USE,
                format!(
                    "cannot {what} \"{}\" because it is being used by active queries in this session",
                    entry.name
                ),
            ));
        }
        Ok(())
    }
}

fn change_triggers(
    entry: &mut snapscale_engine::catalog::RelEntry,
    change: &crate::plan::TriggerChange,
    oid: u32,
) {
    use crate::plan::TriggerChange;
    match change {
        TriggerChange::Create(def) => {
            entry.triggers.retain(|t| t.name != def.name);
            let def = snapscale_engine::triggers::TriggerDef { oid, ..(**def).clone() };
            // TRIGGER-ROWS: kept in name order, the order they fire in.
            let at = entry.triggers.partition_point(|t| t.name < def.name);
            entry.triggers.insert(at, def);
        }
        TriggerChange::Drop(name) => entry.triggers.retain(|t| t.name != *name),
        TriggerChange::Rename { old, new } => {
            for t in entry.triggers.iter_mut().filter(|t| t.name == *old) {
                t.name = new.clone();
            }
            use snapscale_engine::catalog::Described;
            entry.rename_commented(&Described::Trigger(old.clone()), Described::Trigger(new.clone()));
            entry.triggers.sort_by(|a, b| a.name.cmp(&b.name));
        }
    }
}

fn serialization_failure(what: &str) -> SqlError {
    SqlError::new(
        SqlState::SERIALIZATION_FAILURE,
        format!("could not serialize access due to concurrent {what}"),
    )
}
