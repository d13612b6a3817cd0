//! Stored expressions (column defaults, CHECK constraints) printed as
//! PostgreSQL's pg_get_expr and pg_get_constraintdef print them.

use snapscale_values::{quote_ident, Elem, SqlType};
use sqlparser::ast;

use super::functions::format_type;
use super::relations::typmod;
use super::types::type_name;

/// Where an operator stands, for pretty printing: PostgreSQL leaves out
/// the parentheses its precedence makes needless.
#[derive(Clone)]
enum Parent {
    /// The whole expression.
    Top,
    /// An operand of this binary operator, its left one if `true`.
    Op(ast::BinaryOperator, bool),
    /// Anything else (a cast, a unary minus).
    Other,
}

impl Parent {
    /// Whether `op` under this parent prints without parentheses.
    fn needs_no_parentheses(&self, op: &ast::BinaryOperator) -> bool {
        use ast::BinaryOperator as B;
        let additive = |o: &B| matches!(o, B::Plus | B::Minus);
        let multiplicative = |o: &B| matches!(o, B::Multiply | B::Divide | B::Modulo);
        let logical = |o: &B| matches!(o, B::And | B::Or);
        match self {
            Parent::Top => true,
            Parent::Other => false,
            // AND inside AND or OR, OR inside OR.
            Parent::Op(p @ (B::And | B::Or), _) if logical(op) => {
                matches!((op, p), (B::And, _) | (B::Or, B::Or))
            }
            // Any other operator as an operand of AND or OR.
            Parent::Op(B::And | B::Or, _) => true,
            Parent::Op(p, left) => {
                if !(additive(op) || multiplicative(op)) || !(additive(p) || multiplicative(p)) {
                    return false;
                }
                if multiplicative(op) && additive(p) {
                    return true;
                }
                if additive(op) && multiplicative(p) {
                    return false;
                }
                *left
            }
        }
    }
}

/// Prints an expression as PostgreSQL's ruleutils prints a stored one:
/// constants with their type (`'x'::text`, `'-1'::integer`), operators in
/// parentheses unless pretty.
pub(super) struct Deparse<'a> {
    pub pretty: bool,
    /// The columns the expression may read (a CHECK constraint's table's),
    /// whose types type the constants compared with them.
    pub columns: &'a [snapscale_engine::catalog::ColumnDef],
}

impl Deparse<'_> {
    /// The type of `e` if it reads a column.
    fn column_type(&self, e: &ast::Expr) -> Option<SqlType> {
        let name = match e {
            ast::Expr::Identifier(i) if i.quote_style.is_none() => i.value.to_lowercase(),
            ast::Expr::Identifier(i) => i.value.clone(),
            ast::Expr::Nested(inner) => return self.column_type(inner),
            _ => return None,
        };
        self.columns.iter().find(|c| c.name == name).map(|c| c.ty)
    }

    /// A whole stored expression whose value becomes a `target`.
    pub fn top(&self, e: &ast::Expr, target: Option<SqlType>) -> String {
        self.expr(e, target, Parent::Top)
    }

    /// `e` whose value becomes a `target` (a constant is typed by it),
    /// inside `parent`.
    fn expr(&self, e: &ast::Expr, target: Option<SqlType>, parent: Parent) -> String {
        use ast::Expr as E;
        match e {
            E::Nested(inner) => self.expr(inner, target, parent),
            E::Value(v) => self.constant(&v.value, false, target),
            E::UnaryOp { op: ast::UnaryOperator::Minus, expr } => match expr.as_ref() {
                E::Value(v) => self.constant(&v.value, true, target),
                other => format!("-{}", self.expr(other, target, Parent::Other)),
            },
            E::Identifier(i) if i.quote_style.is_none() => {
                let k = i.value.to_uppercase();
                if ["CURRENT_TIMESTAMP", "CURRENT_DATE", "LOCALTIMESTAMP", "CURRENT_USER", "SESSION_USER"]
                    .contains(&k.as_str())
                {
                    k
                } else {
                    quote_ident(&i.value.to_lowercase())
                }
            }
            E::Function(f) if matches!(f.args, ast::FunctionArguments::None) => {
                f.name.to_string().to_uppercase()
            }
            E::Function(f) => {
                let name = f.name.to_string().to_lowercase();
                let args: Vec<String> = match &f.args {
                    ast::FunctionArguments::List(list) => list
                        .args
                        .iter()
                        .map(|a| match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                                self.expr(x, None, Parent::Top)
                            }
                            other => other.to_string(),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                format!("{name}({})", args.join(", "))
            }
            E::Cast { expr, data_type, .. } => {
                let ty = SqlType::from_name(&data_type.to_string(), None).ok();
                let inner = self.expr(expr, ty, Parent::Other);
                match (expr.as_ref(), ty) {
                    // The constant already carries the type.
                    (E::Value(_), Some(_)) => inner,
                    (_, Some(t)) => format!("({inner})::{}", format_type(t.oid(), typmod(t))),
                    _ => format!("({inner})::{data_type}"),
                }
            }
            E::BinaryOp { left, op, right } => {
                // A constant compared with a column takes its type.
                let s = format!(
                    "{} {op} {}",
                    self.expr(left, self.column_type(right), Parent::Op(op.clone(), true)),
                    self.expr(right, self.column_type(left), Parent::Op(op.clone(), false))
                );
                if self.pretty && parent.needs_no_parentheses(op) {
                    s
                } else {
                    format!("({s})")
                }
            }
            other => other.to_string(),
        }
    }

    fn constant(&self, v: &ast::Value, negative: bool, target: Option<SqlType>) -> String {
        let sign = if negative { "-" } else { "" };
        match v {
            ast::Value::Number(n, _) => {
                let integer = n.parse::<i64>().is_ok();
                let ty = match (target, integer) {
                    (Some(SqlType::Int8), true) => "bigint",
                    (_, true) if n.parse::<i64>().is_ok_and(|i| i32::try_from(i).is_ok()) => "integer",
                    (_, true) => "bigint",
                    _ => "numeric",
                };
                if negative {
                    format!("'-{n}'::{ty}")
                } else {
                    n.clone()
                }
            }
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                let text = format!("{sign}{s}");
                match target {
                    Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid)
                        if text.trim().parse::<i64>().is_ok() =>
                    {
                        let n: i64 = text.trim().parse().unwrap_or_default();
                        if n < 0 {
                            format!("'{n}'::{}", type_name(target.unwrap_or(SqlType::Int4)))
                        } else {
                            n.to_string()
                        }
                    }
                    Some(SqlType::Bool) => match snapscale_values::Value::parse(SqlType::Bool, &text) {
                        Ok(snapscale_values::Value::Bool(b)) => b.to_string(),
                        _ => format!("'{}'::boolean", text.replace('\'', "''")),
                    },
                    Some(t) => {
                        let name = match t {
                            SqlType::Char(_) => "bpchar".to_owned(),
                            SqlType::Array(Elem::Text) => "text[]".to_owned(),
                            other => type_name(other),
                        };
                        format!("'{}'::{name}", text.replace('\'', "''"))
                    }
                    None => format!("'{}'::text", text.replace('\'', "''")),
                }
            }
            ast::Value::Boolean(b) => b.to_string(),
            ast::Value::Null => "NULL".into(),
            other => other.to_string(),
        }
    }
}

