//! `DROP INDEX CONCURRENTLY …`: the word, which sqlparser's grammar lacks
//! there. It is blanked out of the text (positions stay) and the binder
//! is told (`Ast::concurrently`).

use sqlparser::keywords::Keyword;

use super::lock_syntax::{blank, keyword, significant_tokens};

/// `sql` without the CONCURRENTLY of `DROP INDEX CONCURRENTLY`; `None`
/// for any other text.
pub(crate) fn read_drop_concurrently(sql: &str) -> Option<String> {
    let head = sql.trim_start();
    if !head.get(..4).is_some_and(|w| w.eq_ignore_ascii_case("drop")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(1) != Some(Keyword::INDEX) || kw(2) != Some(Keyword::CONCURRENTLY) {
        return None;
    }
    Some(blank(sql, tokens[2].span.start, tokens[2].span.end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_is_blanked() {
        let text = read_drop_concurrently("DROP INDEX CONCURRENTLY IF EXISTS i").unwrap();
        assert_eq!(text, format!("DROP INDEX {} IF EXISTS i", " ".repeat(12)));
        assert!(read_drop_concurrently("drop index concurrently_named").is_none());
        assert!(read_drop_concurrently("drop table concurrently").is_none());
        assert!(read_drop_concurrently("create index concurrently on t (a)").is_none());
    }
}
