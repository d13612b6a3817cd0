//! The binder: sqlparser's AST → [`Plan`]. Resolves relation and column
//! names, infers types (including those of parameters the client left
//! untyped, as pgbench does), coerces literals and parameters to the type
//! their context needs, and picks an access path.

use std::ops::Bound;

use snapscale_lock::LockMode;
use sqlparser::ast::{
    self, AssignmentTarget, BinaryOperator, CharacterLength, DataType, ExactNumberInfo, FromTable,
    FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident, LimitClause, ObjectName,
    OrderByKind, OrderBySort, SelectItem, SetExpr, TableConstraint, TableFactor, TableObject, UnaryOperator,
};

use crate::catalog::ColumnDef;
use crate::error::SqlError;
use crate::expr::{cast, AggFunc, Arith, Cmp, Expr, Func, Step};
use crate::plan::{
    Access, Aggregate, Column, CreateTable, Delete, Dep, Grouping, Insert, InsertSource, NewIndex, Plan,
    Projection, Rel, RowLock, Scan, Select, SortKey, Update,
};
use crate::sqlstate::SqlState;
use crate::stack::StackDepth;
use crate::types::{SqlType, Value};

/// Where the binder finds relations.
pub trait Resolver {
    /// The relation `name` (already normalised), or 42P01.
    fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError>;
}

/// A statement bound for execution.
#[derive(Debug)]
pub struct BoundStatement {
    pub plan: Plan,
    pub params: Vec<SqlType>,
    pub deps: Vec<Dep>,
}

fn not_supported(what: impl std::fmt::Display) -> SqlError {
    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{what} is not supported"))
}

/// An identifier as PostgreSQL folds it: unquoted names are lower-cased.
pub fn ident(i: &Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// A relation name: `name`, `public.name` or `pg_temp.name`.
pub fn relation_name(name: &ObjectName) -> Result<String, SqlError> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(ident).ok_or_else(|| not_supported(format!("relation name {name}"))))
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [n] => Ok(n.clone()),
        [schema, n] if schema == "public" || schema == "pg_temp" => Ok(n.clone()),
        _ => Err(SqlError::new(
            SqlState::UNDEFINED_TABLE,
            format!("relation \"{}\" does not exist", parts.join(".")),
        )),
    }
}

/// A bound expression with its type; `None` is PostgreSQL's "unknown"
/// (a quoted literal, NULL, or an untyped parameter), resolved by context.
struct Typed {
    e: Expr,
    ty: Option<SqlType>,
}

/// Names visible to expressions: at most one relation.
struct Scope<'a> {
    rel: Option<(&'a str, &'a Rel)>,
}

/// How casts are applied (PostgreSQL's coercion contexts).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Coercion {
    Implicit,
    Assignment,
    Explicit,
}

struct Binder<'r, R> {
    resolver: &'r mut R,
    /// The recursion's root (`max_stack_depth`).
    stack: StackDepth,
    params: Vec<Option<SqlType>>,
    deps: Vec<Dep>,
    /// Aggregates found while binding the current SELECT's expressions;
    /// `None` where aggregates are not allowed.
    aggs: Option<Vec<Aggregate>>,
}

/// Binds `statement`. `param_types` are the types the client declared
/// (`None` for "infer"); recursion stops at `max_stack_depth` bytes of
/// stack with 54001.
pub fn bind<R: Resolver>(
    resolver: &mut R,
    statement: &ast::Statement,
    param_types: &[Option<SqlType>],
    max_stack_depth: usize,
) -> Result<BoundStatement, SqlError> {
    let mut b = Binder {
        resolver,
        stack: StackDepth::here(max_stack_depth),
        params: param_types.to_vec(),
        deps: Vec::new(),
        aggs: None,
    };
    let plan = b.statement(statement)?;
    // Parameters nothing constrained are text, as PostgreSQL resolves
    // "unknown".
    let params = b.params.iter().map(|t| t.unwrap_or(SqlType::Text)).collect();
    Ok(BoundStatement { plan, params, deps: b.deps })
}

