//! The JSON tokenizer shared by `json` and `jsonb` input and by every
//! function that reads json text.
//!
//! It is its own module because PostgreSQL's error reports depend on lexer
//! state: which token was current, where it started and ended, and which
//! line it sat on. The report (message, DETAIL and the `JSON data, line N:`
//! CONTEXT excerpt) is built here from that state so it matches PostgreSQL
//! byte for byte.

use snapscale_sqlstate::SqlState;

use crate::SqlError;

/// The kinds of token json text is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    ObjectStart,
    ObjectEnd,
    ArrayStart,
    ArrayEnd,
    Comma,
    Colon,
    String,
    Number,
    True,
    False,
    Null,
    End,
    /// Before the first token.
    Invalid,
}

/// Why input was rejected; each maps to one DETAIL wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    EscapingInvalid,
    EscapingRequired,
    ExpectedEnd,
    ExpectedArrayNext,
    ExpectedColon,
    ExpectedJson,
    ExpectedMore,
    ExpectedObjectFirst,
    ExpectedObjectNext,
    ExpectedString,
    InvalidToken,
    CodePointZero,
    UnicodeEscapeFormat,
    HighSurrogate,
    LowSurrogate,
}

/// Where a parse failure was detected, to pick the "Expected ..." wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    End,
    Value,
    String,
    ArrayNext,
    ObjectStart,
    ObjectLabel,
    ObjectNext,
}

