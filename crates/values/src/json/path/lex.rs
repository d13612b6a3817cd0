//! The jsonpath scanner: splits the input into tokens the way PostgreSQL's
//! flex scanner does (longest match, its escape rules, its error texts),
//! and remembers for each token the text PostgreSQL would quote in a
//! syntax error, which is not always the token itself.

use snapscale_sqlstate::SqlState;

use crate::SqlError;

/// Keywords (PostgreSQL matches them case-insensitively, except `null`,
/// `true` and `false`, which must be lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kw {
    Is,
    To,
    Abs,
    Lax,
    Flag,
    Last,
    Null,
    Size,
    True,
    Type,
    With,
    False,
    Floor,
    Double,
    Exists,
    Starts,
    Strict,
    Ceiling,
    Unknown,
    Datetime,
    KeyValue,
    LikeRegex,
}

const KEYWORDS: &[(&str, Kw, bool)] = &[
    ("is", Kw::Is, false),
    ("to", Kw::To, false),
    ("abs", Kw::Abs, false),
    ("lax", Kw::Lax, false),
    ("flag", Kw::Flag, false),
    ("last", Kw::Last, false),
    ("null", Kw::Null, true),
    ("size", Kw::Size, false),
    ("true", Kw::True, true),
    ("type", Kw::Type, false),
    ("with", Kw::With, false),
    ("false", Kw::False, true),
    ("floor", Kw::Floor, false),
    ("double", Kw::Double, false),
    ("exists", Kw::Exists, false),
    ("starts", Kw::Starts, false),
    ("strict", Kw::Strict, false),
    ("ceiling", Kw::Ceiling, false),
    ("unknown", Kw::Unknown, false),
    ("datetime", Kw::Datetime, false),
    ("keyvalue", Kw::KeyValue, false),
    ("like_regex", Kw::LikeRegex, false),
];

/// A token's kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum T {
    Eof,
    /// One of the single-character specials `?%$.[]{}()|&=<>@#,*:-+/`
    /// that has no longer token.
    Char(u8),
    And,
    Or,
    Not,
    /// `**`
    Any,
    Less,
    LessEq,
    Equal,
    NotEqual,
    GreaterEq,
    Greater,
    /// `$name` or `$"name"`.
    Variable,
    /// A double-quoted string.
    Str,
    /// A number with a fraction or exponent.
    Numeric,
    /// An integer.
    Int,
    /// An unquoted word that is not a keyword.
    Ident,
    Keyword(Kw),
}

/// A token with its value (decoded string, variable name, number text)
/// and the text a syntax error at it quotes (None: "at end of input").
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub t: T,
    pub val: String,
    pub near: Option<String>,
}

/// PostgreSQL's scanner error report.
pub(crate) fn scan_error(msg: &str, near: Option<&str>) -> SqlError {
    match near {
        Some(t) if !t.is_empty() => {
            SqlError::new(SqlState::SYNTAX_ERROR, format!("{msg} at or near \"{t}\" of jsonpath input"))
        }
        _ => SqlError::new(SqlState::SYNTAX_ERROR, format!("{msg} at end of jsonpath input")),
    }
}