impl<R: Resolver> Binder<'_, R> {
    fn rel(&mut self, name: &ObjectName, mode: LockMode) -> Result<Rel, SqlError> {
        let n = relation_name(name)?;
        let rel = self.resolver.resolve(&n)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{n}\" does not exist"))
        })?;
        self.dep(&n, &rel, mode);
        Ok(rel)
    }

    fn dep(&mut self, name: &str, rel: &Rel, mode: LockMode) {
        self.deps.push(Dep { name: name.to_owned(), rel: rel.clone(), mode });
    }

    fn statement(&mut self, s: &ast::Statement) -> Result<Plan, SqlError> {
        use ast::Statement as S;
        match s {
            S::Query(q) => Ok(Plan::Select(self.query(q)?)),
            S::Insert(i) => self.insert(i),
            S::Update(u) => self.update(u),
            S::Delete(d) => self.delete(d),
            S::CreateTable(c) => self.create_table(c),
            S::Drop { object_type: ast::ObjectType::Table, if_exists, names, .. } => {
                let mut targets = Vec::new();
                for name in names {
                    let n = relation_name(name)?;
                    match self.resolver.resolve(&n)? {
                        Some(rel) => {
                            self.dep(&n, &rel, LockMode::AccessExclusive);
                            targets.push((n, Some(rel)));
                        }
                        None if *if_exists => targets.push((n, None)),
                        None => {
                            return Err(SqlError::new(
                                SqlState::UNDEFINED_TABLE,
                                format!("table \"{n}\" does not exist"),
                            ))
                        }
                    }
                }
                Ok(Plan::DropTable(targets))
            }
            S::Drop { object_type, .. } => Err(not_supported(format!("DROP {object_type}"))),
            S::AlterTable(a) => self.alter_table(a),
            S::CreateIndex(c) => self.create_index(c),
            S::Truncate(t) => {
                let rels = t
                    .table_names
                    .iter()
                    .map(|t| self.rel(&t.name, LockMode::AccessExclusive))
                    .collect::<Result<_, _>>()?;
                Ok(Plan::Truncate(rels))
            }
            other => {
                let text = other.to_string();
                let kind: Vec<&str> = text.split_whitespace().take(2).collect();
                Err(not_supported(kind.join(" ").to_uppercase()))
            }
        }
    }

    // ---------------------------------------------------------------- DDL

    fn create_table(&mut self, c: &ast::CreateTable) -> Result<Plan, SqlError> {
        if c.query.is_some() {
            return Err(not_supported("CREATE TABLE AS"));
        }
        let name = relation_name(&c.name)?;
        let mut columns: Vec<ColumnDef> = Vec::new();
        let mut indexes = Vec::new();
        for col in &c.columns {
            let cname = ident(&col.name);
            if columns.iter().any(|c| c.name == cname) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{cname}\" specified more than once"),
                ));
            }
            let ty = data_type(&col.data_type)?;
            let mut not_null = false;
            for opt in &col.options {
                match &opt.option {
                    ast::ColumnOption::Null => {}
                    ast::ColumnOption::NotNull => not_null = true,
                    ast::ColumnOption::PrimaryKey(_) => {
                        not_null = true;
                        indexes.push((vec![cname.clone()], true, true));
                    }
                    ast::ColumnOption::Unique(_) => indexes.push((vec![cname.clone()], true, false)),
                    other => return Err(not_supported(format!("column option {other}"))),
                }
            }
            columns.push(ColumnDef { name: cname, ty, not_null });
        }
        for constraint in &c.constraints {
            match constraint {
                TableConstraint::PrimaryKey(pk) => {
                    indexes.push((index_columns(&pk.columns)?, true, true));
                }
                TableConstraint::Unique(u) => indexes.push((index_columns(&u.columns)?, true, false)),
                other => return Err(not_supported(format!("constraint {other}"))),
            }
        }
        let mut new_indexes = Vec::new();
        for (names, unique, primary) in indexes {
            if primary && new_indexes.iter().any(|i: &NewIndex| i.primary) {
                return Err(SqlError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    format!("multiple primary keys for table \"{name}\" are not allowed"),
                ));
            }
            let mut positions = Vec::new();
            for n in &names {
                let p = columns.iter().position(|c| &c.name == n).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{n}\" named in key does not exist"),
                    )
                })?;
                if primary {
                    columns[p].not_null = true;
                }
                positions.push(p);
            }
            let index_name = index_name(&name, &names, primary, unique);
            new_indexes.push(NewIndex { name: index_name, columns: positions, unique, primary });
        }
        Ok(Plan::CreateTable(CreateTable {
            name,
            temp: c.temporary,
            if_not_exists: c.if_not_exists,
            columns,
            indexes: new_indexes,
        }))
    }

    fn alter_table(&mut self, a: &ast::AlterTable) -> Result<Plan, SqlError> {
        let [ast::AlterTableOperation::AddConstraint { constraint, .. }] = a.operations.as_slice() else {
            return Err(not_supported("this form of ALTER TABLE"));
        };
        let rel = self.rel(&a.name, LockMode::AccessExclusive)?;
        let (names, primary, given) = match constraint {
            TableConstraint::PrimaryKey(pk) => (index_columns(&pk.columns)?, true, pk.name.as_ref()),
            TableConstraint::Unique(u) => (index_columns(&u.columns)?, false, u.name.as_ref()),
            other => return Err(not_supported(format!("ALTER TABLE ADD {other}"))),
        };
        let columns = key_positions(&rel, &names)?;
        let name = given.map(ident).unwrap_or_else(|| index_name(&rel.entry.name, &names, primary, true));
        Ok(Plan::AddIndex {
            rel,
            index: NewIndex { name, columns, unique: true, primary },
            if_not_exists: false,
            tag: "ALTER TABLE",
        })
    }

    fn create_index(&mut self, c: &ast::CreateIndex) -> Result<Plan, SqlError> {
        if c.predicate.is_some() || !c.include.is_empty() || c.concurrently {
            return Err(not_supported("this form of CREATE INDEX"));
        }
        let rel = self.rel(&c.table_name, LockMode::Share)?;
        let names = index_columns(&c.columns)?;
        let columns = key_positions(&rel, &names)?;
        let name = match &c.name {
            Some(n) => relation_name(n)?,
            None => index_name(&rel.entry.name, &names, false, false),
        };
        Ok(Plan::AddIndex {
            rel,
            index: NewIndex { name, columns, unique: c.unique, primary: false },
            if_not_exists: c.if_not_exists,
            tag: "CREATE INDEX",
        })
    }

    // ---------------------------------------------------------------- DML

    fn insert(&mut self, i: &ast::Insert) -> Result<Plan, SqlError> {
        if i.on.is_some() {
            return Err(not_supported("INSERT ... ON CONFLICT"));
        }
        let TableObject::TableName(name) = &i.table else {
            return Err(not_supported("INSERT into a function"));
        };
        let rel = self.rel(name, LockMode::RowExclusive)?;
        let targets: Vec<usize> = if i.columns.is_empty() {
            (0..rel.entry.columns.len()).collect()
        } else {
            i.columns
                .iter()
                .map(|c| {
                    let n = c.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
                    rel.entry.column(&n).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{n}\" of relation \"{}\" does not exist", rel.entry.name),
                        )
                    })
                })
                .collect::<Result<_, _>>()?
        };
        let Some(source) = &i.source else { return Err(not_supported("INSERT ... DEFAULT VALUES")) };
        // Without a column list, a shorter VALUES row fills the leading
        // columns (the rest take their defaults: NULL here).
        let mut targets = targets;
        if i.columns.is_empty() {
            if let SetExpr::Values(values) = source.body.as_ref() {
                let widest = values.rows.iter().map(|r| r.content.len()).max().unwrap_or(0);
                if widest < targets.len() {
                    targets.truncate(widest);
                }
            }
        }
        let source = match source.body.as_ref() {
            SetExpr::Values(values) if source.order_by.is_none() && source.limit_clause.is_none() => {
                let mut rows = Vec::new();
                for row in &values.rows {
                    let row = &row.content;
                    if row.len() > targets.len() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "INSERT has more expressions than target columns",
                        ));
                    }
                    if row.len() < targets.len() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "INSERT has more target columns than expressions",
                        ));
                    }
                    let scope = Scope { rel: None };
                    let mut bound = Vec::new();
                    for (e, &t) in row.iter().zip(&targets) {
                        let col = &rel.entry.columns[t];
                        let typed = self.expr(e, &scope)?;
                        bound.push(self.coerce_to_column(typed, col)?);
                    }
                    rows.push(bound);
                }
                InsertSource::Values(rows)
            }
            _ => {
                let mut q = self.query(source)?;
                if q.outputs.len() != targets.len() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        if q.outputs.len() > targets.len() {
                            "INSERT has more expressions than target columns"
                        } else {
                            "INSERT has more target columns than expressions"
                        },
                    ));
                }
                let outputs = std::mem::take(&mut q.outputs);
                q.outputs = outputs
                    .into_iter()
                    .zip(q.columns.iter())
                    .zip(&targets)
                    .map(|((e, c), &t)| {
                        let col = &rel.entry.columns[t];
                        self.coerce_to_column(Typed { e, ty: Some(c.ty) }, col)
                    })
                    .collect::<Result<_, _>>()?;
                InsertSource::Query(Box::new(q))
            }
        };
        let returning = self.returning(i.returning.as_deref(), &rel, name)?;
        Ok(Plan::Insert(Insert { rel, targets, source, returning }))
    }

    fn update(&mut self, u: &ast::Update) -> Result<Plan, SqlError> {
        if u.from.is_some() || !u.table.joins.is_empty() {
            return Err(not_supported("UPDATE ... FROM"));
        }
        let (rel, alias) = self.table_factor(&u.table.relation, LockMode::RowExclusive)?;
        let scope = Scope { rel: Some((&alias, &rel)) };
        let mut sets = Vec::new();
        for a in &u.assignments {
            let AssignmentTarget::ColumnName(c) = &a.target else {
                return Err(not_supported("multiple-column UPDATE SET"));
            };
            let n = c.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
            let pos = rel.entry.column(&n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" of relation \"{}\" does not exist", rel.entry.name),
                )
            })?;
            let typed = self.expr(&a.value, &scope)?;
            sets.push((pos, self.coerce_to_column(typed, &rel.entry.columns[pos])?));
        }
        let scan = self.scan(rel.clone(), u.selection.as_ref(), &scope)?;
        let returning = self.returning_scoped(u.returning.as_deref(), &scope)?;
        Ok(Plan::Update(Update { scan, sets, returning }))
    }

    fn delete(&mut self, d: &ast::Delete) -> Result<Plan, SqlError> {
        let from = match &d.from {
            FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
        };
        if d.using.is_some() || from.len() != 1 || !from[0].joins.is_empty() {
            return Err(not_supported("DELETE ... USING"));
        }
        let (rel, alias) = self.table_factor(&from[0].relation, LockMode::RowExclusive)?;
        let scope = Scope { rel: Some((&alias, &rel)) };
        let scan = self.scan(rel.clone(), d.selection.as_ref(), &scope)?;
        let returning = self.returning_scoped(d.returning.as_deref(), &scope)?;
        Ok(Plan::Delete(Delete { scan, returning }))
    }

    fn returning(
        &mut self,
        items: Option<&[SelectItem]>,
        rel: &Rel,
        name: &ObjectName,
    ) -> Result<Option<Projection>, SqlError> {
        let alias = relation_name(name)?;
        let scope = Scope { rel: Some((&alias, rel)) };
        self.returning_scoped(items, &scope)
    }

    fn returning_scoped(
        &mut self,
        items: Option<&[SelectItem]>,
        scope: &Scope<'_>,
    ) -> Result<Option<Projection>, SqlError> {
        let Some(items) = items else { return Ok(None) };
        let (exprs, columns) = self.projection(items, scope)?;
        Ok(Some(Projection { exprs, columns: columns.into() }))
    }

    fn table_factor(&mut self, t: &TableFactor, mode: LockMode) -> Result<(Rel, String), SqlError> {
        let TableFactor::Table { name, alias, args: None, .. } = t else {
            return Err(not_supported("this kind of FROM item"));
        };
        let rel = self.rel(name, mode)?;
        let alias = match alias {
            Some(a) => ident(&a.name),
            None => relation_name(name)?,
        };
        Ok((rel, alias))
    }

    // ------------------------------------------------------------- SELECT

    fn query(&mut self, q: &ast::Query) -> Result<Select, SqlError> {
        if q.with.is_some() {
            return Err(not_supported("WITH"));
        }
        if q.fetch.is_some() {
            return Err(not_supported("FETCH FIRST"));
        }
        let select = match q.body.as_ref() {
            SetExpr::Select(s) => s,
            SetExpr::Query(inner)
                if q.order_by.is_none() && q.limit_clause.is_none() && q.locks.is_empty() =>
            {
                return self.query(inner);
            }
            SetExpr::Values(_) => return Err(not_supported("VALUES as a query")),
            SetExpr::SetOperation { op, .. } => return Err(not_supported(op.to_string().to_uppercase())),
            _ => return Err(not_supported("this kind of query")),
        };
        if select.distinct.is_some() {
            return Err(not_supported("SELECT DISTINCT"));
        }
        if select.into.is_some() {
            return Err(not_supported("SELECT INTO"));
        }
        let lock = !q.locks.is_empty();
        let mode = if lock { LockMode::RowShare } else { LockMode::AccessShare };
        let from = match select.from.as_slice() {
            [] => None,
            [t] if t.joins.is_empty() => Some(self.table_factor(&t.relation, mode)?),
            _ => return Err(not_supported("joins")),
        };
        if lock && from.is_none() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "FOR UPDATE must specify unqualified relation names",
            ));
        }
        let row_lock = match &from {
            Some((_, alias)) if lock => Some(row_lock(&q.locks, alias)?),
            _ => None,
        };
        let scope = Scope { rel: from.as_ref().map(|(r, a)| (a.as_str(), r)) };
        // Aggregates are allowed in the select list, HAVING and ORDER BY.
        let outer_aggs = self.aggs.replace(Vec::new());
        let (mut outputs, columns) = self.projection(&select.projection, &scope)?;
        let group_exprs = match &select.group_by {
            GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs,
            _ => return Err(not_supported("GROUP BY ALL")),
        };
        let mut keys = Vec::new();
        for g in group_exprs {
            // GROUP BY 1 refers to the first output column.
            if let Some(n) = position_literal(g) {
                let e = outputs.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("GROUP BY position {n} is not in select list"),
                    )
                })?;
                keys.push(e);
            } else {
                let saved = self.aggs.take();
                let k = self.expr(g, &scope)?;
                self.aggs = saved;
                keys.push(k.e);
            }
        }
        let having = match &select.having {
            Some(h) => {
                let t = self.expr(h, &scope)?;
                Some(self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of HAVING")?)
            }
            None => None,
        };
        let mut order = Vec::new();
        if let Some(ob) = &q.order_by {
            let OrderByKind::Expressions(items) = &ob.kind else { return Err(not_supported("ORDER BY ALL")) };
            for item in items {
                let expr = if let Some(n) = position_literal(&item.expr) {
                    outputs.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                        SqlError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {n} is not in select list"),
                        )
                    })?
                } else if let Some(i) = output_named(&item.expr, &columns) {
                    outputs[i].clone()
                } else {
                    self.expr(&item.expr, &scope)?.e
                };
                let desc = matches!(item.options.sort, Some(OrderBySort::Desc));
                if matches!(item.options.sort, Some(OrderBySort::Using(_))) {
                    return Err(not_supported("ORDER BY USING"));
                }
                order.push(SortKey { expr, desc, nulls_first: item.options.nulls_first.unwrap_or(desc) });
            }
        }
        let aggs = std::mem::replace(&mut self.aggs, outer_aggs).unwrap_or_default();
        let grouping = if keys.is_empty() && aggs.is_empty() && having.is_none() {
            None
        } else {
            let grouper = Grouper { keys: &keys, scope: &scope, stack: self.stack };
            for e in outputs.iter_mut() {
                *e = grouper.rewrite(std::mem::replace(e, Expr::Const(Value::Null)))?;
            }
            for k in &mut order {
                k.expr = grouper.rewrite(std::mem::replace(&mut k.expr, Expr::Const(Value::Null)))?;
            }
            let having = having.map(|h| grouper.rewrite(h)).transpose()?;
            Some(Grouping { keys, aggs, having })
        };
        if lock && grouping.is_some() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "FOR UPDATE is not allowed with GROUP BY clause",
            ));
        }
        let (limit, offset) = match &q.limit_clause {
            None => (None, None),
            Some(LimitClause::LimitOffset { limit, offset, limit_by }) if limit_by.is_empty() => {
                let limit = limit.as_ref().map(|l| self.count_expr(l, "LIMIT")).transpose()?.flatten();
                let offset =
                    offset.as_ref().map(|o| self.count_expr(&o.value, "OFFSET")).transpose()?.flatten();
                (limit, offset)
            }
            Some(_) => return Err(not_supported("this LIMIT syntax")),
        };
        let scan = match &from {
            Some((rel, _)) => Some(self.scan(rel.clone(), select.selection.as_ref(), &scope)?),
            None => {
                if let Some(w) = &select.selection {
                    let t = self.expr(w, &scope)?;
                    let filter = self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of WHERE")?;
                    // No FROM: one empty row, filtered by WHERE.
                    let _ = filter;
                    return Err(not_supported("WHERE without FROM"));
                }
                None
            }
        };
        Ok(Select { scan, grouping, outputs, columns: columns.into(), order, limit, offset, lock: row_lock })
    }

    /// LIMIT / OFFSET: a bigint expression; `LIMIT ALL` / `NULL` is none.
    fn count_expr(&mut self, e: &ast::Expr, what: &str) -> Result<Option<Expr>, SqlError> {
        let scope = Scope { rel: None };
        let t = self.expr(e, &scope)?;
        if matches!(t.e, Expr::Const(Value::Null)) {
            return Ok(None);
        }
        Ok(Some(self.coerce(t, SqlType::Int8, Coercion::Implicit, &format!("argument of {what}"))?))
    }

    fn projection(
        &mut self,
        items: &[SelectItem],
        scope: &Scope<'_>,
    ) -> Result<(Vec<Expr>, Vec<Column>), SqlError> {
        let mut outputs = Vec::new();
        let mut columns = Vec::new();
        for item in items {
            match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                    let Some((_, rel)) = scope.rel else {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "SELECT * with no tables specified is not valid",
                        ));
                    };
                    for (i, c) in rel.entry.columns.iter().enumerate() {
                        outputs.push(Expr::Column(i));
                        columns.push(Column { name: c.name.clone(), ty: c.ty });
                    }
                }
                SelectItem::UnnamedExpr(e) => {
                    let t = self.expr(e, scope)?;
                    let ty = t.ty.unwrap_or(SqlType::Text);
                    let e2 = self.settle(t)?;
                    outputs.push(e2);
                    columns.push(Column { name: column_name(e), ty });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let t = self.expr(expr, scope)?;
                    let ty = t.ty.unwrap_or(SqlType::Text);
                    outputs.push(self.settle(t)?);
                    columns.push(Column { name: ident(alias), ty });
                }
                SelectItem::ExprWithAliases { .. } => return Err(not_supported("multiple aliases")),
            }
        }
        Ok((outputs, columns))
    }

    /// An output of unknown type becomes text (PostgreSQL resolves
    /// "unknown" outputs to text).
    fn settle(&mut self, t: Typed) -> Result<Expr, SqlError> {
        match t.ty {
            Some(_) => Ok(t.e),
            None => self.coerce(t, SqlType::Text, Coercion::Implicit, "output"),
        }
    }

    /// The rows of `rel` passing `selection`, and how to find them.
    fn scan(&mut self, rel: Rel, selection: Option<&ast::Expr>, scope: &Scope<'_>) -> Result<Scan, SqlError> {
        let saved = self.aggs.take();
        let filter = match selection {
            Some(w) => {
                let t = self.expr(w, scope);
                let t = match t {
                    Err(e) if e.code == SqlState::GROUPING_ERROR => {
                        return Err(SqlError::new(
                            SqlState::GROUPING_ERROR,
                            "aggregate functions are not allowed in WHERE",
                        ))
                    }
                    other => other?,
                };
                Some(self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of WHERE")?)
            }
            None => None,
        };
        self.aggs = saved;
        let access = filter.as_ref().map_or(Access::Seq, |f| choose_access(&rel, f));
        Ok(Scan { rel, access, filter })
    }

    // -------------------------------------------------------- expressions

    fn column(&self, parts: &[&Ident], scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let (qualifier, name) = match parts {
            [c] => (None, ident(c)),
            [q, c] => (Some(ident(q)), ident(c)),
            _ => return Err(not_supported("qualified column names with a schema")),
        };
        let missing = || {
            let shown = match &qualifier {
                Some(q) => format!("{q}.{name}"),
                None => name.clone(),
            };
            SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{shown}\" does not exist"))
        };
        let Some((alias, rel)) = scope.rel else { return Err(missing()) };
        if let Some(q) = &qualifier {
            if q != alias {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ));
            }
        }
        let i = rel.entry.column(&name).ok_or_else(missing)?;
        Ok(Typed { e: Expr::Column(i), ty: Some(rel.entry.columns[i].ty) })
    }

    /// Binds an expression. This is the one recursion over sqlparser's
    /// expressions, so it checks `max_stack_depth` and stays a small frame:
    /// each kind of expression is bound in a function of its own, kept out
    /// of line, so that a nest costs only the frames of the kinds it nests.
    fn expr(&mut self, e: &ast::Expr, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        use ast::Expr as E;
        if let Err(e) = self.stack.check() {
            return Err(e);
        }
        // Parentheses change nothing once parsed: no recursion for them.
        let mut e = e;
        while let E::Nested(inner) = e {
            e = inner;
        }
        match e {
            E::Identifier(i) => self.column(&[i], scope),
            E::CompoundIdentifier(parts) => self.compound_column(parts, scope),
            E::Value(v) => self.literal(&v.value),
            E::TypedString(ts) => typed_string(ts),
            E::Cast { expr, data_type: dt, .. } => self.cast(expr, dt, scope),
            E::UnaryOp { op, expr } => self.unary(op, expr, scope),
            E::BinaryOp { left, op, right } => self.binary(left, op, right, scope),
            E::IsNull(x) => self.is_null(x, false, scope),
            E::IsNotNull(x) => self.is_null(x, true, scope),
            E::Between { expr, negated, low, high } => self.between(expr, *negated, low, high, scope),
            E::InList { expr, list, negated } => self.in_list(expr, list, *negated, scope),
            E::Like { negated, expr, pattern, escape_char: None, any: false } => {
                self.like(expr, pattern, *negated, scope)
            }
            E::Function(f) => self.function(f, scope),
            other => Err(unsupported_expression(other)),
        }
    }

    #[inline(never)]
    fn compound_column(&mut self, parts: &[Ident], scope: &Scope<'_>) -> Result<Typed, SqlError> {
        self.column(&parts.iter().collect::<Vec<_>>(), scope)
    }

    #[inline(never)]
    fn cast(&mut self, e: &ast::Expr, dt: &DataType, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let ty = data_type(dt)?;
        let t = self.expr(e, scope)?;
        Ok(Typed { e: self.coerce(t, ty, Coercion::Explicit, "cast")?, ty: Some(ty) })
    }

    #[inline(never)]
    fn unary(&mut self, op: &UnaryOperator, e: &ast::Expr, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        match op {
            UnaryOperator::Minus => {
                // A negative literal is one constant (so -2147483648 fits int4).
                if let ast::Expr::Value(v) = e {
                    if let ast::Value::Number(n, _) = &v.value {
                        return self.literal(&ast::Value::Number(format!("-{n}"), false));
                    }
                }
                let t = self.expr(e, scope)?;
                let ty = match t.ty {
                    Some(ty @ (SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Float8)) => ty,
                    None => SqlType::Int4,
                    Some(other) => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: - {}", other.name()),
                        ))
                    }
                };
                let inner = self.coerce(t, ty, Coercion::Implicit, "operand")?;
                Ok(Typed { e: Expr::Neg(Box::new(inner), ty), ty: Some(ty) })
            }
            UnaryOperator::Plus => self.expr(e, scope),
            UnaryOperator::Not => {
                let t = self.expr(e, scope)?;
                let inner = self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of NOT")?;
                Ok(Typed { e: Expr::Not(Box::new(inner)), ty: Some(SqlType::Bool) })
            }
            other => Err(not_supported(format!("operator {other}"))),
        }
    }

    #[inline(never)]
    fn is_null(&mut self, e: &ast::Expr, negated: bool, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let t = self.expr(e, scope)?;
        let inner = self.settle(t)?;
        Ok(Typed { e: Expr::IsNull(Box::new(inner), negated), ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    fn between(
        &mut self,
        e: &ast::Expr,
        negated: bool,
        low: &ast::Expr,
        high: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let ge = self.compare(e, Cmp::Ge, low, scope)?;
        let le = self.compare(e, Cmp::Le, high, scope)?;
        let both = Expr::And(vec![ge, le]);
        let e = if negated { Expr::Not(Box::new(both)) } else { both };
        Ok(Typed { e, ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    fn in_list(
        &mut self,
        e: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let t = self.expr(e, scope)?;
        let mut ty = t.ty;
        let mut bound = Vec::with_capacity(list.len());
        for item in list {
            let it = self.expr(item, scope)?;
            if ty.is_none() {
                ty = it.ty;
            }
            bound.push(it);
        }
        let ty = ty.unwrap_or(SqlType::Text);
        let lhs = self.coerce(t, ty, Coercion::Implicit, "IN")?;
        let mut items = Vec::with_capacity(bound.len());
        for it in bound {
            items.push(self.coerce(it, ty, Coercion::Implicit, "IN")?);
        }
        Ok(Typed { e: Expr::InList(Box::new(lhs), items, negated), ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    fn like(
        &mut self,
        e: &ast::Expr,
        pattern: &ast::Expr,
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let a = self.expr(e, scope)?;
        let a = self.coerce(a, SqlType::Text, Coercion::Implicit, "LIKE")?;
        let p = self.expr(pattern, scope)?;
        let p = self.coerce(p, SqlType::Text, Coercion::Implicit, "LIKE")?;
        Ok(Typed { e: Expr::Like(Box::new(a), Box::new(p), negated), ty: Some(SqlType::Bool) })
    }

    fn literal(&mut self, v: &ast::Value) -> Result<Typed, SqlError> {
        Ok(match v {
            ast::Value::Number(n, _) => {
                if let Ok(i) = n.parse::<i64>() {
                    let ty = if i32::try_from(i).is_ok() { SqlType::Int4 } else { SqlType::Int8 };
                    Typed { e: Expr::Const(Value::Int(i)), ty: Some(ty) }
                } else {
                    // PostgreSQL types these as numeric; without numeric,
                    // double precision is the closest we have.
                    let f = Value::parse(SqlType::Float8, n)?;
                    Typed { e: Expr::Const(f), ty: Some(SqlType::Float8) }
                }
            }
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                Typed { e: Expr::Const(Value::Text(s.clone())), ty: None }
            }
            ast::Value::Boolean(b) => Typed { e: Expr::Const(Value::Bool(*b)), ty: Some(SqlType::Bool) },
            ast::Value::Null => Typed { e: Expr::Const(Value::Null), ty: None },
            ast::Value::Placeholder(p) => {
                let n: usize =
                    p.strip_prefix('$').and_then(|d| d.parse().ok()).filter(|&n| n >= 1).ok_or_else(
                        || SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{p}\"")),
                    )?;
                if n > 65535 {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_PARAMETER,
                        format!("there is no parameter ${n}"),
                    ));
                }
                if self.params.len() < n {
                    self.params.resize(n, None);
                }
                Typed { e: Expr::Param(n - 1), ty: self.params[n - 1] }
            }
            other => return Err(not_supported(format!("literal {other}"))),
        })
    }

    fn compare(
        &mut self,
        l: &ast::Expr,
        op: Cmp,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        let a = self.expr(l, scope)?;
        let b = self.expr(r, scope)?;
        self.compare_typed(a, op, b)
    }

    fn compare_typed(&mut self, a: Typed, op: Cmp, b: Typed) -> Result<Expr, SqlError> {
        let ty = match (a.ty, b.ty) {
            (Some(x), Some(y)) => {
                if !comparable(x, y) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {} {}", x.name(), cmp_symbol(op), y.name()),
                    ));
                }
                None
            }
            (Some(x), None) | (None, Some(x)) => Some(x),
            (None, None) => Some(SqlType::Text),
        };
        let bpchar = matches!(a.ty, Some(SqlType::Char(_))) || matches!(b.ty, Some(SqlType::Char(_)));
        let (ea, eb) = match ty {
            Some(t) => {
                let t = if let SqlType::Char(_) | SqlType::Varchar(_) = t { SqlType::Text } else { t };
                (
                    self.coerce(a, t, Coercion::Implicit, "operand")?,
                    self.coerce(b, t, Coercion::Implicit, "operand")?,
                )
            }
            None => (a.e, b.e),
        };
        Ok(Expr::Compare(Box::new(ea), op, Box::new(eb), bpchar))
    }

    #[inline(never)]
    fn binary(
        &mut self,
        l: &ast::Expr,
        op: &BinaryOperator,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let cmp = match op {
            BinaryOperator::Eq => Some(Cmp::Eq),
            BinaryOperator::NotEq => Some(Cmp::Ne),
            BinaryOperator::Lt => Some(Cmp::Lt),
            BinaryOperator::LtEq => Some(Cmp::Le),
            BinaryOperator::Gt => Some(Cmp::Gt),
            BinaryOperator::GtEq => Some(Cmp::Ge),
            _ => None,
        };
        match cmp {
            Some(c) => self.comparison(l, c, r, scope),
            None if is_chain_operator(op) => self.chain(l, op, r, scope),
            None => Err(unsupported_operator(op)),
        }
    }

    #[inline(never)]
    fn comparison(
        &mut self,
        l: &ast::Expr,
        c: Cmp,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        Ok(Typed { e: self.compare(l, c, r, scope)?, ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    fn chain(
        &mut self,
        l: &ast::Expr,
        op: &BinaryOperator,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        // sqlparser builds `a + b + c` left-deep, ((a + b) + c), however
        // long: walk down the left spine without recursing, then fold the
        // operands left to right. Parentheses on the spine change nothing:
        // `(a + b) * c` folds as a + b, then * c.
        let mut rights = vec![(op, r)];
        let mut leftmost = l;
        loop {
            while let ast::Expr::Nested(inner) = leftmost {
                leftmost = inner;
            }
            match leftmost {
                ast::Expr::BinaryOp { left, op, right } if is_chain_operator(op) => {
                    rights.push((op, right));
                    leftmost = left;
                }
                _ => break,
            }
        }
        let mut acc = self.expr(leftmost, scope)?;
        for (op, right) in rights.into_iter().rev() {
            let b = self.expr(right, scope)?;
            acc = self.chain_step(acc, op, b)?;
        }
        Ok(acc)
    }

    /// `a op b` for one link of a chain: AND/OR join one flat list, and
    /// arithmetic and `||` grow one [`Expr::Chain`].
    #[inline(never)]
    fn chain_step(&mut self, a: Typed, op: &BinaryOperator, b: Typed) -> Result<Typed, SqlError> {
        match op {
            BinaryOperator::And | BinaryOperator::Or => {
                let ea = self.coerce(a, SqlType::Bool, Coercion::Implicit, "argument of AND/OR")?;
                let eb = self.coerce(b, SqlType::Bool, Coercion::Implicit, "argument of AND/OR")?;
                Ok(Typed { e: ea.junction(eb, *op == BinaryOperator::Or), ty: Some(SqlType::Bool) })
            }
            BinaryOperator::StringConcat => {
                let ea = self.coerce_any_text(a)?;
                let eb = self.coerce_any_text(b)?;
                Ok(Typed { e: flat(ea).then(Step::Concat(eb)), ty: Some(SqlType::Text) })
            }
            _ => {
                let arith = match op {
                    BinaryOperator::Plus => Arith::Add,
                    BinaryOperator::Minus => Arith::Sub,
                    BinaryOperator::Multiply => Arith::Mul,
                    BinaryOperator::Divide => Arith::Div,
                    _ => Arith::Rem,
                };
                let (ta, tb) = match (a.ty, b.ty) {
                    (Some(x), Some(y)) => (x, y),
                    (Some(x), None) => (x, if x == SqlType::Date { SqlType::Int4 } else { x }),
                    (None, Some(y)) => (y, y),
                    (None, None) => {
                        return Err(SqlError::new(
                            SqlState::AMBIGUOUS_FUNCTION,
                            format!("operator is not unique: unknown {op} unknown"),
                        ))
                    }
                };
                let result = arith_type(ta, arith, tb).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {op} {}", ta.name(), tb.name()),
                    )
                })?;
                let ea = self.coerce(a, ta, Coercion::Implicit, "operand")?;
                let eb = self.coerce(b, tb, Coercion::Implicit, "operand")?;
                Ok(Typed { e: flat(ea).then(Step::Arith(arith, eb, result)), ty: Some(result) })
            }
        }
    }

    fn coerce_any_text(&mut self, t: Typed) -> Result<Expr, SqlError> {
        match t.ty {
            None | Some(SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_)) => {
                self.coerce(t, SqlType::Text, Coercion::Implicit, "operand")
            }
            Some(_) => Ok(Expr::Cast(Box::new(t.e), SqlType::Text, true)),
        }
    }

    #[inline(never)]
    fn function(&mut self, f: &ast::Function, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let name = f.name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
        if f.over.is_some() {
            return Err(not_supported("window functions"));
        }
        let (star, args, distinct) = match &f.args {
            FunctionArguments::None => (false, Vec::new(), false),
            FunctionArguments::List(list) => {
                let mut star = false;
                let mut args = Vec::new();
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => star = true,
                        _ => return Err(not_supported(format!("argument {a}"))),
                    }
                }
                (star, args, list.duplicate_treatment.is_some_and(|d| d == ast::DuplicateTreatment::Distinct))
            }
            FunctionArguments::Subquery(_) => return Err(not_supported("subqueries")),
        };
        let agg = match name.as_str() {
            "count" if star => Some(AggFunc::CountStar),
            "count" => Some(AggFunc::Count),
            "sum" => Some(AggFunc::Sum),
            "min" => Some(AggFunc::Min),
            "max" => Some(AggFunc::Max),
            "avg" => Some(AggFunc::Avg),
            _ => None,
        };
        if let Some(func) = agg {
            if distinct {
                return Err(not_supported("aggregates with DISTINCT"));
            }
            if self.aggs.is_none() {
                return Err(SqlError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate functions are not allowed here",
                ));
            }
            let arg = match (func, args.as_slice()) {
                (AggFunc::CountStar, []) => None,
                (_, [a]) => {
                    // Aggregates do not nest.
                    let saved = self.aggs.take();
                    let t = self.expr(a, scope);
                    self.aggs = saved;
                    let t = t.map_err(|e| {
                        if e.code == SqlState::GROUPING_ERROR {
                            SqlError::new(
                                SqlState::GROUPING_ERROR,
                                "aggregate function calls cannot be nested",
                            )
                        } else {
                            e
                        }
                    })?;
                    Some(t)
                }
                _ => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name} with {} arguments does not exist", args.len()),
                    ))
                }
            };
            let arg_ty = arg.as_ref().map(|t| t.ty.unwrap_or(SqlType::Text));
            let ty = match (func, arg_ty) {
                (AggFunc::CountStar | AggFunc::Count, _) => SqlType::Int8,
                (AggFunc::Sum, Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8)) => SqlType::Int8,
                (
                    AggFunc::Sum | AggFunc::Avg,
                    Some(SqlType::Float8 | SqlType::Int2 | SqlType::Int4 | SqlType::Int8),
                ) => SqlType::Float8,
                (AggFunc::Min | AggFunc::Max, Some(t)) => t,
                (_, t) => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.map_or("unknown", SqlType::name)),
                    ))
                }
            };
            let arg = match arg {
                Some(t) => Some(self.settle(t)?),
                None => None,
            };
            let aggs = self.aggs.as_mut().expect("checked above");
            let slot = match aggs.iter().position(|a| a.func == func && a.arg == arg) {
                Some(i) => i,
                None => {
                    aggs.push(Aggregate { func, arg, ty });
                    aggs.len() - 1
                }
            };
            return Ok(Typed { e: Expr::Agg(slot), ty: Some(ty) });
        }
        let mut bound = Vec::new();
        for a in args {
            bound.push(self.expr(a, scope)?);
        }
        let one_arg = |bound: &Vec<Typed>| -> Result<(), SqlError> {
            if bound.len() == 1 {
                Ok(())
            } else {
                Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name} with {} arguments does not exist", bound.len()),
                ))
            }
        };
        Ok(match name.as_str() {
            "now" | "current_timestamp" | "localtimestamp" | "transaction_timestamp" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::Now, Vec::new()), ty: Some(SqlType::Timestamp) }
            }
            "abs" => {
                one_arg(&bound)?;
                let t = bound.pop().expect("one argument");
                let ty = t.ty.unwrap_or(SqlType::Float8);
                let e = self.coerce(t, ty, Coercion::Implicit, "abs")?;
                Typed { e: Expr::Func(Func::Abs, vec![e]), ty: Some(ty) }
            }
            "lower" | "upper" | "length" => {
                one_arg(&bound)?;
                let t = bound.pop().expect("one argument");
                let e = self.coerce_any_text(t)?;
                let (func, ty) = match name.as_str() {
                    "lower" => (Func::Lower, SqlType::Text),
                    "upper" => (Func::Upper, SqlType::Text),
                    _ => (Func::Length, SqlType::Int4),
                };
                Typed { e: Expr::Func(func, vec![e]), ty: Some(ty) }
            }
            "coalesce" if !bound.is_empty() => {
                let ty = bound.iter().find_map(|t| t.ty).unwrap_or(SqlType::Text);
                let args = bound
                    .into_iter()
                    .map(|t| self.coerce(t, ty, Coercion::Implicit, "COALESCE"))
                    .collect::<Result<_, _>>()?;
                Typed { e: Expr::Func(Func::Coalesce, args), ty: Some(ty) }
            }
            _ => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function {name}({}) does not exist",
                        bound
                            .iter()
                            .map(|t| t.ty.map_or("unknown", SqlType::name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        })
    }

    fn coerce_to_column(&mut self, t: Typed, col: &ColumnDef) -> Result<Expr, SqlError> {
        let ty = t.ty;
        self.coerce(t, col.ty, Coercion::Assignment, "").map_err(|e| {
            if e.code == SqlState::DATATYPE_MISMATCH {
                SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "column \"{}\" is of type {} but expression is of type {}",
                        col.name,
                        col.ty.name(),
                        ty.map_or("unknown", SqlType::name)
                    ),
                )
            } else {
                e
            }
        })
    }

    /// Converts `t` to `target` in `context`: unknown literals are parsed
    /// as `target` now (bad input fails at bind time, as in PostgreSQL),
    /// untyped parameters take `target` as their type.
    fn coerce(&mut self, t: Typed, target: SqlType, how: Coercion, what: &str) -> Result<Expr, SqlError> {
        let Some(from) = t.ty else {
            return Ok(match t.e {
                Expr::Const(Value::Text(s)) => Expr::Const(Value::parse(target, &s)?),
                Expr::Param(i) => {
                    self.params[i] = Some(target);
                    Expr::Param(i)
                }
                other => other,
            });
        };
        if from == target {
            return Ok(t.e);
        }
        let family = |ty: SqlType| match ty {
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => 0,
            SqlType::Float8 => 1,
            SqlType::Bool => 2,
            SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) => 3,
            SqlType::Date | SqlType::Timestamp => 4,
        };
        let allowed = match (family(from), family(target), how) {
            (a, b, _) if a == b => true,
            (0, 1, _) => true,
            (1, 0, Coercion::Assignment | Coercion::Explicit) => true,
            (_, 3, Coercion::Assignment | Coercion::Explicit) => true,
            (_, _, Coercion::Explicit) => true,
            _ => false,
        };
        if !allowed {
            let message = match how {
                Coercion::Implicit => {
                    format!("{what} must be type {}, not type {}", target.name(), from.name())
                }
                _ => format!("cannot cast type {} to {}", from.name(), target.name()),
            };
            return Err(SqlError::new(
                if how == Coercion::Implicit { SqlState::DATATYPE_MISMATCH } else { SqlState::CANNOT_COERCE },
                message,
            ));
        }
        // Fold constants now so that range and length errors surface early.
        if let Expr::Const(v) = &t.e {
            return Ok(Expr::Const(cast(v.clone(), target, how == Coercion::Explicit)?));
        }
        // Widening an integer, or reading varchar/char as text, needs no
        // run-time conversion.
        let widening = family(from) == 0 && family(target) == 0 && rank(from) <= rank(target);
        let as_text = matches!(from, SqlType::Varchar(_) | SqlType::Char(_)) && target == SqlType::Text;
        let needs_cast = !widening && !as_text;
        Ok(if needs_cast { Expr::Cast(Box::new(t.e), target, how == Coercion::Explicit) } else { t.e })
    }
}