/// A view's query as pg_get_viewdef lays it out: one clause per line,
/// PostgreSQL's indentation, a select list item per line, a semicolon at
/// the end. The expressions are as sqlparser writes them (not PostgreSQL's
/// reconstruction from the parsed tree, which qualifies every column and
/// adds parentheses and casts).
pub(super) fn view_definition(state: &super::CatalogState, query: &str) -> String {
    let parsed = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, query);
    let Ok(mut statements) = parsed else { return format!(" {query};") };
    let Some(ast::Statement::Query(mut q)) = statements.pop() else { return format!(" {query};") };
    as_postgres_names(state, &mut q);
    let ast::SetExpr::Select(s) = q.body.as_ref() else { return format!(" {query};") };
    if q.with.is_some() || q.fetch.is_some() || !q.locks.is_empty() {
        return format!(" {query};");
    }
    let mut out = String::from(" SELECT ");
    match &s.distinct {
        Some(ast::Distinct::Distinct) => out.push_str("DISTINCT "),
        Some(ast::Distinct::On(on)) => {
            let on: Vec<String> = on.iter().map(|e| e.to_string()).collect();
            out.push_str(&format!("DISTINCT ON ({}) ", on.join(", ")));
        }
        _ => {}
    }
    let items: Vec<String> = s.projection.iter().map(|i| i.to_string()).collect();
    out.push_str(&items.join(",\n    "));
    if !s.from.is_empty() {
        let from: Vec<String> =
            s.from.iter().map(|f| crate::parse::rows_from_syntax::shown(&f.to_string())).collect();
        out.push_str(&format!("\n   FROM {}", from.join(",\n    ")));
    }
    let wrapped = |e: &ast::Expr| match e {
        ast::Expr::BinaryOp { .. } => format!("({e})"),
        e => e.to_string(),
    };
    if let Some(w) = &s.selection {
        out.push_str(&format!("\n  WHERE {}", wrapped(w)));
    }
    if let ast::GroupByExpr::Expressions(g, _) = &s.group_by {
        if !g.is_empty() {
            let g: Vec<String> = g.iter().map(|e| e.to_string()).collect();
            out.push_str(&format!("\n  GROUP BY {}", g.join(", ")));
        }
    }
    if let Some(h) = &s.having {
        out.push_str(&format!("\n HAVING {}", wrapped(h)));
    }
    if let Some(o) = &q.order_by {
        out.push_str(&format!("\n  {o}"));
    }
    if let Some(l) = &q.limit_clause {
        out.push_str(&format!("\n {}", l.to_string().trim_start()));
    }
    out.push(';');
    out
}

/// The names of a stored view query as PostgreSQL's ruleutils prints
/// them: an identifier quoted only where quote_identifier quotes it (the
/// stored text quotes every keyword sqlparser knows), and a relation's
/// schema left out where the search_path finds it by its name alone.
fn as_postgres_names(state: &super::CatalogState, q: &mut ast::Query) {
    use crate::expr::scalar::text::quote_identifier;
    let requote = |i: &mut ast::Ident| {
        i.quote_style = (quote_identifier(&i.value) != i.value).then_some('"');
    };
    let _ = ast::visit_expressions_mut(q, |e| {
        match e {
            ast::Expr::Identifier(i) => requote(i),
            ast::Expr::CompoundIdentifier(parts) => parts.iter_mut().for_each(requote),
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    let _ = ast::visit_relations_mut(q, |n| {
        if let [schema, name] = n.0.as_slice() {
            if let (Some(s), Some(t)) = (schema.as_ident(), name.as_ident()) {
                let bare = quote_ident(&t.value);
                let full = format!("{}.{bare}", quote_ident(&s.value));
                let found = |name: &str| state.relation_by_name(name).map(|(oid, _)| oid);
                if found(&bare).is_some_and(|o| found(&full) == Some(o)) {
                    *n = ast::ObjectName::from(vec![t.clone()]);
                }
            }
        }
        for part in n.0.iter_mut() {
            if let ast::ObjectNamePart::Identifier(i) = part {
                requote(i);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}
