//! PL/pgSQL's tokens: words, quoted names, literals, operators, with
//! their byte offsets in the body, so that the parser can hand the SQL
//! parts on as the text the user wrote. Comments and white space are
//! skipped; string literals of every kind (`'…'`, `E'…'`, `$tag$…$tag$`)
//! are one token, so nothing inside them is taken for structure.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// An unquoted word, lower-cased.
    Word(String),
    /// A "quoted" name, as written inside the quotes.
    Quoted(String),
    /// A string literal of any form (its text is the source's).
    Str,
    Number,
    /// `$n`.
    Param,
    /// Punctuation and operators: `;`, `(`, `)`, `,`, `:=`, `..`, `<<`,
    /// `>>`, `=`, `[`, `]`, `.`, or any other operator's characters.
    Op(String),
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn is_word(&self, w: &str) -> bool {
        matches!(&self.tok, Tok::Word(x) if x == w)
    }

    pub fn is_op(&self, o: &str) -> bool {
        matches!(&self.tok, Tok::Op(x) if x == o)
    }
}

fn syntax(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, message)
}

/// The body's tokens.
pub(super) fn tokens(src: &str) -> Result<Vec<Token>, SqlError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0usize;
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
            if depth != 0 {
                return Err(syntax("unterminated /* comment"));
            }
            continue;
        }
        let tok = if c == b'\'' || ((c == b'e' || c == b'E') && b.get(i + 1) == Some(&b'\'')) {
            if c != b'\'' {
                i += 1;
            }
            let escapes = c != b'\'';
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(syntax("unterminated quoted string")),
                    Some(b'\\') if escapes => i += 2,
                    Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            Tok::Str
        } else if c == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            Tok::Param
        } else if c == b'$' {
            // $tag$ … $tag$
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if b.get(j) != Some(&b'$') {
                return Err(syntax("syntax error at or near \"$\""));
            }
            let tag = &src[i..=j];
            match src[j + 1..].find(tag) {
                Some(k) => i = j + 1 + k + tag.len(),
                None => return Err(syntax("unterminated dollar-quoted string")),
            }
            Tok::Str
        } else if c == b'"' {
            i += 1;
            let mut name = String::new();
            loop {
                match b.get(i) {
                    None => return Err(syntax("unterminated quoted identifier")),
                    Some(b'"') if b.get(i + 1) == Some(&b'"') => {
                        name.push('"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => {
                        let ch = src[i..].chars().next().expect("in bounds");
                        name.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            Tok::Quoted(name)
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80)
            {
                i += 1;
            }
            Tok::Word(src[start..i].to_lowercase())
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            // A fraction, unless it is the `..` of a range.
            if b.get(i) == Some(&b'.') && b.get(i + 1) != Some(&b'.') {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if matches!(b.get(i), Some(b'e' | b'E')) {
                let mut j = i + 1;
                if matches!(b.get(j), Some(b'+' | b'-')) {
                    j += 1;
                }
                if b.get(j).is_some_and(u8::is_ascii_digit) {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            Tok::Number
        } else {
            let two = src.get(i..i + 2).unwrap_or("");
            let op = if [":=", "..", "<<", ">>", "::", "<=", ">=", "<>", "!=", "=>", "||"].contains(&two) {
                i += 2;
                two.to_owned()
            } else {
                i += 1;
                (c as char).to_string()
            };
            Tok::Op(op)
        };
        out.push(Token { tok, start, end: i });
    }
    Ok(out)
}
