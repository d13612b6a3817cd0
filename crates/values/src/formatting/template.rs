//! The template parser: splits a format string into keyword nodes and
//! literal characters, the way PostgreSQL's `parse_format` does, for both
//! the number templates (`to_char(numeric)`, `to_number`) and the
//! date/time templates (`to_char(timestamp)`, `to_date`, `to_timestamp`).
//!
//! Matching is PostgreSQL's: at each position the first keyword (in table
//! order, longest spellings first within a letter) whose text is a prefix
//! wins, case-sensitively; date/time keywords may carry one prefix (`FM`,
//! `TM`) and one postfix (`TH`, `th`, `SP`). Text in double quotes is
//! literal, and a backslash inside quotes (or before a quote outside them)
//! makes the next character literal.

/// Number template keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NumKey {
    Comma,
    Dec,
    Zero,
    Nine,
    B,
    C,
    D,
    E,
    Fm,
    G,
    L,
    Mi,
    Pl,
    Pr,
    RnUpper,
    RnLower,
    Sg,
    Sp,
    S,
    ThUpper,
    ThLower,
    V,
}

/// (spelling, key) in PostgreSQL's table order.
const NUM_KEYWORDS: &[(&str, NumKey)] = &[
    (",", NumKey::Comma),
    (".", NumKey::Dec),
    ("0", NumKey::Zero),
    ("9", NumKey::Nine),
    ("B", NumKey::B),
    ("C", NumKey::C),
    ("D", NumKey::D),
    ("EEEE", NumKey::E),
    ("FM", NumKey::Fm),
    ("G", NumKey::G),
    ("L", NumKey::L),
    ("MI", NumKey::Mi),
    ("PL", NumKey::Pl),
    ("PR", NumKey::Pr),
    ("RN", NumKey::RnUpper),
    ("SG", NumKey::Sg),
    ("SP", NumKey::Sp),
    ("S", NumKey::S),
    ("TH", NumKey::ThUpper),
    ("V", NumKey::V),
    ("b", NumKey::B),
    ("c", NumKey::C),
    ("d", NumKey::D),
    ("eeee", NumKey::E),
    ("fm", NumKey::Fm),
    ("g", NumKey::G),
    ("l", NumKey::L),
    ("mi", NumKey::Mi),
    ("pl", NumKey::Pl),
    ("pr", NumKey::Pr),
    ("rn", NumKey::RnLower),
    ("sg", NumKey::Sg),
    ("sp", NumKey::Sp),
    ("s", NumKey::S),
    ("th", NumKey::ThLower),
    ("v", NumKey::V),
];

/// Date/time template keywords. Case variants that print differently are
/// separate keys; those that do not share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DtKey {
    ADUpperDots,
    AMUpperDots,
    ADUpper,
    AMUpper,
    BCUpperDots,
    BCUpper,
    CC,
    DayUpper,
    Ddd,
    Dd,
    DyUpper,
    DayCap,
    DyCap,
    D,
    Ff(u8),
    Fx,
    Hh24,
    Hh12,
    Hh,
    Iddd,
    Id,
    Iw,
    Iyyy,
    Iyy,
    Iy,
    I,
    J,
    Mi,
    Mm,
    MonthUpper,
    MonUpper,
    Ms,
    MonthCap,
    MonCap,
    Of,
    PMUpperDots,
    PMUpper,
    Q,
    RmUpper,
    Ssss,
    Ss,
    Tzh,
    Tzm,
    TzUpper,
    Us,
    Ww,
    W,
    YCommaYyy,
    Yyyy,
    Yyy,
    Yy,
    Y,
    ADLowerDots,
    AMLowerDots,
    ADLower,
    AMLower,
    BCLowerDots,
    BCLower,
    DayLower,
    DyLower,
    MonthLower,
    MonLower,
    PMLowerDots,
    PMLower,
    RmLower,
    TzLower,
}

