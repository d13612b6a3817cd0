//! Date/time templates for input: `to_date` and `to_timestamp`.
//!
//! Reading happens in two passes, as in PostgreSQL: the template is walked
//! against the text filling raw fields (each may be set once; a second,
//! different value is an error), then the fields are combined into a date
//! and time with PostgreSQL's precedence rules (Julian day, ISO week
//! dates, day of year, century with a two-digit year, 12-hour clock) and
//! range checks. Outside FX mode blanks are skipped freely and a template
//! separator matches any one separator or nothing.

use snapscale_sqlstate::SqlState;

use super::calendar::{
    date2j, days_in_month, is_leap, isoweek2date, isoweek2j, isoweekdate2date, j2date, POSTGRES_EPOCH_JDATE,
};
use super::names::{
    ADBC, ADBC_LONG, AMPM, AMPM_LONG, DAYS_FULL, DAYS_SHORT, MONTHS_FULL, MONTHS_SHORT, RM_MONTHS_LOWER,
};
use super::template::{
    char_len, is_separator_char, is_space, parse_datetime, DateMode, DtKey, DtKeyword, Node, S_FM,
    S_TH_LOWER, S_TH_UPPER,
};
use crate::zone::Zone;
use crate::SqlError;

const USECS_PER_DAY: i64 = 86_400_000_000;

/// The raw fields read from the text (0 = not given).
#[derive(Debug, Default)]
struct RawFields {
    mode: Option<DateMode>,
    hh: i32,
    pm: i32,
    mi: i32,
    ss: i32,
    ssss: i32,
    d: i32,
    dd: i32,
    ddd: i32,
    mm: i32,
    ms: i32,
    year: i32,
    bc: i32,
    ww: i32,
    w: i32,
    cc: i32,
    j: i32,
    us: i32,
    yysz: i32,
    twelve_hour: bool,
    tzsign: i32,
    tzh: i32,
    tzm: i32,
    ff: i32,
}

fn bad_format(msg: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_DATETIME_FORMAT, msg)
}

fn field_overflow(input: &str) -> SqlError {
    SqlError::new(
        SqlState::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{input}\""),
    )
}

/// Stores `value` unless a different one was stored before.
fn set_int(dest: &mut i32, value: i32, kw: &DtKeyword) -> Result<(), SqlError> {
    if *dest != 0 && *dest != value {
        return Err(bad_format(format!("conflicting values for \"{}\" field in formatting string", kw.name))
            .with_detail("This value contradicts a previous setting for the same field type."));
    }
    *dest = value;
    Ok(())
}

fn set_mode(raw: &mut RawFields, mode: DateMode) -> Result<(), SqlError> {
    if mode == DateMode::None {
        return Ok(());
    }
    match raw.mode {
        None => raw.mode = Some(mode),
        Some(m) if m != mode => {
            return Err(bad_format("invalid combination of date conventions")
                .with_hint("Do not mix Gregorian and ISO week date conventions in a formatting template."))
        }
        _ => {}
    }
    Ok(())
}

/// C's strtol from `s[at..]`: the value (clamped, with an overflow flag)
/// and where the number ends; the end is `at` when nothing was read.
fn strtol(s: &[u8], at: usize) -> (i64, bool, usize) {
    let mut i = at;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i128 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = (v * 10 + i128::from(s[i] - b'0')).min(i128::from(i64::MAX) + 1);
        i += 1;
    }
    if i == start {
        return (0, false, at);
    }
    let v = if neg { -v } else { v };
    let overflow = v > i128::from(i64::MAX) || v < i128::from(i64::MIN);
    (v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64, overflow, i)
}

/// The template being read and the position in the text.
struct Reader<'a> {
    nodes: &'a [Node<&'static DtKeyword>],
    text: &'a [u8],
    s: usize,
}