fn rank(t: SqlType) -> u8 {
    match t {
        SqlType::Int2 => 0,
        SqlType::Int4 => 1,
        _ => 2,
    }
}

fn comparable(a: SqlType, b: SqlType) -> bool {
    let num = |t: SqlType| matches!(t, SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Float8);
    let text = |t: SqlType| matches!(t, SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_));
    (num(a) && num(b)) || (text(a) && text(b)) || a == b
}

fn cmp_symbol(op: Cmp) -> &'static str {
    match op {
        Cmp::Eq => "=",
        Cmp::Ne => "<>",
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
    }
}

fn arith_type(a: SqlType, op: Arith, b: SqlType) -> Option<SqlType> {
    use SqlType::*;
    Some(match (a, b) {
        (Int2 | Int4 | Int8, Int2 | Int4 | Int8) => {
            if a == Int8 || b == Int8 {
                Int8
            } else if a == Int4 || b == Int4 {
                Int4
            } else {
                Int2
            }
        }
        (Int2 | Int4 | Int8 | Float8, Int2 | Int4 | Int8 | Float8) => Float8,
        (Date, Int2 | Int4) if matches!(op, Arith::Add | Arith::Sub) => Date,
        (Int2 | Int4, Date) if op == Arith::Add => Date,
        (Date, Date) if op == Arith::Sub => Int4,
        _ => return None,
    })
}

