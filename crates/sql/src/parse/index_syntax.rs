//! `DROP INDEX CONCURRENTLY …`: the word, which sqlparser's grammar lacks
//! there. It is blanked out of the text (positions stay) and the binder
//! is told (`Ast::concurrently`).

use sqlparser::keywords::Keyword;

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens, starts_with};

/// `sql` without the CONCURRENTLY of `DROP INDEX CONCURRENTLY`; `None`
/// for any other text.
pub(crate) fn read_drop_concurrently(sql: &str) -> Option<String> {
    if !may_start_with(sql, "drop") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !starts_with(&tokens, Keyword::DROP) {
        return None;
    }
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
        assert!(read_drop_concurrently("-- drop it\ndrop index concurrently i").is_some());
        assert!(read_drop_concurrently("create index concurrently on t (a)").is_none());
    }
}
