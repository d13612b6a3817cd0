//! ALTER SEQUENCE, which sqlparser's grammar lacks. Its options are
//! CREATE SEQUENCE's (read by sqlparser from `CREATE SEQUENCE name
//! options`, in any order: sequence_syntax.rs) and RESTART [[WITH] n],
//! read here; RENAME TO is read here too.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{self, ObjectName};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::lock_syntax::{keyword, may_start_with, offset, significant_tokens};

/// ALTER SEQUENCE [IF EXISTS] name action.
#[derive(Debug)]
pub struct AlterSequence {
    pub name: ObjectName,
    pub if_exists: bool,
    pub action: SequenceAction,
}

#[derive(Debug)]
pub enum SequenceAction {
    /// Options: AS type, INCREMENT, [NO] MINVALUE / MAXVALUE, START,
    /// CACHE, [NO] CYCLE, OWNED BY, and RESTART.
    Options(Box<SequenceChanges>),
    /// RENAME TO name.
    Rename(ObjectName),
    /// A form PostgreSQL has and this server does not (its words).
    Unsupported(&'static str),
}

/// The options of an ALTER SEQUENCE.
#[derive(Debug)]
pub struct SequenceChanges {
    pub data_type: Option<ast::DataType>,
    pub options: Vec<ast::SequenceOptions>,
    pub owned_by: Option<ObjectName>,
    /// RESTART (`Some(None)`: at START).
    pub restart: Option<Option<ast::Expr>>,
}

fn syntax_error(near: &str) -> SqlError {
    let message = match near {
        "" => "syntax error at end of input".to_owned(),
        near => format!("syntax error at or near \"{near}\""),
    };
    SqlError::new(SqlState::SYNTAX_ERROR, message)
}

/// The statement if `sql` is an ALTER SEQUENCE; `None` for other text.
pub(crate) fn parse_alter_sequence(sql: &str) -> Option<Result<AlterSequence, SqlError>> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::ALTER) || kw(1) != Some(Keyword::SEQUENCE) {
        return None;
    }
    Some(parse(sql, &tokens))
}

fn parse(sql: &str, tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Result<AlterSequence, SqlError> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let near = |i: usize| match tokens.get(i).map(|t| &t.token) {
        None | Some(Token::EOF) => String::new(),
        Some(t) => t.to_string(),
    };
    let end =
        tokens.iter().position(|t| matches!(t.token, Token::SemiColon | Token::EOF)).unwrap_or(tokens.len());
    let mut i = 2;
    let if_exists = kw(i) == Some(Keyword::IF) && kw(i + 1) == Some(Keyword::EXISTS);
    if if_exists {
        i += 2;
    }
    let name_at = i;
    let name = object_name(tokens, &mut i).ok_or_else(|| syntax_error(&near(name_at)))?;
    let action = match kw(i) {
        Some(Keyword::RENAME) if kw(i + 1) == Some(Keyword::TO) => {
            let mut j = i + 2;
            let new = object_name(tokens, &mut j).ok_or_else(|| syntax_error(&near(i + 2)))?;
            if j != end {
                return Err(syntax_error(&near(j)));
            }
            SequenceAction::Rename(new)
        }
        Some(Keyword::OWNER) if kw(i + 1) == Some(Keyword::TO) => {
            SequenceAction::Unsupported("ALTER SEQUENCE … OWNER TO")
        }
        Some(Keyword::SET) if kw(i + 1) == Some(Keyword::SCHEMA) => {
            SequenceAction::Unsupported("ALTER SEQUENCE … SET SCHEMA")
        }
        Some(Keyword::SET) if matches!(kw(i + 1), Some(Keyword::LOGGED | Keyword::UNLOGGED)) => {
            SequenceAction::Unsupported("ALTER SEQUENCE … SET LOGGED / UNLOGGED")
        }
        _ if i >= end => return Err(syntax_error(&near(i))),
        _ => options(sql, tokens, i, end)?,
    };
    Ok(AlterSequence { name, if_exists, action })
}

/// A possibly qualified name at `*i`, moving past it.
fn object_name(tokens: &[sqlparser::tokenizer::TokenWithSpan], i: &mut usize) -> Option<ObjectName> {
    let mut parts = Vec::new();
    loop {
        let Token::Word(w) = &tokens.get(*i)?.token else { return None };
        parts.push(ast::Ident { value: w.value.clone(), quote_style: w.quote_style, span: tokens[*i].span });
        *i += 1;
        if !matches!(tokens.get(*i).map(|t| &t.token), Some(Token::Period)) {
            return Some(ObjectName::from(parts));
        }
        *i += 1;
    }
}