/// A tokenizer over json text, one token of lookahead.
pub(crate) struct Lexer<'a> {
    input: &'a [u8],
    /// Start of the current token.
    pub(crate) token_start: usize,
    /// One past the end of the current token (or the failure point).
    pub(crate) token_end: usize,
    /// The current token's kind (the previous one's while lexing fails).
    pub(crate) tok: Tok,
    line_number: usize,
    line_start: usize,
    /// Whether string tokens are de-escaped (and their escapes checked).
    de_escape: bool,
    /// The current string token's value, when de-escaping.
    pub(crate) strval: String,
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(input: &'a str, de_escape: bool) -> Lexer<'a> {
        Lexer {
            input: input.as_bytes(),
            token_start: 0,
            token_end: 0,
            tok: Tok::Invalid,
            line_number: 1,
            line_start: 0,
            de_escape,
            strval: String::new(),
        }
    }

    /// The current token's text.
    pub(crate) fn token_text(&self) -> &'a str {
        let s = &self.input[self.token_start..self.token_end];
        std::str::from_utf8(s).unwrap_or("")
    }

    /// Reads the next token.
    pub(crate) fn next(&mut self) -> Result<(), SqlError> {
        let n = self.input.len();
        let mut s = self.token_end;
        while s < n && matches!(self.input[s], b' ' | b'\t' | b'\n' | b'\r') {
            if self.input[s] == b'\n' {
                self.line_number += 1;
                self.line_start = s + 1;
            }
            s += 1;
        }
        self.token_start = s;
        if s >= n {
            self.token_end = s;
            self.tok = Tok::End;
            return Ok(());
        }
        let punct = match self.input[s] {
            b'{' => Some(Tok::ObjectStart),
            b'}' => Some(Tok::ObjectEnd),
            b'[' => Some(Tok::ArrayStart),
            b']' => Some(Tok::ArrayEnd),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            _ => None,
        };
        if let Some(t) = punct {
            self.token_end = s + 1;
            self.tok = t;
            return Ok(());
        }
        match self.input[s] {
            b'"' => {
                self.lex_string()?;
                self.tok = Tok::String;
            }
            b'-' => {
                self.lex_number(s + 1)?;
                self.tok = Tok::Number;
            }
            b'0'..=b'9' => {
                self.lex_number(s)?;
                self.tok = Tok::Number;
            }
            _ => {
                let mut p = s;
                while p < n && is_alnum(self.input[p]) {
                    p += 1;
                }
                if p == s {
                    // One unexpected character (a whole UTF-8 sequence can't
                    // start here: bytes >= 0x80 count as alphanumeric).
                    self.token_end = s + 1;
                    return Err(self.fail(Fault::InvalidToken));
                }
                self.token_end = p;
                self.tok = match &self.input[s..p] {
                    b"true" => Tok::True,
                    b"false" => Tok::False,
                    b"null" => Tok::Null,
                    _ => return Err(self.fail(Fault::InvalidToken)),
                };
            }
        }
        Ok(())
    }

    fn char_end(&self, s: usize) -> usize {
        let n = self.input.len();
        if s >= n {
            return n;
        }
        let b = self.input[s];
        let len = if b < 0x80 {
            1
        } else if b >= 0xF0 {
            4
        } else if b >= 0xE0 {
            3
        } else {
            2
        };
        (s + len).min(n)
    }

    fn fail_at_char_end(&mut self, s: usize, fault: Fault) -> SqlError {
        self.token_end = self.char_end(s);
        self.fail(fault)
    }

    fn lex_string(&mut self) -> Result<(), SqlError> {
        let n = self.input.len();
        let mut s = self.token_start;
        let mut hi_surrogate: Option<u32> = None;
        if self.de_escape {
            self.strval.clear();
        }
        // Start of a run of plain bytes not yet copied to strval.
        let mut run = s + 1;
        loop {
            s += 1;
            if s >= n {
                self.token_end = s;
                return Err(self.fail(Fault::InvalidToken));
            }
            let c = self.input[s];
            if c == b'"' {
                break;
            } else if c < 32 {
                self.token_end = s;
                return Err(self.fail(Fault::EscapingRequired));
            } else if c == b'\\' {
                if self.de_escape && run < s {
                    self.push_run(run, s);
                }
                s += 1;
                if s >= n {
                    self.token_end = s;
                    return Err(self.fail(Fault::InvalidToken));
                }
                if self.input[s] == b'u' {
                    let mut ch: u32 = 0;
                    for _ in 0..4 {
                        s += 1;
                        if s >= n {
                            self.token_end = s;
                            return Err(self.fail(Fault::InvalidToken));
                        }
                        let d = self.input[s];
                        let v = match d {
                            b'0'..=b'9' => d - b'0',
                            b'a'..=b'f' => d - b'a' + 10,
                            b'A'..=b'F' => d - b'A' + 10,
                            _ => return Err(self.fail_at_char_end(s, Fault::UnicodeEscapeFormat)),
                        };
                        ch = ch * 16 + u32::from(v);
                    }
                    if self.de_escape {
                        if (0xD800..0xDC00).contains(&ch) {
                            if hi_surrogate.is_some() {
                                return Err(self.fail_at_char_end(s, Fault::HighSurrogate));
                            }
                            hi_surrogate = Some(ch);
                            run = s + 1;
                            continue;
                        } else if (0xDC00..0xE000).contains(&ch) {
                            let Some(hi) = hi_surrogate.take() else {
                                return Err(self.fail_at_char_end(s, Fault::LowSurrogate));
                            };
                            ch = 0x10000 + ((hi & 0x3FF) << 10) + (ch & 0x3FF);
                        }
                        if hi_surrogate.is_some() {
                            return Err(self.fail_at_char_end(s, Fault::LowSurrogate));
                        }
                        if ch == 0 {
                            return Err(self.fail_at_char_end(s, Fault::CodePointZero));
                        }
                        // Surrogates were combined above, so this is valid.
                        self.strval.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
                    }
                } else if self.de_escape {
                    if hi_surrogate.is_some() {
                        return Err(self.fail_at_char_end(s, Fault::LowSurrogate));
                    }
                    let ch = match self.input[s] {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        _ => {
                            self.token_start = s;
                            return Err(self.fail_at_char_end(s, Fault::EscapingInvalid));
                        }
                    };
                    self.strval.push(ch);
                } else if !matches!(self.input[s], b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') {
                    self.token_start = s;
                    return Err(self.fail_at_char_end(s, Fault::EscapingInvalid));
                }
                run = s + 1;
            } else if self.de_escape && hi_surrogate.is_some() {
                return Err(self.fail_at_char_end(s, Fault::LowSurrogate));
            }
        }
        if hi_surrogate.is_some() {
            self.token_end = s + 1;
            return Err(self.fail(Fault::LowSurrogate));
        }
        if self.de_escape && run < s {
            self.push_run(run, s);
        }
        self.token_end = s + 1;
        Ok(())
    }

    fn push_run(&mut self, from: usize, to: usize) {
        // Runs start after an ASCII byte and end before one, so they are
        // whole UTF-8 sequences of valid input.
        if let Ok(t) = std::str::from_utf8(&self.input[from..to]) {
            self.strval.push_str(t);
        }
    }

    fn lex_number(&mut self, mut s: usize) -> Result<(), SqlError> {
        let n = self.input.len();
        let inp = self.input;
        let mut error = false;
        if s < n && inp[s] == b'0' {
            s += 1;
        } else if s < n && inp[s].is_ascii_digit() {
            while s < n && inp[s].is_ascii_digit() {
                s += 1;
            }
        } else {
            error = true;
        }
        if s < n && inp[s] == b'.' {
            s += 1;
            if s == n || !inp[s].is_ascii_digit() {
                error = true;
            } else {
                while s < n && inp[s].is_ascii_digit() {
                    s += 1;
                }
            }
        }
        if s < n && (inp[s] == b'e' || inp[s] == b'E') {
            s += 1;
            if s < n && (inp[s] == b'+' || inp[s] == b'-') {
                s += 1;
            }
            if s == n || !inp[s].is_ascii_digit() {
                error = true;
            } else {
                while s < n && inp[s].is_ascii_digit() {
                    s += 1;
                }
            }
        }
        while s < n && is_alnum(inp[s]) {
            error = true;
            s += 1;
        }
        self.token_end = s;
        if error {
            return Err(self.fail(Fault::InvalidToken));
        }
        Ok(())
    }

    /// The error for a token that doesn't fit where the parser is.
    pub(crate) fn unexpected(&self, at: Expect) -> SqlError {
        if self.tok == Tok::End {
            return self.fail(Fault::ExpectedMore);
        }
        self.fail(match at {
            Expect::End => Fault::ExpectedEnd,
            Expect::Value => Fault::ExpectedJson,
            Expect::String => Fault::ExpectedString,
            Expect::ArrayNext => Fault::ExpectedArrayNext,
            Expect::ObjectStart => Fault::ExpectedObjectFirst,
            Expect::ObjectLabel => Fault::ExpectedColon,
            Expect::ObjectNext => Fault::ExpectedObjectNext,
        })
    }

    fn extract(&self) -> String {
        let end = self.token_end.max(self.token_start);
        String::from_utf8_lossy(&self.input[self.token_start..end]).into_owned()
    }

    /// Builds PostgreSQL's report for `fault` at the current position.
    pub(crate) fn fail(&self, fault: Fault) -> SqlError {
        let detail = match fault {
            Fault::EscapingInvalid => format!("Escape sequence \"\\{}\" is invalid.", self.extract()),
            Fault::EscapingRequired => {
                format!("Character with value 0x{:02x} must be escaped.", self.input[self.token_end])
            }
            Fault::ExpectedEnd => format!("Expected end of input, but found \"{}\".", self.extract()),
            Fault::ExpectedArrayNext => format!("Expected \",\" or \"]\", but found \"{}\".", self.extract()),
            Fault::ExpectedColon => format!("Expected \":\", but found \"{}\".", self.extract()),
            Fault::ExpectedJson => format!("Expected JSON value, but found \"{}\".", self.extract()),
            Fault::ExpectedMore => "The input string ended unexpectedly.".to_owned(),
            Fault::ExpectedObjectFirst => {
                format!("Expected string or \"}}\", but found \"{}\".", self.extract())
            }
            Fault::ExpectedObjectNext => {
                format!("Expected \",\" or \"}}\", but found \"{}\".", self.extract())
            }
            Fault::ExpectedString => format!("Expected string, but found \"{}\".", self.extract()),
            Fault::InvalidToken => format!("Token \"{}\" is invalid.", self.extract()),
            Fault::CodePointZero => "\\u0000 cannot be converted to text.".to_owned(),
            Fault::UnicodeEscapeFormat => "\"\\u\" must be followed by four hexadecimal digits.".to_owned(),
            Fault::HighSurrogate => "Unicode high surrogate must not follow a high surrogate.".to_owned(),
            Fault::LowSurrogate => "Unicode low surrogate must follow a high surrogate.".to_owned(),
        };
        let err = if fault == Fault::CodePointZero {
            SqlError::new(SqlState::UNTRANSLATABLE_CHARACTER, "unsupported Unicode escape sequence")
        } else {
            SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json")
        };
        super::attach_context(err.with_detail(detail), self.context())
    }

    /// The `JSON data, line N: ...` CONTEXT line for the current position:
    /// the current line up to the end of the token, cut to its last 50
    /// bytes (on a character boundary) with `...` marking what was cut.
    pub(crate) fn context(&self) -> String {
        let line_start = self.line_start;
        let end = self.token_end.max(line_start);
        let mut start = line_start;
        while end - start >= 50 {
            start = if self.input[start] >= 0x80 { self.char_end(start) } else { start + 1 };
        }
        if start - line_start <= 3 {
            start = line_start;
        }
        let prefix = if start > line_start { "..." } else { "" };
        let suffix =
            if self.tok != Tok::End && end < self.input.len() && !matches!(self.input[end], b'\n' | b'\r') {
                "..."
            } else {
                ""
            };
        format!(
            "JSON data, line {}: {}{}{}",
            self.line_number,
            prefix,
            String::from_utf8_lossy(&self.input[start..end]),
            suffix
        )
    }
}