#[inline(never)]
fn unsupported_operator(op: &BinaryOperator) -> SqlError {
    not_supported(format!("operator {op}"))
}

#[inline(never)]
fn unsupported_expression(e: &ast::Expr) -> SqlError {
    not_supported(format!("expression {e}"))
}

/// The row-lock behaviour of a single-table query's locking clauses. Each
/// `OF` must name the table; when several clauses apply, NOWAIT wins over
/// SKIP LOCKED, which wins over waiting, as in PostgreSQL.
fn row_lock(clauses: &[ast::LockClause], table: &str) -> Result<RowLock, SqlError> {
    let mut how = RowLock::Wait;
    for clause in clauses {
        if let Some(of) = &clause.of {
            let name = relation_name(of)?;
            if name != table {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!(
                        "relation \"{name}\" in FOR {} clause not found in FROM clause",
                        clause.lock_type
                    ),
                ));
            }
        }
        how = match (how, clause.nonblock) {
            (_, Some(ast::NonBlock::Nowait)) | (RowLock::NoWait, _) => RowLock::NoWait,
            (_, Some(ast::NonBlock::SkipLocked)) | (RowLock::SkipLocked, _) => RowLock::SkipLocked,
            _ => RowLock::Wait,
        };
    }
    Ok(how)
}

