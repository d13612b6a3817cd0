//! `ALTER {TABLE | VIEW | MATERIALIZED VIEW | SEQUENCE | TYPE | DOMAIN}
//! [IF EXISTS] name SET SCHEMA schema`, which sqlparser's grammar lacks,
//! read whole: it is the statement's one action in PostgreSQL's grammar
//! too.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::lock_syntax::{alter_target, altered_kind, keyword, may_start_with, offset, statement_tokens};

/// What SET SCHEMA moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetSchemaKind {
    Table,
    View,
    MatView,
    Sequence,
    Type,
    Domain,
}

impl SetSchemaKind {
    /// The command tag.
    pub fn tag(self) -> &'static str {
        match self {
            SetSchemaKind::Table => "ALTER TABLE",
            SetSchemaKind::View => "ALTER VIEW",
            SetSchemaKind::MatView => "ALTER MATERIALIZED VIEW",
            SetSchemaKind::Sequence => "ALTER SEQUENCE",
            SetSchemaKind::Type => "ALTER TYPE",
            SetSchemaKind::Domain => "ALTER DOMAIN",
        }
    }

    /// The kind as an error message names it.
    pub fn word(self) -> &'static str {
        match self {
            SetSchemaKind::Table => "table",
            SetSchemaKind::View => "view",
            SetSchemaKind::MatView => "materialized view",
            SetSchemaKind::Sequence => "sequence",
            SetSchemaKind::Type => "type",
            SetSchemaKind::Domain => "domain",
        }
    }
}

/// The statement read.
#[derive(Clone, Debug)]
pub struct SetSchema {
    pub kind: SetSchemaKind,
    pub name: sqlparser::ast::ObjectName,
    pub if_exists: bool,
    /// The schema, folded unless quoted.
    pub schema: String,
}

/// The statement; `None` for any other text.
pub(crate) fn parse_set_schema(sql: &str) -> Option<SetSchema> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let (kind, at) = altered_kind(&tokens)?;
    let kind = match kind {
        Keyword::TABLE => SetSchemaKind::Table,
        Keyword::VIEW => SetSchemaKind::View,
        Keyword::MATERIALIZED => SetSchemaKind::MatView,
        Keyword::SEQUENCE => SetSchemaKind::Sequence,
        Keyword::TYPE => SetSchemaKind::Type,
        Keyword::DOMAIN => SetSchemaKind::Domain,
        _ => return None,
    };
    let (name, if_exists, i) = alter_target(&tokens, at, false)?;
    if kw(i) != Some(Keyword::SET) || kw(i + 1) != Some(Keyword::SCHEMA) || tokens.len() != i + 3 {
        return None;
    }
    let schema = match &tokens[i + 2].token {
        Token::Word(w) if w.quote_style.is_some() => w.value.clone(),
        Token::Word(w) => w.value.to_lowercase(),
        _ => return None,
    };
    Some(SetSchema { kind, name, if_exists, schema })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_schema_statements_are_read_whole() {
        let s = parse_set_schema("ALTER TABLE IF EXISTS s1.t SET SCHEMA \"S2\";").unwrap();
        assert_eq!(
            (s.kind, s.if_exists, s.name.to_string(), s.schema.as_str()),
            (SetSchemaKind::Table, true, "s1.t".into(), "S2")
        );
        let s = parse_set_schema("alter materialized view mv set schema x").unwrap();
        assert_eq!(s.kind, SetSchemaKind::MatView);
        assert!(parse_set_schema("ALTER TABLE t SET SCHEMA x, y").is_none());
        assert!(parse_set_schema("ALTER TABLE t SET (fillfactor = 5)").is_none());
    }
}

/// `CREATE SCHEMA [name] [AUTHORIZATION role] element …`, with its
/// elements (CREATE TABLE, VIEW, INDEX, SEQUENCE, TRIGGER, GRANT) as
/// statements of their own: the schema's own statement (`header`), and
/// each element's text with the name of what it makes (an index's or a
/// trigger's table) written with the schema, as PostgreSQL's
/// transformCreateSchemaStmt sets it, in PostgreSQL's order (sequences,
/// tables, views, indexes, triggers, grants). The session runs them with
/// the schema first on the search_path, as PostgreSQL does.
#[derive(Clone, Debug)]
pub struct SchemaElements {
    pub header: String,
    pub schema: String,
    pub elements: Vec<Element>,
}

/// One element's statement, and how a position in it maps back to the
/// statement written.
#[derive(Clone, Debug)]
pub struct Element {
    pub text: String,
    pub place: Place,
}

/// Where a statement cut out of another stands in it: its first
/// character's offset there, and the text inserted into it (the schema
/// written before a name: its character offset in the cut and length).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub offset: usize,
    pub inserted: Option<(usize, usize)>,
}

impl Place {
    /// The 1-based character position in the statement written of
    /// position `p` in the cut.
    pub fn map(&self, p: u32) -> u32 {
        let mut at = p as usize - 1;
        if let Some((ins, len)) = self.inserted {
            if at >= ins + len {
                at -= len;
            } else if at >= ins {
                at = ins;
            }
        }
        (self.offset + at + 1) as u32
    }
}

