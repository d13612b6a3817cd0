//! PostgreSQL's string syntax that sqlparser reads otherwise or not at
//! all, put right around its tokenizer so that every position stays the
//! user's:
//!
//! ```text
//!   before tokenizing   E'…' (escapes as PostgreSQL's lexer reads them:
//!                       octal and hex bytes, \u and \U with surrogate
//!                       pairs, continuation over a newline) and U&'…' /
//!                       U&"…" [UESCAPE '…'] are decoded here, with
//!                       PostgreSQL's errors and positions, and replaced by
//!                       a plain literal of the same length (newlines kept)
//!                       that the tokenizer reads as one token
//!   after tokenizing    that token takes the decoded value; 'a' <newline>
//!                       'b' is one literal; TRIM([BOTH|LEADING|TRAILING]
//!                       FROM x) loses its FROM; SUBSTRING(a SIMILAR b
//!                       ESCAPE c) is SUBSTRING(a FROM b FOR c), which binds
//!                       as the same substring(text, text, text)
//! ```

use snapscale_sqlstate::SqlState;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Whitespace, Word};

/// A lexical error in a literal, as PostgreSQL's lexer reports it.
#[derive(Debug)]
pub(crate) struct LexError {
    pub message: String,
    pub hint: Option<&'static str>,
    /// Byte offset in the statement's text; `None` where PostgreSQL gives
    /// no position (an invalid byte sequence).
    pub at: Option<usize>,
    /// 22021 for an invalid byte sequence, 22025 for an E'' literal's
    /// invalid Unicode escape; 42601 otherwise.
    pub code: SqlState,
}

fn lex_error(message: impl Into<String>, at: usize) -> LexError {
    LexError { message: message.into(), hint: None, at: Some(at), code: SqlState::SYNTAX_ERROR }
}

