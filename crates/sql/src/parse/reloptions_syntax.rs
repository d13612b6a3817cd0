//! Storage parameters in PostgreSQL's grammar, which sqlparser's lacks:
//! an element may have a namespace (`toast.autovacuum_enabled = off`) or
//! no value (`autovacuum_enabled`), and its value is kept as PostgreSQL
//! keeps it (an integer as its number, anything else as written).
//!
//! - `CREATE TABLE / INDEX / VIEW / MATERIALIZED VIEW … WITH (…)` and
//!   CREATE TABLE's `WITHOUT OIDS`: the clause is blanked out of the text
//!   (positions stay) and the list kept for the binder.
//! - `ALTER {TABLE | INDEX | VIEW | MATERIALIZED VIEW} [IF EXISTS] [ONLY]
//!   name {SET | RESET} (…)`, as the statement's one action, is read
//!   whole ([`parse_alter_options`]).
//!
//! What a list means is the binder's (bind/reloptions.rs).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{
    alter_target, altered_kind, blank, keyword, may_start_with, significant_tokens, statement_tokens,
};

pub use crate::statement::StorageParam;

/// What an ALTER … SET / RESET (…) names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionsTarget {
    Table,
    Index,
    View,
    MatView,
}

/// `ALTER … {SET | RESET} (…)`.
#[derive(Clone, Debug)]
pub struct AlterOptions {
    pub target: OptionsTarget,
    pub if_exists: bool,
    pub name: sqlparser::ast::ObjectName,
    pub reset: bool,
    pub params: Vec<StorageParam>,
}

/// `sql` without its CREATE statement's `WITH (…)` storage parameters (or
/// `WITHOUT OIDS`, an empty list), and the list; `None` for any other
/// text, or a list this grammar cannot read (sqlparser then reports it).
pub(crate) fn read_create_options(sql: &str) -> Option<(String, Vec<StorageParam>)> {
    if !may_start_with(sql, "create") || !sql.as_bytes().windows(4).any(|w| w.eq_ignore_ascii_case(b"with")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::CREATE) {
        return None;
    }
    // The object: the clause ends before the query (AS) or, for an index,
    // its predicate (WHERE).
    let mut i = 1;
    if kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    while matches!(
        kw(i),
        Some(
            Keyword::TEMP
                | Keyword::TEMPORARY
                | Keyword::GLOBAL
                | Keyword::LOCAL
                | Keyword::UNLOGGED
                | Keyword::UNIQUE
                | Keyword::RECURSIVE
                | Keyword::MATERIALIZED
        )
    ) {
        i += 1;
    }
    let stop = match kw(i) {
        Some(Keyword::TABLE | Keyword::VIEW) => Keyword::AS,
        Some(Keyword::INDEX) => Keyword::WHERE,
        _ => return None,
    };
    let mut depth = 0usize;
    for j in i + 1..tokens.len() {
        match tokens[j].token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            _ if kw(j) == Some(stop) => return None,
            _ if kw(j) == Some(Keyword::WITHOUT) && stop == Keyword::AS => {
                let oids = matches!(&tokens.get(j + 1)?.token, Token::Word(w) if w.value.eq_ignore_ascii_case("oids"));
                return oids.then(|| (blank(sql, tokens[j].span.start, tokens[j + 1].span.end), Vec::new()));
            }
            _ if kw(j) == Some(Keyword::WITH) && matches!(tokens.get(j + 1)?.token, Token::LParen) => {
                let (params, close) = read_list(&tokens, j + 1)?;
                return Some((blank(sql, tokens[j].span.start, tokens[close].span.end), params));
            }
            _ => {}
        }
    }
    None
}

/// `ALTER {TABLE | INDEX | VIEW | MATERIALIZED VIEW} [IF EXISTS] [ONLY]
/// name [*] {SET | RESET} (…)` as a whole statement; `None` for any other
/// text.
pub(crate) fn parse_alter_options(sql: &str) -> Option<AlterOptions> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let (kind, at) = altered_kind(&tokens)?;
    let target = match kind {
        Keyword::TABLE => OptionsTarget::Table,
        Keyword::INDEX => OptionsTarget::Index,
        Keyword::VIEW => OptionsTarget::View,
        Keyword::MATERIALIZED => OptionsTarget::MatView,
        _ => return None,
    };
    let (name, if_exists, i) = alter_target(&tokens, at, target == OptionsTarget::Table)?;
    let reset = match &tokens.get(i)?.token {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("reset") => true,
        _ if kw(i) == Some(Keyword::SET) => false,
        _ => return None,
    };
    if !matches!(tokens.get(i + 1)?.token, Token::LParen) {
        return None;
    }
    let (params, close) = read_list(&tokens, i + 1)?;
    if close + 1 != tokens.len() {
        return None;
    }
    Some(AlterOptions { target, if_exists, name, reset, params })
}

/// A label (PostgreSQL's ColLabel): a word, folded unless quoted.
fn label(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_some() => Some(w.value.clone()),
        Token::Word(w) => Some(w.value.to_lowercase()),
        _ => None,
    }
}

