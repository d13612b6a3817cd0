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