/// `type 'literal'`: parsed as the type now.
fn typed_string(ts: &ast::TypedString) -> Result<Typed, SqlError> {
    let ty = data_type(&ts.data_type)?;
    let text = match &ts.value.value {
        ast::Value::SingleQuotedString(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(Typed { e: Expr::Const(Value::parse(ty, &text)?), ty: Some(ty) })
}

/// Operators that fold left to right into one flat node (see `binary`).
fn is_chain_operator(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::And
            | BinaryOperator::Or
            | BinaryOperator::StringConcat
            | BinaryOperator::Plus
            | BinaryOperator::Minus
            | BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::Modulo
    )
}

/// A chain's running value converted by a cast stays one chain: the cast
/// becomes a step instead of a node around it.
fn flat(e: Expr) -> Expr {
    match e {
        Expr::Cast(inner, ty, explicit) if matches!(*inner, Expr::Chain(..)) => {
            inner.then(Step::Cast(ty, explicit))
        }
        other => other,
    }
}

/// Rewrites expressions bound over input rows into ones over groups:
/// subtrees equal to a group key become `GroupKey`, and any column left
/// outside an aggregate is 42803.
struct Grouper<'a> {
    keys: &'a [Expr],
    scope: &'a Scope<'a>,
    stack: StackDepth,
}

