//! Subqueries used as expressions, run for the evaluator (see
//! [`crate::expr::Subqueries`]), and the computed relations of FROM.
//!
//! Each subplan remembers the values it last ran with and the rows it gave:
//! a subquery without arguments (PostgreSQL's initplan) runs once per
//! statement, and a correlated one once per run of equal argument values
//! (enclosing rows often repeat them, as a sorted or grouped input does).

use std::sync::{Arc, Mutex};

use super::query::Run;
use super::Executor;
use crate::catalog::Row;
use crate::catalog_views::View;
use crate::error::SqlError;
use crate::expr::{Expr, Subqueries};
use crate::plan::physical::Query;
use crate::types::Value;

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
    fn rows(&self, plan: usize, args: &[Value]) -> Result<Arc<[Value]>, SqlError> {
        let slot = &self.subplans.last[plan];
        if let Some((last_args, rows)) = &*slot.lock().expect("subplan cache poisoned") {
            if last_args.as_slice() == args {
                return Ok(Arc::clone(rows));
            }
        }
        let query = &self.subplans.plans[plan];
        // A subquery's expressions may hold subqueries of their own, which
        // run (and lock their own slots) while this one computes: the slot
        // is not held meanwhile.
        let rows: Arc<[Value]> = self
            .run(args)
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
    pub(super) fn computed(&self, view: View, _filter: Option<&Expr>) -> Result<Vec<Row>, SqlError> {
        match view {}
    }
}
