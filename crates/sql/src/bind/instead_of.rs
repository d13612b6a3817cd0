//! INSERT, UPDATE and DELETE of a view with INSTEAD OF triggers for the
//! event (TRIGGER-FIRE in the crate README): the statement changes no
//! table; each row it would change is given to the triggers, which do
//! what they do. An INSERT is bound as into a table of the view's columns
//! (its defaults the view's), which the executor sees is a view; an UPDATE
//! or DELETE reads the view's rows its WHERE keeps, through the view's
//! query, and computes each new row from its SET list.

use snapscale_engine::triggers::{events, TriggerTiming};
use sqlparser::ast;

use super::scope::Scope;
use super::{Binder, Resolver};
use crate::plan::{InsteadOf, Plan, Rel};
use snapscale_values::SqlError;

/// Whether view `rel` has an INSTEAD OF row trigger for `event`.
pub(super) fn instead_of(rel: &Rel, event: u8) -> bool {
    rel.entry.is_view()
        && rel
            .entry
            .triggers
            .iter()
            .any(|t| t.timing == TriggerTiming::InsteadOf && t.events & event != 0 && t.fires())
}

impl<R: Resolver> Binder<'_, R> {
    /// UPDATE (`delete` false) or DELETE of view `view` through its INSTEAD
    /// OF triggers.
    pub(super) fn instead_of_change(
        &mut self,
        view: &Rel,
        relation: &ast::TableFactor,
        alias: Option<String>,
        assignments: &[ast::Assignment],
        selection: Option<&ast::Expr>,
        returning: Option<&[ast::SelectItem]>,
    ) -> Result<Plan, SqlError> {
        let view = view.clone();
        let mut parsed = crate::parse::parse("SELECT * FROM x", self.stack.limit())?;
        let Some(crate::parse::Parsed::Sql(stmt)) = parsed.pop() else { unreachable!("a SELECT parses") };
        let ast::Statement::Query(q) = &*stmt else { unreachable!("a SELECT parses as one") };
        let mut q = q.clone();
        let ast::SetExpr::Select(s) = q.body.as_mut() else { unreachable!("a SELECT parses as one") };
        s.from = vec![ast::TableWithJoins { relation: relation.clone(), joins: Vec::new() }];
        s.selection = selection.cloned();
        let query = self.query(&q)?;
        let name = alias.unwrap_or_else(|| view.entry.name.clone());
        let scope = Scope::table(&name, &view);
        let sets =
            if assignments.is_empty() { Vec::new() } else { self.assignments(&view, assignments, &scope)? };
        let returning = self.returning_scoped(returning, &scope)?;
        Ok(Plan::InsteadOf(Box::new(InsteadOf {
            view,
            delete: assignments.is_empty(),
            query,
            sets,
            returning,
        })))
    }
}

/// The event bit of INSERT (for the callers' checks).
pub(super) const INSERT: u8 = events::INSERT;