/// The statement, if it has elements; its error with the character
/// offset in `sql` it points at; `None` for any other text.
pub(crate) fn parse_create_schema(sql: &str) -> Option<Result<SchemaElements, (SqlError, Option<usize>)>> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::CREATE) || kw(1) != Some(Keyword::SCHEMA) {
        return None;
    }
    let mut i = 2;
    let if_not_exists =
        kw(i) == Some(Keyword::IF) && kw(i + 1) == Some(Keyword::NOT) && kw(i + 2) == Some(Keyword::EXISTS);
    if if_not_exists {
        i += 3;
    }
    let word = |i: usize| match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_some() => Some(w.value.clone()),
        Some(Token::Word(w)) => Some(w.value.to_lowercase()),
        _ => None,
    };
    let mut name = None;
    if kw(i) != Some(Keyword::AUTHORIZATION) {
        name = Some(word(i)?);
        i += 1;
    }
    let mut role = None;
    if kw(i) == Some(Keyword::AUTHORIZATION) {
        role = Some(word(i + 1)?);
        i += 2;
    }
    // No elements: sqlparser reads the statement.
    if i >= tokens.len() {
        return None;
    }
    let offsets = line_offsets(sql);
    let at = |k: usize| offset(&offsets, sql, tokens[k].span.start);
    let schema = name.clone().or(role)?;
    if if_not_exists {
        let err = SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "CREATE SCHEMA IF NOT EXISTS cannot include schema elements",
        );
        return Some(Err((err, Some(at(i)))));
    }
    // Elements start with CREATE or GRANT outside parentheses.
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(i) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0 && matches!(keyword(&t.token), Some(Keyword::CREATE | Keyword::GRANT)) => {
                starts.push(k)
            }
            _ => {}
        }
    }
    if starts.first() != Some(&i) {
        let near = sql[at(i)..].split_whitespace().next().unwrap_or_default().to_owned();
        let err = SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""));
        return Some(Err((err, Some(at(i)))));
    }
    let mut ordered: Vec<(usize, Element)> = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(sql.len(), |&e| at(e));
        // What it makes, and which of its tokens names the relation that
        // goes in the schema.
        let mut k = start + 1;
        while matches!(
            kw(k),
            Some(
                Keyword::OR
                    | Keyword::REPLACE
                    | Keyword::TEMP
                    | Keyword::TEMPORARY
                    | Keyword::UNLOGGED
                    | Keyword::RECURSIVE
                    | Keyword::UNIQUE
            )
        ) {
            k += 1;
        }
        let (rank, target) = match kw(k) {
            Some(Keyword::SEQUENCE) => (0, Some(skip_if_not_exists(&tokens, k + 1))),
            Some(Keyword::TABLE) => (1, Some(skip_if_not_exists(&tokens, k + 1))),
            Some(Keyword::VIEW) => (2, Some(k + 1)),
            Some(Keyword::INDEX) => {
                (3, (k..tokens.len()).find(|&j| kw(j) == Some(Keyword::ON)).map(|j| j + 1))
            }
            Some(Keyword::TRIGGER) => {
                (4, (k..tokens.len()).find(|&j| kw(j) == Some(Keyword::ON)).map(|j| j + 1))
            }
            _ if kw(start) == Some(Keyword::GRANT) => (5, None),
            _ => {
                let near = sql[at(k.min(tokens.len() - 1))..]
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let err =
                    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""));
                return Some(Err((err, Some(at(k.min(tokens.len() - 1))))));
            }
        };
        let mut text = sql[at(start)..end].trim_end().trim_end_matches(';').to_owned();
        let mut place = Place { offset: sql[..at(start)].chars().count(), inserted: None };
        if let Some(t) = target.filter(|&t| matches!(tokens.get(t).map(|t| &t.token), Some(Token::Word(_)))) {
            let qualified = matches!(tokens.get(t + 1).map(|t| &t.token), Some(Token::Period));
            if qualified {
                let given = word(t)?;
                if given != schema {
                    let err = SqlError::new(
                        SqlState::INVALID_SCHEMA_DEFINITION,
                        format!("CREATE specifies a schema ({given}) different from the one being created ({schema})"),
                    );
                    return Some(Err((err, None)));
                }
            } else {
                let insert = at(t) - at(start);
                let prefix = format!("{}.", snapscale_values::quote_ident(&schema));
                place.inserted = Some((text[..insert].chars().count(), prefix.chars().count()));
                text.insert_str(insert, &prefix);
            }
        }
        ordered.push((rank, Element { text, place }));
    }
    ordered.sort_by_key(|(rank, _)| *rank);
    let header = sql[..at(i)].trim_end().to_owned();
    Some(Ok(SchemaElements { header, schema, elements: ordered.into_iter().map(|(_, t)| t).collect() }))
}

/// The token after `IF NOT EXISTS` at `k`, or `k`.
fn skip_if_not_exists(tokens: &[sqlparser::tokenizer::TokenWithSpan], k: usize) -> usize {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(k) == Some(Keyword::IF) && kw(k + 1) == Some(Keyword::NOT) && kw(k + 2) == Some(Keyword::EXISTS) {
        k + 3
    } else {
        k
    }
}

/// Where each line of `sql` starts (for `lock_syntax::offset`).
fn line_offsets(sql: &str) -> Vec<usize> {
    std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect()
}