impl Grouper<'_> {
    fn rewrite(&self, e: Expr) -> Result<Expr, SqlError> {
        self.stack.check()?;
        if let Some(i) = self.keys.iter().position(|k| *k == e) {
            return Ok(Expr::GroupKey(i));
        }
        let g = |x: Box<Expr>| self.rewrite(*x).map(Box::new);
        let all = |xs: Vec<Expr>| xs.into_iter().map(|x| self.rewrite(x)).collect::<Result<Vec<_>, _>>();
        Ok(match e {
            Expr::Column(i) => {
                let (alias, rel) = self.scope.rel.expect("a column implies a relation");
                return Err(SqlError::new(
                    SqlState::GROUPING_ERROR,
                    format!(
                        "column \"{alias}.{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                        rel.entry.columns[i].name
                    ),
                ));
            }
            Expr::Const(_) | Expr::Param(_) | Expr::Agg(_) | Expr::GroupKey(_) => e,
            Expr::Chain(first, steps) => Expr::Chain(
                g(first)?,
                steps
                    .into_iter()
                    .map(|s| {
                        Ok(match s {
                            Step::Arith(op, x, ty) => Step::Arith(op, self.rewrite(x)?, ty),
                            Step::Concat(x) => Step::Concat(self.rewrite(x)?),
                            cast @ Step::Cast(..) => cast,
                        })
                    })
                    .collect::<Result<_, SqlError>>()?,
            ),
            Expr::Neg(a, ty) => Expr::Neg(g(a)?, ty),
            Expr::Compare(a, op, b, bp) => Expr::Compare(g(a)?, op, g(b)?, bp),
            Expr::And(args) => Expr::And(all(args)?),
            Expr::Or(args) => Expr::Or(all(args)?),
            Expr::Not(a) => Expr::Not(g(a)?),
            Expr::IsNull(a, n) => Expr::IsNull(g(a)?, n),
            Expr::InList(a, l, n) => Expr::InList(g(a)?, all(l)?, n),
            Expr::Like(a, b, n) => Expr::Like(g(a)?, g(b)?, n),
            Expr::Cast(a, ty, ex) => Expr::Cast(g(a)?, ty, ex),
            Expr::Func(f, args) => Expr::Func(f, all(args)?),
        })
    }
}