impl Reader<'_> {
    fn at(&self, i: usize) -> u8 {
        self.text.get(i).copied().unwrap_or(0)
    }

    /// Whether what follows node `i` cannot continue a number, so that a
    /// field may take as many digits as there are.
    fn next_is_separator(&self, i: usize) -> bool {
        if let Node::Action(_, suffix) = &self.nodes[i] {
            if suffix & (S_TH_UPPER | S_TH_LOWER) != 0 {
                return true;
            }
        }
        match self.nodes.get(i + 1) {
            None => true,
            Some(Node::Action(kw, _)) => !kw.is_digit,
            Some(Node::Char(c) | Node::Separator(c) | Node::Space(c)) => {
                !(c.len() == 1 && c.as_bytes()[0].is_ascii_digit())
            }
        }
    }

    /// Reads an integer field of `len` characters (any number of them in
    /// FM mode or before a separator) into `dest`; returns the characters
    /// consumed, leading blanks included.
    fn parse_int_len(
        &mut self,
        dest: Option<&mut i32>,
        len: usize,
        i: usize,
        kw: &DtKeyword,
        suffix: u8,
    ) -> Result<usize, SqlError> {
        let init = self.s;
        while self.s < self.text.len() && is_space(self.text[self.s]) {
            self.s += 1;
        }
        let rest = &self.text[self.s.min(self.text.len())..];
        let copy_len = rest.len().min(len);
        let copy = &rest[..copy_len];
        let copy_text = String::from_utf8_lossy(copy).into_owned();
        let (result, overflow);
        if suffix & S_FM != 0 || self.next_is_separator(i) {
            let (v, o, end) = strtol(self.text, init);
            result = v;
            overflow = o;
            self.s = end;
        } else {
            if rest.len() < len {
                return Err(bad_format(format!(
                    "source string too short for \"{}\" formatting field",
                    kw.name
                ))
                .with_detail(format!("Field requires {len} characters, but only {} remain.", rest.len()))
                .with_hint("If your source string is not fixed-width, try using the \"FM\" modifier."));
            }
            let (v, o, end) = strtol(copy, 0);
            let used = end;
            if used > 0 && used < len {
                return Err(bad_format(format!("invalid value \"{copy_text}\" for \"{}\"", kw.name))
                    .with_detail(format!("Field requires {len} characters, but only {used} could be parsed."))
                    .with_hint("If your source string is not fixed-width, try using the \"FM\" modifier."));
            }
            result = v;
            overflow = o;
            self.s += used;
        }
        if self.s == init {
            return Err(bad_format(format!("invalid value \"{copy_text}\" for \"{}\"", kw.name))
                .with_detail("Value must be an integer."));
        }
        if overflow || result < i64::from(i32::MIN) || result > i64::from(i32::MAX) {
            return Err(SqlError::new(
                SqlState::DATETIME_FIELD_OVERFLOW,
                format!("value for \"{}\" in source string is out of range", kw.name),
            )
            .with_detail("Value must be in the range -2147483648 to 2147483647."));
        }
        if let Some(d) = dest {
            set_int(d, result as i32, kw)?;
        }
        Ok(self.s - init)
    }

    /// Matches one of `words` (case-insensitively) at the position;
    /// returns its index.
    fn seq_search(&mut self, words: &[&str], kw: &DtKeyword) -> Result<i32, SqlError> {
        let rest = &self.text[self.s.min(self.text.len())..];
        for (idx, w) in words.iter().enumerate() {
            let wb = w.as_bytes();
            if rest.len() >= wb.len() && rest[..wb.len()].eq_ignore_ascii_case(wb) {
                self.s += wb.len();
                return Ok(idx as i32);
            }
        }
        let end =
            rest.iter().position(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0C)).unwrap_or(rest.len());
        Err(bad_format(format!(
            "invalid value \"{}\" for \"{}\"",
            String::from_utf8_lossy(&rest[..end]),
            kw.name
        ))
        .with_detail("The given value did not match any of the allowed values for this field."))
    }

    fn skip_th(&mut self, suffix: u8) {
        if suffix & (S_TH_UPPER | S_TH_LOWER) != 0 {
            for _ in 0..2 {
                if self.s < self.text.len() {
                    self.s += char_len(self.text[self.s]).min(self.text.len() - self.s);
                }
            }
        }
    }

    fn skip_char(&mut self) {
        if self.s < self.text.len() {
            self.s += char_len(self.text[self.s]).min(self.text.len() - self.s);
        }
    }
}

