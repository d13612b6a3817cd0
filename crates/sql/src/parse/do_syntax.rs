//! `DO [LANGUAGE name] code [LANGUAGE name]`, which sqlparser's grammar
//! lacks: the language and the code block's text.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::tokenizer::Token;

use super::lock_syntax::statement_tokens;

/// A DO statement's language (lower-cased; `plpgsql` by default) and code.
pub(crate) fn read_do(sql: &str) -> Result<(String, String), SqlError> {
    let tokens = statement_tokens(sql)
        .ok_or_else(|| SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"DO\""))?;
    let mut language = None;
    let mut code = None;
    let mut i = 1;
    let near = |t: &Token| SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{t}\""));
    while i < tokens.len() {
        match &tokens[i].token {
            Token::Word(w) if w.value.eq_ignore_ascii_case("language") && language.is_none() => {
                let Some(Token::Word(name)) = tokens.get(i + 1).map(|t| &t.token) else {
                    return Err(match tokens.get(i + 1) {
                        Some(t) => near(&t.token),
                        None => SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"),
                    });
                };
                language = Some(if name.quote_style.is_some() {
                    name.value.clone()
                } else {
                    name.value.to_lowercase()
                });
                i += 2;
            }
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if code.is_none() => {
                code = Some(s.clone());
                i += 1;
            }
            Token::DollarQuotedString(d) if code.is_none() => {
                code = Some(d.value.clone());
                i += 1;
            }
            other => return Err(near(other)),
        }
    }
    let Some(code) = code else {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "no inline code specified"));
    };
    Ok((language.unwrap_or_else(|| "plpgsql".into()), code))
}
