//! `COMMENT ON object IS {'text' | NULL}`, read whole (sqlparser's grammar
//! lacks most of PostgreSQL's objects): relations, indexes, types and
//! domains, columns, and table or domain constraints. Other objects are
//! refused as not supported.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{Ident, ObjectName};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The kinds of relation COMMENT ON names; each must be what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelationKind {
    Table,
    View,
    MatView,
    Sequence,
    Index,
}

/// What a COMMENT ON describes.
#[derive(Clone, Debug)]
pub enum CommentTarget {
    Relation(RelationKind, ObjectName),
    /// TYPE (`false`) or DOMAIN (`true`).
    Type(ObjectName, bool),
    /// COLUMN relation.column.
    Column(ObjectName, String),
    /// CONSTRAINT name ON [DOMAIN] object (`true`: a domain's).
    Constraint(String, ObjectName, bool),
    /// FUNCTION, PROCEDURE or ROUTINE (the word, upper-case) and its
    /// signature as written (`name [(types)]`), read as DROP FUNCTION
    /// reads it.
    Routine(&'static str, String),
    /// TRIGGER name ON table.
    Trigger(String, ObjectName),
}

/// A COMMENT ON statement.
#[derive(Clone, Debug)]
pub struct CommentOn {
    pub target: CommentTarget,
    /// `None`: IS NULL (or an empty string): the comment goes.
    pub text: Option<String>,
}

fn syntax(near: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""))
}

/// The statement `sql` (which starts with COMMENT).
pub(crate) fn parse_comment(sql: &str) -> Result<CommentOn, SqlError> {
    let tokens: Vec<Token> = Tokenizer::new(&sqlparser::dialect::PostgreSqlDialect {}, sql)
        .tokenize()
        .map_err(|_| syntax("COMMENT"))?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon | Token::EOF))
        .collect();
    let kw = |i: usize| match tokens.get(i) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let near = |i: usize| tokens.get(i).map_or_else(|| syntax("end of input"), |t| syntax(&t.to_string()));
    if kw(1) != Some(Keyword::ON) {
        return Err(near(1));
    }
    // A dotted name from token `i`; the index after it.
    let name = |mut i: usize| -> Result<(Vec<Ident>, usize), SqlError> {
        let mut parts = Vec::new();
        loop {
            match tokens.get(i) {
                Some(Token::Word(w)) => parts.push(match w.quote_style {
                    Some(_) => Ident::with_quote('"', w.value.clone()),
                    None => Ident::new(w.value.to_lowercase()),
                }),
                _ => return Err(near(i)),
            }
            i += 1;
            if tokens.get(i) != Some(&Token::Period) {
                return Ok((parts, i));
            }
            i += 1;
        }
    };
    let (target, at) = match (kw(2), kw(3)) {
        (Some(Keyword::TABLE), _) => object(RelationKind::Table, name(3)?),
        (Some(Keyword::VIEW), _) => object(RelationKind::View, name(3)?),
        (Some(Keyword::MATERIALIZED), Some(Keyword::VIEW)) => object(RelationKind::MatView, name(4)?),
        (Some(Keyword::SEQUENCE), _) => object(RelationKind::Sequence, name(3)?),
        (Some(Keyword::INDEX), _) => object(RelationKind::Index, name(3)?),
        (Some(Keyword::TYPE | Keyword::DOMAIN), _) => {
            let (parts, at) = name(3)?;
            (CommentTarget::Type(ObjectName::from(parts), kw(2) == Some(Keyword::DOMAIN)), at)
        }
        (Some(Keyword::COLUMN), _) => {
            let (mut parts, at) = name(3)?;
            if parts.len() < 2 {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "column name must be qualified"));
            }
            let column = parts.pop().expect("two parts").value;
            (CommentTarget::Column(ObjectName::from(parts), column), at)
        }
        (Some(Keyword::CONSTRAINT), _) => {
            let (mut constraint, at) = name(3)?;
            if constraint.len() != 1 {
                return Err(near(4));
            }
            if kw(at) != Some(Keyword::ON) {
                return Err(near(at));
            }
            let domain = kw(at + 1) == Some(Keyword::DOMAIN);
            let (parts, next) = name(at + 1 + usize::from(domain))?;
            let c = constraint.pop().expect("one part").value;
            (CommentTarget::Constraint(c, ObjectName::from(parts), domain), next)
        }
        (Some(Keyword::FUNCTION | Keyword::PROCEDURE), _) | (Some(Keyword::NoKeyword), _)
            if matches!(tokens.get(2), Some(Token::Word(w)) if w.quote_style.is_none()
                && ["function", "procedure", "routine"].contains(&w.value.to_lowercase().as_str())) =>
        {
            let word = match kw(2) {
                Some(Keyword::FUNCTION) => "FUNCTION",
                Some(Keyword::PROCEDURE) => "PROCEDURE",
                _ => "ROUTINE",
            };
            // The signature: up to the IS after its closing parenthesis
            // (or after the name, without one).
            let mut depth = 0usize;
            let mut at = 3;
            while let Some(t) = tokens.get(at) {
                match t {
                    Token::LParen => depth += 1,
                    Token::RParen => depth = depth.saturating_sub(1),
                    Token::Word(w) if depth == 0 && w.quote_style.is_none() && w.keyword == Keyword::IS => {
                        break
                    }
                    _ => {}
                }
                at += 1;
            }
            if at == 3 {
                return Err(near(3));
            }
            let text: String = tokens[3..at].iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" ");
            (CommentTarget::Routine(word, text), at)
        }
        (Some(Keyword::TRIGGER), _) => {
            let (mut trigger, at) = name(3)?;
            if trigger.len() != 1 {
                return Err(near(4));
            }
            if kw(at) != Some(Keyword::ON) {
                return Err(near(at));
            }
            let (parts, next) = name(at + 1)?;
            let t = trigger.pop().expect("one part").value;
            (CommentTarget::Trigger(t, ObjectName::from(parts)), next)
        }
        _ => {
            let what = match tokens.get(2) {
                Some(Token::Word(w)) => w.value.to_uppercase(),
                _ => return Err(near(2)),
            };
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("COMMENT ON {what} is not supported"),
            ));
        }
    };
    if kw(at) != Some(Keyword::IS) {
        return Err(near(at));
    }
    let text = match tokens.get(at + 1) {
        Some(Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s)) => Some(s.clone()),
        Some(Token::DollarQuotedString(s)) => Some(s.value.clone()),
        Some(Token::Word(w)) if w.quote_style.is_none() && w.keyword == Keyword::NULL => None,
        _ => return Err(near(at + 1)),
    };
    if at + 2 != tokens.len() {
        return Err(near(at + 2));
    }
    Ok(CommentOn { target, text: text.filter(|t| !t.is_empty()) })
}