/// The text sqlparser is to tokenize, and the decoded literals to put in
/// place of their placeholders.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// The statement with each decoded literal's source replaced; `None`
    /// if there was none.
    pub text: Option<String>,
    /// Where each placeholder starts, and the token it stands for.
    values: Vec<(Location, Token)>,
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Decodes the statement's E'' and U& literals; see the module comment.
pub(crate) fn prepare(sql: &str) -> Result<Prepared, LexError> {
    let b = sql.as_bytes();
    // (start, end, quote, value)
    let mut found: Vec<(usize, usize, u8, Token)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && is_ident_char(b[i - 1]);
        match b[i] {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            q @ (b'\'' | b'"') => {
                i = skip_quoted(b, i, q);
                continue;
            }
            b'$' if !prev_ident => {
                let tag_end =
                    b[i + 1..].iter().position(|&c| !is_ident_char(c) || c == b'$').map(|n| i + 1 + n);
                match tag_end {
                    Some(end) if b[end] == b'$' && !b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                        let tag = &sql[i..=end];
                        i = match sql[end + 1..].find(tag) {
                            Some(close) => end + 1 + close + tag.len(),
                            None => b.len(),
                        };
                        continue;
                    }
                    _ => {}
                }
            }
            b'e' | b'E' if !prev_ident && b.get(i + 1) == Some(&b'\'') => {
                match escape_string(sql, i + 1)? {
                    Some((end, value)) => {
                        found.push((i, end, b'\'', Token::SingleQuotedString(value)));
                        i = end;
                    }
                    None => break,
                }
                continue;
            }
            b'u' | b'U'
                if !prev_ident
                    && b.get(i + 1) == Some(&b'&')
                    && matches!(b.get(i + 2), Some(b'\'' | b'"')) =>
            {
                let q = b[i + 2];
                match unicode_literal(sql, i + 2)? {
                    Some((end, value)) => {
                        let token = if q == b'"' {
                            Token::Word(Word { value, quote_style: Some('"'), keyword: Keyword::NoKeyword })
                        } else {
                            Token::SingleQuotedString(value)
                        };
                        found.push((i, end, q, token));
                        i = end;
                    }
                    None => break,
                }
                continue;
            }
            c if is_ident_char(c) => {
                while i < b.len() && is_ident_char(b[i]) {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if found.is_empty() {
        return Ok(Prepared::default());
    }
    let mut text = String::with_capacity(sql.len());
    let mut values = Vec::with_capacity(found.len());
    let mut last = 0;
    for (start, end, q, token) in found {
        text.push_str(&sql[last..start]);
        values.push((location(sql, start), token));
        // The placeholder: a literal as long as the source, newlines kept.
        let q = q as char;
        let inner = sql[start..end].chars().count().saturating_sub(2);
        text.push(q);
        for c in sql[start..end].chars().skip(1).take(inner) {
            text.push(if c == '\n' || c == '\r' { c } else { 'x' });
        }
        text.push(q);
        last = end;
    }
    text.push_str(&sql[last..]);
    Ok(Prepared { text: Some(text), values })
}

/// The tokenizer's location of byte `at`.
fn location(sql: &str, at: usize) -> Location {
    let before = &sql[..at];
    let line = before.matches('\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    Location { line, column: sql[line_start..at].chars().count() as u64 + 1 }
}

/// The offset after the quoted token starting at `i` (doubled quotes are
/// one; an unterminated one runs to the end).
fn skip_quoted(b: &[u8], mut i: usize, q: u8) -> usize {
    i += 1;
    while i < b.len() {
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// After a literal's closing quote at `i`: where the next part of the
/// literal opens if only blanks holding a newline (and `--` comments)
/// come between, as PostgreSQL continues a literal.
fn continuation(b: &[u8], mut i: usize) -> Option<usize> {
    let mut newline = false;
    while i < b.len() {
        match b[i] {
            b'\n' | b'\r' => newline = true,
            b' ' | b'\t' | b'\x0c' => {}
            b'-' if newline && b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' if newline => return Some(i),
            _ => return None,
        }
        i += 1;
    }
    None
}

fn hex_digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let digits = b.get(at..at + n)?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

fn is_high_surrogate(c: u32) -> bool {
    (0xD800..=0xDBFF).contains(&c)
}

fn is_low_surrogate(c: u32) -> bool {
    (0xDC00..=0xDFFF).contains(&c)
}

fn combine(high: u32, low: u32) -> u32 {
    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
}

/// The text PostgreSQL's lexer would report as the token at `at` inside
/// an E'' literal: a whole \u or \U escape, else one character.
fn near_in_escape_string(sql: &str, at: usize) -> &str {
    let b = sql.as_bytes();
    if b.get(at) == Some(&b'\\') {
        match b.get(at + 1) {
            Some(b'u') if hex_digits(b, at + 2, 4).is_some() => return &sql[at..at + 6],
            Some(b'U') if hex_digits(b, at + 2, 8).is_some() => return &sql[at..at + 10],
            _ => {}
        }
    }
    sql[at..].chars().next().map_or("", |c| &sql[at..at + c.len_utf8()])
}

/// PostgreSQL's check of a literal's bytes: valid UTF-8 without NUL.
fn valid_utf8(bytes: Vec<u8>) -> Result<String, LexError> {
    let bad = |at: usize, bytes: &[u8]| {
        let lead = bytes[at];
        let len = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        let shown: Vec<String> =
            bytes[at..(at + len).min(bytes.len())].iter().map(|b| format!("0x{b:02x}")).collect();
        LexError {
            message: format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")),
            hint: None,
            at: None,
            code: SqlState::CHARACTER_NOT_IN_REPERTOIRE,
        }
    };
    let nul = bytes.iter().position(|&c| c == 0);
    match String::from_utf8(bytes) {
        Ok(s) => match nul {
            Some(at) => Err(bad(at, s.as_bytes())),
            None => Ok(s),
        },
        Err(e) => {
            let invalid = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            Err(bad(nul.map_or(invalid, |n| n.min(invalid)), &bytes))
        }
    }
}

/// The E'' literal whose opening quote is at `q`: where it ends and its
/// value; `None` if it is not terminated (sqlparser reports that).
fn escape_string(sql: &str, q: usize) -> Result<Option<(usize, String)>, LexError> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut j = q + 1;
    // A high surrogate waiting for its low half.
    let mut pending: Option<u32> = None;
    loop {
        let Some(&c) = b.get(j) else { return Ok(None) };
        let unicode_escape = c == b'\\' && matches!(b.get(j + 1), Some(b'u' | b'U'));
        if pending.is_some() && !unicode_escape {
            let near = near_in_escape_string(sql, j);
            return Err(lex_error(format!("invalid Unicode surrogate pair at or near \"{near}\""), j));
        }
        if c == b'\'' {
            if b.get(j + 1) == Some(&b'\'') {
                out.push(b'\'');
                j += 2;
                continue;
            }
            match continuation(b, j + 1) {
                Some(next) => {
                    j = next + 1;
                    continue;
                }
                None => return Ok(Some((j + 1, valid_utf8(out)?))),
            }
        }
        if c != b'\\' {
            out.push(c);
            j += 1;
            continue;
        }
        let Some(&e) = b.get(j + 1) else { return Ok(None) };
        match e {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0'..=b'7' => {
                let mut value = 0u32;
                let mut k = j + 1;
                while k < j + 4 && matches!(b.get(k), Some(b'0'..=b'7')) {
                    value = value * 8 + u32::from(b[k] - b'0');
                    k += 1;
                }
                out.push(value as u8);
                j = k;
                continue;
            }
            b'x' if b.get(j + 2).is_some_and(u8::is_ascii_hexdigit) => {
                let n = if b.get(j + 3).is_some_and(u8::is_ascii_hexdigit) { 2 } else { 1 };
                out.push(hex_digits(b, j + 2, n).expect("checked") as u8);
                j += 2 + n;
                continue;
            }
            b'u' | b'U' => {
                let n = if e == b'u' { 4 } else { 8 };
                let Some(code) = hex_digits(b, j + 2, n) else {
                    return Err(LexError {
                        message: "invalid Unicode escape".into(),
                        hint: Some("Unicode escapes must be \\uXXXX or \\UXXXXXXXX."),
                        at: Some(j),
                        code: SqlState::INVALID_ESCAPE_SEQUENCE,
                    });
                };
                let escape = &sql[j..j + 2 + n];
                let code = match pending.take() {
                    Some(high) if is_low_surrogate(code) => combine(high, code),
                    Some(_) => {
                        return Err(lex_error(
                            format!("invalid Unicode surrogate pair at or near \"{escape}\""),
                            j,
                        ))
                    }
                    None if is_high_surrogate(code) => {
                        pending = Some(code);
                        j += 2 + n;
                        continue;
                    }
                    None if is_low_surrogate(code) => {
                        return Err(lex_error(
                            format!("invalid Unicode surrogate pair at or near \"{escape}\""),
                            j,
                        ))
                    }
                    None => code,
                };
                let Some(ch) = char::from_u32(code).filter(|_| code != 0) else {
                    return Err(lex_error(
                        format!("invalid Unicode escape value at or near \"{escape}\""),
                        j,
                    ));
                };
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                j += 2 + n;
                continue;
            }
            other => out.push(other),
        }
        j += 2;
    }
}

/// The U&'' literal or U&"" identifier whose opening quote is at `q`, and
/// its UESCAPE clause: where it all ends and the decoded value; `None` if
/// it is not terminated.
fn unicode_literal(sql: &str, q: usize) -> Result<Option<(usize, String)>, LexError> {
    let b = sql.as_bytes();
    let quote = b[q];
    // The body's characters with their offsets ('' is one quote).
    let mut body: Vec<(usize, char)> = Vec::new();
    let mut j = q + 1;
    loop {
        let Some(c) = sql[j..].chars().next() else { return Ok(None) };
        if c as u32 == u32::from(quote) {
            if b.get(j + 1) == Some(&quote) {
                body.push((j, c));
                j += 2;
                continue;
            }
            j += 1;
            break;
        }
        body.push((j, c));
        j += c.len_utf8();
    }
    let mut end = j;
    let mut escape = '\\';
    // UESCAPE 'c'
    let mut k = j;
    while k < b.len() && b[k].is_ascii_whitespace() {
        k += 1;
    }
    if b.len() >= k + 7
        && b[k..k + 7].eq_ignore_ascii_case(b"uescape")
        && !b.get(k + 7).is_some_and(|&c| is_ident_char(c))
    {
        let mut m = k + 7;
        while m < b.len() && b[m].is_ascii_whitespace() {
            m += 1;
        }
        if b.get(m) != Some(&b'\'') {
            let near = near_token(sql, m);
            let message = if near.is_empty() {
                "UESCAPE must be followed by a simple string literal at end of input".to_owned()
            } else {
                format!("UESCAPE must be followed by a simple string literal at or near \"{near}\"")
            };
            return Err(lex_error(message, m));
        }
        let close = skip_quoted(b, m, b'\'');
        let literal = &sql[m..close];
        let inner = literal.get(1..literal.len().saturating_sub(1)).unwrap_or("").replace("''", "'");
        let mut chars = inner.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None)
                if !(c.is_ascii_hexdigit() || c == '+' || c == '\'' || c == '"' || c.is_whitespace()) =>
            {
                escape = c
            }
            _ => {
                return Err(lex_error(
                    format!("invalid Unicode escape character at or near \"{literal}\""),
                    m,
                ));
            }
        }
        end = close;
    }
    let invalid_escape = |at: usize| LexError {
        message: "invalid Unicode escape".into(),
        hint: Some("Unicode escapes must be \\XXXX or \\+XXXXXX."),
        at: Some(at),
        code: SqlState::SYNTAX_ERROR,
    };
    let surrogate = |at: usize| lex_error("invalid Unicode surrogate pair", at);
    let mut out = String::new();
    let mut pending: Option<u32> = None;
    let mut n = 0;
    while n < body.len() {
        let (at, c) = body[n];
        if c != escape {
            if pending.is_some() {
                return Err(surrogate(at));
            }
            out.push(c);
            n += 1;
            continue;
        }
        if body.get(n + 1).map(|&(_, c)| c) == Some(escape) {
            if pending.is_some() {
                return Err(surrogate(at));
            }
            out.push(escape);
            n += 2;
            continue;
        }
        let (skip, digits) = if body.get(n + 1).map(|&(_, c)| c) == Some('+') { (2, 6) } else { (1, 4) };
        let hex: String = body.iter().skip(n + skip).take(digits).map(|&(_, c)| c).collect();
        if hex.chars().count() != digits || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(invalid_escape(at));
        }
        let code = u32::from_str_radix(&hex, 16).expect("hex digits");
        let next = n + skip + digits;
        let after = body.get(next).map_or(j - 1, |&(at, _)| at);
        let code = match pending.take() {
            Some(high) if is_low_surrogate(code) => combine(high, code),
            Some(_) => return Err(surrogate(at)),
            None if is_high_surrogate(code) => {
                // Its low half must follow at once.
                match body.get(next) {
                    Some(&(_, c)) if c == escape => {}
                    _ => return Err(surrogate(after)),
                }
                pending = Some(code);
                n = next;
                continue;
            }
            None if is_low_surrogate(code) => return Err(surrogate(at)),
            None => code,
        };
        match char::from_u32(code).filter(|_| code != 0) {
            Some(ch) => out.push(ch),
            None => return Err(lex_error("invalid Unicode escape value", at)),
        }
        n = next;
    }
    if pending.is_some() {
        return Err(surrogate(j - 1));
    }
    Ok(Some((end, out)))
}

