//! Binding SQL's string syntax: `[NOT] LIKE / ILIKE … [ESCAPE …]` (of
//! text, and LIKE of bytea), `[NOT] SIMILAR TO … [ESCAPE …]`,
//! `TRIM([BOTH | LEADING | TRAILING] [chars] FROM s)`, `OVERLAY(s PLACING
//! r FROM n [FOR m])`, `SUBSTRING(s FROM pattern [FOR escape])` and
//! `SUBSTRING(s SIMILAR pattern ESCAPE escape)` (the parser makes the
//! second the first), and the string functions that return sets
//! (`regexp_matches`, `regexp_split_to_table`, `string_to_table`). Each
//! is what PostgreSQL's grammar makes of it: a call of the function its
//! rule names.

use snapscale_values::{Elem, SqlError, SqlType};
use sqlparser::ast;

use super::function::no_such_function;
use super::scope::Scope;
use super::{Binder, Coercion, Resolver, Typed};
use crate::expr::{scalar, Expr, Func};
use crate::plan::Srf;

fn text_like(ty: Option<SqlType>) -> bool {
    matches!(ty, Some(SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name))
}

impl<R: Resolver> Binder<'_, R> {
    /// A builtin called with arguments already bound.
    fn call_bound(&mut self, name: &str, mut args: Vec<Typed>) -> Result<Typed, SqlError> {
        match self.builtin(name, &mut args)? {
            Some(t) => Ok(t),
            None => Err(no_such_function(name, &args)),
        }
    }

    /// The expression forms of this module (kept out of `expr`'s frame,
    /// which bounds how deep expressions nest).
    #[inline(never)]
    pub(super) fn string_syntax(&mut self, e: &ast::Expr, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        use ast::Expr as E;
        match e {
            E::Like { negated, expr, pattern, escape_char: None, any }
            | E::ILike { negated, expr, pattern, escape_char: None, any }
                if *any || quantified_all(pattern).is_some() =>
            {
                let ilike = matches!(e, E::ILike { .. });
                self.like_quantified(expr, pattern, *any, *negated, ilike, scope)
            }
            E::Like { negated, expr, pattern, escape_char, .. } => {
                self.like_expr(expr, pattern, escape_char.as_deref(), *negated, false, scope)
            }
            E::ILike { negated, expr, pattern, escape_char, .. } => {
                self.like_expr(expr, pattern, escape_char.as_deref(), *negated, true, scope)
            }
            E::SimilarTo { negated, expr, pattern, escape_char } => {
                self.similar_to(expr, pattern, escape_char.as_deref(), *negated, scope)
            }
            E::Trim { expr, trim_where, trim_what, trim_characters } => {
                self.trim(expr, trim_where.as_ref(), trim_what.as_deref(), trim_characters.as_deref(), scope)
            }
            E::Overlay { expr, overlay_what, overlay_from, overlay_for } => {
                self.overlay(expr, overlay_what, overlay_from, overlay_for.as_deref(), scope)
            }
            other => Err(super::expr::unsupported_expression(other)),
        }
    }

    /// `a [NOT] LIKE p [ESCAPE e]` and `a [NOT] ILIKE p [ESCAPE e]`: LIKE
    /// of text, or of bytea (LIKE only); the escape rewrites the pattern
    /// (like_escape) for LIKE's own matching.
    fn like_expr(
        &mut self,
        e: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        negated: bool,
        ilike: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let a = self.expr(e, scope)?;
        let p = self.expr(pattern, scope)?;
        let esc = escape.map(|x| self.expr(x, scope)).transpose()?;
        let bytea = a.ty == Some(SqlType::Bytea) || a.ty.is_none() && p.ty == Some(SqlType::Bytea);
        let (ty, what) = match (bytea && !ilike, ilike) {
            (true, _) => (SqlType::Bytea, "LIKE"),
            (false, false) => (SqlType::Text, "LIKE"),
            (false, true) => (SqlType::Text, "ILIKE"),
        };
        let a = self.coerce(a, ty, Coercion::Implicit, what)?;
        let mut p = self.coerce(p, ty, Coercion::Implicit, what)?;
        if let Some(esc) = esc {
            let esc = self.coerce(esc, ty, Coercion::Implicit, what)?;
            let f = if ty == SqlType::Bytea { scalar::BYTEA_LIKE_ESCAPE } else { scalar::LIKE_ESCAPE };
            p = Expr::Func(Func::Scalar(f), vec![p, esc]);
        }
        let e = if ilike {
            // ILIKE: LIKE over both sides folded to lower case (the
            // wildcards and the escape character have no case).
            let lower = |e| Box::new(Expr::Func(Func::Lower, vec![e]));
            Expr::Like(lower(a), lower(p), negated)
        } else {
            Expr::Like(Box::new(a), Box::new(p), negated)
        };
        Ok(Typed { e, ty: Some(SqlType::Bool) })
    }

    /// `a [NOT] [I]LIKE ANY (array)` and `… ALL (array)` (which sqlparser
    /// reads as a call of `all`): the text against each pattern.
    fn like_quantified(
        &mut self,
        e: &ast::Expr,
        pattern: &ast::Expr,
        any: bool,
        negated: bool,
        icase: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let what = if icase { "ILIKE" } else { "LIKE" };
        let a = self.expr(e, scope)?;
        let a = self.coerce(a, SqlType::Text, Coercion::Implicit, what)?;
        let patterns = if any { pattern } else { quantified_all(pattern).expect("checked by the caller") };
        let p = self.expr(patterns, scope)?;
        let p = self.coerce(p, SqlType::Array(snapscale_values::Elem::Text), Coercion::Implicit, what)?;
        let f = Func::LikeAny { all: !any, negated, icase };
        Ok(Typed { e: Expr::Func(f, vec![a, p]), ty: Some(SqlType::Bool) })
    }

    /// `a [NOT] SIMILAR TO p [ESCAPE e]`: `a ~ similar_to_escape(p [, e])`.
    fn similar_to(
        &mut self,
        e: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let a = self.expr(e, scope)?;
        let a = self.coerce(a, SqlType::Text, Coercion::Implicit, "SIMILAR TO")?;
        let p = self.expr(pattern, scope)?;
        let mut args = vec![self.coerce(p, SqlType::Text, Coercion::Implicit, "SIMILAR TO")?];
        if let Some(x) = escape {
            let esc = self.expr(x, scope)?;
            args.push(self.coerce(esc, SqlType::Text, Coercion::Implicit, "SIMILAR TO")?);
        }
        let re = Expr::Func(Func::Scalar(scalar::SIMILAR_TO_ESCAPE), args);
        let op = if negated { scalar::TEXTREGEXNE } else { scalar::TEXTREGEXEQ };
        Ok(Typed { e: Expr::Func(Func::Scalar(op), vec![a, re]), ty: Some(SqlType::Bool) })
    }

    /// `TRIM([BOTH | LEADING | TRAILING] [chars FROM] s)`: btrim, ltrim or
    /// rtrim of s (and chars), of text or of bytea.
    fn trim(
        &mut self,
        e: &ast::Expr,
        side: Option<&ast::TrimWhereField>,
        what: Option<&ast::Expr>,
        characters: Option<&[ast::Expr]>,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let name = match side {
            Some(ast::TrimWhereField::Leading) => "ltrim",
            Some(ast::TrimWhereField::Trailing) => "rtrim",
            _ => "btrim",
        };
        let mut args = vec![self.expr(e, scope)?];
        for x in what.into_iter().chain(characters.unwrap_or_default()) {
            args.push(self.expr(x, scope)?);
        }
        self.call_bound(name, args)
    }

    /// `OVERLAY(s PLACING r FROM n [FOR m])`: overlay(s, r, n [, m]), of
    /// text or of bytea.
    fn overlay(
        &mut self,
        e: &ast::Expr,
        what: &ast::Expr,
        from: &ast::Expr,
        count: Option<&ast::Expr>,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let mut args = Vec::with_capacity(4);
        for x in [e, what, from].into_iter().chain(count) {
            args.push(self.expr(x, scope)?);
        }
        self.call_bound("overlay", args)
    }

    /// `substring(s FROM a [FOR b])` with its arguments bound: of bytea;
    /// of text by a pattern (a regular expression, or with `FOR` a SQL
    /// regular expression and its escape) when `a` is text, or unknown
    /// with `b` not a number, as PostgreSQL resolves it; else by position.
    pub(super) fn bind_substring(
        &mut self,
        s: Typed,
        from: Typed,
        count: Option<Typed>,
    ) -> Result<Typed, SqlError> {
        let pattern = text_like(from.ty)
            || from.ty.is_none() && count.as_ref().is_none_or(|c| c.ty.is_none() || text_like(c.ty));
        if s.ty == Some(SqlType::Bytea) || pattern {
            let mut args = vec![s, from];
            args.extend(count);
            return self.call_bound("substring", args);
        }
        let mut args = vec![self.coerce_any_text(s)?];
        for t in std::iter::once(from).chain(count) {
            args.push(self.coerce(t, SqlType::Int8, Coercion::Implicit, "argument of substring")?);
        }
        Ok(Typed { e: Expr::Func(Func::Substring, args), ty: Some(SqlType::Text) })
    }

    /// `regexp_matches`, `regexp_split_to_table` and `string_to_table`:
    /// the rows of the array their scalar form returns.
    pub(super) fn string_set_function(
        &mut self,
        name: &str,
        bound: Vec<Typed>,
    ) -> Result<(Srf, Vec<Expr>, SqlType), SqlError> {
        let what = format!("argument of {name}");
        let args = bound
            .into_iter()
            .map(|t| self.coerce(t, SqlType::Text, Coercion::Implicit, &what))
            .collect::<Result<Vec<_>, _>>()?;
        let (f, ty) = match name {
            "regexp_matches" => (scalar::REGEXP_MATCHES, SqlType::Array(Elem::Text)),
            "regexp_split_to_table" => (scalar::REGEXP_SPLIT_TO_TABLE, SqlType::Text),
            _ => (scalar::STRING_TO_TABLE, SqlType::Text),
        };
        Ok((Srf::Elements(f), args, ty))
    }
}

/// The argument of `ALL (x)` as sqlparser reads it after LIKE: a call of a
/// function named `all`.
fn quantified_all(pattern: &ast::Expr) -> Option<&ast::Expr> {
    let ast::Expr::Function(f) = pattern else { return None };
    if f.name.0.len() != 1 || !f.name.to_string().eq_ignore_ascii_case("all") {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
            _ => None,
        },
        _ => None,
    }
}
