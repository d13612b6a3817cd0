//! Binding FROM clauses: tables, subqueries and the `pg_catalog` views,
//! joined (`JOIN … ON`, `USING`, `NATURAL`, inner, left, right, full and
//! cross; a comma is a cross join), with PostgreSQL's rules for aliases and
//! for the names a join shows.

use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, JoinConstraint, JoinOperator, TableFactor, TableWithJoins};

use super::function::not_unique;
use super::scope::{Col, Named, Scope};
use super::{bare_name, ident, not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::{Expr, Func};
use crate::plan::{From, Join, JoinKind, Srf};

/// A bound FROM item: what it computes, its named parts, and the columns
/// an unqualified name can mean, in `*` order.
pub(super) struct Item {
    pub from: From,
    pub named: Vec<Named>,
    pub visible: Vec<Col>,
}

impl<R: Resolver> Binder<'_, R> {
    /// Binds a FROM list (`None` if empty), each item at its offset in the
    /// FROM row; `base` is the query's scope before its FROM items (for
    /// ON conditions and subqueries). Tables are locked in `mode`.
    pub(super) fn bind_from(
        &mut self,
        list: &[TableWithJoins],
        base: &Scope<'_>,
        mode: LockMode,
    ) -> Result<Option<Item>, SqlError> {
        let mut acc: Option<Item> = None;
        for twj in list {
            let offset = acc.as_ref().map_or(0, |a| a.from.width());
            let item = self.joined(twj, offset, base, mode, acc.as_ref())?;
            acc = Some(match acc {
                None => item,
                Some(left) => combine(left, item, JoinKind::Inner, None, Vec::new())?,
            });
        }
        Ok(acc)
    }

    /// A table with the joins that follow it, left to right. `before` is
    /// the FROM list's items before it, which a LATERAL item that stands
    /// alone may refer to.
    fn joined(
        &mut self,
        twj: &TableWithJoins,
        offset: usize,
        base: &Scope<'_>,
        mode: LockMode,
        before: Option<&Item>,
    ) -> Result<Item, SqlError> {
        // A LATERAL item followed by joins would sit inside the join tree,
        // not beside the items it reads: it sees only its own join's left.
        let before = if twj.joins.is_empty() { before } else { None };
        let mut left = self.factor(&twj.relation, offset, base, mode, before)?;
        for join in &twj.joins {
            let (kind, constraint) = match &join.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinKind::Inner, c),
                JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinKind::Left, c),
                JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinKind::Right, c),
                JoinOperator::FullOuter(c) => (JoinKind::Full, c),
                JoinOperator::CrossJoin(c @ JoinConstraint::None) => (JoinKind::Inner, c),
                other => {
                    return Err(not_supported(
                        format!("join {other:?}").split('(').next().unwrap_or("this join").to_owned(),
                    ))
                }
            };
            let right = self.factor(&join.relation, offset + left.from.width(), base, mode, Some(&left))?;
            if let From::Lateral { args, .. } = &right.from {
                if matches!(kind, JoinKind::Right | JoinKind::Full) {
                    // The table its first reference reads.
                    let table = left
                        .named
                        .iter()
                        .find(|n| n.columns.iter().any(|c| args.contains(&c.expr)))
                        .map_or(String::new(), |n| n.alias.clone());
                    return Err(SqlError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("invalid reference to FROM-clause entry for table \"{table}\""),
                    )
                    .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference."));
                }
            }
            left = self.join(left, right, kind, constraint, base)?;
        }
        Ok(left)
    }

    /// Two items joined under `constraint`.
    fn join(
        &mut self,
        left: Item,
        right: Item,
        kind: JoinKind,
        constraint: &JoinConstraint,
        base: &Scope<'_>,
    ) -> Result<Item, SqlError> {
        match constraint {
            JoinConstraint::On(e) => {
                let mut named = left.named.clone();
                named.extend(right.named.iter().cloned());
                let mut visible = left.visible.clone();
                visible.extend(right.visible.iter().cloned());
                let scope = base.derived().with_items(named, visible);
                let saved = self.query.aggs.take();
                let t = self.expr(e, &scope);
                self.query.aggs = saved;
                let t = match t {
                    // Placed at the aggregate, as PostgreSQL places it.
                    Err(mut e) if e.code == SqlState::GROUPING_ERROR => {
                        e.message = "aggregate functions are not allowed in JOIN conditions".into();
                        return Err(e);
                    }
                    other => other?,
                };
                let on = self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of JOIN/ON")?;
                combine(left, right, kind, Some(on), Vec::new())
            }
            JoinConstraint::Using(names) => {
                let names = names
                    .iter()
                    .map(|n| match n.0.as_slice() {
                        [part] => {
                            part.as_ident().map(ident).ok_or_else(|| not_supported("USING (expression)"))
                        }
                        _ => Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("syntax error at or near \"{n}\""),
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                self.merge(left, right, kind, &names)
            }
            JoinConstraint::Natural => {
                let names: Vec<String> = left
                    .visible
                    .iter()
                    .filter(|l| right.visible.iter().any(|r| r.name == l.name))
                    .map(|l| l.name.clone())
                    .collect();
                self.merge(left, right, kind, &names)
            }
            JoinConstraint::None if kind == JoinKind::Inner => combine(left, right, kind, None, Vec::new()),
            JoinConstraint::None => {
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error: an outer join needs ON or USING"))
            }
        }
    }

    /// JOIN … USING (names) and NATURAL JOIN: equality on each named
    /// column, shown once (the left's, the right's for a right join, their
    /// COALESCE for a full join), before the other columns.
    fn merge(&mut self, left: Item, right: Item, kind: JoinKind, names: &[String]) -> Result<Item, SqlError> {
        let mut merged = Vec::new();
        let mut conditions = Vec::new();
        let (mut used_left, mut used_right) = (Vec::new(), Vec::new());
        for name in names {
            if merged.iter().any(|c: &Col| c.name == *name) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{name}\" appears more than once in USING clause"),
                ));
            }
            let find = |side: &Item, which: &str| -> Result<usize, SqlError> {
                let found: Vec<usize> = side
                    .visible
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.name == *name)
                    .map(|(i, _)| i)
                    .collect();
                match found.as_slice() {
                    [i] => Ok(*i),
                    [] => Err(SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{name}\" specified in USING clause does not exist in {which} table"
                        ),
                    )),
                    _ => Err(SqlError::new(
                        SqlState::AMBIGUOUS_COLUMN,
                        format!("common column name \"{name}\" appears more than once in {which} table"),
                    )),
                }
            };
            let (li, ri) = (find(&left, "left")?, find(&right, "right")?);
            used_left.push(li);
            used_right.push(ri);
            let (l, r) = (left.visible[li].clone(), right.visible[ri].clone());
            let ty = super::coerce::common_type([Some(l.ty), Some(r.ty)].into_iter(), "JOIN/USING")?;
            let typed = |c: &Col| Typed { e: c.expr.clone(), ty: Some(c.ty) };
            conditions.push(self.compare_typed(typed(&l), crate::expr::Cmp::Eq, typed(&r))?);
            let expr = match kind {
                // The binder makes no semi or anti joins (the planner does).
                JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti => l.expr.clone(),
                JoinKind::Right => r.expr.clone(),
                JoinKind::Full => {
                    let a = self.coerce(typed(&l), ty, Coercion::Implicit, "JOIN/USING")?;
                    let b = self.coerce(typed(&r), ty, Coercion::Implicit, "JOIN/USING")?;
                    Expr::Func(Func::Coalesce, vec![a, b])
                }
            };
            let ty = if kind == JoinKind::Full {
                ty
            } else if kind == JoinKind::Right {
                r.ty
            } else {
                l.ty
            };
            merged.push(Col { name: name.clone(), expr, ty });
        }
        let on = Expr::conjunction(conditions);
        let mut visible = merged;
        visible.extend(
            left.visible.iter().enumerate().filter(|(i, _)| !used_left.contains(i)).map(|(_, c)| c.clone()),
        );
        visible.extend(
            right.visible.iter().enumerate().filter(|(i, _)| !used_right.contains(i)).map(|(_, c)| c.clone()),
        );
        combine(left, right, kind, on, visible)
    }

    /// One FROM item: a table (or a `pg_catalog` view), a subquery, or a
    /// parenthesised join, at `offset` in the FROM row.
    /// `left` is what a LATERAL item (or a function, always lateral) may
    /// refer to: the items to its left.
    fn factor(
        &mut self,
        t: &TableFactor,
        offset: usize,
        base: &Scope<'_>,
        mode: LockMode,
        left: Option<&Item>,
    ) -> Result<Item, SqlError> {
        let only = super::clauses::without_only(t);
        let t = only.as_ref().unwrap_or(t);
        super::clauses::table(t)?;
        match t {
            TableFactor::Table {
                name,
                alias,
                args: None,
                with_hints,
                version: None,
                partitions,
                sample: None,
                ..
            } if with_hints.is_empty() && partitions.is_empty() => {
                if let Some(k) = self.cte_named(name) {
                    // An error of the reference itself is placed at its name.
                    let at = name.0.last().and_then(|p| p.as_ident()).cloned();
                    return self.cte_reference(k, alias.as_ref(), offset).map_err(|e| match at {
                        Some(i) if e.position.is_none() && e.message.ends_with("RETURNING clause") => {
                            super::expr::locate(self.origin.as_deref(), e, &ast::Expr::Identifier(i))
                        }
                        _ => e,
                    });
                }
                let default_alias = name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
                if let Some(item) = self.transition_item(name, alias.as_ref(), offset)? {
                    return Ok(item);
                }
                if let Some(view) = crate::catalog_views::View::named(name)? {
                    let alias_name = alias.as_ref().map_or(default_alias, |a| ident(&a.name));
                    let columns = view
                        .columns()
                        .iter()
                        .enumerate()
                        .map(|(i, c)| Col {
                            name: c.name.to_owned(),
                            expr: Expr::Column(offset + i),
                            ty: c.ty,
                        })
                        .collect();
                    let named = rename(
                        Named { alias: alias_name, columns, table: None, nullable: false },
                        alias.as_ref(),
                    )?;
                    return Ok(Item {
                        visible: named.columns.clone(),
                        named: vec![named],
                        from: From::Computed(view),
                    });
                }
                if mode == LockMode::AccessShare {
                    let n = relation_name(name)?;
                    if let Some(seq) = self.resolver.resolve(&n)?.filter(|r| r.entry.sequence.is_some()) {
                        let alias_name = alias.as_ref().map_or(default_alias, |a| ident(&a.name));
                        self.dep(&n, &seq, LockMode::AccessShare);
                        return sequence_item(&seq, alias_name, alias.as_ref(), offset);
                    }
                }
                let rel = self.relation_or_view(name, mode)?;
                if rel.entry.is_view() {
                    return self.view_item(&rel, alias.as_ref(), offset);
                }
                if rel.entry.view.as_ref().is_some_and(|v| v.materialized == Some(false)) {
                    return Err(SqlError::new(
                        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        format!("materialized view \"{}\" has not been populated", rel.entry.name),
                    )
                    .with_hint("Use the REFRESH MATERIALIZED VIEW command."));
                }
                let alias_name = match alias {
                    Some(a) => ident(&a.name),
                    None => bare_name(name)?,
                };
                let named = rename(Named::table(&alias_name, &rel, offset), alias.as_ref())?;
                Ok(Item { visible: named.columns.clone(), named: vec![named], from: From::Table(rel) })
            }
            TableFactor::Derived { lateral, subquery, alias, sample: None } => {
                let Some(alias) = alias else {
                    return Err(SqlError::new(SqlState::SYNTAX_ERROR, "subquery in FROM must have an alias")
                        .with_hint("For example, FROM (SELECT ...) [AS] foo."));
                };
                let lateral = if *lateral { left } else { None };
                let (select, args) = match lateral {
                    None => match self.query_scoped(subquery, &base.derived()) {
                        Ok(select) => (select, Vec::new()),
                        Err(e) => return Err(sibling_reference(e, left)),
                    },
                    Some(left) => {
                        // The items to the left are an enclosing query to
                        // it: what it reads of them become its arguments.
                        let outer = base.derived().with_items(left.named.clone(), left.visible.clone());
                        let child = outer.child();
                        let select = self.query_scoped(subquery, &child)?;
                        (select, child.take_args())
                    }
                };
                let columns = select
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Col { name: c.name.clone(), expr: Expr::Column(offset + i), ty: c.ty })
                    .collect();
                let named = rename(
                    Named { alias: ident(&alias.name), columns, table: None, nullable: false },
                    Some(alias),
                )?;
                Ok(Item {
                    visible: named.columns.clone(),
                    named: vec![named],
                    from: self.lateral_item(From::Derived(Box::new(select)), args)?,
                })
            }
            TableFactor::NestedJoin { table_with_joins, alias } => {
                let item = self.joined(table_with_joins, offset, base, mode, None)?;
                match alias {
                    None => Ok(item),
                    // An aliased join hides the names inside it.
                    Some(a) => {
                        let named = Named {
                            alias: ident(&a.name),
                            columns: item.visible,
                            table: None,
                            nullable: false,
                        };
                        let named = rename(named, Some(a))?;
                        Ok(Item { visible: named.columns.clone(), named: vec![named], from: item.from })
                    }
                }
            }
            TableFactor::Table { name, alias, args: Some(args), with_ordinality, .. } => {
                self.function_scan(name, alias.as_ref(), &args.args, offset, base, left, *with_ordinality)
            }
            TableFactor::UNNEST { alias, array_exprs, with_offset: false, with_ordinality, .. } => {
                let args: Vec<ast::FunctionArg> = array_exprs
                    .iter()
                    .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
                    .collect();
                let name = ast::ObjectName::from(vec![ast::Ident::new("unnest")]);
                self.function_scan(&name, alias.as_ref(), &args, offset, base, left, *with_ordinality)
            }
            TableFactor::Function { lateral: _, name, args, with_ordinality, alias } => {
                self.function_scan(name, alias.as_ref(), args, offset, base, left, *with_ordinality)
            }
            TableFactor::TableFunction { .. } => Err(not_supported("this function in FROM")),
            _ => Err(not_supported("this kind of FROM item")),
        }
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// A set-returning function call with its arguments bound: `None` if
    /// `name` is not one. `generate_series` over integers, `unnest` of an
    /// array, `information_schema._pg_expandarray` (records (x, n)).
    pub(super) fn set_function(
        &mut self,
        name: &str,
        mut bound: Vec<Typed>,
    ) -> Result<Option<(Srf, Vec<Expr>, SqlType)>, SqlError> {
        Ok(Some(match (name, bound.len()) {
            ("generate_series", 3) if bound.iter().all(|t| t.ty.is_none()) => {
                return Err(not_unique("generate_series", &bound));
            }
            ("generate_series", 3) if is_time_series(&bound) => {
                // Timestamps only if a bound is one and the other one too
                // or unknown; anything else (dates, an instant, two
                // literals) makes it a series of instants, PostgreSQL's
                // preferred type.
                let timestamps = bound[..2].iter().filter(|t| t.ty == Some(SqlType::Timestamp)).count();
                let typed = bound[..2].iter().filter(|t| t.ty.is_some()).count();
                let tz = timestamps == 0 || timestamps < typed;
                let ty = if tz { SqlType::TimestampTz } else { SqlType::Timestamp };
                let what = "argument of generate_series";
                let mut bound = bound.into_iter();
                let mut args = Vec::with_capacity(3);
                for _ in 0..2 {
                    args.push(self.coerce(
                        bound.next().expect("three arguments"),
                        ty,
                        Coercion::Implicit,
                        what,
                    )?);
                }
                let step = bound.next().expect("three arguments");
                args.push(self.coerce(step, SqlType::Interval, Coercion::Implicit, what)?);
                (Srf::TimestampSeries { tz }, args, ty)
            }
            ("generate_series", 2 | 3) if bound.iter().any(|t| matches!(t.ty, Some(SqlType::Numeric(_)))) => {
                let args = bound
                    .into_iter()
                    .map(|t| {
                        self.coerce(
                            t,
                            SqlType::Numeric(-1),
                            Coercion::Implicit,
                            "argument of generate_series",
                        )
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (Srf::NumericSeries, args, SqlType::Numeric(-1))
            }
            ("generate_series", 2 | 3) => {
                // Over integers the series is of integers, over anything
                // wider of bigints (PostgreSQL's two functions).
                let narrow = bound.iter().all(|t| matches!(t.ty, None | Some(SqlType::Int2 | SqlType::Int4)));
                let ty = if narrow { SqlType::Int4 } else { SqlType::Int8 };
                let args = bound
                    .into_iter()
                    .map(|t| self.coerce(t, ty, Coercion::Implicit, "argument of generate_series"))
                    .collect::<Result<Vec<_>, _>>()?;
                (Srf::GenerateSeries, args, ty)
            }
            // An array's subscripts along a dimension: the series from its
            // lower bound to its upper one (none for a NULL array, or one
            // without that dimension).
            ("generate_subscripts", 2) if bound[0].ty.and_then(SqlType::elem).is_some() => {
                let dim = bound.pop().expect("two arguments");
                let dim =
                    self.coerce(dim, SqlType::Int4, Coercion::Implicit, "argument of generate_subscripts")?;
                let array = bound.pop().expect("two arguments").e;
                let bounds = [crate::expr::Func::ArrayLower, crate::expr::Func::ArrayUpper]
                    .map(|f| Expr::Func(f, vec![array.clone(), dim.clone()]));
                (Srf::GenerateSeries, bounds.into(), SqlType::Int4)
            }
            // Nothing is partitioned here: no partition has ancestors
            // (psql's \d asks).
            ("pg_partition_ancestors", 1) => {
                let empty = Expr::Const(snapscale_values::Value::array(Vec::new()));
                (Srf::Unnest, vec![empty], SqlType::Reg(snapscale_values::Reg::Class))
            }
            ("unnest" | "_pg_expandarray", 1) => {
                let t = bound.pop().expect("one argument");
                let Some(elem) = t.ty.and_then(SqlType::elem) else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.ty.map_or("unknown", SqlType::name)),
                    ));
                };
                if name == "unnest" {
                    (Srf::Unnest, vec![t.e], elem)
                } else {
                    let e = snapscale_values::Elem::of(elem)
                        .ok_or_else(|| not_supported(format!("arrays of {}", elem.name())))?;
                    (Srf::ExpandArray, vec![t.e], SqlType::Record(snapscale_values::Rec::ExpandArray(e)))
                }
            }
            (
                "jsonb_each"
                | "jsonb_each_text"
                | "json_each"
                | "json_each_text"
                | "jsonb_array_elements"
                | "jsonb_array_elements_text"
                | "json_array_elements"
                | "json_array_elements_text"
                | "jsonb_object_keys"
                | "json_object_keys",
                1,
            ) => {
                let jsonb = name.starts_with("jsonb");
                let ty = if jsonb { SqlType::Jsonb } else { SqlType::Json };
                let t = bound.pop().expect("one argument");
                let arg = self.coerce(t, ty, Coercion::Implicit, &format!("argument of {name}"))?;
                let text = name.ends_with("_text");
                let value = if text { SqlType::Text } else { ty };
                let elem = snapscale_values::Elem::of(value).expect("json, jsonb and text have arrays");
                if name.contains("_each") {
                    (
                        Srf::JsonEach { jsonb, text },
                        vec![arg],
                        SqlType::Record(snapscale_values::Rec::KeyValue(elem)),
                    )
                } else if name.contains("_array_elements") {
                    (Srf::JsonElements { jsonb, text }, vec![arg], value)
                } else {
                    (Srf::JsonKeys { jsonb }, vec![arg], SqlType::Text)
                }
            }
            ("regexp_matches" | "regexp_split_to_table" | "string_to_table", 2 | 3) => {
                return self.string_set_function(name, bound).map(Some);
            }
            ("jsonb_path_query", 2..=4) => {
                let types = [SqlType::Jsonb, SqlType::JsonPath, SqlType::Jsonb, SqlType::Bool];
                let mut args = Vec::with_capacity(bound.len());
                for (t, ty) in bound.into_iter().zip(types) {
                    args.push(self.coerce(t, ty, Coercion::Implicit, "argument of jsonb_path_query")?);
                }
                (Srf::JsonPathQuery, args, SqlType::Jsonb)
            }
            _ => return Ok(None),
        }))
    }

    /// A set-returning function in FROM: `generate_series` over integers
    /// or timestamps,
    /// `unnest` of an array. A function in FROM is LATERAL in PostgreSQL:
    /// its arguments may read the items to its `left`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn function_scan(
        &mut self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        args: &[ast::FunctionArg],
        offset: usize,
        base: &Scope<'_>,
        left: Option<&Item>,
        ordinality: bool,
    ) -> Result<Item, SqlError> {
        if super::rows_from::is_rows_from(name) {
            return self.rows_from(args, alias, offset, base, left, ordinality);
        }
        let unnest = matches!(name.0.as_slice(), [p] if p.as_ident().is_some_and(|i| ident(i) == "unnest"));
        if unnest && args.len() > 1 && !self.has_functions(name)? {
            return self.unnest_zipped(args, alias, offset, base, left, ordinality);
        }
        if ordinality {
            return self.function_scan_numbered(name, alias, args, offset, base, left);
        }
        if let Some(item) = self.routine_from(name, alias, args, offset, base, left)? {
            return Ok(item);
        }
        let fname = name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
        let placed = super::function::jsonpath_positional(&fname, args)?;
        let args = placed.as_deref().unwrap_or(args);
        let outer = match left {
            Some(left) => base.derived().with_items(left.named.clone(), left.visible.clone()),
            None => Scope::empty(),
        };
        let scope = if left.is_some() { outer.child() } else { base.derived() };
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                return Err(not_supported(format!("argument {a}")));
            };
            bound.push(self.expr(e, &scope)?);
        }
        if super::populate::is_populate(&fname) {
            // In FROM a call of a function returning record needs a
            // column definition list (an empty one says it is missing).
            let defs = Some(alias.map_or(&[][..], |a| a.columns.as_slice()));
            let call = self.populate_call(&fname, bound, defs)?.expect("checked");
            // One record is an array of one, for the rows.
            let arg = if call.set { call.e } else { Expr::Func(crate::expr::Func::ArrayCons, vec![call.e]) };
            let alias_name = alias.map_or_else(|| fname.clone(), |a| ident(&a.name));
            let columns = call
                .columns
                .into_iter()
                .enumerate()
                .map(|(i, (name, ty))| Col { name, expr: Expr::Column(offset + i), ty })
                .collect();
            let named = rename(Named { alias: alias_name, columns, table: None, nullable: false }, alias)?;
            let from = self.lateral_item(
                From::Function { func: Srf::Records, args: vec![arg], ordinality: false },
                taken(&scope, left.is_some()),
            )?;
            return Ok(Item { visible: named.columns.clone(), named: vec![named], from });
        }
        let shown: Vec<String> =
            bound.iter().map(|t| t.ty.map_or("unknown", SqlType::name).to_owned()).collect();
        let Some((func, args, ty)) = self.set_function(&fname, bound)? else {
            if self.has_functions(name)? {
                let key = super::relation_name(name)?;
                return Err(self.no_such_routine(&key, &shown, name));
            }
            return self.scalar_from(name, &fname, alias, args, offset, &scope, left.is_some());
        };
        // A record's fields are columns of their own (x, n).
        if let SqlType::Record(r) = ty {
            let alias_name = alias.map_or_else(|| fname.clone(), |a| ident(&a.name));
            let columns = r
                .fields()
                .into_iter()
                .enumerate()
                .map(|(i, (name, ty))| Col { name: name.to_owned(), expr: Expr::Column(offset + i), ty })
                .collect();
            let named = rename(Named { alias: alias_name, columns, table: None, nullable: false }, alias)?;
            let from = self.lateral_item(
                From::Function { func, args, ordinality: false },
                taken(&scope, left.is_some()),
            )?;
            return Ok(Item { visible: named.columns.clone(), named: vec![named], from });
        }
        // A composite value's attributes are columns of their own.
        if let SqlType::Composite(u) = ty {
            let fields = self.composite_fields(u)?;
            let alias_name = alias.map_or_else(|| fname.clone(), |a| ident(&a.name));
            let columns = fields
                .iter()
                .enumerate()
                .map(|(i, (name, ty))| Col { name: name.clone(), expr: Expr::Column(offset + i), ty: *ty })
                .collect();
            let named = rename(Named { alias: alias_name, columns, table: None, nullable: false }, alias)?;
            let spread = crate::plan::Select {
                from: Some(From::Function { func, args, ordinality: false }),
                filter: None,
                grouping: None,
                windows: Vec::new(),
                srfs: Vec::new(),
                outputs: (0..fields.len())
                    .map(|i| Expr::Func(Func::Field(i), vec![Expr::Column(0)]))
                    .collect(),
                columns: fields
                    .iter()
                    .map(|(n, ty)| crate::plan::Column { name: n.clone(), ty: *ty })
                    .collect(),
                order: Vec::new(),
                limit: None,
                offset: None,
                lock: None,
                distinct_on: Vec::new(),
            };
            let from = self.lateral_item(From::Derived(Box::new(spread)), taken(&scope, left.is_some()))?;
            return Ok(Item { visible: named.columns.clone(), named: vec![named], from });
        }
        // A function of one column names it after the alias, else after
        // itself, as PostgreSQL does; one with a named output column
        // (json[b]_array_elements' `value`) after that.
        let alias_name = alias.map_or_else(|| fname.clone(), |a| ident(&a.name));
        let column =
            if matches!(func, Srf::JsonElements { .. }) { "value".to_owned() } else { alias_name.clone() };
        let col = Col { name: column, expr: Expr::Column(offset), ty };
        let named =
            rename(Named { alias: alias_name, columns: vec![col], table: None, nullable: false }, alias)?;
        let from = self
            .lateral_item(From::Function { func, args, ordinality: false }, taken(&scope, left.is_some()))?;
        Ok(Item { visible: named.columns.clone(), named: vec![named], from })
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// A FROM item that reads the items to its left (`args`, over the FROM
    /// row) is re-run for each of their rows; one that reads none is plain,
    /// and one whose outer values are only the enclosing query's is run
    /// once, beside one empty row.
    pub(super) fn lateral_item(&self, item: From, args: Vec<Expr>) -> Result<From, SqlError> {
        if args.is_empty() {
            return Ok(item);
        }
        let reads_left = self.reads_columns(&args)?;
        Ok(super::routine_call::beside(From::Lateral { item: Box::new(item), args }, reads_left))
    }

    /// A function that returns no set, in FROM: one row, its value, in a
    /// column named after the alias, else after the function (PostgreSQL
    /// takes any function there).
    #[allow(clippy::too_many_arguments)]
    fn scalar_from(
        &mut self,
        name: &ast::ObjectName,
        fname: &str,
        alias: Option<&ast::TableAlias>,
        args: &[ast::FunctionArg],
        offset: usize,
        scope: &Scope<'_>,
        lateral: bool,
    ) -> Result<Item, SqlError> {
        let call = ast::Expr::Function(ast::Function {
            name: name.clone(),
            uses_odbc_syntax: false,
            parameters: ast::FunctionArguments::None,
            args: ast::FunctionArguments::List(ast::FunctionArgumentList {
                duplicate_treatment: None,
                args: args.to_vec(),
                clauses: Vec::new(),
            }),
            within_group: Vec::new(),
            filter: None,
            null_treatment: None,
            over: None,
        });
        // A set-returning function bound as a value would be one of the
        // select list's.
        let (srfs, aggs) = (self.query.srfs.take(), self.query.aggs.take());
        let t = self.expr(&call, scope);
        (self.query.srfs, self.query.aggs) = (srfs, aggs);
        let t = match t {
            Err(e) if e.message == "set-returning functions are not allowed here" => {
                return Err(not_supported(format!("function {fname} in FROM")))
            }
            Err(mut e) if e.code == SqlState::GROUPING_ERROR => {
                e.message = "aggregate functions are not allowed in functions in FROM".into();
                return Err(e);
            }
            other => other?,
        };
        let ty = t.ty.unwrap_or(SqlType::Text);
        if let Some(first) = alias.and_then(|a| a.columns.iter().find(|c| c.data_type.is_some())) {
            if ty == SqlType::Record(snapscale_values::Rec::Anonymous) {
                return self.record_from(t.e, fname, alias, offset, scope, lateral);
            }
            let err = SqlError::new(
                SqlState::SYNTAX_ERROR,
                "a column definition list is only allowed for functions returning \"record\"",
            );
            return Err(super::expr::locate(
                self.origin.as_deref(),
                err,
                &ast::Expr::Identifier(first.name.clone()),
            ));
        }
        let alias_name = alias.map_or_else(|| fname.to_owned(), |a| ident(&a.name));
        let col = Col { name: alias_name.clone(), expr: Expr::Column(offset), ty };
        let named = rename(
            Named { alias: alias_name.clone(), columns: vec![col], table: None, nullable: false },
            alias,
        )?;
        let columns = vec![crate::plan::Column { name: alias_name, ty }];
        let from =
            self.lateral_item(From::Values { rows: vec![vec![t.e]], columns }, taken(scope, lateral))?;
        Ok(Item { visible: named.columns.clone(), named: vec![named], from })
    }

    /// A function's record value in FROM under a column definition list
    /// (`coalesce(r) AS c(a int, b int)`): its fields are the columns.
    fn record_from(
        &mut self,
        e: Expr,
        fname: &str,
        alias: Option<&ast::TableAlias>,
        offset: usize,
        scope: &Scope<'_>,
        lateral: bool,
    ) -> Result<Item, SqlError> {
        let defs = alias.map_or(&[][..], |a| a.columns.as_slice());
        let mut columns = Vec::with_capacity(defs.len());
        for (i, c) in defs.iter().enumerate() {
            let Some(dt) = &c.data_type else {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "a column definition list is required for functions returning \"record\"",
                ));
            };
            let (ty, _) = self.resolve_type_with_domain(dt)?;
            columns.push(Col { name: ident(&c.name), expr: Expr::Column(offset + i), ty });
        }
        let width = columns.len();
        let alias_name = alias.map_or_else(|| fname.to_owned(), |a| ident(&a.name));
        let named = Named { alias: alias_name, columns, table: None, nullable: false };
        let from = self.lateral_item(
            From::Function { func: Srf::RecordOf { width }, args: vec![e], ordinality: false },
            taken(scope, lateral),
        )?;
        Ok(Item { visible: named.columns.clone(), named: vec![named], from })
    }

    /// A function in FROM WITH ORDINALITY: its columns, then `ordinality`
    /// numbering its rows (the alias's column list names it too).
    fn function_scan_numbered(
        &mut self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        args: &[ast::FunctionArg],
        offset: usize,
        base: &Scope<'_>,
        left: Option<&Item>,
    ) -> Result<Item, SqlError> {
        // Bound without the alias's column list, which names one more
        // column than the function has.
        let bare = alias.map(|a| ast::TableAlias { columns: Vec::new(), ..a.clone() });
        let mut item = self.function_scan(name, bare.as_ref(), args, offset, base, left, false)?;
        item.from = numbered(item.from);
        let mut named = item.named.pop().expect("one item");
        let ordinal = Col {
            name: "ordinality".into(),
            expr: Expr::Column(offset + named.columns.len()),
            ty: SqlType::Int8,
        };
        named.columns.push(ordinal);
        let named = rename(named, alias)?;
        Ok(Item { visible: named.columns.clone(), named: vec![named], from: item.from })
    }
}