/// Walks the template over the text, filling the raw fields.
fn read_fields(text: &str, fmt: &str) -> Result<RawFields, SqlError> {
    let nodes = parse_datetime(fmt);
    let mut r = Reader { nodes: &nodes, text: text.as_bytes(), s: 0 };
    let mut out = RawFields::default();
    let mut fx_mode = false;
    let mut extra_skip: i32 = 0;
    for (i, node) in nodes.iter().enumerate() {
        if r.s >= r.text.len() {
            break;
        }
        let is_fx = matches!(node, Node::Action(kw, _) if kw.key == DtKey::Fx);
        if !fx_mode && !is_fx && (matches!(node, Node::Action(..)) || i == 0) {
            while r.s < r.text.len() && is_space(r.text[r.s]) {
                r.s += 1;
                extra_skip += 1;
            }
        }
        let (kw, suffix) = match node {
            Node::Space(_) | Node::Separator(_) => {
                if !fx_mode {
                    extra_skip -= 1;
                    let c = r.at(r.s);
                    if is_space(c) || is_separator_char(c) {
                        r.s += 1;
                        extra_skip += 1;
                    }
                } else {
                    r.skip_char();
                }
                continue;
            }
            Node::Char(_) => {
                if !fx_mode && extra_skip > 0 {
                    extra_skip -= 1;
                } else {
                    r.skip_char();
                }
                continue;
            }
            Node::Action(kw, suffix) => (*kw, *suffix),
        };
        set_mode(&mut out, kw.mode)?;
        let klen = kw.name.len();
        match kw.key {
            DtKey::Fx => fx_mode = true,
            DtKey::AMUpperDots | DtKey::PMUpperDots | DtKey::AMLowerDots | DtKey::PMLowerDots => {
                let v = r.seq_search(&AMPM_LONG, kw)?;
                set_int(&mut out.pm, v % 2, kw)?;
                out.twelve_hour = true;
            }
            DtKey::AMUpper | DtKey::PMUpper | DtKey::AMLower | DtKey::PMLower => {
                let v = r.seq_search(&AMPM, kw)?;
                set_int(&mut out.pm, v % 2, kw)?;
                out.twelve_hour = true;
            }
            DtKey::Hh | DtKey::Hh12 => {
                r.parse_int_len(Some(&mut out.hh), 2, i, kw, suffix)?;
                out.twelve_hour = true;
                r.skip_th(suffix);
            }
            DtKey::Hh24 => {
                r.parse_int_len(Some(&mut out.hh), 2, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Mi => {
                r.parse_int_len(Some(&mut out.mi), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Ss => {
                r.parse_int_len(Some(&mut out.ss), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Ms => {
                let len = r.parse_int_len(Some(&mut out.ms), 3, i, kw, suffix)?;
                out.ms = out.ms.wrapping_mul(match len {
                    1 => 100,
                    2 => 10,
                    _ => 1,
                });
                r.skip_th(suffix);
            }
            DtKey::Ff(_) | DtKey::Us => {
                let width = if let DtKey::Ff(n) = kw.key {
                    out.ff = i32::from(n);
                    usize::from(n)
                } else {
                    6
                };
                let len = r.parse_int_len(Some(&mut out.us), width, i, kw, suffix)?;
                out.us = out.us.wrapping_mul(match len {
                    1 => 100_000,
                    2 => 10_000,
                    3 => 1000,
                    4 => 100,
                    5 => 10,
                    _ => 1,
                });
                r.skip_th(suffix);
            }
            DtKey::Ssss => {
                r.parse_int_len(Some(&mut out.ssss), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::TzLower | DtKey::TzUpper | DtKey::Of => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("formatting field \"{}\" is only supported in to_char", kw.name),
                ));
            }
            DtKey::Tzh => {
                let c = r.at(r.s);
                if c == b'+' || c == b'-' || c == b' ' {
                    out.tzsign = if c == b'-' { -1 } else { 1 };
                    r.s += 1;
                } else if extra_skip > 0 && r.s > 0 && r.at(r.s - 1) == b'-' {
                    out.tzsign = -1;
                } else {
                    out.tzsign = 1;
                }
                r.parse_int_len(Some(&mut out.tzh), 2, i, kw, suffix)?;
            }
            DtKey::Tzm => {
                if out.tzsign == 0 {
                    out.tzsign = 1;
                }
                r.parse_int_len(Some(&mut out.tzm), 2, i, kw, suffix)?;
            }
            DtKey::ADUpperDots | DtKey::BCUpperDots | DtKey::ADLowerDots | DtKey::BCLowerDots => {
                let v = r.seq_search(&ADBC_LONG, kw)?;
                set_int(&mut out.bc, v % 2, kw)?;
            }
            DtKey::ADUpper | DtKey::BCUpper | DtKey::ADLower | DtKey::BCLower => {
                let v = r.seq_search(&ADBC, kw)?;
                set_int(&mut out.bc, v % 2, kw)?;
            }
            DtKey::MonthUpper | DtKey::MonthCap | DtKey::MonthLower => {
                let v = r.seq_search(&MONTHS_FULL, kw)?;
                set_int(&mut out.mm, v + 1, kw)?;
            }
            DtKey::MonUpper | DtKey::MonCap | DtKey::MonLower => {
                let v = r.seq_search(&MONTHS_SHORT, kw)?;
                set_int(&mut out.mm, v + 1, kw)?;
            }
            DtKey::Mm => {
                r.parse_int_len(Some(&mut out.mm), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::DayUpper | DtKey::DayCap | DtKey::DayLower => {
                let v = r.seq_search(&DAYS_FULL, kw)?;
                set_int(&mut out.d, v, kw)?;
                out.d += 1;
            }
            DtKey::DyUpper | DtKey::DyCap | DtKey::DyLower => {
                let v = r.seq_search(&DAYS_SHORT, kw)?;
                set_int(&mut out.d, v, kw)?;
                out.d += 1;
            }
            DtKey::Ddd => {
                r.parse_int_len(Some(&mut out.ddd), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Iddd => {
                r.parse_int_len(Some(&mut out.ddd), 3, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Dd => {
                r.parse_int_len(Some(&mut out.dd), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::D => {
                r.parse_int_len(Some(&mut out.d), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Id => {
                r.parse_int_len(Some(&mut out.d), 1, i, kw, suffix)?;
                out.d = out.d.wrapping_add(1);
                if out.d > 7 {
                    out.d = 1;
                }
                r.skip_th(suffix);
            }
            DtKey::Ww | DtKey::Iw => {
                r.parse_int_len(Some(&mut out.ww), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::Q => {
                r.parse_int_len(None, klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::CC => {
                r.parse_int_len(Some(&mut out.cc), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::YCommaYyy => {
                let (years, used) = scan_y_yyy(&r.text[r.s..])
                    .ok_or_else(|| bad_format("invalid input string for \"Y,YYY\""))?;
                set_int(&mut out.year, years, kw)?;
                out.yysz = 4;
                r.s += used;
                r.skip_th(suffix);
            }
            DtKey::Yyyy | DtKey::Iyyy => {
                r.parse_int_len(Some(&mut out.year), klen, i, kw, suffix)?;
                out.yysz = 4;
                r.skip_th(suffix);
            }
            DtKey::Yyy | DtKey::Iyy | DtKey::Yy | DtKey::Iy | DtKey::Y | DtKey::I => {
                let len = r.parse_int_len(Some(&mut out.year), klen, i, kw, suffix)?;
                if len < 4 {
                    out.year = adjust_partial_year_to_2020(out.year);
                }
                out.yysz = klen as i32;
                r.skip_th(suffix);
            }
            DtKey::RmUpper | DtKey::RmLower => {
                let v = r.seq_search(&RM_MONTHS_LOWER, kw)?;
                set_int(&mut out.mm, 12 - v, kw)?;
            }
            DtKey::W => {
                r.parse_int_len(Some(&mut out.w), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
            DtKey::J => {
                r.parse_int_len(Some(&mut out.j), klen, i, kw, suffix)?;
                r.skip_th(suffix);
            }
        }
        if !fx_mode {
            extra_skip = 0;
            while r.s < r.text.len() && is_space(r.text[r.s]) {
                r.s += 1;
                extra_skip += 1;
            }
        }
    }
    Ok(out)
}

/// `sscanf(s, "%d,%03d%n")`: the combined year and bytes used, or `None`
/// unless both numbers were read.
fn scan_y_yyy(s: &[u8]) -> Option<(i32, usize)> {
    let (millennia, _, end) = strtol(s, 0);
    if end == 0 {
        return None;
    }
    if s.get(end) != Some(&b',') {
        return None;
    }
    let mut i = end + 1;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let start = i;
    let mut neg = false;
    if matches!(s.get(i), Some(b'+' | b'-')) {
        neg = s[i] == b'-';
        i += 1;
    }
    let digits_start = i;
    let mut v: i32 = 0;
    while i < s.len() && i - start < 3 && s[i].is_ascii_digit() {
        v = v * 10 + i32::from(s[i] - b'0');
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    let years = if neg { -v } else { v };
    Some((years.wrapping_add((millennia as i32).wrapping_mul(1000)), i))
}

/// Two- and three-digit years near 2020: 0-69 → 20xx, 70-99 → 19xx,
/// 100-519 → 2xxx, 520-999 → 1xxx.
fn adjust_partial_year_to_2020(year: i32) -> i32 {
    if year < 70 {
        year + 2000
    } else if year < 100 {
        year + 1900
    } else if year < 520 {
        year + 2000
    } else if year < 1000 {
        year + 1000
    } else {
        year
    }
}

/// The combined result: calendar date, clock, and the explicit offset.
struct Combined {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    fsec: i64,
    /// Fractional digits requested by FF1-FF6 (0 = none).
    fprec: i32,
    /// Seconds east of UTC, if TZH/TZM were given.
    offset: Option<i32>,
}

const YEAR: u8 = 1;
const MONTH: u8 = 2;
const DAY: u8 = 4;
const DATE: u8 = YEAR | MONTH | DAY;

fn combine(text: &str, fmt: &str) -> Result<Combined, SqlError> {
    let mut t = if fmt.is_empty() { RawFields::default() } else { read_fields(text, fmt)? };
    let (mut year, mut mon, mut mday) = (0i64, 1i64, 1i64);
    let (mut hour, mut min, mut sec) = (0i64, 0i64, 0i64);
    let mut fmask = 0u8;
    if t.ssss != 0 {
        let x = i64::from(t.ssss);
        hour = x / 3600;
        min = x % 3600 / 60;
        sec = x % 60;
    }
    if t.ss != 0 {
        sec = i64::from(t.ss);
    }
    if t.mi != 0 {
        min = i64::from(t.mi);
    }
    if t.hh != 0 {
        hour = i64::from(t.hh);
    }
    if t.twelve_hour {
        if !(1..=12).contains(&hour) {
            return Err(bad_format(format!("hour \"{hour}\" is invalid for the 12-hour clock"))
                .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        if t.pm != 0 && hour < 12 {
            hour += 12;
        } else if t.pm == 0 && hour == 12 {
            hour = 0;
        }
    }
    let bc = t.bc != 0;
    if t.year != 0 {
        if t.cc != 0 && t.yysz <= 2 {
            let cc = i64::from(if bc { -t.cc } else { t.cc });
            year = i64::from(t.year) % 100;
            if year != 0 {
                if cc >= 0 {
                    year += (cc - 1) * 100;
                } else {
                    year = (cc + 1) * 100 - year + 1;
                }
            } else {
                year = cc * 100 + if cc >= 0 { 0 } else { 1 };
            }
        } else {
            year = i64::from(t.year);
            if bc {
                year = -year;
            }
            if year < 0 {
                year += 1;
            }
        }
        fmask |= YEAR;
    } else if t.cc != 0 {
        let cc = i64::from(if bc { -t.cc } else { t.cc });
        year = if cc >= 0 { (cc - 1) * 100 + 1 } else { cc * 100 + 1 };
        fmask |= YEAR;
    }
    if t.j != 0 {
        (year, mon, mday) = j2date(i64::from(t.j));
        fmask |= DATE;
    }
    if t.ww != 0 {
        if t.mode == Some(DateMode::IsoWeek) {
            (year, mon, mday) = if t.d != 0 {
                isoweekdate2date(i64::from(t.ww), i64::from(t.d), year)
            } else {
                isoweek2date(i64::from(t.ww), year)
            };
            fmask |= DATE;
        } else {
            t.ddd = t.ww.wrapping_sub(1).wrapping_mul(7).wrapping_add(1);
        }
    }
    if t.w != 0 {
        t.dd = t.w.wrapping_sub(1).wrapping_mul(7).wrapping_add(1);
    }
    if t.dd != 0 {
        mday = i64::from(t.dd);
        fmask |= DAY;
    }
    if t.mm != 0 {
        mon = i64::from(t.mm);
        fmask |= MONTH;
    }
    if t.ddd != 0 && (mon <= 1 || mday <= 1) {
        if year == 0 && !bc {
            return Err(bad_format("cannot calculate day of year without year information"));
        }
        let ddd = i64::from(t.ddd);
        if t.mode == Some(DateMode::IsoWeek) {
            let j0 = isoweek2j(year, 1) - 1;
            (year, mon, mday) = j2date(j0 + ddd);
            fmask |= DATE;
        } else {
            const YSUM: [[i64; 13]; 2] = [
                [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365],
                [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366],
            ];
            let y = &YSUM[usize::from(is_leap(year))];
            let mut i = 1;
            while i <= 12 && ddd > y[i] {
                i += 1;
            }
            if mon <= 1 {
                mon = i as i64;
            }
            if mday <= 1 {
                mday = ddd - y[i.min(12) - 1];
            }
            fmask |= MONTH | DAY;
        }
    }
    let mut fsec = 0i64;
    if t.ms != 0 {
        fsec += i64::from(t.ms) * 1000;
    }
    if t.us != 0 {
        fsec += i64::from(t.us);
    }
    if fmask != 0 {
        let bad_month = fmask & MONTH != 0 && !(1..=12).contains(&mon);
        let bad_day = fmask & DAY != 0 && !(1..=31).contains(&mday);
        let bad_mday = !bad_month && !bad_day && fmask & DATE == DATE && mday > days_in_month(year, mon);
        if bad_month || bad_day || bad_mday {
            return Err(field_overflow(text));
        }
    }
    if !(0..24).contains(&hour)
        || !(0..60).contains(&min)
        || !(0..60).contains(&sec)
        || !(0..1_000_000).contains(&fsec)
    {
        return Err(field_overflow(text));
    }
    let mut offset = None;
    if t.tzsign != 0 {
        if t.tzh < 0 || t.tzh > 15 || t.tzm < 0 || t.tzm >= 60 {
            return Err(SqlError::new(
                SqlState::INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
                format!("time zone displacement out of range: \"{text}\""),
            ));
        }
        offset = Some(t.tzsign * (t.tzh * 3600 + t.tzm * 60));
    }
    Ok(Combined { year, mon, mday, hour, min, sec, fsec, fprec: t.ff, offset })
}

/// PostgreSQL's IS_VALID_JULIAN: 4714-11-24 BC up to 5874898-06-01.
fn valid_julian(y: i64, m: i64) -> bool {
    (y > -4713 || (y == -4713 && m >= 11)) && (y < 5_874_898 || (y == 5_874_898 && m < 6))
}

/// `to_date(text, text)`: days since 2000-01-01.
pub fn to_date(text: &str, fmt: &str) -> Result<i32, SqlError> {
    let c = combine(text, fmt)?;
    let out_of_range =
        || SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("date out of range: \"{text}\""));
    if !valid_julian(c.year, c.mon) {
        return Err(out_of_range());
    }
    let days = date2j(c.year, c.mon, c.mday) - POSTGRES_EPOCH_JDATE;
    // PostgreSQL's date range: Julian day 0 up to 5874898-01-01.
    if !(-POSTGRES_EPOCH_JDATE..2_147_483_494 - POSTGRES_EPOCH_JDATE).contains(&days) {
        return Err(out_of_range());
    }
    Ok(days as i32)
}

fn timestamp_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// Rounds to `fprec` fractional digits (1-5) as PostgreSQL rounds a
/// timestamp to a typmod: half away from zero.
fn round_to_precision(t: i64, fprec: i32) -> i64 {
    if !(1..=5).contains(&fprec) {
        return t;
    }
    let scale = 10i64.pow(6 - fprec as u32);
    let half = scale / 2;
    if t >= 0 {
        (t + half) / scale * scale
    } else {
        -((-t + half) / scale * scale)
    }
}

/// `to_timestamp(text, text)` read as wall-clock time: microseconds since
/// 2000-01-01 and, when the text gave TZH/TZM, the offset (seconds east
/// of UTC) it names. FF1-FF5 round the result to that many digits.
/// [`to_timestamp_in`] turns this into the instant.
pub fn to_timestamp(text: &str, fmt: &str) -> Result<(i64, Option<i32>), SqlError> {
    let c = combine(text, fmt)?;
    if !valid_julian(c.year, c.mon) {
        return Err(timestamp_out_of_range());
    }
    let date = date2j(c.year, c.mon, c.mday) - POSTGRES_EPOCH_JDATE;
    let time = ((c.hour * 60 + c.min) * 60 + c.sec) * 1_000_000 + c.fsec;
    let local = date
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(time))
        .ok_or_else(timestamp_out_of_range)?;
    Ok((round_to_precision(local, c.fprec), c.offset))
}

/// `to_timestamp(text, text)` as PostgreSQL returns it: the instant (UTC
/// microseconds since 2000-01-01), reading the wall-clock time in the
/// offset the text gave or else in the session's `zone`.
pub fn to_timestamp_in(text: &str, fmt: &str, zone: Zone) -> Result<i64, SqlError> {
    let (local, offset) = to_timestamp(text, fmt)?;
    let utc = match offset {
        Some(east) => local - i64::from(east) * 1_000_000,
        None => zone.to_utc(local),
    };
    if !crate::datetime::timestamp_in_range(utc) {
        return Err(timestamp_out_of_range());
    }
    Ok(utc)
}
