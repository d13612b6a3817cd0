//! `ALTER {TABLE | VIEW | MATERIALIZED VIEW | SEQUENCE | TYPE | DOMAIN}
//! [IF EXISTS] name SET SCHEMA schema`, which sqlparser's grammar lacks,
//! read whole: it is the statement's one action in PostgreSQL's grammar
//! too.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::lock_syntax::{alter_target, keyword, may_start_with, statement_tokens};

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
    if kw(0) != Some(Keyword::ALTER) {
        return None;
    }
    let (kind, at) = match (kw(1), kw(2)) {
        (Some(Keyword::TABLE), _) => (SetSchemaKind::Table, 2),
        (Some(Keyword::VIEW), _) => (SetSchemaKind::View, 2),
        (Some(Keyword::MATERIALIZED), Some(Keyword::VIEW)) => (SetSchemaKind::MatView, 3),
        (Some(Keyword::SEQUENCE), _) => (SetSchemaKind::Sequence, 2),
        (Some(Keyword::TYPE), _) => (SetSchemaKind::Type, 2),
        (Some(Keyword::DOMAIN), _) => (SetSchemaKind::Domain, 2),
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