/// Which calendar a date field belongs to; mixing them is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DateMode {
    None,
    Gregorian,
    IsoWeek,
}

/// A date/time keyword: its spelling (as error messages quote it), key,
/// whether it reads digits, and its calendar.
#[derive(Debug)]
pub(super) struct DtKeyword {
    pub name: &'static str,
    pub key: DtKey,
    pub is_digit: bool,
    pub mode: DateMode,
}

macro_rules! kw {
    ($name:expr, $key:expr, $digit:expr, $mode:ident) => {
        DtKeyword { name: $name, key: $key, is_digit: $digit, mode: DateMode::$mode }
    };
}

use DtKey as K;

/// PostgreSQL's date/time keyword table, in its order.
static DT_KEYWORDS: &[DtKeyword] = &[
    kw!("A.D.", K::ADUpperDots, false, None),
    kw!("A.M.", K::AMUpperDots, false, None),
    kw!("AD", K::ADUpper, false, None),
    kw!("AM", K::AMUpper, false, None),
    kw!("B.C.", K::BCUpperDots, false, None),
    kw!("BC", K::BCUpper, false, None),
    kw!("CC", K::CC, true, None),
    kw!("DAY", K::DayUpper, false, None),
    kw!("DDD", K::Ddd, true, Gregorian),
    kw!("DD", K::Dd, true, Gregorian),
    kw!("DY", K::DyUpper, false, None),
    kw!("Day", K::DayCap, false, None),
    kw!("Dy", K::DyCap, false, None),
    kw!("D", K::D, true, Gregorian),
    kw!("FF1", K::Ff(1), true, None),
    kw!("FF2", K::Ff(2), true, None),
    kw!("FF3", K::Ff(3), true, None),
    kw!("FF4", K::Ff(4), true, None),
    kw!("FF5", K::Ff(5), true, None),
    kw!("FF6", K::Ff(6), true, None),
    kw!("FX", K::Fx, false, None),
    kw!("HH24", K::Hh24, true, None),
    kw!("HH12", K::Hh12, true, None),
    kw!("HH", K::Hh, true, None),
    kw!("IDDD", K::Iddd, true, IsoWeek),
    kw!("ID", K::Id, true, IsoWeek),
    kw!("IW", K::Iw, true, IsoWeek),
    kw!("IYYY", K::Iyyy, true, IsoWeek),
    kw!("IYY", K::Iyy, true, IsoWeek),
    kw!("IY", K::Iy, true, IsoWeek),
    kw!("I", K::I, true, IsoWeek),
    kw!("J", K::J, true, None),
    kw!("MI", K::Mi, true, None),
    kw!("MM", K::Mm, true, Gregorian),
    kw!("MONTH", K::MonthUpper, false, Gregorian),
    kw!("MON", K::MonUpper, false, Gregorian),
    kw!("MS", K::Ms, true, None),
    kw!("Month", K::MonthCap, false, Gregorian),
    kw!("Mon", K::MonCap, false, Gregorian),
    kw!("OF", K::Of, false, None),
    kw!("P.M.", K::PMUpperDots, false, None),
    kw!("PM", K::PMUpper, false, None),
    kw!("Q", K::Q, true, None),
    kw!("RM", K::RmUpper, false, Gregorian),
    kw!("SSSSS", K::Ssss, true, None),
    kw!("SSSS", K::Ssss, true, None),
    kw!("SS", K::Ss, true, None),
    kw!("TZH", K::Tzh, false, None),
    kw!("TZM", K::Tzm, true, None),
    kw!("TZ", K::TzUpper, false, None),
    kw!("US", K::Us, true, None),
    kw!("WW", K::Ww, true, Gregorian),
    kw!("W", K::W, true, Gregorian),
    kw!("Y,YYY", K::YCommaYyy, true, Gregorian),
    kw!("YYYY", K::Yyyy, true, Gregorian),
    kw!("YYY", K::Yyy, true, Gregorian),
    kw!("YY", K::Yy, true, Gregorian),
    kw!("Y", K::Y, true, Gregorian),
    kw!("a.d.", K::ADLowerDots, false, None),
    kw!("a.m.", K::AMLowerDots, false, None),
    kw!("ad", K::ADLower, false, None),
    kw!("am", K::AMLower, false, None),
    kw!("b.c.", K::BCLowerDots, false, None),
    kw!("bc", K::BCLower, false, None),
    kw!("cc", K::CC, true, None),
    kw!("day", K::DayLower, false, None),
    kw!("ddd", K::Ddd, true, Gregorian),
    kw!("dd", K::Dd, true, Gregorian),
    kw!("dy", K::DyLower, false, None),
    kw!("d", K::D, true, Gregorian),
    kw!("ff1", K::Ff(1), true, None),
    kw!("ff2", K::Ff(2), true, None),
    kw!("ff3", K::Ff(3), true, None),
    kw!("ff4", K::Ff(4), true, None),
    kw!("ff5", K::Ff(5), true, None),
    kw!("ff6", K::Ff(6), true, None),
    kw!("fx", K::Fx, false, None),
    kw!("hh24", K::Hh24, true, None),
    kw!("hh12", K::Hh12, true, None),
    kw!("hh", K::Hh, true, None),
    kw!("iddd", K::Iddd, true, IsoWeek),
    kw!("id", K::Id, true, IsoWeek),
    kw!("iw", K::Iw, true, IsoWeek),
    kw!("iyyy", K::Iyyy, true, IsoWeek),
    kw!("iyy", K::Iyy, true, IsoWeek),
    kw!("iy", K::Iy, true, IsoWeek),
    kw!("i", K::I, true, IsoWeek),
    kw!("j", K::J, true, None),
    kw!("mi", K::Mi, true, None),
    kw!("mm", K::Mm, true, Gregorian),
    kw!("month", K::MonthLower, false, Gregorian),
    kw!("mon", K::MonLower, false, Gregorian),
    kw!("ms", K::Ms, true, None),
    kw!("of", K::Of, false, None),
    kw!("p.m.", K::PMLowerDots, false, None),
    kw!("pm", K::PMLower, false, None),
    kw!("q", K::Q, true, None),
    kw!("rm", K::RmLower, false, Gregorian),
    kw!("sssss", K::Ssss, true, None),
    kw!("ssss", K::Ssss, true, None),
    kw!("ss", K::Ss, true, None),
    kw!("tzh", K::Tzh, false, None),
    kw!("tzm", K::Tzm, true, None),
    kw!("tz", K::TzLower, false, None),
    kw!("us", K::Us, true, None),
    kw!("ww", K::Ww, true, Gregorian),
    kw!("w", K::W, true, Gregorian),
    kw!("y,yyy", K::YCommaYyy, true, Gregorian),
    kw!("yyyy", K::Yyyy, true, Gregorian),
    kw!("yyy", K::Yyy, true, Gregorian),
    kw!("yy", K::Yy, true, Gregorian),
    kw!("y", K::Y, true, Gregorian),
];