fn is_special(b: u8) -> bool {
    b"?%$.[]{}()|&!=<>@#,*:-+/".contains(&b)
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// flex's `other`: anything but specials, blanks, backslash and quote.
fn is_other(b: u8) -> bool {
    !is_special(b) && !is_blank(b) && b != b'\\' && b != b'"'
}

fn invalid_surrogate(detail: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type jsonpath")
        .with_detail(detail)
}

/// The scanner.
pub(crate) struct Lexer<'a> {
    s: &'a [u8],
    src: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Lexer<'a> {
        Lexer { s: src.as_bytes(), src, pos: 0 }
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.s.get(i).copied()
    }

    fn text(&self, a: usize, b: usize) -> String {
        String::from_utf8_lossy(&self.s[a..b]).into_owned()
    }

    /// Skips a comment whose `/*` is at `self.pos`.
    fn skip_comment(&mut self) -> Result<(), SqlError> {
        match self.src[self.pos + 2..].find("*/") {
            Some(i) => {
                self.pos += 2 + i + 2;
                Ok(())
            }
            None => Err(scan_error("unexpected end of comment", None)),
        }
    }

    /// The next token.
    pub(crate) fn next_token(&mut self) -> Result<Token, SqlError> {
        loop {
            while self.at(self.pos).is_some_and(is_blank) {
                self.pos += 1;
            }
            if self.s[self.pos..].starts_with(b"/*") {
                self.skip_comment()?;
                continue;
            }
            break;
        }
        let p = self.pos;
        let Some(c) = self.at(p) else {
            return Ok(Token { t: T::Eof, val: String::new(), near: None });
        };
        if c.is_ascii_digit() || (c == b'.' && self.at(p + 1).is_some_and(|d| d.is_ascii_digit())) {
            return self.number();
        }
        let two = &self.s[p..(p + 2).min(self.s.len())];
        let op2 = match two {
            b"&&" => Some(T::And),
            b"||" => Some(T::Or),
            b"**" => Some(T::Any),
            b"<=" => Some(T::LessEq),
            b"==" => Some(T::Equal),
            b"<>" | b"!=" => Some(T::NotEqual),
            b">=" => Some(T::GreaterEq),
            _ => None,
        };
        if let Some(t) = op2 {
            self.pos += 2;
            return Ok(Token { t, val: String::new(), near: Some(self.text(p, p + 2)) });
        }
        match c {
            b'$' if self.at(p + 1) == Some(b'"') => {
                self.pos += 2;
                let (val, near) = self.quoted()?;
                return Ok(Token { t: T::Variable, val, near: Some(near) });
            }
            b'$' if self.at(p + 1).is_some_and(is_other) => {
                let mut e = p + 1;
                while self.at(e).is_some_and(is_other) {
                    e += 1;
                }
                self.pos = e;
                let near = self.text(p, e);
                return Ok(Token { t: T::Variable, val: self.text(p + 1, e), near: Some(near) });
            }
            b'"' => {
                self.pos += 1;
                let (val, near) = self.quoted()?;
                return Ok(Token { t: T::Str, val, near: Some(near) });
            }
            _ => {}
        }
        if is_special(c) {
            self.pos += 1;
            let t = match c {
                b'!' => T::Not,
                b'<' => T::Less,
                b'>' => T::Greater,
                _ => T::Char(c),
            };
            return Ok(Token { t, val: String::new(), near: Some((c as char).to_string()) });
        }
        self.word()
    }

    /// A number, with flex's longest-match choice between the number
    /// rules and the "junk" rules.
    fn number(&mut self) -> Result<Token, SqlError> {
        let p = self.pos;
        let digits = |mut i: usize| {
            while self.at(i).is_some_and(|d| d.is_ascii_digit()) {
                i += 1;
            }
            i
        };
        // integer: 0 | [1-9][0-9]*
        let int_end = if self.at(p) == Some(b'0') {
            Some(p + 1)
        } else if self.at(p).is_some_and(|d| d.is_ascii_digit()) {
            Some(digits(p))
        } else {
            None
        };
        // decimal: integer . digit* | . digit+
        let dec_end = match int_end {
            Some(e) if self.at(e) == Some(b'.') => Some(digits(e + 1)),
            Some(_) => None,
            None => {
                let e = digits(p + 1);
                (e > p + 1).then_some(e)
            }
        };
        // real / realfail: (integer|decimal) [Ee] [-+]? digit+
        let mut real_end = None;
        let mut realfail_end = None;
        for base in [int_end, dec_end].into_iter().flatten() {
            if matches!(self.at(base), Some(b'e' | b'E')) {
                let mut i = base + 1;
                let signed = matches!(self.at(i), Some(b'+' | b'-'));
                if signed {
                    i += 1;
                }
                let e = digits(i);
                if e > i {
                    real_end = real_end.max(Some(e));
                } else if signed {
                    realfail_end = realfail_end.max(Some(i));
                }
            }
        }
        let junk = |e: Option<usize>| e.filter(|&e| self.at(e).is_some_and(is_other)).map(|e| e + 1);
        // Candidates in rule order; the longest wins, the first on a tie.
        let cands = [
            (real_end, 0),
            (dec_end, 1),
            (int_end, 2),
            (realfail_end, 3),
            (junk(int_end), 4),
            (junk(dec_end), 4),
            (junk(real_end), 4),
        ];
        let mut best: Option<(usize, i32)> = None;
        for (e, kind) in cands {
            if let Some(e) = e {
                if best.is_none_or(|(b, _)| e > b) {
                    best = Some((e, kind));
                }
            }
        }
        let (e, kind) = best.unwrap_or((p + 1, 4));
        // flex's `{other}+` (an unquoted word) competes too, last in rule
        // order: digits are `other`, so `1_000` or `0x10` is a word.
        let mut w = p;
        while self.at(w).is_some_and(is_other) {
            w += 1;
        }
        if w > e {
            return self.word();
        }
        let text = self.text(p, e);
        self.pos = e;
        match kind {
            0 | 1 => Ok(Token { t: T::Numeric, val: text.clone(), near: Some(text) }),
            2 => Ok(Token { t: T::Int, val: text.clone(), near: Some(text) }),
            3 => Err(scan_error("invalid numeric literal", Some(&text))),
            _ => Err(scan_error("trailing junk after numeric literal", Some(&text))),
        }
    }

    /// An escape sequence at `self.pos` (a backslash): appends its value
    /// to `out` and returns the text flex matched.
    fn escape(&mut self, out: &mut String) -> Result<String, SqlError> {
        let p = self.pos;
        let simple = match self.at(p + 1) {
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            Some(b'v') => Some('\u{b}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            self.pos += 2;
            return Ok(self.text(p, p + 2));
        }
        match self.at(p + 1) {
            Some(b'u') => self.unicode(out),
            Some(b'x') => {
                let hex = |i: usize| self.at(i).filter(u8::is_ascii_hexdigit);
                if let (Some(a), Some(b)) = (hex(p + 2), hex(p + 3)) {
                    self.pos += 4;
                    let v = (hexval(a) << 4) | hexval(b);
                    add_char(out, v)?;
                    Ok(self.text(p, p + 4))
                } else {
                    let e = if hex(p + 2).is_some() { p + 3 } else { p + 2 };
                    Err(scan_error("invalid hex character sequence", Some(&self.text(p, e))))
                }
            }
            None | Some(b'\n') => Err(scan_error("unexpected end after backslash", Some("\\"))),
            Some(_) => {
                let ch = self.src[p + 1..].chars().next().unwrap_or('\\');
                out.push(ch);
                self.pos += 1 + ch.len_utf8();
                Ok(self.text(p, self.pos))
            }
        }
    }

    /// One valid `\uXXXX` or `\u{X...}` at `i`: its code point and end.
    fn one_unicode(&self, i: usize) -> Option<(u32, usize)> {
        if self.at(i) != Some(b'\\') || self.at(i + 1) != Some(b'u') {
            return None;
        }
        let hex = |j: usize| self.at(j).filter(u8::is_ascii_hexdigit);
        if self.at(i + 2) == Some(b'{') {
            let mut j = i + 3;
            let mut v = 0u32;
            while j < i + 9 {
                match hex(j) {
                    Some(h) => v = (v << 4) | hexval(h),
                    None => break,
                }
                j += 1;
            }
            (j > i + 3 && self.at(j) == Some(b'}')).then_some((v, j + 1))
        } else {
            let mut v = 0u32;
            for j in i + 2..i + 6 {
                v = (v << 4) | hexval(hex(j)?);
            }
            Some((v, i + 6))
        }
    }

    /// A run of unicode escapes (surrogate pairs must be within one run).
    fn unicode(&mut self, out: &mut String) -> Result<String, SqlError> {
        let p = self.pos;
        let mut cps = Vec::new();
        let mut e = p;
        while let Some((cp, ne)) = self.one_unicode(e) {
            cps.push(cp);
            e = ne;
        }
        if self.at(e) == Some(b'\\') && self.at(e + 1) == Some(b'u') {
            // unicodefail: \u hex{0,3} or \u{ hex{0,6}
            let hexrun = |from: usize, max: usize| {
                let mut j = from;
                while j < from + max && self.at(j).is_some_and(|h| h.is_ascii_hexdigit()) {
                    j += 1;
                }
                j
            };
            let a = hexrun(e + 2, 3);
            let b = if self.at(e + 2) == Some(b'{') { hexrun(e + 3, 6) } else { 0 };
            let f = a.max(b);
            return Err(scan_error("invalid unicode sequence", Some(&self.text(p, f))));
        }
        self.pos = e;
        let mut hi: Option<u32> = None;
        for cp in cps {
            if (0xD800..=0xDBFF).contains(&cp) {
                if hi.is_some() {
                    return Err(invalid_surrogate(
                        "Unicode high surrogate must not follow a high surrogate.",
                    ));
                }
                hi = Some(cp);
                continue;
            }
            let cp = if (0xDC00..=0xDFFF).contains(&cp) {
                match hi.take() {
                    Some(h) => 0x10000 + ((h - 0xD800) << 10) + (cp - 0xDC00),
                    None => {
                        return Err(invalid_surrogate("Unicode low surrogate must follow a high surrogate."))
                    }
                }
            } else if hi.is_some() {
                return Err(invalid_surrogate("Unicode low surrogate must follow a high surrogate."));
            } else {
                cp
            };
            add_char(out, cp)?;
        }
        if hi.is_some() {
            return Err(invalid_surrogate("Unicode low surrogate must follow a high surrogate."));
        }
        Ok(self.text(p, e))
    }

    /// The rest of a quoted string or variable name (after the opening
    /// quote): its value and the closing-quote text.
    fn quoted(&mut self) -> Result<(String, String), SqlError> {
        let mut out = String::new();
        loop {
            match self.at(self.pos) {
                None => return Err(scan_error("unexpected end of quoted string", None)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok((out, "\"".to_string()));
                }
                Some(b'\\') => {
                    self.escape(&mut out)?;
                }
                Some(_) => {
                    let rest = &self.src[self.pos..];
                    let n = rest.find(['\\', '"']).unwrap_or(rest.len());
                    out.push_str(&rest[..n]);
                    self.pos += n;
                }
            }
        }
    }

    /// An unquoted word (identifier or keyword), possibly with escapes.
    fn word(&mut self) -> Result<Token, SqlError> {
        let mut out = String::new();
        let near;
        loop {
            match self.at(self.pos) {
                Some(b) if is_other(b) => {
                    let st = self.pos;
                    while self.at(self.pos).is_some_and(is_other) {
                        self.pos += 1;
                    }
                    out.push_str(&self.src[st..self.pos]);
                }
                Some(b'\\') => {
                    self.escape(&mut out)?;
                }
                Some(b) if is_blank(b) => {
                    let st = self.pos;
                    while self.at(self.pos).is_some_and(is_blank) {
                        self.pos += 1;
                    }
                    near = Some(self.text(st, self.pos));
                    break;
                }
                Some(b'/') if self.at(self.pos + 1) == Some(b'*') => {
                    near = Some("/*".to_string());
                    self.skip_comment()?;
                    break;
                }
                _ => {
                    // A special, a quote or the end: flex backs up, and
                    // the token's text is empty.
                    near = None;
                    break;
                }
            }
        }
        let t = keyword(&out).map_or(T::Ident, T::Keyword);
        Ok(Token { t, val: out, near })
    }
}

fn hexval(b: u8) -> u32 {
    (b as char).to_digit(16).unwrap_or(0)
}

/// Adds a code point from an escape to a string.
fn add_char(out: &mut String, cp: u32) -> Result<(), SqlError> {
    if cp == 0 {
        return Err(SqlError::new(SqlState::UNTRANSLATABLE_CHARACTER, "unsupported Unicode escape sequence")
            .with_detail("\\u0000 cannot be converted to text."));
    }
    match char::from_u32(cp) {
        Some(c) => {
            out.push(c);
            Ok(())
        }
        None => Err(SqlError::new(SqlState::SYNTAX_ERROR, "invalid Unicode code point")),
    }
}

fn keyword(s: &str) -> Option<Kw> {
    KEYWORDS.iter().find_map(|&(k, kw, lower)| {
        let hit = if lower { s == k } else { s.eq_ignore_ascii_case(k) };
        hit.then_some(kw)
    })
}
