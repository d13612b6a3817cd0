//! `ROWS FROM (f(…), g(…), …)` and `unnest(a, b, …)` in FROM: several
//! functions whose rows are zipped, the n-th row of each side by side,
//! NULLs for a function that has run out of rows, as many rows as the
//! longest has (PostgreSQL's multi-function FunctionScan). The parser
//! writes ROWS FROM as a call of [`ROWS_FROM`] (parse/rows_from_syntax.rs).

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr};

use super::from::{rename, Item};
use super::scope::{Col, Named, Scope};
use super::{ident, not_supported, Binder, Resolver};
use crate::expr::Expr;
use crate::parse::rows_from_syntax::{COLUMN_DEFS, ROWS_FROM};
use crate::plan::{From, ZipItem};

/// One function of a ROWS FROM: its name, arguments and column
/// definition list.
struct Member {
    name: ast::ObjectName,
    args: Vec<FunctionArg>,
    definitions: Option<ast::TableAlias>,
}

/// Whether `name` is the parser's mark for ROWS FROM.
pub(super) fn is_rows_from(name: &ast::ObjectName) -> bool {
    matches!(name.0.as_slice(), [part] if part.as_ident().is_some_and(|i| i.value == ROWS_FROM))
}

impl<R: Resolver> Binder<'_, R> {
    /// ROWS FROM's functions (the [`ROWS_FROM`] call's arguments), zipped.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rows_from(
        &mut self,
        args: &[FunctionArg],
        alias: Option<&ast::TableAlias>,
        offset: usize,
        base: &Scope<'_>,
        left: Option<&Item>,
        ordinality: bool,
    ) -> Result<Item, SqlError> {
        let mut members = Vec::with_capacity(args.len());
        for a in args {
            members.push(member(a, self.stack.limit())?);
        }
        if members.len() > 1 && alias.is_some_and(|a| a.columns.iter().any(|c| c.data_type.is_some())) {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "ROWS FROM() with multiple functions cannot have a column definition list",
            )
            .with_hint("Put a separate column definition list for each function inside ROWS FROM()."));
        }
        // One function with a column definition list after it: its own.
        if let ([m], Some(a)) = (members.as_mut_slice(), alias) {
            if m.definitions.is_none() && a.columns.iter().any(|c| c.data_type.is_some()) {
                m.definitions = Some(a.clone());
            }
        }
        let default_alias = members
            .first()
            .and_then(|m| m.name.0.last())
            .and_then(|p| p.as_ident())
            .map(ident)
            .unwrap_or_default();
        self.zip(members, alias, default_alias, offset, base, left, ordinality)
    }

    /// `unnest(a, b, …)` in FROM: each array unnested, zipped.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn unnest_zipped(
        &mut self,
        args: &[FunctionArg],
        alias: Option<&ast::TableAlias>,
        offset: usize,
        base: &Scope<'_>,
        left: Option<&Item>,
        ordinality: bool,
    ) -> Result<Item, SqlError> {
        if alias.is_some_and(|a| a.columns.iter().any(|c| c.data_type.is_some())) {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "UNNEST() with multiple arguments cannot have a column definition list",
            )
            .with_hint("Use separate UNNEST() calls inside ROWS FROM(), and attach a column definition list to each one."));
        }
        let name = ast::ObjectName::from(vec![ast::Ident::new("unnest")]);
        let members = args
            .iter()
            .map(|a| Member { name: name.clone(), args: vec![a.clone()], definitions: None })
            .collect();
        self.zip(members, alias, "unnest".to_owned(), offset, base, left, ordinality)
    }

    /// The members bound one after another (each LATERAL over `left`),
    /// their rows zipped, numbered after them WITH ORDINALITY.
    #[allow(clippy::too_many_arguments)]
    fn zip(
        &mut self,
        members: Vec<Member>,
        alias: Option<&ast::TableAlias>,
        default_alias: String,
        offset: usize,
        base: &Scope<'_>,
        left: Option<&Item>,
        ordinality: bool,
    ) -> Result<Item, SqlError> {
        let mut items = Vec::with_capacity(members.len());
        let mut columns: Vec<Col> = Vec::new();
        let mut lateral_args: Vec<Expr> = Vec::new();
        let mut at = offset;
        for m in members {
            let item = self.function_scan(&m.name, m.definitions.as_ref(), &m.args, at, base, left, false)?;
            let cols: Vec<Col> = item.named.into_iter().flat_map(|n| n.columns).collect();
            let width = cols.len();
            // Beside the items to its left, a function run once beside an
            // empty row (its outer values the enclosing query's) is run
            // with the zip's outer values, its own among them.
            let from = match item.from {
                From::Join(j) if left.is_some() && is_beside(&j) => j.right,
                other => other,
            };
            let (from, args) = match from {
                From::Lateral { item, args } => {
                    let range = lateral_args.len()..lateral_args.len() + args.len();
                    lateral_args.extend(args);
                    (*item, Some(range))
                }
                other => (other, None),
            };
            items.push(ZipItem { from, width, args });
            columns.extend(cols);
            at += width;
        }
        if ordinality {
            columns.push(Col { name: "ordinality".into(), expr: Expr::Column(at), ty: SqlType::Int8 });
        }
        let alias_name = alias.map_or(default_alias, |a| ident(&a.name));
        // The definition lists are the members' own: the alias names.
        let names = alias.map(|a| ast::TableAlias {
            columns: a
                .columns
                .iter()
                .map(|c| ast::TableAliasColumnDef { data_type: None, ..c.clone() })
                .collect(),
            ..a.clone()
        });
        let named =
            rename(Named { alias: alias_name, columns, table: None, nullable: false }, names.as_ref())?;
        let zip = From::Zip { items, ordinality };
        let from = self.lateral_item(zip, lateral_args)?;
        Ok(Item { visible: named.columns.clone(), named: vec![named], from })
    }
}

