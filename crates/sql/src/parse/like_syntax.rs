//! `CREATE TABLE t (…, LIKE source [INCLUDING | EXCLUDING what] …, …)`:
//! PostgreSQL's LIKE element, which sqlparser reads only as the whole
//! column list and without its options. Each LIKE element is blanked out
//! of the text with the comma that separates it (positions stay) and kept
//! for the binder (`Binder::create_table`): the source's name, how many
//! columns are written before it (its columns go there), and its options.

use sqlparser::ast::{Ident, ObjectName};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens, starts_with};

pub(crate) use crate::statement::{LikeOptions, TableLike};

/// A word where a LIKE option should be: its text and byte offset, for
/// PostgreSQL's "syntax error at or near".
pub(crate) type BadOption = (String, usize);

/// `sql` without its LIKE elements, and the elements; `None` for any other
/// text; the word that is not a LIKE option, if one is not.
pub(crate) fn read_table_likes(sql: &str) -> Option<Result<(String, Vec<TableLike>), BadOption>> {
    if !may_start_with(sql, "create") {
        return None;
    }
    if !sql.as_bytes().windows(4).any(|w| w.eq_ignore_ascii_case(b"like")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !starts_with(&tokens, Keyword::CREATE) {
        return None;
    }
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let open = super::create_as_syntax::after_table_name(&tokens)?;
    if tokens[open].token != Token::LParen {
        return None;
    }
    let elements = top_level_elements(&tokens, open)?;
    let mut text = sql.to_owned();
    let mut likes = Vec::new();
    let mut columns = 0;
    for (k, &(start, end)) in elements.iter().enumerate() {
        match kw(start) {
            Some(Keyword::LIKE) => {}
            Some(
                Keyword::CONSTRAINT
                | Keyword::PRIMARY
                | Keyword::UNIQUE
                | Keyword::CHECK
                | Keyword::FOREIGN
                | Keyword::EXCLUDE,
            ) => continue,
            _ => {
                columns += 1;
                continue;
            }
        }
        let (source, options) = match read_like(&tokens[start + 1..end]) {
            Ok(Some(like)) => like,
            Ok(None) => return None,
            Err(t) => {
                let line_starts: Vec<usize> =
                    std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
                let at = super::lock_syntax::offset(&line_starts, sql, t.span.start);
                return Some(Err((t.token.to_string(), at)));
            }
        };
        likes.push(TableLike { source, position: columns, options });
        // The element and a comma: the one after it, else the one before.
        let (from, to) = match (elements.get(k + 1), k.checked_sub(1)) {
            (Some(_), _) => (tokens[start].span.start, tokens[end].span.end),
            (None, Some(_)) => (tokens[start - 1].span.start, tokens[end - 1].span.end),
            (None, None) => (tokens[start].span.start, tokens[end - 1].span.end),
        };
        text = blank(&text, from, to);
    }
    (!likes.is_empty()).then_some(Ok((text, likes)))
}

/// The elements of the parenthesised list opening at `open`: each as
/// (first token, the token after its last: a comma or the closing paren).
fn top_level_elements(tokens: &[TokenWithSpan], open: usize) -> Option<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = open + 1;
    for (i, t) in tokens.iter().enumerate().skip(open + 1) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth > 0 => depth -= 1,
            Token::RParen => {
                if i > start {
                    out.push((start, i));
                }
                return Some(out);
            }
            Token::Comma if depth == 0 => {
                out.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// `source [{INCLUDING | EXCLUDING} option …]`; `None` if it is not one,
/// the token that is wrong if it nearly is.
fn read_like(tokens: &[TokenWithSpan]) -> Result<Option<(ObjectName, LikeOptions)>, TokenWithSpan> {
    let mut parts = Vec::new();
    let mut i = 0;
    while let Some(Token::Word(w)) = tokens.get(i).map(|t| &t.token) {
        if w.quote_style.is_none() && matches!(w.keyword, Keyword::INCLUDING | Keyword::EXCLUDING) {
            break;
        }
        parts.push(match w.quote_style {
            Some(q) => Ident::with_quote(q, w.value.clone()),
            None => Ident::new(w.value.clone()),
        });
        i += 1;
        if tokens.get(i).map(|t| &t.token) != Some(&Token::Period) {
            break;
        }
        i += 1;
    }
    if parts.is_empty() {
        return Ok(None);
    }
    let mut options = LikeOptions::default();
    while i < tokens.len() {
        let on = match keyword(&tokens[i].token) {
            Some(Keyword::INCLUDING) => true,
            Some(Keyword::EXCLUDING) => false,
            _ => return Err(tokens[i].clone()),
        };
        let Some(option) = tokens.get(i + 1) else { return Ok(None) };
        let Token::Word(w) = &option.token else { return Err(option.clone()) };
        match w.value.to_ascii_lowercase().as_str() {
            "defaults" => options.defaults = on,
            "generated" => options.generated = on,
            "identity" => options.identity = on,
            "constraints" => options.constraints = on,
            "indexes" => options.indexes = on,
            // Nothing here to copy: no comments, per-column storage,
            // compression or extended statistics.
            "comments" | "storage" | "compression" | "statistics" => {}
            "all" => {
                options =
                    LikeOptions { defaults: on, generated: on, identity: on, constraints: on, indexes: on }
            }
            _ => return Err(option.clone()),
        }
        i += 2;
    }
    Ok(Some((ObjectName::from(parts), options)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_blanked_and_read() {
        let sql = "create table l3 (z int, like l1 including all excluding indexes, y int)";
        let (text, likes) = read_table_likes(sql).unwrap().unwrap();
        assert_eq!(text.len(), sql.len());
        assert_eq!(text.split_whitespace().collect::<Vec<_>>().join(" "), "create table l3 (z int, y int)");
        assert_eq!(likes.len(), 1);
        assert_eq!(likes[0].position, 1);
        assert_eq!(likes[0].source.to_string(), "l1");
        let all = LikeOptions {
            defaults: true,
            generated: true,
            identity: true,
            constraints: true,
            indexes: false,
        };
        assert_eq!(likes[0].options, all);

        let (text, likes) = read_table_likes("CREATE TEMP TABLE t (LIKE public.\"S\")").unwrap().unwrap();
        assert_eq!(text.split_whitespace().collect::<Vec<_>>().join(" "), "CREATE TEMP TABLE t ( )");
        assert_eq!(likes[0].source.to_string(), "public.\"S\"");
        assert_eq!(likes[0].options, LikeOptions::default());

        let (text, likes) =
            read_table_likes("create table t (a int, primary key (a), like s including defaults)")
                .unwrap()
                .unwrap();
        assert_eq!(
            text.split_whitespace().collect::<Vec<_>>().join(" "),
            "create table t (a int, primary key (a) )"
        );
        assert_eq!(likes[0].position, 1);

        assert!(read_table_likes("create table t (a text check (a like 'x%'))").is_none());
        assert_eq!(
            read_table_likes("create table t (like s including nonsense)"),
            Some(Err(("nonsense".into(), 33)))
        );
        assert!(read_table_likes("select 'like'").is_none());
        // A comment before the statement (psql sends it along).
        let (_, likes) = read_table_likes("/* copy */\n-- of s\nCREATE TABLE t (LIKE s)").unwrap().unwrap();
        assert_eq!(likes[0].source.to_string(), "s");
    }
}
