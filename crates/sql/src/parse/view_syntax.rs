//! `CREATE VIEW … AS query WITH [CASCADED | LOCAL] CHECK OPTION`: the
//! trailing clause, which sqlparser's grammar lacks. It is blanked out of
//! the text (positions stay) and kept for the binder
//! (`Binder::create_view`).

use snapscale_engine::catalog::CheckOption;
use sqlparser::keywords::Keyword;

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens, starts_with};

/// `sql` without its trailing CHECK OPTION clause, and the option; `None`
/// for any other text.
pub(crate) fn read_check_option(sql: &str) -> Option<(String, CheckOption)> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tail = sql.trim_end().as_bytes();
    if tail.len() < 6 || !tail[tail.len() - 6..].eq_ignore_ascii_case(b"option") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !starts_with(&tokens, Keyword::CREATE) {
        return None;
    }
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = 1;
    if kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    while matches!(kw(i), Some(Keyword::TEMP | Keyword::TEMPORARY | Keyword::RECURSIVE)) {
        i += 1;
    }
    if kw(i) != Some(Keyword::VIEW) {
        return None;
    }
    let n = tokens.len();
    if n < 4 || kw(n - 1) != Some(Keyword::OPTION) || kw(n - 2) != Some(Keyword::CHECK) {
        return None;
    }
    let (option, with) = match kw(n - 3) {
        Some(Keyword::CASCADED) => (CheckOption::Cascaded, n - 4),
        Some(Keyword::LOCAL) => (CheckOption::Local, n - 4),
        _ => (CheckOption::Cascaded, n - 3),
    };
    if kw(with) != Some(Keyword::WITH) {
        return None;
    }
    Some((blank(sql, tokens[with].span.start, tokens[n - 1].span.end), option))
}

/// `CREATE MATERIALIZED VIEW … AS query WITH [NO] DATA` without its
/// trailing clause, and whether it said DATA; `None` for any other text.
pub(crate) fn read_matview_data(sql: &str) -> Option<(String, bool)> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tail = sql.trim_end().trim_end_matches(';').trim_end().as_bytes();
    if tail.len() < 4 || !tail[tail.len() - 4..].eq_ignore_ascii_case(b"data") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::CREATE) || kw(1) != Some(Keyword::MATERIALIZED) || kw(2) != Some(Keyword::VIEW)
    {
        return None;
    }
    let mut n = tokens.len();
    while n > 0 && matches!(tokens[n - 1].token, sqlparser::tokenizer::Token::SemiColon) {
        n -= 1;
    }
    if n < 3 || kw(n - 1) != Some(Keyword::DATA) {
        return None;
    }
    let (data, with) = match kw(n - 2) {
        Some(Keyword::NO) => (false, n - 3),
        _ => (true, n - 2),
    };
    if kw(with) != Some(Keyword::WITH) {
        return None;
    }
    Some((blank(sql, tokens[with].span.start, tokens[n - 1].span.end), data))
}

/// `ALTER [MATERIALIZED] VIEW …` written as the ALTER TABLE it is
/// (PostgreSQL's ALTER VIEW actions are ALTER TABLE's: RENAME, RENAME
/// COLUMN, ALTER COLUMN … DEFAULT), and whether it named a materialized
/// view; `None` for any other text. The binder holds the statement to
/// its kind of relation and to the actions ALTER VIEW has.
pub(crate) fn alter_view_as_table(sql: &str) -> Option<(String, bool)> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::ALTER) {
        return None;
    }
    let (last, materialized) = match (kw(1), kw(2)) {
        (Some(Keyword::VIEW), _) => (1, false),
        (Some(Keyword::MATERIALIZED), Some(Keyword::VIEW)) => (2, true),
        _ => return None,
    };
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let from = super::lock_syntax::offset(&line_starts, sql, tokens[1].span.start);
    let to = super::lock_syntax::offset(&line_starts, sql, tokens[last].span.end);
    Some((format!("{}TABLE{}", &sql[..from], &sql[to..]), materialized))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_materialized_views_data_clause_is_read() {
        let (text, data) = read_matview_data("CREATE MATERIALIZED VIEW m AS SELECT 1 WITH NO DATA").unwrap();
        assert_eq!((text.trim_end(), data), ("CREATE MATERIALIZED VIEW m AS SELECT 1", false));
        assert!(read_matview_data("create materialized view m as select 1 with data").unwrap().1);
        assert!(read_matview_data("create view m as select 1 with data").is_none());
        assert!(read_matview_data("create materialized view m as select 'with data'").is_none());
    }

    #[test]
    fn the_clause_is_blanked_and_read() {
        let (text, option) =
            read_check_option("create view v as select * from t where a > 0 with local check option")
                .unwrap();
        assert_eq!(text.trim_end(), "create view v as select * from t where a > 0");
        assert_eq!(text.len(), 68);
        assert_eq!(option, CheckOption::Local);
        let (_, option) =
            read_check_option("CREATE OR REPLACE TEMP VIEW v AS SELECT 1 WITH CHECK OPTION").unwrap();
        assert_eq!(option, CheckOption::Cascaded);
        assert!(read_check_option("create table t (a int) with check option").is_none());
        assert!(read_check_option("create view v as select 'with check option'").is_none());
    }
}
