//! `ON DELETE SET NULL (columns)` and `ON DELETE SET DEFAULT (columns)`
//! in a foreign key (PostgreSQL 15), which sqlparser's grammar lacks. The
//! column list is blanked out of the text (positions stay) and kept for
//! the binder, keyed by where the referenced table's name starts (the
//! binder finds its foreign key by that name's location). A list after
//! ON UPDATE is PostgreSQL's 0A000, at the ON.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens};

pub use crate::statement::SetColumns;

/// An error and the character offset in the statement it points at.
pub(crate) type Misplaced = (SqlError, usize);

/// `sql` (a CREATE or ALTER TABLE) without its ON DELETE SET column
/// lists, and the lists; `None` when it has none. An error carries the
/// character offset of the ON that PostgreSQL's message points at.
pub(crate) fn read_set_columns(sql: &str) -> Option<Result<(String, Vec<SetColumns>), Misplaced>> {
    if !(may_start_with(sql, "create") || may_start_with(sql, "alter")) {
        return None;
    }
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("references") || !(lower.contains("null") || lower.contains("default")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut table_at = None;
    let mut lists = Vec::new();
    let mut blanks = Vec::new();
    for i in 0..tokens.len() {
        if kw(i) == Some(Keyword::REFERENCES) {
            table_at = tokens.get(i + 1).map(|t| (t.span.start.line, t.span.start.column));
            continue;
        }
        let action = kw(i) == Some(Keyword::ON)
            && matches!(kw(i + 1), Some(Keyword::DELETE | Keyword::UPDATE))
            && kw(i + 2) == Some(Keyword::SET)
            && matches!(kw(i + 3), Some(Keyword::NULL | Keyword::DEFAULT))
            && matches!(tokens.get(i + 4).map(|t| &t.token), Some(Token::LParen));
        if !action {
            continue;
        }
        if kw(i + 1) == Some(Keyword::UPDATE) {
            let what = if kw(i + 3) == Some(Keyword::NULL) { "SET NULL" } else { "SET DEFAULT" };
            let at = tokens[i].span.start;
            let line_start: usize =
                sql.split_inclusive('\n').take(at.line as usize - 1).map(|l| l.chars().count()).sum();
            let err = SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("a column list with {what} is only supported for ON DELETE actions"),
            );
            return Some(Err((err, line_start + at.column as usize - 1)));
        }
        let mut columns = Vec::new();
        let mut j = i + 5;
        loop {
            match tokens.get(j).map(|t| &t.token)? {
                Token::Word(w) if w.quote_style.is_some() => columns.push(w.value.clone()),
                Token::Word(w) => columns.push(w.value.to_lowercase()),
                _ => return None,
            }
            match tokens.get(j + 1).map(|t| &t.token)? {
                Token::Comma => j += 2,
                Token::RParen => break,
                _ => return None,
            }
        }
        lists.push(SetColumns { table_at: table_at?, columns });
        blanks.push((tokens[i + 4].span.start, tokens[j + 1].span.end));
    }
    if lists.is_empty() {
        return None;
    }
    let mut text = sql.to_owned();
    for (from, to) in blanks {
        text = blank(&text, from, to);
    }
    Some(Ok((text, lists)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_set_lists_are_read() {
        let sql =
            "CREATE TABLE f (a int, b int, FOREIGN KEY (a, b) REFERENCES p ON DELETE SET NULL (b, \"B\"))";
        let (text, lists) = read_set_columns(sql).unwrap().unwrap();
        assert_eq!(
            text.trim_end_matches([' ', ')']),
            "CREATE TABLE f (a int, b int, FOREIGN KEY (a, b) REFERENCES p ON DELETE SET NULL"
        );
        assert_eq!(lists, vec![SetColumns { table_at: (1, 61), columns: vec!["b".into(), "B".into()] }]);
        let (err, at) = read_set_columns("create table f (a int references p on update set default (a))")
            .unwrap()
            .unwrap_err();
        assert_eq!(err.message, "a column list with SET DEFAULT is only supported for ON DELETE actions");
        assert_eq!(at, 35);
        assert!(read_set_columns("create table f (a int references p on delete set null)").is_none());
    }
}