/// A function's rows in FROM numbered (WITH ORDINALITY): a built-in
/// function numbers its own; a SQL function's body (plain, LATERAL, or
/// LATERAL beside its one empty row) is wrapped in [`From::Numbered`]
/// inside its LATERAL, so each run numbers its rows from 1.
fn numbered(from: From) -> From {
    match from {
        From::Function { func, args, .. } => From::Function { func, args, ordinality: true },
        From::Lateral { item, args } => From::Lateral { item: Box::new(numbered(*item)), args },
        From::Join(mut j) if matches!(&j.left, From::Values { columns, .. } if columns.is_empty()) => {
            j.right = numbered(j.right);
            From::Join(j)
        }
        other => From::Numbered(Box::new(other)),
    }
}

/// Whether `generate_series(a, b, step)` steps through time: a bound is a
/// date or timestamp, or the step an interval.
fn is_time_series(bound: &[Typed]) -> bool {
    let time = |t: &Typed| matches!(t.ty, Some(SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz));
    time(&bound[0]) || time(&bound[1]) || bound[2].ty == Some(SqlType::Interval)
}

/// A subquery in FROM that names a table to its left without LATERAL: the
/// error says why, as PostgreSQL's does.
fn sibling_reference(e: SqlError, left: Option<&Item>) -> SqlError {
    let sibling = e
        .message
        .strip_prefix("missing FROM-clause entry for table \"")
        .and_then(|rest| rest.strip_suffix('"'))
        .filter(|t| left.is_some_and(|l| l.named.iter().any(|n| n.alias == *t)));
    match sibling {
        Some(table) => SqlError::new(
            e.code,
            format!("invalid reference to FROM-clause entry for table \"{table}\""),
        )
        .with_hint(format!(
            "There is an entry for table \"{table}\", but it cannot be referenced from this part of the query."
        )),
        None => e,
    }
}