/// The options from token `from` to `end`: RESTART [[WITH] n] taken out,
/// the rest read by sqlparser as CREATE SEQUENCE's.
fn options(
    sql: &str,
    tokens: &[sqlparser::tokenizer::TokenWithSpan],
    from: usize,
    end: usize,
) -> Result<SequenceAction, SqlError> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let at = |i: usize| offset(&line_starts, sql, tokens[i].span.start);
    let until = |i: usize| offset(&line_starts, sql, tokens[i].span.end);
    let mut kept = String::new();
    let mut restart = None;
    let mut i = from;
    let mut piece_start = at(from);
    while i < end {
        if kw(i) != Some(Keyword::RESTART) {
            i += 1;
            continue;
        }
        kept.push_str(&sql[piece_start..at(i)]);
        let mut j = i + 1;
        if kw(j) == Some(Keyword::WITH) {
            j += 1;
        }
        // An optionally signed number.
        let value_from = j;
        if matches!(tokens.get(j).map(|t| &t.token), Some(Token::Minus | Token::Plus)) {
            j += 1;
        }
        let value = match tokens.get(j).map(|t| &t.token) {
            Some(Token::Number(..)) if j < end => {
                let text = &sql[at(value_from)..until(j)];
                j += 1;
                Some(
                    super::parse_expr(text, crate::stack::DEFAULT_MAX_STACK_DEPTH)
                        .map_err(|_| syntax_error(text))?,
                )
            }
            _ if j > i + 1 && kw(i + 1) == Some(Keyword::WITH) => {
                return Err(syntax_error(&tokens[j].token.to_string()))
            }
            _ => None,
        };
        restart = Some(value);
        piece_start = if j < tokens.len() { at(j) } else { sql.len() };
        i = j;
    }
    let stop = if end < tokens.len() { at(end) } else { sql.len() };
    if piece_start < stop {
        kept.push_str(&sql[piece_start..stop]);
    }
    if kept.trim().is_empty() {
        let changes = SequenceChanges { data_type: None, options: Vec::new(), owned_by: None, restart };
        return Ok(SequenceAction::Options(Box::new(changes)));
    }
    let text = format!("CREATE SEQUENCE altered {kept}");
    let text = super::sequence_syntax::canonical_create_sequence(&text).unwrap_or(text);
    let parsed = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, &text);
    match parsed.as_deref() {
        Ok([ast::Statement::CreateSequence { data_type, sequence_options, owned_by, .. }]) => {
            Ok(SequenceAction::Options(Box::new(SequenceChanges {
                data_type: data_type.clone(),
                options: sequence_options.clone(),
                owned_by: owned_by.clone(),
                restart,
            })))
        }
        _ => {
            let word = kept.split_whitespace().next().unwrap_or("").to_owned();
            Err(syntax_error(&word))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options_of(sql: &str) -> (usize, Option<Option<String>>, bool) {
        match parse_alter_sequence(sql).unwrap().unwrap().action {
            SequenceAction::Options(c) => {
                (c.options.len(), c.restart.map(|r| r.map(|e| e.to_string())), c.data_type.is_some())
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_and_restart_are_read() {
        assert_eq!(options_of("ALTER SEQUENCE s RESTART"), (0, Some(None), false));
        assert_eq!(options_of("alter sequence s restart with 7"), (0, Some(Some("7".into())), false));
        assert_eq!(
            options_of("ALTER SEQUENCE s START 5 RESTART -3 INCREMENT BY 2"),
            (2, Some(Some("-3".into())), false)
        );
        assert_eq!(options_of("ALTER SEQUENCE IF EXISTS public.s AS smallint NO CYCLE"), (1, None, true));
        let a = parse_alter_sequence("ALTER SEQUENCE s RENAME TO t").unwrap().unwrap();
        assert!(matches!(a.action, SequenceAction::Rename(n) if n.to_string() == "t"));
        assert!(parse_alter_sequence("ALTER SEQUENCE s").unwrap().is_err());
        assert!(parse_alter_sequence("ALTER SEQUENCE s BOGUS 1").unwrap().is_err());
        assert!(parse_alter_sequence("ALTER TABLE s RENAME TO t").is_none());
    }
}
