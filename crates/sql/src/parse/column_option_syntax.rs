//! `ALTER TABLE [IF EXISTS] [ONLY] name ALTER [COLUMN] column SET
//! {STORAGE mode | STATISTICS n} [, …]`, which sqlparser's grammar lacks:
//! read whole when every action of the statement is one of these (any
//! other mixture is left to sqlparser, which refuses it as before).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{alter_table_statement, keyword};

/// One `ALTER [COLUMN] column SET …`.
#[derive(Clone, Debug)]
pub struct ColumnOption {
    pub column: String,
    pub setting: ColumnSetting,
}

/// What it sets.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnSetting {
    /// The storage mode's word as written (checked by the binder).
    Storage(String),
    /// The statistics target (DEFAULT is -1).
    Statistics(i64),
}

/// The statement read.
#[derive(Clone, Debug)]
pub struct AlterColumnOptions {
    pub table: sqlparser::ast::ObjectName,
    pub if_exists: bool,
    pub options: Vec<ColumnOption>,
}

/// The statement, or `None` for any other text.
pub(crate) fn parse_column_options(sql: &str) -> Option<AlterColumnOptions> {
    let (tokens, table, if_exists, mut i) = alter_table_statement(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut options = Vec::new();
    loop {
        if kw(i) != Some(Keyword::ALTER) {
            return None;
        }
        i += 1;
        if kw(i) == Some(Keyword::COLUMN) {
            i += 1;
        }
        let column = word(tokens.get(i)?)?;
        if kw(i + 1) != Some(Keyword::SET) {
            return None;
        }
        let setting = match kw(i + 2) {
            Some(Keyword::STORAGE) => ColumnSetting::Storage(word(tokens.get(i + 3)?)?),
            Some(Keyword::STATISTICS) => {
                match (&tokens.get(i + 3)?.token, tokens.get(i + 4).map(|t| &t.token)) {
                    (Token::Minus, Some(Token::Number(n, _))) => {
                        i += 1;
                        ColumnSetting::Statistics(-n.parse::<i64>().ok()?)
                    }
                    (Token::Number(n, _), _) => ColumnSetting::Statistics(n.parse().ok()?),
                    _ => return None,
                }
            }
            _ => return None,
        };
        options.push(ColumnOption { column, setting });
        i += 4;
        match tokens.get(i).map(|t| &t.token) {
            None => return Some(AlterColumnOptions { table, if_exists, options }),
            Some(Token::Comma) => i += 1,
            Some(_) => return None,
        }
    }
}

/// A word's text, folded unless quoted.
fn word(t: &TokenWithSpan) -> Option<String> {
    super::lock_syntax::word(t).map(|(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_action_and_leaves_other_statements() {
        let a = parse_column_options(
            "alter table if exists s.t alter a set storage plain, alter column \"B\" set statistics -1",
        )
        .expect("read");
        assert!(a.if_exists);
        assert_eq!(a.options.len(), 2);
        assert_eq!(a.options[0].setting, ColumnSetting::Storage("plain".into()));
        assert_eq!(
            (a.options[1].column.as_str(), &a.options[1].setting),
            ("B", &ColumnSetting::Statistics(-1))
        );
        assert!(parse_column_options("alter table t alter a set storage plain, add column x int").is_none());
        assert!(parse_column_options("alter table t alter a set default 1").is_none());
    }
}