/// The outer values a lateral item's own scope gathered (none if it is not
/// lateral: a derived scope shares its query's, which are not its own).
fn taken(scope: &Scope<'_>, lateral: bool) -> Vec<Expr> {
    if lateral {
        scope.take_args()
    } else {
        Vec::new()
    }
}

/// `alias (a, b, …)` renames the first columns.
pub(super) fn rename(mut named: Named, alias: Option<&ast::TableAlias>) -> Result<Named, SqlError> {
    let Some(alias) = alias else { return Ok(named) };
    if alias.columns.len() > named.columns.len() {
        return Err(SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!(
                "table \"{}\" has {} columns available but {} columns specified",
                named.alias,
                named.columns.len(),
                alias.columns.len()
            ),
        ));
    }
    for (c, a) in named.columns.iter_mut().zip(&alias.columns) {
        c.name = ident(&a.name);
    }
    Ok(named)
}

/// The join of two bound items: names of both (an alias may appear only
/// once), the outer side's marked nullable, `visible` (empty: both sides'
/// columns, left then right).
fn combine(
    left: Item,
    right: Item,
    kind: JoinKind,
    on: Option<Expr>,
    visible: Vec<Col>,
) -> Result<Item, SqlError> {
    for r in &right.named {
        if left.named.iter().any(|l| l.alias == r.alias) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_ALIAS,
                format!("table name \"{}\" specified more than once", r.alias),
            ));
        }
    }
    let visible = if visible.is_empty() {
        let mut v = left.visible;
        v.extend(right.visible);
        v
    } else {
        visible
    };
    let mut named = left.named;
    let nullable_left = matches!(kind, JoinKind::Right | JoinKind::Full);
    let nullable_right = matches!(kind, JoinKind::Left | JoinKind::Full);
    for n in &mut named {
        n.nullable |= nullable_left;
    }
    named.extend(right.named.into_iter().map(|mut n| {
        n.nullable |= nullable_right;
        n
    }));
    let from = From::Join(Box::new(Join { left: left.from, right: right.from, kind, on }));
    Ok(Item { from, named, visible })
}

