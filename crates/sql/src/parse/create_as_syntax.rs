//! `CREATE TABLE name (a, b, …) AS query`: the list of column names,
//! which sqlparser's grammar lacks (it reads a column list only with
//! types). The list is blanked out of the text, each character by a
//! space so every other position stays where it was, and its names are
//! kept for the binder (`Binder::create_table_as`).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens, starts_with};

/// The position of the token after the name in `CREATE [GLOBAL | LOCAL]
/// [TEMP | TEMPORARY | UNLOGGED] TABLE [IF NOT EXISTS] name`; `None` if
/// the tokens do not start so.
pub(super) fn after_table_name(tokens: &[TokenWithSpan]) -> Option<usize> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = 1;
    while matches!(
        kw(i),
        Some(Keyword::GLOBAL | Keyword::LOCAL | Keyword::TEMP | Keyword::TEMPORARY | Keyword::UNLOGGED)
    ) {
        i += 1;
    }
    if kw(i) != Some(Keyword::TABLE) {
        return None;
    }
    i += 1;
    if kw(i) == Some(Keyword::IF) {
        i += 3;
    }
    // The table's (possibly qualified) name.
    loop {
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::Word(_))) {
            return None;
        }
        i += 1;
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::Period)) {
            return Some(i);
        }
        i += 1;
    }
}

/// `sql` without its CREATE TABLE … AS column-name list, and the names
/// (folded as the binder folds identifiers); `None` for any other text.
pub(crate) fn read_column_names(sql: &str) -> Option<(String, Vec<String>)> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !starts_with(&tokens, Keyword::CREATE) {
        return None;
    }
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let i = after_table_name(&tokens)?;
    let open = i;
    if !matches!(tokens.get(open).map(|t| &t.token), Some(Token::LParen)) {
        return None;
    }
    let mut names = Vec::new();
    let mut j = open + 1;
    loop {
        match tokens.get(j).map(|t| &t.token) {
            Some(Token::Word(w)) => names.push(match w.quote_style {
                Some(_) => w.value.clone(),
                None => w.value.to_lowercase(),
            }),
            _ => return None,
        }
        j += 1;
        match tokens.get(j).map(|t| &t.token) {
            Some(Token::Comma) => j += 1,
            Some(Token::RParen) => break,
            _ => return None,
        }
    }
    if kw(j + 1) != Some(Keyword::AS) {
        return None;
    }
    Some((blank(sql, tokens[open].span.start, tokens[j].span.end), names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_names_of_create_table_as_are_read_and_blanked() {
        let (text, names) = read_column_names("create temp table t (x, \"Y\") as select 1, 2").unwrap();
        assert_eq!(text, format!("create temp table t {} as select 1, 2", " ".repeat(8)));
        assert_eq!(names, vec!["x".to_string(), "Y".to_string()]);
        let (text, names) = read_column_names("CREATE TABLE IF NOT EXISTS s.t (é) AS VALUES (1)").unwrap();
        assert_eq!(text, format!("CREATE TABLE IF NOT EXISTS s.t {} AS VALUES (1)", " ".repeat(3)));
        assert_eq!(names, vec!["é".to_string()]);
        assert_eq!(read_column_names("create table t (a int) as select 1"), None);
        assert_eq!(read_column_names("create table t as select 1"), None);
        assert_eq!(read_column_names("create table t (a, b)"), None);
    }
}
