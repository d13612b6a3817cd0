//! A window frame bound that starts with a quoted literal and a cast
//! (`'1 year'::interval PRECEDING`): sqlparser reads a quoted literal
//! there as an interval literal and then stops at the `::`. The cast is
//! put in parentheses, which PostgreSQL reads the same (the text grows:
//! the statement's later positions are not the user's).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::lock_syntax::{keyword, offset, significant_tokens};

/// `sql` with each such bound parenthesised; `None` if there is none.
pub(crate) fn parenthesise_frame_casts(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    if !(lower.contains("preceding") || lower.contains("following")) || !sql.contains("::") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let mut spans = Vec::new();
    for j in 1..tokens.len() {
        let literal = matches!(tokens[j].token, Token::SingleQuotedString(_));
        let starts_bound = matches!(
            kw(j - 1),
            Some(Keyword::BETWEEN | Keyword::AND | Keyword::ROWS | Keyword::RANGE | Keyword::GROUPS)
        );
        if !literal
            || !starts_bound
            || !matches!(tokens.get(j + 1).map(|t| &t.token), Some(Token::DoubleColon))
        {
            continue;
        }
        // The type's name (words, and a type modifier's parentheses),
        // then PRECEDING or FOLLOWING.
        let mut k = j + 2;
        let mut depth = 0usize;
        while let Some(t) = tokens.get(k) {
            match &t.token {
                Token::LParen => depth += 1,
                Token::RParen if depth > 0 => depth -= 1,
                _ if depth > 0 => {}
                Token::Word(_) if matches!(kw(k), Some(Keyword::PRECEDING | Keyword::FOLLOWING)) => break,
                Token::Word(_) => {}
                _ => break,
            }
            k += 1;
        }
        if k > j + 2 && matches!(kw(k), Some(Keyword::PRECEDING | Keyword::FOLLOWING)) {
            let from = offset(&line_starts, sql, tokens[j].span.start);
            let to = offset(&line_starts, sql, tokens[k - 1].span.end);
            spans.push((from, to));
        }
    }
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 2 * spans.len());
    let mut at = 0;
    for (from, to) in spans {
        out.push_str(&sql[at..from]);
        out.push('(');
        out.push_str(&sql[from..to]);
        out.push(')');
        at = to;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_at_frame_bounds_are_parenthesised() {
        let sql = "select sum(x) over (order by d range between '1 year'::interval preceding and '2 days'::interval following) from t";
        assert_eq!(
            parenthesise_frame_casts(sql).unwrap(),
            "select sum(x) over (order by d range between ('1 year'::interval) preceding and ('2 days'::interval) following) from t"
        );
        assert!(parenthesise_frame_casts("select 1 where d between '1'::date and '2'::date").is_none());
        assert!(parenthesise_frame_casts("select sum(x) over (rows between 1 preceding and current row)")
            .is_none());
    }
}
