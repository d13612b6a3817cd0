//! CREATE DOMAIN's NOT NULL and NULL, which sqlparser lacks (it reads only
//! CHECK constraints after the type), and its optional AS (sqlparser
//! requires it). Each `[CONSTRAINT name] NOT NULL`
//! becomes a CHECK constraint with the reserved name [`NOT_NULL`], which
//! the binder reads back as the domain's NOT NULL; a bare `NULL` (the
//! default) is dropped. The rest of the statement is sqlparser's.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The constraint name that stands for NOT NULL (no user writes it: a
/// name cannot start with a NUL byte).
pub(crate) const NOT_NULL: &str = "\u{1}not null";

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// The first name of a DROP TYPE that was written DROP DOMAIN with several
/// names (sqlparser reads DROP DOMAIN with one name only).
pub(crate) const DROP_DOMAIN: &str = "\u{1}domain";

/// `DROP DOMAIN [IF EXISTS] a, b …` as `DROP TYPE [IF EXISTS] "DROP_DOMAIN", a, b
/// …`, or `None` for anything else (one name is sqlparser's own).
pub(crate) fn canonical_drop_domain(sql: &str) -> Option<String> {
    let tokens: Vec<Token> = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let words: Vec<usize> =
        (0..tokens.len()).filter(|&i| !matches!(tokens[i], Token::Whitespace(_))).collect();
    let kw = |k: usize| words.get(k).and_then(|&i| keyword(&tokens[i]));
    if kw(0) != Some(Keyword::DROP) || kw(1) != Some(Keyword::DOMAIN) || !tokens.contains(&Token::Comma) {
        return None;
    }
    let names = if kw(2) == Some(Keyword::IF) && kw(3) == Some(Keyword::EXISTS) { 4 } else { 2 };
    let rest: String = tokens[words.get(names).copied()?..].iter().map(ToString::to_string).collect();
    let if_exists = if names == 4 { " IF EXISTS" } else { "" };
    Some(format!("DROP TYPE{if_exists} \"{DROP_DOMAIN}\", {rest}"))
}

/// The clauses that may follow a domain's type, in any order.
const CLAUSES: [Keyword; 6] =
    [Keyword::DEFAULT, Keyword::CONSTRAINT, Keyword::CHECK, Keyword::NOT, Keyword::NULL, Keyword::COLLATE];