/// The list whose `(` is token `open`, and the index of its `)`.
fn read_list(tokens: &[TokenWithSpan], open: usize) -> Option<(Vec<StorageParam>, usize)> {
    let at = |i: usize| tokens.get(i).map(|t| &t.token);
    let mut params = Vec::new();
    let mut i = open + 1;
    loop {
        let first = label(at(i)?)?;
        i += 1;
        let (namespace, name) = if at(i) == Some(&Token::Period) {
            let name = label(at(i + 1)?)?;
            i += 2;
            (Some(first), name)
        } else {
            (None, first)
        };
        let value = if at(i) == Some(&Token::Eq) {
            let (value, next) = argument(tokens, i + 1)?;
            i = next;
            Some(value)
        } else {
            None
        };
        params.push(StorageParam { namespace, name, value });
        match at(i)? {
            Token::Comma => i += 1,
            Token::RParen => return Some((params, i)),
            _ => return None,
        }
    }
}

/// A value (PostgreSQL's def_arg) from token `i`, as PostgreSQL's
/// defGetString gives it, and the next token: a word folded unless
/// quoted, a string's contents, an integer that fits 32 bits as its number
/// (`010` is `10`), any other number as written with its sign.
fn argument(tokens: &[TokenWithSpan], i: usize) -> Option<(String, usize)> {
    let at = |i: usize| tokens.get(i).map(|t| &t.token);
    let number = |text: &str, negative: bool| match text.parse::<i32>() {
        Ok(n) if text.bytes().all(|b| b.is_ascii_digit()) => {
            (if negative { -i64::from(n) } else { i64::from(n) }).to_string()
        }
        _ if negative => format!("-{text}"),
        _ => text.to_owned(),
    };
    match at(i)? {
        Token::Word(_) => Some((label(at(i)?)?, i + 1)),
        Token::SingleQuotedString(s) => Some((s.clone(), i + 1)),
        Token::Number(n, _) => Some((number(n, false), i + 1)),
        Token::Minus => match at(i + 1)? {
            Token::Number(n, _) => Some((number(n, true), i + 2)),
            _ => None,
        },
        Token::Plus => match at(i + 1)? {
            Token::Number(n, _) => Some((number(n, false), i + 2)),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(namespace: Option<&str>, name: &str, value: Option<&str>) -> StorageParam {
        StorageParam::of(namespace, name, value)
    }

    #[test]
    fn create_lists_are_read_and_blanked() {
        let (text, params) =
            read_create_options("CREATE TABLE t (a int) WITH (FiLLFaCToR=030, toast.x = -1.5, b, c='S')")
                .unwrap();
        assert_eq!(text.trim_end(), "CREATE TABLE t (a int)");
        assert_eq!(
            params,
            vec![
                p(None, "fillfactor", Some("30")),
                p(Some("toast"), "x", Some("-1.5")),
                p(None, "b", None),
                p(None, "c", Some("S"))
            ]
        );
        let (text, params) =
            read_create_options("create index i on t (a) with (fillfactor=70) where a > 0").unwrap();
        assert!(text.starts_with("create index i on t (a) ") && text.ends_with(" where a > 0"));
        assert_eq!(params, vec![p(None, "fillfactor", Some("70"))]);
        let (_, params) = read_create_options("create view v with (check_option=local) as select 1").unwrap();
        assert_eq!(params, vec![p(None, "check_option", Some("local"))]);
        assert_eq!(read_create_options("create table t (a int) without oids").unwrap().1, vec![]);
        // A query's WITH, or a CTE, is not a storage clause.
        assert!(read_create_options("create table t as with (x) select 1").is_none());
        assert!(read_create_options("create view v as with x as (select 1) select * from x").is_none());
        assert!(read_create_options("create table t (a int check (a > 0))").is_none());
        assert!(read_create_options("select 1 with").is_none());
        // A list this grammar cannot read is left to sqlparser.
        assert!(read_create_options("create table t (a int) with (a = (1))").is_none());
    }

    #[test]
    fn alter_lists_are_read_whole() {
        let a = parse_alter_options("ALTER TABLE IF EXISTS ONLY s.t SET (a, toast.b = 'x');").unwrap();
        assert_eq!(a.target, OptionsTarget::Table);
        assert!(a.if_exists && !a.reset);
        assert_eq!(a.name.to_string(), "s.t");
        assert_eq!(a.params, vec![p(None, "a", None), p(Some("toast"), "b", Some("x"))]);
        let a = parse_alter_options("alter materialized view m reset (fillfactor=1)").unwrap();
        assert_eq!(a.target, OptionsTarget::MatView);
        assert!(a.reset);
        assert_eq!(a.params, vec![p(None, "fillfactor", Some("1"))]);
        assert!(parse_alter_options("alter table t set (a), add column b int").is_none());
        assert!(parse_alter_options("alter table t alter column a set (n_distinct = 1)").is_none());
        assert!(parse_alter_options("alter table t set schema s").is_none());
    }
}
