//! `CREATE [OR REPLACE] PROCEDURE`, which sqlparser reads only in other
//! dialects' forms: read as the CREATE FUNCTION it is shaped like, its
//! word replaced in place (positions stay), and marked a procedure for the
//! binder (`PreParsed::procedure`).

use sqlparser::keywords::Keyword;

use super::lock_syntax::{keyword, may_start_with, significant_tokens};

/// `sql` with PROCEDURE read as FUNCTION, if it is a CREATE PROCEDURE.
pub(crate) fn procedure_as_function(sql: &str) -> Option<String> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = 1;
    if kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    if kw(i) != Some(Keyword::PROCEDURE) {
        return None;
    }
    let at = tokens[i].span.start;
    let line_start = sql.split_inclusive('\n').take(at.line as usize - 1).map(str::len).sum::<usize>();
    let from = line_start + sql[line_start..].char_indices().nth(at.column as usize - 1)?.0;
    // "PROCEDURE" and "FUNCTION " are as long.
    Some(format!("{}FUNCTION {}", &sql[..from], &sql[from + "procedure".len()..]))
}