/// `1` in ORDER BY 1 / GROUP BY 1.
fn position_literal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// ORDER BY name, where name is an output column's name.
fn output_named(e: &ast::Expr, columns: &[Column]) -> Option<usize> {
    match e {
        ast::Expr::Identifier(i) => columns.iter().position(|c| c.name == ident(i)),
        _ => None,
    }
}

/// The name PostgreSQL gives an unaliased output column.
fn column_name(e: &ast::Expr) -> String {
    // A cast or parentheses take the name of what is inside them.
    let mut e = e;
    while let ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) = e {
        e = expr;
    }
    match e {
        ast::Expr::Identifier(i) => ident(i),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident).unwrap_or_default(),
        ast::Expr::Function(f) => f.name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default(),
        _ => "?column?".into(),
    }
}

fn index_columns(cols: &[ast::IndexColumn]) -> Result<Vec<String>, SqlError> {
    cols.iter()
        .map(|c| match &c.column.expr {
            ast::Expr::Identifier(i) => Ok(ident(i)),
            other => Err(not_supported(format!("index expression {other}"))),
        })
        .collect()
}

fn key_positions(rel: &Rel, names: &[String]) -> Result<Vec<usize>, SqlError> {
    names
        .iter()
        .map(|n| {
            rel.entry.column(n).ok_or_else(|| {
                SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist"))
            })
        })
        .collect()
}

