//! `WITH name [(columns)] AS (query), …`: common table expressions, the
//! non-recursive kind.
//!
//! A WITH item is a name for a query, visible to the items after it and
//! to the query the WITH belongs to (and that query's subqueries), hiding
//! a table of the same name. Each reference binds the item's query afresh,
//! as a subquery in FROM: every statement reads through one snapshot, so
//! two references see the same rows, and a query with no side effects
//! means the same whether it is computed once or twice (PostgreSQL
//! inlines such items too, unless told MATERIALIZED, which changes only
//! the plan).
//!
//! The item's query is bound where it was written, seeing only the items
//! before it, never the query that refers to it: bound again at a
//! reference, it gets the same scope (the empty one, since a WITH item
//! that read an enclosing query's columns would need that query's row;
//! such a reference is 42703 here, where PostgreSQL allows it).

use sqlparser::ast::{self, SetExpr};

use super::scope::{Col, Named, Scope};
use super::*;
use crate::expr::Expr;
use crate::plan::From;

/// One WITH item in scope.
#[derive(Clone)]
pub(super) struct Cte {
    name: String,
    query: Box<ast::Query>,
    /// The column names written after the item's name.
    columns: Vec<String>,
}

impl<R: Resolver> Binder<'_, R> {
    /// Puts `with`'s items in scope (the caller truncates them away when
    /// its query is bound), binding each once so that an error in one that
    /// is never referenced is still reported, as PostgreSQL reports it.
    pub(super) fn define_ctes(&mut self, with: &ast::With) -> Result<(), SqlError> {
        if with.recursive {
            return Err(not_supported("WITH RECURSIVE"));
        }
        let first = self.ctes.len();
        for cte in &with.cte_tables {
            let name = ident(&cte.alias.name);
            if self.ctes[first..].iter().any(|c| c.name == name) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_ALIAS,
                    format!("WITH query name \"{name}\" specified more than once"),
                ));
            }
            if cte.from.is_some() {
                return Err(not_supported("WITH … FROM"));
            }
            if matches!(
                cte.query.body.as_ref(),
                SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_)
            ) {
                return Err(not_supported("data-modifying statements in WITH"));
            }
            let item = Cte {
                name,
                query: cte.query.clone(),
                columns: cte.alias.columns.iter().map(|c| ident(&c.name)).collect(),
            };
            self.bind_cte(&item, self.ctes.len())?;
            self.ctes.push(item);
        }
        Ok(())
    }

    /// The WITH item `name` refers to, if one is in scope (the innermost,
    /// latest of that name): its position among the items in scope.
    pub(super) fn cte_named(&self, name: &ast::ObjectName) -> Option<usize> {
        let [part] = name.0.as_slice() else { return None };
        let wanted = ident(part.as_ident()?);
        self.ctes.iter().rposition(|c| c.name == wanted)
    }

    /// Binds item `k`'s query as it was written: with only the items
    /// before it in scope.
    fn bind_cte(&mut self, item: &Cte, k: usize) -> Result<Select, SqlError> {
        let hidden = self.ctes.split_off(k);
        let select = self.query_scoped(&item.query, &Scope::empty());
        self.ctes.extend(hidden);
        let select = select?;
        if item.columns.len() > select.columns.len() {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!(
                    "WITH query \"{}\" has {} columns available but {} columns specified",
                    item.name,
                    select.columns.len(),
                    item.columns.len()
                ),
            ));
        }
        Ok(select)
    }

    /// A reference to WITH item `k` in FROM, at `offset` in the FROM row:
    /// its query, bound again, as a subquery named after the item (or the
    /// reference's alias).
    pub(super) fn cte_reference(
        &mut self,
        k: usize,
        alias: Option<&ast::TableAlias>,
        offset: usize,
    ) -> Result<from::Item, SqlError> {
        let item = self.ctes[k].clone();
        let select = self.bind_cte(&item, k)?;
        let columns = select
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| Col {
                name: item.columns.get(i).cloned().unwrap_or_else(|| c.name.clone()),
                expr: Expr::Column(offset + i),
                ty: c.ty,
            })
            .collect();
        let name = alias.map_or(item.name, |a| ident(&a.name));
        let named = from::rename(Named { alias: name, columns, table: None, nullable: false }, alias)?;
        Ok(from::Item {
            visible: named.columns.clone(),
            named: vec![named],
            from: From::Derived(Box::new(select)),
        })
    }
}
