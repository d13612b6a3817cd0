//! Tables made from a query: CREATE TABLE … AS query [WITH [NO] DATA] and
//! SELECT … INTO. The columns are the query's, named by it or by the
//! list written after the table's name.

use snapscale_engine::catalog::ColumnDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast;

use super::{ident, not_supported, relation_name, Binder, Resolver};
use crate::plan::{CreateTable, CreateTableAs, Plan};

/// A SELECT … INTO: its target and the query without it.
pub(super) fn select_into(q: &ast::Query) -> Option<(ast::SelectInto, ast::Query)> {
    let ast::SetExpr::Select(s) = q.body.as_ref() else { return None };
    let into = s.into.clone()?;
    let mut query = q.clone();
    if let ast::SetExpr::Select(s) = query.body.as_mut() {
        s.into = None;
    }
    Some((into, query))
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_table_as(
        &mut self,
        c: &ast::CreateTable,
        query: &ast::Query,
        options: Vec<String>,
    ) -> Result<Plan, SqlError> {
        let names: Vec<String> = self.statement.pre.ctas_columns.take().unwrap_or_default();
        let data = c.with_data.as_ref().is_none_or(|w| w.data);
        let create = CreateTable {
            global: c.global == Some(true),
            if_not_exists: c.if_not_exists,
            options,
            ..CreateTable::named(relation_name(&c.name)?, c.temporary)
        };
        self.table_as(create, &names, query, data, false)
    }

    pub(super) fn select_into(
        &mut self,
        into: ast::SelectInto,
        query: &ast::Query,
    ) -> Result<Plan, SqlError> {
        let ast::SelectInto { temporary, unlogged: _, table: _, targets } = into;
        // PostgreSQL's SELECT INTO names one table (several targets are
        // other dialects' variables).
        let name = match targets.as_slice() {
            [ast::Expr::Identifier(i)] => ident(i),
            [ast::Expr::CompoundIdentifier(parts)] => relation_name(&ast::ObjectName::from(parts.clone()))?,
            _ => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \",\"")),
        };
        self.table_as(CreateTable::named(name, temporary), &[], query, true, true)
    }

    /// The table `create` names, with the columns of `query` (the first
    /// ones renamed by `names`).
    pub(super) fn table_as(
        &mut self,
        mut create: CreateTable,
        names: &[String],
        query: &ast::Query,
        data: bool,
        select_into: bool,
    ) -> Result<Plan, SqlError> {
        let mut select = self.query(query)?;
        let untyped = std::mem::take(&mut self.query.untyped);
        if names.len() > select.columns.len() {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "too many column names were specified"));
        }
        if select.columns.len() > crate::limits::MAX_TABLE_COLUMNS {
            return Err(SqlError::new(
                SqlState::TOO_MANY_COLUMNS,
                format!("tables can have at most {} columns", crate::limits::MAX_TABLE_COLUMNS),
            ));
        }
        let columns = output_columns(&select, names, &untyped, "a column")?;
        if untyped.iter().any(|&i| i < select.outputs.len()) {
            let outputs = std::mem::take(&mut select.outputs);
            select.outputs = outputs
                .into_iter()
                .enumerate()
                .map(|(i, e)| {
                    if untyped.contains(&i) {
                        let typed = super::Typed { e, ty: None };
                        self.coerce(typed, SqlType::Text, super::Coercion::Assignment, "")
                    } else {
                        Ok(e)
                    }
                })
                .collect::<Result<_, _>>()?;
        }
        create.columns = columns;
        let c = CreateTableAs { create, query: select, data, select_into, refresh: None };
        Ok(Plan::CreateTableAs(Box::new(c)))
    }
}

/// The columns a query's outputs make (a table made from it, a view): the
/// first ones named by `names`, each name once, an output of no type of
/// its own text (as PostgreSQL resolves "unknown"); `what` names the
/// column in the refusal of a type that cannot be kept.
pub(super) fn output_columns(
    select: &crate::plan::Select,
    names: &[String],
    untyped: &[usize],
    what: &str,
) -> Result<Vec<ColumnDef>, SqlError> {
    let mut columns: Vec<ColumnDef> = Vec::new();
    for (i, col) in select.columns.iter().enumerate() {
        let name = names.get(i).cloned().unwrap_or_else(|| col.name.clone());
        if columns.iter().any(|c| c.name == name) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_COLUMN,
                format!("column \"{name}\" specified more than once"),
            ));
        }
        let ty = if untyped.contains(&i) { SqlType::Text } else { col.ty };
        if !ty.storable() {
            return Err(not_supported(format!("{what} of type {}", ty.name())));
        }
        columns.push(ColumnDef::plain(name, ty));
    }
    Ok(columns)
}