/// Whether `j` is a LATERAL item run once beside one empty row.
fn is_beside(j: &crate::plan::Join) -> bool {
    matches!(&j.left, From::Values { rows, columns } if columns.is_empty() && rows.len() == 1)
        && matches!(j.right, From::Lateral { .. })
        && j.on.is_none()
}

/// A ROWS FROM argument read back: a call, or a call with its column
/// definition list (the [`COLUMN_DEFS`] mark).
fn member(a: &FunctionArg, limit: usize) -> Result<Member, SqlError> {
    let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
        return Err(not_supported(format!("ROWS FROM item {a}")));
    };
    let call = |e: &ast::Expr| -> Result<(ast::ObjectName, Vec<FunctionArg>), SqlError> {
        match e {
            ast::Expr::Function(f) => {
                let args = match &f.args {
                    ast::FunctionArguments::List(l) => l.args.clone(),
                    ast::FunctionArguments::None => Vec::new(),
                    ast::FunctionArguments::Subquery(_) => return Err(not_supported("this ROWS FROM item")),
                };
                Ok((f.name.clone(), args))
            }
            _ => Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{e}\""))),
        }
    };
    let (name, args) = call(e)?;
    let marked = matches!(name.0.as_slice(), [p] if p.as_ident().is_some_and(|i| i.value == COLUMN_DEFS));
    if !marked {
        return Ok(Member { name, args, definitions: None });
    }
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(inner)), FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Value(v)))] =
        args.as_slice()
    else {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error in ROWS FROM"));
    };
    let (name, args) = call(inner)?;
    let Some(text) = v.value.clone().into_string() else {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error in ROWS FROM"));
    };
    let fname = name.0.last().and_then(|p| p.as_ident()).cloned().unwrap_or_else(|| ast::Ident::new(""));
    Ok(Member { definitions: Some(definitions(&fname, &text, limit)?), name, args })
}

/// A column definition list's text read as an alias `name (…)`.
fn definitions(name: &ast::Ident, text: &str, limit: usize) -> Result<ast::TableAlias, SqlError> {
    let sql = format!("SELECT * FROM f() AS {name} ({text})");
    let mut parsed = crate::parse::parse(&sql, limit)?;
    if let Some(crate::parse::Parsed::Sql(ast)) = parsed.pop() {
        if let Some(ast::Statement::Query(q)) = ast.statement.as_deref() {
            if let ast::SetExpr::Select(s) = q.body.as_ref() {
                if let Some(twj) = s.from.first() {
                    if let ast::TableFactor::Table { alias: Some(a), .. } = &twj.relation {
                        return Ok(a.clone());
                    }
                }
            }
        }
    }
    Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error in a column definition list"))
}
