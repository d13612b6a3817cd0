//! The columns a stored expression (a CHECK constraint's text) names, and
//! the same text with a column renamed.
//!
//! Constraints are kept as SQL text and bound again by each statement, so
//! what depends on a column is found in the text: a word that is not a
//! function's name (followed by `(`), not a qualifier (followed by `.`),
//! and not a type's name after `::`. Tokens keep their text, so writing
//! them back gives the expression as it was, a renamed column aside.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer, Word};

/// The column references of `text`: each word that reads a column, with
/// its name as the binder folds it (unquoted words in lower case).
fn references(tokens: &[Token]) -> Vec<(usize, String)> {
    let significant = |from: usize, step: isize| {
        let mut i = from as isize + step;
        while i >= 0 && (i as usize) < tokens.len() {
            if !matches!(tokens[i as usize], Token::Whitespace(_)) {
                return Some(&tokens[i as usize]);
            }
            i += step;
        }
        None
    };
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Word(w) = t else { continue };
        let next = significant(i, 1);
        let prev = if i == 0 { None } else { significant(i, -1) };
        if matches!(next, Some(Token::LParen | Token::Period)) || matches!(prev, Some(Token::DoubleColon)) {
            continue;
        }
        out.push((i, folded(w)));
    }
    out
}

fn folded(w: &Word) -> String {
    match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_lowercase(),
    }
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    Tokenizer::new(&PostgreSqlDialect {}, text).tokenize().ok()
}

/// The positions in `columns` of the columns `text` reads, in the order
/// it first reads them.
pub(crate) fn columns_read<'a>(text: &str, columns: impl Iterator<Item = &'a str> + Clone) -> Vec<usize> {
    let mut out = Vec::new();
    for (_, name) in tokens(text).as_deref().map(references).unwrap_or_default() {
        if let Some(p) = columns.clone().position(|c| c == name) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// `text` with column `old` renamed `new` (quoted where it must be).
pub(crate) fn rename_column(text: &str, old: &str, new: &str) -> String {
    let Some(mut tokens) = tokens(text) else { return text.to_owned() };
    for (i, name) in references(&tokens) {
        if name == old {
            tokens[i] = Token::Word(Word {
                value: new.to_owned(),
                quote_style: needs_quotes(new).then_some('"'),
                keyword: sqlparser::keywords::Keyword::NoKeyword,
            });
        }
    }
    tokens.iter().map(ToString::to_string).collect()
}

/// The name of the stored expression `text` in a made-up index name.
pub(crate) fn part_name(text: &str) -> String {
    super::parse_expr(text, crate::stack::DEFAULT_MAX_STACK_DEPTH)
        .map_or("expr".into(), |e| expression_name(&e))
}

/// The name PostgreSQL gives an expression in a made-up index name: a
/// function's name, a cast's type's, else `expr`.
pub(crate) fn expression_name(e: &sqlparser::ast::Expr) -> String {
    use sqlparser::ast::Expr as E;
    let name = |i: &sqlparser::ast::Ident| match i.quote_style {
        Some(_) => i.value.clone(),
        None => i.value.to_lowercase(),
    };
    match e {
        E::Nested(inner) => expression_name(inner),
        E::Function(f) => f.name.0.last().and_then(|p| p.as_ident()).map_or("expr".into(), name),
        E::Cast { data_type, .. } => data_type.to_string().to_lowercase(),
        E::CompoundIdentifier(parts) => parts.last().map_or("expr".into(), name),
        _ => "expr".into(),
    }
}

/// Whether a name must be quoted to read back as itself.
fn needs_quotes(name: &str) -> bool {
    let mut chars = name.chars();
    let plain_start = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    !(plain_start
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$'))
        || RESERVED.binary_search(&name).is_ok()
}

/// PostgreSQL 15's reserved keywords (a column of such a name is quoted;
/// other keywords read as names where a column's may stand).
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "current_catalog",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "initially",
    "intersect",
    "into",
    "lateral",
    "leading",
    "limit",
    "localtime",
    "localtimestamp",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "placing",
    "primary",
    "references",
    "returning",
    "select",
    "session_user",
    "some",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_words_are_sorted_and_quoted() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]));
        assert!(needs_quotes("select") && needs_quotes("Key") && !needs_quotes("key"));
    }

    #[test]
    fn finds_the_columns_an_expression_reads() {
        let cols = ["a", "b", "Mixed", "lower"];
        assert_eq!(columns_read("b < a AND a > 0", cols.iter().copied()), vec![1, 0]);
        assert_eq!(columns_read("lower(b) = 'a'", cols.iter().copied()), vec![1]);
        assert_eq!(columns_read("\"Mixed\" > t.a", cols.iter().copied()), vec![2, 0]);
        assert_eq!(columns_read("a::b > 0", cols.iter().copied()), vec![0]);
    }

    #[test]
    fn renames_a_column_where_it_is_read() {
        assert_eq!(rename_column("b < a AND a > 0", "a", "aa"), "b < aa AND aa > 0");
        assert_eq!(rename_column("a(a) > 'a'", "a", "New"), "a(\"New\") > 'a'");
        assert_eq!(rename_column("x > 0", "x", "select"), "\"select\" > 0");
    }
}