/// PostgreSQL's default names: t_pkey, t_a_key, t_a_idx.
fn index_name(table: &str, columns: &[String], primary: bool, unique: bool) -> String {
    if primary {
        format!("{table}_pkey")
    } else if unique {
        format!("{table}_{}_key", columns.join("_"))
    } else {
        format!("{table}_{}_idx", columns.join("_"))
    }
}

/// A column type as written in DDL or a cast.
pub fn data_type(dt: &DataType) -> Result<SqlType, SqlError> {
    let length = |l: &Option<CharacterLength>| -> Result<Option<u32>, SqlError> {
        match l {
            None => Ok(None),
            Some(CharacterLength::IntegerLength { length, .. }) => {
                if *length == 0 {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "length for type varchar must be at least 1",
                    ));
                }
                u32::try_from(*length).map(Some).map_err(|_| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "length for type varchar cannot exceed 10485760",
                    )
                })
            }
            Some(CharacterLength::Max) => Err(not_supported("varchar(max)")),
        }
    };
    Ok(match dt {
        DataType::SmallInt(_) | DataType::Int2(_) => SqlType::Int2,
        DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => SqlType::Int4,
        DataType::BigInt(_) | DataType::Int8(_) => SqlType::Int8,
        DataType::DoublePrecision | DataType::Float8 | DataType::Double(_) => SqlType::Float8,
        DataType::Float(_) => SqlType::Float8,
        DataType::Boolean | DataType::Bool => SqlType::Bool,
        DataType::Text | DataType::String(_) => SqlType::Text,
        DataType::Varchar(l) | DataType::CharacterVarying(l) => SqlType::Varchar(length(l)?),
        DataType::Char(l) | DataType::Character(l) => SqlType::Char(length(l)?.unwrap_or(1)),
        DataType::Date => SqlType::Date,
        DataType::Timestamp(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        DataType::Numeric(_) | DataType::Decimal(_) | DataType::Dec(_) => {
            let _ = ExactNumberInfo::None;
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "type numeric is not supported yet"));
        }
        DataType::Custom(name, _) => {
            let n = name.to_string().to_lowercase();
            SqlType::from_name(&n, None)?
        }
        other => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("type {other} is not supported"),
            ))
        }
    })
}

/// Picks an index for `filter`'s conjuncts: equality on all of an index's
/// columns (or its leading ones), else a range on a first column.
fn choose_access(rel: &Rel, filter: &Expr) -> Access {
    let mut conjuncts = Vec::new();
    flatten_and(filter, &mut conjuncts);
    // column -> (op, probe)
    let mut preds: Vec<(usize, Cmp, Expr)> = Vec::new();
    for c in conjuncts {
        if let Expr::Compare(a, op, b, false) = c {
            match (a.as_ref(), b.as_ref()) {
                (Expr::Column(i), p) if p.is_row_free() => preds.push((*i, *op, p.clone())),
                (p, Expr::Column(i)) if p.is_row_free() => preds.push((*i, op.flipped(), p.clone())),
                _ => {}
            }
        }
    }
    let eq_probe =
        |col: usize| preds.iter().find(|(c, op, _)| *c == col && *op == Cmp::Eq).map(|(_, _, p)| p.clone());
    let mut best: Option<(usize, Access)> = None;
    for def in &rel.entry.indexes {
        let probes: Vec<Expr> = def.columns.iter().map_while(|&c| eq_probe(c)).collect();
        if !probes.is_empty() && best.as_ref().is_none_or(|(n, _)| probes.len() > *n) {
            let index = rel.heap.index(&rel.entry, def);
            best = Some((probes.len(), Access::IndexEq { index, probes }));
        }
    }
    if let Some((_, access)) = best {
        return access;
    }
    for def in &rel.entry.indexes {
        let first = def.columns[0];
        let mut lower = Bound::Unbounded;
        let mut upper = Bound::Unbounded;
        for (c, op, p) in &preds {
            if *c != first {
                continue;
            }
            match op {
                Cmp::Gt => lower = Bound::Excluded(p.clone()),
                Cmp::Ge => lower = Bound::Included(p.clone()),
                Cmp::Lt => upper = Bound::Excluded(p.clone()),
                Cmp::Le => upper = Bound::Included(p.clone()),
                _ => {}
            }
        }
        if !matches!((&lower, &upper), (Bound::Unbounded, Bound::Unbounded)) {
            return Access::IndexRange { index: rel.heap.index(&rel.entry, def), lower, upper };
        }
    }
    Access::Seq
}

/// The conjuncts of a filter (AND lists are flat: see [`Expr::junction`]).
fn flatten_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::And(args) => out.extend(args),
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use snapscale_lock::LockConfig;
    use snapscale_txn::{Engine, EngineConfig};
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    use super::*;
    use crate::catalog::{Database, IndexDef, RelEntry};

    struct One(Rel);

    impl Resolver for One {
        fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
            Ok((name == "t").then(|| self.0.clone()))
        }
    }

    fn table() -> One {
        let db = Database::new(Engine::new(EngineConfig::default()), LockConfig::default());
        let storage = db.create_storage();
        let entry = RelEntry {
            oid: 1,
            name: "t".into(),
            temp_owner: None,
            storage,
            columns: vec![
                ColumnDef { name: "a".into(), ty: SqlType::Int4, not_null: true },
                ColumnDef { name: "b".into(), ty: SqlType::Text, not_null: false },
            ],
            indexes: vec![IndexDef {
                oid: 2,
                name: "t_pkey".into(),
                columns: vec![0],
                unique: true,
                primary: true,
            }],
        };
        One(Rel { entry: Arc::new(entry), heap: db.storage(storage).unwrap(), catalog_tid: 0 })
    }

    fn bound(sql: &str) -> BoundStatement {
        let statement = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap().remove(0);
        bind(&mut table(), &statement, &[], crate::stack::DEFAULT_MAX_STACK_DEPTH)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn access(sql: &str) -> &'static str {
        let scan = match bound(sql).plan {
            Plan::Select(Select { scan: Some(scan), .. }) => scan,
            Plan::Update(u) => u.scan,
            other => panic!("{other:?}"),
        };
        match scan.access {
            Access::Seq => "seq",
            Access::IndexEq { .. } => "eq",
            Access::IndexRange { .. } => "range",
        }
    }

    #[test]
    fn indexed_equality_and_ranges_use_the_index() {
        assert_eq!(access("SELECT b FROM t WHERE a = $1"), "eq");
        assert_eq!(access("SELECT b FROM t WHERE 3 = a AND b = 'x'"), "eq");
        assert_eq!(access("UPDATE t SET b = 'y' WHERE a = 4"), "eq");
        assert_eq!(access("SELECT b FROM t WHERE a > 5 AND a <= 9"), "range");
        assert_eq!(access("SELECT b FROM t WHERE a BETWEEN 1 AND 2"), "range");
        assert_eq!(access("SELECT b FROM t WHERE b = 'x'"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a + 0 = 1"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a = 1 OR a = 2"), "seq");
    }

    #[test]
    fn untyped_parameters_take_their_context_type() {
        assert_eq!(bound("UPDATE t SET a = a + $1 WHERE a = $2").params, [SqlType::Int4, SqlType::Int4]);
        assert_eq!(bound("INSERT INTO t (b, a) VALUES ($1, $2)").params, [SqlType::Text, SqlType::Int4]);
        assert_eq!(bound("SELECT $1 FROM t").params, [SqlType::Text]);
        assert_eq!(bound("SELECT b FROM t LIMIT $1").params, [SqlType::Int8]);
    }
}