/// The token at `at` as PostgreSQL's "at or near" quotes it: a word, a
/// run of operator characters, a quoted token, or one character.
fn near_token(sql: &str, at: usize) -> &str {
    let b = sql.as_bytes();
    let Some(&c) = b.get(at) else { return "" };
    let run = |pred: &dyn Fn(u8) -> bool| {
        let mut e = at;
        while e < b.len() && pred(b[e]) {
            e += 1;
        }
        &sql[at..e]
    };
    if is_ident_char(c) {
        run(&|c| is_ident_char(c))
    } else if b"+-*/<>=~!@#%^&|`?".contains(&c) {
        run(&|c| b"+-*/<>=~!@#%^&|`?".contains(&c))
    } else if c == b'"' {
        &sql[at..skip_quoted(b, at, c)]
    } else {
        sql[at..].chars().next().map_or("", |ch| &sql[at..at + ch.len_utf8()])
    }
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

fn is_blank(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

/// Puts the decoded literals in place of their placeholders and rewrites
/// the forms sqlparser lacks; see the module comment.
///
/// Two literals in a row that are not one continued literal are a syntax
/// error at the second (sqlparser would read it as an alias): its
/// location is returned.
pub(crate) fn rewrite_tokens(tokens: &mut Vec<TokenWithSpan>, prepared: &Prepared) -> Result<(), Location> {
    let mut decoded = vec![false; tokens.len()];
    if !prepared.values.is_empty() {
        for (n, t) in tokens.iter_mut().enumerate() {
            if let Some((_, value)) = prepared.values.iter().find(|(at, _)| *at == t.span.start) {
                t.token = value.clone();
                decoded[n] = true;
            }
        }
    }
    concatenate_continued_literals(tokens, &mut decoded);
    let mut previous: Option<&Token> = None;
    for t in tokens.iter().filter(|t| !is_blank(&t.token)) {
        if matches!(previous, Some(Token::SingleQuotedString(_)))
            && matches!(t.token, Token::SingleQuotedString(_))
        {
            return Err(t.span.start);
        }
        previous = Some(&t.token);
    }
    typed_literals(tokens);
    let words: Vec<usize> = (0..tokens.len()).filter(|&n| !is_blank(&tokens[n].token)).collect();
    let kw = |tokens: &[TokenWithSpan], w: usize| words.get(w).and_then(|&n| keyword(&tokens[n].token));
    let mut remove = Vec::new();
    for w in 0..words.len() {
        match kw(tokens, w) {
            Some(Keyword::TRIM) if words.get(w + 1).is_some_and(|&n| tokens[n].token == Token::LParen) => {
                let mut at = w + 2;
                if matches!(kw(tokens, at), Some(Keyword::BOTH | Keyword::LEADING | Keyword::TRAILING)) {
                    at += 1;
                }
                if kw(tokens, at) == Some(Keyword::FROM) {
                    remove.push(words[at]);
                }
            }
            Some(Keyword::SUBSTRING)
                if words.get(w + 1).is_some_and(|&n| tokens[n].token == Token::LParen) =>
            {
                let mut depth = 0usize;
                let mut similar = false;
                for (v, &n) in words.iter().enumerate().skip(w + 1) {
                    match &tokens[n].token {
                        Token::LParen => depth += 1,
                        Token::RParen => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ if depth != 1 => {}
                        _ => match kw(tokens, v) {
                            Some(Keyword::SIMILAR) if kw(tokens, v + 1) != Some(Keyword::TO) => {
                                tokens[n].token = Token::make_keyword("FROM");
                                similar = true;
                            }
                            Some(Keyword::ESCAPE) if similar => tokens[n].token = Token::make_keyword("FOR"),
                            _ => {}
                        },
                    }
                }
            }
            _ => {}
        }
    }
    for n in remove.into_iter().rev() {
        tokens.remove(n);
    }
    Ok(())
}

/// `name 'literal'`: a literal of a type sqlparser does not know as a
/// typed literal's prefix, read as `'literal'::name` (the tokens swapped,
/// each keeping its location).
fn typed_literals(tokens: &mut Vec<TokenWithSpan>) {
    const TYPES: [&str; 6] = ["name", "oid", "regclass", "regtype", "regproc", "bpchar"];
    let words: Vec<usize> = (0..tokens.len()).filter(|&n| !is_blank(&tokens[n].token)).collect();
    let mut pairs = Vec::new();
    for w in 0..words.len().saturating_sub(1) {
        let (n, m) = (words[w], words[w + 1]);
        let type_word = matches!(&tokens[n].token, Token::Word(word)
            if word.quote_style.is_none() && TYPES.iter().any(|t| word.value.eq_ignore_ascii_case(t)));
        let after_period = w > 0 && tokens[words[w - 1]].token == Token::Period;
        if type_word && !after_period && matches!(tokens[m].token, Token::SingleQuotedString(_)) {
            pairs.push((n, m));
        }
    }
    for (n, m) in pairs.into_iter().rev() {
        let word = std::mem::replace(&mut tokens[n].token, Token::DoubleColon);
        tokens[n].token = std::mem::replace(&mut tokens[m].token, word);
        let span = tokens[m].span;
        tokens.insert(m, TokenWithSpan { token: Token::DoubleColon, span });
    }
}

/// 'a' <newline> 'b': one literal, as PostgreSQL reads it (only blanks
/// and `--` comments between, and a newline among them).
fn concatenate_continued_literals(tokens: &mut Vec<TokenWithSpan>, decoded: &mut Vec<bool>) {
    let mut n = 0;
    while n < tokens.len() {
        if !matches!(tokens[n].token, Token::SingleQuotedString(_)) {
            n += 1;
            continue;
        }
        let mut m = n + 1;
        let mut newline = false;
        while let Some(Token::Whitespace(w)) = tokens.get(m).map(|t| &t.token) {
            match w {
                Whitespace::Newline => newline = true,
                Whitespace::Space | Whitespace::Tab | Whitespace::SingleLineComment { .. } => {}
                _ => break,
            }
            m += 1;
        }
        let next = match tokens.get(m).map(|t| &t.token) {
            Some(Token::SingleQuotedString(s)) if newline && !decoded[m] => s.clone(),
            _ => {
                n += 1;
                continue;
            }
        };
        if let Token::SingleQuotedString(s) = &mut tokens[n].token {
            s.push_str(&next);
        }
        tokens[n].span.end = tokens[m].span.end;
        tokens.drain(n + 1..=m);
        decoded.drain(n + 1..=m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(sql: &str) -> Result<Vec<Token>, LexError> {
        let p = prepare(sql)?;
        Ok(p.values.into_iter().map(|(_, t)| t).collect())
    }

    #[test]
    fn escape_strings() {
        let v = value("SELECT E'd\\u0061t\\U00000061', e'a''b\\'c\\x41\\101\\n'").unwrap();
        assert_eq!(v[0], Token::SingleQuotedString("data".into()));
        assert_eq!(v[1], Token::SingleQuotedString("a'b'cAA\n".into()));
        let v = value("SELECT E'\\ud83d\\ude00'").unwrap();
        assert_eq!(v[0], Token::SingleQuotedString("\u{1F600}".into()));
        let e = value("SELECT E'wrong: \\udb99xy'").unwrap_err();
        assert_eq!(e.message, "invalid Unicode surrogate pair at or near \"x\"");
        assert_eq!(e.at, Some(22));
        assert!(value("SELECT E'a\\x80'").unwrap_err().message.ends_with("0x80"));
        assert!(value("SELECT 'E''x' , some'x'").unwrap().is_empty());
    }

    #[test]
    fn unicode_strings() {
        let v = value("SELECT U&'d\\0061t\\+000061' AS U&\"d!0061t\" UESCAPE '!'").unwrap();
        assert_eq!(v[0], Token::SingleQuotedString("data".into()));
        assert!(matches!(&v[1], Token::Word(w) if w.value == "dat"));
        let e = value("SELECT U&'wrong: \\db99'").unwrap_err();
        assert_eq!((e.message.as_str(), e.at), ("invalid Unicode surrogate pair", Some(22)));
        let e = value("SELECT U&'wrong: +0061' UESCAPE +;").unwrap_err();
        assert_eq!(e.message, "UESCAPE must be followed by a simple string literal at or near \"+\"");
    }
}
