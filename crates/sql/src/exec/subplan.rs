//! Subqueries used as expressions, run for the evaluator (see
//! [`crate::expr::Subqueries`]), and the computed relations of FROM.
//!
//! Each subplan remembers the values it last ran with and the rows it gave:
//! a subquery without arguments (PostgreSQL's initplan) runs once per
//! statement, and a correlated one once per run of equal argument values
//! (enclosing rows often repeat them, as a sorted or grouped input does).
//! A correlated subplan whose rows depend on its arguments alone also
//! remembers its earlier runs (bounded), so that arguments that come back
//! out of order are not run again (PostgreSQL's Memoize). An EXISTS stops
//! its subplan at the first row; IN and NOT IN look their
//! value up in the rows made a set, once per run (PostgreSQL's hashed
//! SubPlan).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use snapscale_engine::catalog::Row;
use snapscale_engine::index::Key;
use snapscale_values::{Reg, SqlError, Value};

use super::query::Run;
use super::Executor;
use crate::catalog_views::{CatalogState, View};
use crate::expr::subquery::RowSet;
use crate::expr::{passes, Catalog, CatalogFunc, Expr, Subqueries};
use crate::plan::physical::{Node, Query};
use crate::stack::StackDepth;

/// The arguments a subplan last ran with, and its first column then.
struct LastRun {
    args: Vec<Value>,
    rows: Arc<[Value]>,
    /// False when an EXISTS stopped the run at its first row.
    complete: bool,
    /// The rows as a set, once an IN or NOT IN asked for it.
    set: Option<Option<Arc<RowSet>>>,
}

/// A statement's subplans and what each last computed.
pub(crate) struct Subplans<'x> {
    plans: &'x [Query],
    last: Vec<Mutex<Option<LastRun>>>,
    /// Per subplan, the rows of its earlier runs by their arguments, for
    /// a subplan whose rows depend on them alone (`Query::is_stable`);
    /// `None` for the others.
    memo: Vec<Option<Mutex<Memo>>>,
}

/// A correlated subplan's earlier runs: their arguments, rows and whether
/// they ran to the end (not an EXISTS stopped at its first row).
#[derive(Default)]
struct Memo {
    runs: BTreeMap<Key, (Arc<[Value]>, bool)>,
    /// The values held in `runs`, bounded by [`MEMO_VALUES`].
    held: usize,
}

/// How many values (arguments and rows) one subplan's memo holds at most;
/// past that, runs are not remembered.
const MEMO_VALUES: usize = 1 << 16;

impl<'x> Subplans<'x> {
    pub(crate) fn new(plans: &'x [Query], stack: &StackDepth) -> Subplans<'x> {
        let memo =
            plans.iter().map(|q| q.is_stable(plans, stack).then(|| Mutex::new(Memo::default()))).collect();
        Subplans { plans, last: plans.iter().map(|_| Mutex::new(None)).collect(), memo }
    }
}

impl Executor<'_> {
    /// Subplan `plan`'s rows for `args`, from its last run if that had the
    /// same arguments (and ran to its end, unless `one` row will do).
    fn subplan_rows(
        &self,
        plan: usize,
        args: &[Value],
        stack: StackDepth,
        fresh: bool,
        one: bool,
    ) -> Result<Arc<[Value]>, SqlError> {
        let slot = &self.subplans.last[plan];
        // A correlated subplan that calls something volatile runs for
        // every row (an uncorrelated one runs once, as PostgreSQL's
        // initplan does, volatile or not).
        let fresh = fresh || (!args.is_empty() && self.subplans.memo[plan].is_none());
        if !fresh {
            if let Some(last) = &*slot.lock().expect("subplan cache poisoned") {
                if (last.complete || one) && last.args.as_slice() == args {
                    return Ok(Arc::clone(&last.rows));
                }
            }
        }
        let memo = self.subplans.memo[plan].as_ref().filter(|_| !fresh && !args.is_empty());
        if let Some(memo) = memo {
            let key = Key(args.to_vec());
            if let Some((rows, complete)) = memo.lock().expect("subplan memo poisoned").runs.get(&key) {
                if *complete || one {
                    return Ok(Arc::clone(rows));
                }
            }
        }
        let query = &self.subplans.plans[plan];
        // A subquery's expressions may hold subqueries of their own, which
        // run (and lock their own slots) while this one computes: the slot
        // is not held meanwhile.
        let run = Run { ex: self, outer: args, stack };
        let rows = if one { run.rows_upto(exists_input(&query.root), 1)? } else { run.rows(&query.root)? };
        let rows: Arc<[Value]> =
            rows.into_rows().into_iter().map(|row| row.first().cloned().unwrap_or(Value::Null)).collect();
        *slot.lock().expect("subplan cache poisoned") =
            Some(LastRun { args: args.to_vec(), rows: Arc::clone(&rows), complete: !one, set: None });
        if let Some(memo) = memo {
            let mut memo = memo.lock().expect("subplan memo poisoned");
            let size = args.len() + rows.len();
            if memo.held + size <= MEMO_VALUES {
                memo.held += size;
                memo.runs.insert(Key(args.to_vec()), (Arc::clone(&rows), !one));
            }
        }
        Ok(rows)
    }
}