/// Modifier bits of a date/time keyword.
pub(super) const S_FM: u8 = 0x01;
pub(super) const S_TH_UPPER: u8 = 0x02;
pub(super) const S_TH_LOWER: u8 = 0x04;
pub(super) const S_SP: u8 = 0x08;
pub(super) const S_TM: u8 = 0x10;

const PREFIXES: &[(&str, u8)] = &[("FM", S_FM), ("fm", S_FM), ("TM", S_TM), ("tm", S_TM)];
const POSTFIXES: &[(&str, u8)] = &[("TH", S_TH_UPPER), ("th", S_TH_LOWER), ("SP", S_SP)];

/// One element of a parsed template.
#[derive(Debug)]
pub(super) enum Node<K: 'static> {
    /// A keyword and its modifier bits.
    Action(K, u8),
    /// A literal character (one UTF-8 character).
    Char(String),
    /// A punctuation character between fields (date/time templates only).
    Separator(String),
    /// A white-space character.
    Space(String),
}

/// Length of the UTF-8 character starting with `b`.
pub(super) fn char_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The first keyword of `table` spelled at the start of `s`, searching
/// only the run of entries that share the first entry's initial, as
/// PostgreSQL's indexed search does.
fn find_keyword<T>(s: &[u8], table: &'static [T], name: impl Fn(&T) -> &'static str) -> Option<&'static T> {
    let first = *s.first()?;
    if first <= b' ' || first >= b'~' {
        return None;
    }
    let start = table.iter().position(|k| name(k).as_bytes()[0] == first)?;
    table[start..]
        .iter()
        .take_while(|k| name(k).as_bytes()[0] == first)
        .find(|k| s.starts_with(name(k).as_bytes()))
}