/// `sql` as sqlparser reads a CREATE DOMAIN (AS, then COLLATE, DEFAULT and
/// the constraints, NOT NULL as a CHECK named [`NOT_NULL`]), or `None` if
/// it is not a CREATE DOMAIN or is already in that form.
pub(crate) fn canonical_create_domain(sql: &str) -> Option<String> {
    let tokens: Vec<Token> = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let words: Vec<usize> =
        (0..tokens.len()).filter(|&i| !matches!(tokens[i], Token::Whitespace(_))).collect();
    let kw = |k: usize| words.get(k).and_then(|&i| keyword(&tokens[i]));
    if kw(0) != Some(Keyword::CREATE) || kw(1) != Some(Keyword::DOMAIN) {
        return None;
    }
    let text = |from: usize, to: usize| -> String {
        let (a, b) = (words[from], words.get(to).copied().unwrap_or(tokens.len()));
        tokens[a..b].iter().map(ToString::to_string).collect::<String>().trim().to_owned()
    };
    // The name: words joined by periods; then AS, written or not.
    let mut k = 2;
    while words.get(k + 1).is_some_and(|&i| tokens[i] == Token::Period) {
        k += 2;
    }
    let head = text(0, k + 1);
    k += 1;
    if kw(k) == Some(Keyword::AS) {
        k += 1;
    }
    // Segments at depth 0, each starting at one of the clauses' keywords
    // (CONSTRAINT name belongs to the constraint after it).
    let mut starts = Vec::new();
    let mut depth = 0i32;
    for j in k..words.len() {
        match tokens[words[j]] {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        let starts_clause = depth == 0 && kw(j).is_some_and(|c| CLAUSES.contains(&c));
        let after_constraint = j >= 2 && kw(j - 2) == Some(Keyword::CONSTRAINT);
        let null_of_not = kw(j) == Some(Keyword::NULL) && j > k && kw(j - 1) == Some(Keyword::NOT);
        let default_null = kw(j) == Some(Keyword::NULL) && j > k && kw(j - 1) == Some(Keyword::DEFAULT);
        if starts_clause && !after_constraint && !null_of_not && !default_null && j > k {
            starts.push(j);
        }
    }
    let ty = text(k, starts.first().copied().unwrap_or(words.len()));
    let (mut collate, mut default, mut constraints) = (String::new(), String::new(), Vec::new());
    for (n, &a) in starts.iter().enumerate() {
        let b = starts.get(n + 1).copied().unwrap_or(words.len());
        let (name, body) =
            if kw(a) == Some(Keyword::CONSTRAINT) { (text(a, a + 2), a + 2) } else { (String::new(), a) };
        match kw(body) {
            Some(Keyword::COLLATE) => collate = text(a, b),
            Some(Keyword::DEFAULT) => default = text(a, b),
            // NULL (the default) says nothing.
            Some(Keyword::NULL) => {}
            // CONSTRAINT name NOT NULL keeps no name (PostgreSQL 15).
            Some(Keyword::NOT) => constraints.push(format!("CONSTRAINT \"{NOT_NULL}\" CHECK (true)")),
            _ => constraints.push(format!("{name} {}", text(body, b)).trim().to_owned()),
        }
    }
    let out = [head, "AS".into(), ty, collate, default, constraints.join(" ")]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    (normal(&out) != normal(sql)).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_not_null_and_drops_null() {
        let nn = format!("CONSTRAINT \"{NOT_NULL}\" CHECK (true)");
        let r = canonical_create_domain("create domain d as int not null check (value > 0)").unwrap();
        assert_eq!(r, format!("create domain d AS int {nn} check (value > 0)"));
        let r = canonical_create_domain("CREATE DOMAIN d AS text NULL DEFAULT NULL").unwrap();
        assert_eq!(r, "CREATE DOMAIN d AS text DEFAULT NULL");
        let r = canonical_create_domain(
            "CREATE DOMAIN d int NOT NULL DEFAULT (1 + 2) CONSTRAINT c CHECK (VALUE > 0)",
        );
        assert_eq!(
            r.unwrap(),
            format!("CREATE DOMAIN d AS int DEFAULT (1 + 2) {nn} CONSTRAINT c CHECK (VALUE > 0)")
        );
        assert_eq!(canonical_create_domain("CREATE DOMAIN d AS int CHECK (value IS NOT NULL)"), None);
        assert_eq!(
            canonical_create_domain("create domain s.d int4 null").unwrap(),
            "create domain s.d AS int4"
        );
        assert_eq!(canonical_create_domain("CREATE TABLE t (a int NOT NULL)"), None);
        let r = canonical_drop_domain("drop domain if exists a, b cascade").unwrap();
        assert_eq!(r, format!("DROP TYPE IF EXISTS \"{DROP_DOMAIN}\", a, b cascade"));
        assert_eq!(canonical_drop_domain("drop domain a"), None);
    }
}

/// ALTER DOMAIN, which sqlparser does not read: the domain's name and
/// what to do to it.
#[derive(Debug)]
pub struct AlterDomain {
    pub name: sqlparser::ast::ObjectName,
    pub action: DomainAction,
}

#[derive(Debug)]
pub enum DomainAction {
    /// SET DEFAULT expr (its text) / DROP DEFAULT.
    Default(Option<String>),
    /// SET NOT NULL / DROP NOT NULL.
    NotNull(bool),
    /// ADD [CONSTRAINT name] CHECK (expr) [NOT VALID].
    AddCheck { name: Option<String>, expr: String, not_valid: bool },
    /// ADD [CONSTRAINT name] NOT NULL.
    AddNotNull,
    /// DROP CONSTRAINT [IF EXISTS] name [RESTRICT | CASCADE].
    DropConstraint { name: String, if_exists: bool, cascade: bool },
    /// VALIDATE CONSTRAINT name.
    Validate(String),
    /// RENAME TO name.
    Rename(String),
    /// RENAME CONSTRAINT name TO name.
    RenameConstraint { from: String, to: String },
    /// OWNER TO, SET SCHEMA: not supported here.
    Unsupported(&'static str),
}

/// `sql` as ALTER DOMAIN, or `None` if it is not one.
pub(crate) fn parse_alter_domain(sql: &str) -> Option<Result<AlterDomain, crate::SqlError>> {
    let tokens: Vec<Token> = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let words: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)) && !matches!(t, Token::SemiColon))
        .collect();
    if words.len() < 2
        || keyword(words[0]) != Some(Keyword::ALTER)
        || keyword(words[1]) != Some(Keyword::DOMAIN)
    {
        return None;
    }
    Some(AlterDomainParser { words, at: 2 }.parse())
}

struct AlterDomainParser<'t> {
    words: Vec<&'t Token>,
    at: usize,
}

fn syntax_at(t: Option<&Token>) -> crate::SqlError {
    let near = t.map_or_else(|| "end of input".to_owned(), ToString::to_string);
    crate::SqlError::new(
        snapscale_sqlstate::SqlState::SYNTAX_ERROR,
        format!("syntax error at or near \"{near}\""),
    )
}

