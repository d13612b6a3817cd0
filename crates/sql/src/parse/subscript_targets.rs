//! Subscripted assignment targets: `UPDATE t SET a[1:2] = …`, `INSERT
//! INTO t (a[3]) …`, `ON CONFLICT … DO UPDATE SET a[i] = …`. sqlparser
//! takes only a column name there, so the tokens of such a target are
//! folded into one identifier: the column's name, [`MARK`], then the
//! subscripts as written (`a\u{1}[1:2]`), with [`MARK`] as its quote
//! style, which no token the tokenizer makes has. The binder takes such an
//! identifier apart again ([`split`]) and parses the subscripts as an
//! access chain.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// Separates a target's column name from its subscripts.
pub(crate) const MARK: char = '\u{1}';

/// A folded target's column name and its subscripts' text (`[1:2]`);
/// `None` for any other identifier.
pub(crate) fn split(target: &sqlparser::ast::Ident) -> Option<(&str, &str)> {
    if target.quote_style != Some(MARK) {
        return None;
    }
    target.value.split_once(MARK)
}

fn is_blank(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// The next token after `at` that is not white space.
fn next_significant(tokens: &[TokenWithSpan], mut at: usize) -> Option<usize> {
    at += 1;
    while at < tokens.len() && is_blank(&tokens[at].token) {
        at += 1;
    }
    (at < tokens.len()).then_some(at)
}

/// Folds the subscripted targets of an UPDATE's or an INSERT's SET list
/// and an INSERT's column list.
pub(super) fn rewrite(tokens: &mut Vec<TokenWithSpan>) {
    let Some(first) = tokens.iter().position(|t| !is_blank(&t.token)) else { return };
    let statement = keyword(&tokens[first].token);
    if !matches!(statement, Some(Keyword::UPDATE | Keyword::INSERT)) {
        return;
    }
    let mut depth = 0i32;
    let mut at = first;
    let mut column_list_done = statement != Some(Keyword::INSERT);
    // The last significant token before `at`.
    let mut previous: Option<usize> = None;
    while at < tokens.len() {
        if is_blank(&tokens[at].token) {
            at += 1;
            continue;
        }
        let after_name = previous.is_some_and(|p| match &tokens[p].token {
            Token::Word(w) => {
                w.quote_style.is_some()
                    || !matches!(
                        w.keyword,
                        Keyword::VALUES | Keyword::SELECT | Keyword::DEFAULT | Keyword::VALUE
                    )
            }
            _ => false,
        });
        previous = Some(at);
        match &tokens[at].token {
            Token::Word(w)
                if w.quote_style.is_none() && matches!(w.keyword, Keyword::VALUES | Keyword::SELECT) =>
            {
                column_list_done = true;
            }
            Token::LParen if depth == 0 && !column_list_done && after_name => {
                column_list_done = true;
                // INSERT INTO t (…): a parenthesis right after the table's
                // name (or alias) is the column list unless it holds a
                // query.
                let inner = next_significant(tokens, at);
                let query = inner.and_then(|i| keyword(&tokens[i].token)).is_some_and(|k| {
                    matches!(k, Keyword::SELECT | Keyword::WITH | Keyword::VALUES | Keyword::TABLE)
                });
                if !query {
                    at = fold_list(tokens, at + 1, Stop::ClosingParen);
                    continue;
                }
                depth += 1;
            }
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => depth -= 1,
            Token::Word(w) if depth == 0 && w.quote_style.is_none() && w.keyword == Keyword::SET => {
                at = fold_list(tokens, at + 1, Stop::EndOfSet);
                continue;
            }
            _ => {}
        }
        at += 1;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Stop {
    /// A column list, up to its closing parenthesis.
    ClosingParen,
    /// A SET list, up to FROM, WHERE, RETURNING or the end.
    EndOfSet,
}

/// Folds each target of the list starting at `at`; returns where the list
/// ends.
fn fold_list(tokens: &mut Vec<TokenWithSpan>, mut at: usize, stop: Stop) -> usize {
    // At the start of an item: a target comes first.
    let mut item_start = true;
    let mut depth = 0i32;
    while at < tokens.len() {
        let t = &tokens[at].token;
        if is_blank(t) {
            at += 1;
            continue;
        }
        if item_start {
            item_start = false;
            if let Token::Word(w) = t {
                let w = w.clone();
                if let Some(next) = next_significant(tokens, at) {
                    if tokens[next].token == Token::LBracket {
                        fold_target(tokens, at, &w, next, stop);
                    }
                }
            }
        }
        match &tokens[at].token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen if depth == 0 && stop == Stop::ClosingParen => return at + 1,
            Token::RParen | Token::RBracket => depth -= 1,
            Token::Comma if depth == 0 => item_start = true,
            Token::SemiColon if depth == 0 => return at,
            Token::Word(w)
                if depth == 0
                    && stop == Stop::EndOfSet
                    && w.quote_style.is_none()
                    && matches!(w.keyword, Keyword::FROM | Keyword::WHERE | Keyword::RETURNING) =>
            {
                return at;
            }
            _ => {}
        }
        at += 1;
    }
    at
}

/// Replaces the target that starts with `word` at `at` (its subscripts
/// from `open`) by one quoted identifier, if it ends where a target ends:
/// at `=` in a SET list, at `,` or `)` in a column list.
fn fold_target(tokens: &mut Vec<TokenWithSpan>, at: usize, word: &Word, open: usize, stop: Stop) {
    let mut depth = 0i32;
    let mut end = open;
    while end < tokens.len() {
        match &tokens[end].token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen if depth == 0 => break,
            Token::RParen | Token::RBracket => depth -= 1,
            Token::Eq | Token::Comma if depth == 0 => break,
            Token::SemiColon => return,
            _ => {}
        }
        end += 1;
    }
    let ends_right = matches!(
        (stop, tokens.get(end).map(|t| &t.token)),
        (Stop::EndOfSet, Some(Token::Eq)) | (Stop::ClosingParen, Some(Token::Comma | Token::RParen))
    );
    if !ends_right {
        return;
    }
    let subscripts: String = tokens[open..end].iter().map(|t| t.token.to_string()).collect();
    let name = if word.quote_style.is_some() { word.value.clone() } else { word.value.to_lowercase() };
    let folded = Word {
        value: format!("{name}{MARK}{}", subscripts.trim_end()),
        quote_style: Some(MARK),
        keyword: Keyword::NoKeyword,
    };
    let span = tokens[at].span;
    tokens.splice(at..end, [TokenWithSpan { token: Token::Word(folded), span }]);
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn folded(sql: &str) -> Vec<String> {
        let mut tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().unwrap();
        rewrite(&mut tokens);
        tokens
            .into_iter()
            .filter_map(|t| match t.token {
                Token::Word(w) if w.value.contains(MARK) => Some(w.value.replace(MARK, "|")),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn folds_only_subscripted_targets() {
        assert_eq!(
            folded("UPDATE t SET a[1:2] = '{1,2}', b = 3, C[i][j] = x[1] WHERE a[1] = 1"),
            ["a|[1:2]", "c|[i][j]"]
        );
        assert_eq!(folded("insert into t (a[1:5], b, d[2]) values (1, 2, 3)"), ["a|[1:5]", "d|[2]"]);
        assert_eq!(folded("insert into t select a[1] from u"), Vec::<String>::new());
        assert_eq!(folded("insert into t (select a[1] from u)"), Vec::<String>::new());
        assert_eq!(folded("select a[1] from t"), Vec::<String>::new());
        assert_eq!(folded("insert into t values (1, array[2])"), Vec::<String>::new());
        assert_eq!(folded("insert into t as x (a[2]) values (1)"), ["a|[2]"]);
        assert_eq!(
            folded(
                "insert into t (pk, f1[1:2]) values (1, '{6,7}') on conflict (pk) do update set f1[1] = 2"
            ),
            ["f1|[1:2]", "f1|[1]"]
        );
        assert_eq!(
            folded("update t set a[ (1) ] = (select x[2] from y), b[NULL] = 1"),
            ["a|[ (1) ]", "b|[NULL]"]
        );
    }
}