/// Punctuation: printable ASCII that is neither a letter nor a digit.
pub(super) fn is_separator_char(b: u8) -> bool {
    b > 0x20 && b < 0x7F && !b.is_ascii_alphanumeric()
}

/// C's isspace in the C locale.
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// Parses a template; `on_keyword` sees each keyword as it is found (the
/// number templates check their combinations there, failing early as
/// PostgreSQL does).
fn parse<K: Copy, E>(
    fmt: &str,
    datetime: bool,
    mut keyword: impl FnMut(&[u8]) -> Option<(K, usize)>,
    mut on_keyword: impl FnMut(K) -> Result<(), E>,
) -> Result<Vec<Node<K>>, E> {
    let b = fmt.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let text = |from: usize| {
        let len = char_len(b[from]).min(b.len() - from);
        (String::from_utf8_lossy(&b[from..from + len]).into_owned(), len)
    };
    while i < b.len() {
        let mut suffix = 0;
        if datetime {
            if let Some((p, bit)) = PREFIXES.iter().find(|(p, _)| b[i..].starts_with(p.as_bytes())) {
                suffix |= bit;
                i += p.len();
            }
        }
        if i >= b.len() {
            break;
        }
        if let Some((k, len)) = keyword(&b[i..]) {
            i += len;
            on_keyword(k)?;
            if datetime && i < b.len() {
                if let Some((p, bit)) = POSTFIXES.iter().find(|(p, _)| b[i..].starts_with(p.as_bytes())) {
                    suffix |= bit;
                    i += p.len();
                }
            }
            out.push(Node::Action(k, suffix));
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() {
                if b[i] == b'"' {
                    i += 1;
                    break;
                }
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                let (c, len) = text(i);
                out.push(Node::Char(c));
                i += len;
            }
        } else {
            if b[i] == b'\\' && b.get(i + 1) == Some(&b'"') {
                i += 1;
            }
            let (c, len) = text(i);
            if datetime && is_separator_char(b[i]) {
                out.push(Node::Separator(c));
            } else if is_space(b[i]) {
                out.push(Node::Space(c));
            } else {
                out.push(Node::Char(c));
            }
            i += len;
        }
    }
    Ok(out)
}

/// Parses a number template, calling `on_keyword` for each keyword.
pub(super) fn parse_number<E>(
    fmt: &str,
    on_keyword: impl FnMut(NumKey) -> Result<(), E>,
) -> Result<Vec<Node<NumKey>>, E> {
    parse(fmt, false, |s| find_keyword(s, NUM_KEYWORDS, |k| k.0).map(|k| (k.1, k.0.len())), on_keyword)
}

/// Parses a date/time template.
pub(super) fn parse_datetime(fmt: &str) -> Vec<Node<&'static DtKeyword>> {
    let parsed: Result<_, std::convert::Infallible> =
        parse(fmt, true, |s| find_keyword(s, DT_KEYWORDS, |k| k.name).map(|k| (k, k.name.len())), |_| Ok(()));
    match parsed {
        Ok(nodes) => nodes,
        Err(never) => match never {},
    }
}