impl AlterDomainParser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.words.get(self.at).copied()
    }

    fn next(&mut self) -> Option<&Token> {
        let t = self.words.get(self.at).copied();
        self.at += 1;
        t
    }

    fn eat(&mut self, k: Keyword) -> bool {
        if self.peek().and_then(keyword) == Some(k) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, k: Keyword) -> Result<(), crate::SqlError> {
        if self.eat(k) {
            Ok(())
        } else {
            Err(syntax_at(self.peek()))
        }
    }

    /// An identifier, folded to lower case unless quoted (the keywords
    /// that begin or continue a clause here are not names).
    fn ident(&mut self) -> Result<sqlparser::ast::Ident, crate::SqlError> {
        let clause = |w: &sqlparser::tokenizer::Word| {
            w.quote_style.is_none()
                && matches!(
                    w.keyword,
                    Keyword::CHECK
                        | Keyword::NOT
                        | Keyword::NULL
                        | Keyword::DEFAULT
                        | Keyword::CONSTRAINT
                        | Keyword::TO
                )
        };
        match self.peek() {
            Some(Token::Word(w)) if !clause(w) => {
                let w = w.clone();
                self.at += 1;
                Ok(match w.quote_style {
                    Some(q) => sqlparser::ast::Ident::with_quote(q, w.value),
                    None => sqlparser::ast::Ident::new(w.value.to_lowercase()),
                })
            }
            other => Err(syntax_at(other)),
        }
    }

    fn name(&mut self) -> Result<String, crate::SqlError> {
        Ok(self.ident()?.value)
    }

    /// The text of the rest, up to `stop` at the top level (or the end).
    fn text_until(&mut self, stop: Option<Keyword>) -> String {
        let mut depth = 0i32;
        let mut out = String::new();
        while let Some(t) = self.peek() {
            match t {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ if depth == 0 && stop.is_some() && keyword(t) == stop => break,
                _ => {}
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&t.to_string());
            self.at += 1;
        }
        out
    }

    fn parse(mut self) -> Result<AlterDomain, crate::SqlError> {
        let mut parts = vec![self.ident()?];
        while self.peek() == Some(&Token::Period) {
            self.at += 1;
            parts.push(self.ident()?);
        }
        let name = sqlparser::ast::ObjectName::from(parts);
        let action = match self.next().and_then(keyword) {
            Some(Keyword::SET) => match self.next().and_then(keyword) {
                Some(Keyword::DEFAULT) => {
                    let expr = self.text_until(None);
                    if expr.is_empty() {
                        return Err(syntax_at(None));
                    }
                    DomainAction::Default(Some(expr))
                }
                Some(Keyword::NOT) => {
                    self.expect(Keyword::NULL)?;
                    DomainAction::NotNull(true)
                }
                Some(Keyword::SCHEMA) => DomainAction::Unsupported("ALTER DOMAIN … SET SCHEMA"),
                _ => return Err(syntax_at(self.words.get(self.at - 1).copied())),
            },
            Some(Keyword::DROP) => match self.next().and_then(keyword) {
                Some(Keyword::DEFAULT) => DomainAction::Default(None),
                Some(Keyword::NOT) => {
                    self.expect(Keyword::NULL)?;
                    DomainAction::NotNull(false)
                }
                Some(Keyword::CONSTRAINT) => {
                    let if_exists = self.eat(Keyword::IF);
                    if if_exists {
                        self.expect(Keyword::EXISTS)?;
                    }
                    let name = self.name()?;
                    let cascade = self.eat(Keyword::CASCADE);
                    if !cascade {
                        self.eat(Keyword::RESTRICT);
                    }
                    DomainAction::DropConstraint { name, if_exists, cascade }
                }
                _ => return Err(syntax_at(self.words.get(self.at - 1).copied())),
            },
            Some(Keyword::ADD) => {
                let name = if self.eat(Keyword::CONSTRAINT) { Some(self.name()?) } else { None };
                match self.next().and_then(keyword) {
                    Some(Keyword::CHECK) => {
                        if self.peek() != Some(&Token::LParen) {
                            return Err(syntax_at(self.peek()));
                        }
                        let expr = self.text_until(Some(Keyword::NOT));
                        let not_valid = self.eat(Keyword::NOT);
                        if not_valid {
                            self.expect(Keyword::VALID)?;
                        }
                        DomainAction::AddCheck { name, expr, not_valid }
                    }
                    Some(Keyword::NOT) => {
                        self.expect(Keyword::NULL)?;
                        DomainAction::AddNotNull
                    }
                    _ => return Err(syntax_at(self.words.get(self.at - 1).copied())),
                }
            }
            Some(Keyword::VALIDATE) => {
                self.expect(Keyword::CONSTRAINT)?;
                DomainAction::Validate(self.name()?)
            }
            Some(Keyword::RENAME) => {
                if self.eat(Keyword::CONSTRAINT) {
                    let from = self.name()?;
                    self.expect(Keyword::TO)?;
                    DomainAction::RenameConstraint { from, to: self.name()? }
                } else {
                    self.expect(Keyword::TO)?;
                    DomainAction::Rename(self.name()?)
                }
            }
            Some(Keyword::OWNER) => {
                self.at = self.words.len();
                DomainAction::Unsupported("ALTER DOMAIN … OWNER TO")
            }
            _ => return Err(syntax_at(self.words.get(self.at - 1).copied())),
        };
        if let Some(t) = self.peek() {
            return Err(syntax_at(Some(t)));
        }
        Ok(AlterDomain { name, action })
    }
}