fn object(kind: RelationKind, (parts, at): (Vec<Ident>, usize)) -> (CommentTarget, usize) {
    (CommentTarget::Relation(kind, ObjectName::from(parts)), at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_read() {
        let c = parse_comment("COMMENT ON COLUMN public.t.\"A\" IS 'x'").unwrap();
        assert!(
            matches!(&c.target, CommentTarget::Column(t, col) if t.to_string() == "public.t" && col == "A")
        );
        assert_eq!(c.text.as_deref(), Some("x"));
        let c = parse_comment("comment on constraint k on domain d is null;").unwrap();
        assert!(
            matches!(&c.target, CommentTarget::Constraint(k, d, true) if k == "k" && d.to_string() == "d")
        );
        assert!(c.text.is_none());
        assert!(parse_comment("COMMENT ON TABLE t IS ''").unwrap().text.is_none());
        assert_eq!(
            parse_comment("COMMENT ON COLUMN t IS 'x'").unwrap_err().message,
            "column name must be qualified"
        );
        assert!(matches!(
            parse_comment("COMMENT ON FUNCTION f(bpchar, int) IS 'x'").unwrap().target,
            CommentTarget::Routine("FUNCTION", ref s) if s == "f ( bpchar , int )"
        ));
        assert_eq!(
            parse_comment("COMMENT ON OPERATOR + (int, int) IS 'x'").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(
            parse_comment("COMMENT ON TABLE t IS 'x' 'y'").unwrap_err().message,
            "syntax error at or near \"'y'\""
        );
    }
}