/// What decides whether an EXISTS subquery has a row: its plan without
/// the select list and ORDER BY over it, which PostgreSQL drops from an
/// EXISTS subquery (`EXISTS (SELECT 1 / 0 FROM t)` is true for a table
/// with rows). Not below an aggregate's or a set-returning call's node,
/// which decide how many rows there are.
fn exists_input(root: &Node) -> &Node {
    let Node::Project { input, .. } = root else { return root };
    match input.as_ref() {
        Node::Sort { input, .. } => input,
        other => other,
    }
}

impl Subqueries for Executor<'_> {
    fn rows(
        &self,
        plan: usize,
        args: &[Value],
        stack: StackDepth,
        fresh: bool,
    ) -> Result<Arc<[Value]>, SqlError> {
        self.subplan_rows(plan, args, stack, fresh, false)
    }

    fn exists(&self, plan: usize, args: &[Value], stack: StackDepth) -> Result<bool, SqlError> {
        Ok(!self.subplan_rows(plan, args, stack, false, true)?.is_empty())
    }

    /// Built once per run of the subplan: an uncorrelated subquery's set
    /// serves the whole statement.
    fn row_set(
        &self,
        plan: usize,
        args: &[Value],
        stack: StackDepth,
    ) -> Result<Option<Arc<RowSet>>, SqlError> {
        let rows = self.subplan_rows(plan, args, stack, false, false)?;
        let slot = &self.subplans.last[plan];
        let mut last = slot.lock().expect("subplan cache poisoned");
        match &mut *last {
            Some(last) if last.complete && Arc::ptr_eq(&last.rows, &rows) => {
                Ok(last.set.get_or_insert_with(|| RowSet::of(&rows).map(Arc::new)).clone())
            }
            _ => Ok(RowSet::of(&rows).map(Arc::new)),
        }
    }
}

impl Run<'_, '_> {
    /// The rows of a computed relation that pass `filter`.
    pub(super) fn computed(&self, view: View, filter: Option<&Expr>) -> Result<Vec<Row>, SqlError> {
        let rows = crate::catalog_views::rows(view, self.ex.catalog_state()?)?;
        let Some(filter) = filter else { return Ok(rows) };
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            if passes(filter, &self.ctx(&row))? {
                out.push(row);
            }
        }
        Ok(out)
    }
}

impl Executor<'_> {
    /// The catalog as this statement sees it, read once.
    pub(super) fn catalog_state(&self) -> Result<&CatalogState, SqlError> {
        if let Some(state) = self.catalog.get() {
            return Ok(state);
        }
        let snapshot = self.snapshot()?;
        let reader = self.xact.session.reader(snapshot);
        let me = self.xact.backend_id();
        let (relations, others): (Vec<_>, Vec<_>) = self
            .xact
            .db
            .catalog
            .table
            .scan(&reader)
            .into_iter()
            .map(|(_, e)| e)
            .filter(|e| e.temp_owner.is_none_or(|owner| owner == me))
            .partition(|e| e.is_relation());
        let (routines, others): (Vec<_>, Vec<_>) = others.into_iter().partition(|e| e.routine.is_some());
        let (schemas, user_types): (Vec<_>, Vec<_>) = others.into_iter().partition(|e| e.is_schema);
        let (hidden, schemas): (Vec<_>, Vec<_>) = schemas.into_iter().partition(|e| e.hides_builtin());
        let session = self.xact.session_view.as_deref();
        let state = CatalogState {
            relations,
            user_types,
            routines,
            schemas,
            dropped_builtins: hidden.iter().map(|e| e.oid).collect(),
            search_path: self.xact.search_path(),
            backend: me,
            user: session.map_or_else(|| "postgres".into(), |s| s.user.clone()),
            database: session.map_or_else(|| "postgres".into(), |s| s.database.clone()),
            db: Arc::clone(&self.xact.db),
            settings: session.map(|s| s.settings.clone()).unwrap_or_default(),
            cursors: Arc::clone(&self.xact.open_cursors),
        };
        Ok(self.catalog.get_or_init(|| state))
    }
}

/// The catalog functions and the oid alias types' names see the catalog as
/// the statement does; without a snapshot (none is needed by the statement)
/// they see nothing.
impl Catalog for Executor<'_> {
    fn oid_of(&self, reg: Reg, name: &str) -> Option<(u32, String)> {
        self.catalog_state().ok()?.oid_of(reg, name)
    }

    fn name_of(&self, reg: Reg, oid: u32) -> Option<String> {
        self.catalog_state().ok()?.name_of(reg, oid)
    }

    fn call(&self, f: CatalogFunc, args: &[Value]) -> Result<Value, SqlError> {
        self.catalog_state()?.call(f, args)
    }
}
