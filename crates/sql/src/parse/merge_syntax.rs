//! `MERGE … WHEN NOT MATCHED THEN INSERT DEFAULT VALUES`, which
//! sqlparser's grammar lacks: written as `INSERT VALUES (DEFAULT)`, the
//! same row (the first column's default, and every other column's, which
//! an INSERT without a column list leaves to its default). The new text
//! is as long as the old where a blank follows, so positions after it
//! stay.

use sqlparser::keywords::Keyword;

use super::lock_syntax::{keyword, may_start_with, offset, significant_tokens};

/// `sql` with each MERGE action's `INSERT DEFAULT VALUES` rewritten;
/// `None` for any other text.
pub(crate) fn rewrite_default_values(sql: &str) -> Option<String> {
    if !(may_start_with(sql, "merge") || may_start_with(sql, "with") || may_start_with(sql, "explain")) {
        return None;
    }
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("merge") || !lower.contains("default") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if !(0..tokens.len()).any(|i| kw(i) == Some(Keyword::MERGE)) {
        return None;
    }
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let mut spans = Vec::new();
    for i in 0..tokens.len() {
        if kw(i) == Some(Keyword::THEN)
            && kw(i + 1) == Some(Keyword::INSERT)
            && kw(i + 2) == Some(Keyword::DEFAULT)
            && kw(i + 3) == Some(Keyword::VALUES)
        {
            let from = offset(&line_starts, sql, tokens[i + 2].span.start);
            let to = offset(&line_starts, sql, tokens[i + 3].span.end);
            spans.push((from, to));
        }
    }
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + spans.len());
    let mut at = 0;
    for (from, to) in spans {
        out.push_str(&sql[at..from]);
        out.push_str("VALUES (DEFAULT)");
        // `DEFAULT VALUES` is 14 characters, the new text 16: two blanks
        // after it, where there are, keep later positions.
        let mut end = to;
        for _ in 0..2 {
            if sql[end..].starts_with([' ', '\t']) {
                end += 1;
            }
        }
        at = end;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_insert_default_values_is_rewritten() {
        let sql = "MERGE INTO t USING s ON t.a = s.a WHEN NOT MATCHED THEN INSERT DEFAULT VALUES  ";
        let out = rewrite_default_values(sql).unwrap();
        assert_eq!(out, "MERGE INTO t USING s ON t.a = s.a WHEN NOT MATCHED THEN INSERT VALUES (DEFAULT)");
        assert!(rewrite_default_values("INSERT INTO t DEFAULT VALUES").is_none());
        assert!(rewrite_default_values("MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE").is_none());
    }
}
