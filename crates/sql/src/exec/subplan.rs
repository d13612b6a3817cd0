//! Subqueries used as expressions, run for the evaluator (see
//! [`crate::expr::Subqueries`]), and the computed relations of FROM.
//!
//! Each subplan remembers the values it last ran with and the rows it gave:
//! a subquery without arguments (PostgreSQL's initplan) runs once per
//! statement, and a correlated one once per run of equal argument values
//! (enclosing rows often repeat them, as a sorted or grouped input does).

use std::sync::{Arc, Mutex};

use snapscale_engine::catalog::Row;
use snapscale_values::{Reg, SqlError, Value};

use super::query::Run;
use super::Executor;
use crate::catalog_views::{CatalogState, View};
use crate::expr::{passes, Catalog, CatalogFunc, Expr, Subqueries};
use crate::plan::physical::Query;
use crate::stack::StackDepth;

/// The arguments a subplan last ran with, and its first column then.
type LastRun = Option<(Vec<Value>, Arc<[Value]>)>;

/// A statement's subplans and what each last computed.
pub(crate) struct Subplans<'x> {
    plans: &'x [Query],
    last: Vec<Mutex<LastRun>>,
}

impl<'x> Subplans<'x> {
    pub(crate) fn new(plans: &'x [Query]) -> Subplans<'x> {
        Subplans { plans, last: plans.iter().map(|_| Mutex::new(None)).collect() }
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
        let slot = &self.subplans.last[plan];
        if !fresh {
            if let Some((last_args, rows)) = &*slot.lock().expect("subplan cache poisoned") {
                if last_args.as_slice() == args {
                    return Ok(Arc::clone(rows));
                }
            }
        }
        let query = &self.subplans.plans[plan];
        // A subquery's expressions may hold subqueries of their own, which
        // run (and lock their own slots) while this one computes: the slot
        // is not held meanwhile.
        let run = Run { ex: self, outer: args, stack };
        let rows: Arc<[Value]> = run
            .rows(&query.root)?
            .into_rows()
            .into_iter()
            .map(|row| row.first().cloned().unwrap_or(Value::Null))
            .collect();
        *slot.lock().expect("subplan cache poisoned") = Some((args.to_vec(), Arc::clone(&rows)));
        Ok(rows)
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