/// A sequence read as a relation: one row of its state when read
/// (last_value, log_cnt, is_called), as PostgreSQL shows it.
fn sequence_item(
    rel: &crate::plan::Rel,
    alias_name: String,
    alias: Option<&ast::TableAlias>,
    offset: usize,
) -> Result<Item, SqlError> {
    let names = [("last_value", SqlType::Int8), ("log_cnt", SqlType::Int8), ("is_called", SqlType::Bool)];
    let cell = |k: i64| {
        let args = vec![
            Expr::Const(snapscale_values::Value::Int(rel.entry.storage as i64)),
            Expr::Const(snapscale_values::Value::Text(rel.entry.name.clone())),
            Expr::Const(snapscale_values::Value::Int(k)),
        ];
        Expr::Func(crate::expr::Func::SequenceRow, args)
    };
    let row = (0..names.len() as i64).map(cell).collect();
    let columns: Vec<crate::plan::Column> =
        names.iter().map(|(n, ty)| crate::plan::Column { name: (*n).into(), ty: *ty }).collect();
    let cols = names
        .iter()
        .enumerate()
        .map(|(i, (n, ty))| Col { name: (*n).into(), expr: Expr::Column(offset + i), ty: *ty })
        .collect();
    let named = rename(Named { alias: alias_name, columns: cols, table: None, nullable: false }, alias)?;
    Ok(Item {
        visible: named.columns.clone(),
        named: vec![named],
        from: From::Values { rows: vec![row], columns },
    })
}

impl<R: Resolver> Binder<'_, R> {
    /// A trigger's transition table that an unqualified name finds, as
    /// the work table it is read as (TRIGGER-FIRE).
    fn transition_item(
        &mut self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        offset: usize,
    ) -> Result<Option<Item>, SqlError> {
        let [part] = name.0.as_slice() else { return Ok(None) };
        let Some(n) = part.as_ident().map(ident) else { return Ok(None) };
        let Some(columns) = self.resolver.transition_table(&n) else { return Ok(None) };
        let cols: Vec<Col> = columns
            .iter()
            .enumerate()
            .map(|(i, (c, ty))| Col { name: c.clone(), expr: Expr::Column(offset + i), ty: *ty })
            .collect();
        let alias_name = alias.map_or_else(|| n.clone(), |a| ident(&a.name));
        let named = rename(Named { alias: alias_name, columns: cols, table: None, nullable: false }, alias)?;
        let columns = columns.into_iter().map(|(name, ty)| crate::plan::Column { name, ty }).collect();
        let id = snapscale_engine::triggers::TransitionTable::id_of(&n);
        Ok(Some(Item {
            visible: named.columns.clone(),
            named: vec![named],
            from: From::WorkTable { id, columns },
        }))
    }
}
