//! Date/time input as PostgreSQL 15 reads it: the input is first cut into
//! typed fields (numbers, dates, times, words, signed zones), then the
//! fields are interpreted in context — which fields are already known,
//! the DateStyle field order, keywords, time zone names and
//! abbreviations. Intervals read their fields right to left.

use snapscale_sqlstate::SqlState;

use super::{day_number, days_in_month, valid_julian, USECS_PER_DAY};
use crate::error::SqlError;
use crate::interval::Interval;
use crate::style::{DateOrder, IntervalStyle, Style};
use crate::zone::{self, Zone};

/// The ways input can fail, before they are worded for a type.
#[derive(Debug)]
pub(crate) enum Fail {
    /// 22007 invalid input syntax.
    Format,
    /// 22008 date/time field value out of range.
    Field,
    /// 22008 with the DateStyle hint.
    MonthDay,
    /// 22015 interval field value out of range.
    IntervalField,
    /// 22009 time zone displacement out of range.
    Displacement,
    /// An error worded already (an unknown zone name).
    Other(SqlError),
}

type Res<T> = Result<T, Fail>;

pub(crate) fn report(fail: Fail, input: &str, kind: &str) -> SqlError {
    match fail {
        Fail::Format => SqlError::new(
            SqlState::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type {kind}: \"{input}\""),
        ),
        Fail::Field => SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        ),
        Fail::MonthDay => SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        )
        .with_hint("Perhaps you need a different \"datestyle\" setting."),
        Fail::IntervalField => SqlError::new(
            SqlState::INTERVAL_FIELD_OVERFLOW,
            format!("interval field value out of range: \"{input}\""),
        ),
        Fail::Displacement => SqlError::new(
            SqlState::INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
            format!("time zone displacement out of range: \"{input}\""),
        ),
        Fail::Other(e) => e,
    }
}

// ---------------------------------------------------------------------
// Fields

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ft {
    Number,
    Date,
    Time,
    Str,
    Special,
    Tz,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Cuts input into typed fields (letters lower-cased). `buflen` and the
/// 25-field limit bound the input as PostgreSQL's work buffers do.
fn tokenize(input: &str, buflen: usize) -> Res<Vec<(Ft, String)>> {
    let s = input.as_bytes();
    let mut i = 0;
    let mut used = 0usize;
    let mut fields: Vec<(Ft, String)> = Vec::new();
    while i < s.len() {
        if is_space(s[i]) {
            i += 1;
            continue;
        }
        if fields.len() >= 25 {
            return Err(Fail::Format);
        }
        let mut f = String::new();
        let mut push = |f: &mut String, c: u8| -> Res<()> {
            if used + 1 >= buflen {
                return Err(Fail::Format);
            }
            used += 1;
            f.push(c.to_ascii_lowercase() as char);
            Ok(())
        };
        let at = |i: usize| s.get(i).copied().unwrap_or(0);
        let ft;
        let c = s[i];
        if c.is_ascii_digit() {
            while at(i).is_ascii_digit() {
                push(&mut f, s[i])?;
                i += 1;
            }
            if at(i) == b':' {
                ft = Ft::Time;
                push(&mut f, b':')?;
                i += 1;
                while at(i).is_ascii_digit() || at(i) == b':' || at(i) == b'.' {
                    push(&mut f, s[i])?;
                    i += 1;
                }
            } else if matches!(at(i), b'-' | b'/' | b'.') {
                let delim = s[i];
                push(&mut f, delim)?;
                i += 1;
                if at(i).is_ascii_digit() {
                    let mut t = if delim == b'.' { Ft::Number } else { Ft::Date };
                    while at(i).is_ascii_digit() {
                        push(&mut f, s[i])?;
                        i += 1;
                    }
                    if at(i) == delim {
                        t = Ft::Date;
                        push(&mut f, delim)?;
                        i += 1;
                        while at(i).is_ascii_digit() || at(i) == delim {
                            push(&mut f, s[i])?;
                            i += 1;
                        }
                    }
                    ft = t;
                } else {
                    ft = Ft::Date;
                    while at(i).is_ascii_alphanumeric() || at(i) == delim {
                        push(&mut f, s[i])?;
                        i += 1;
                    }
                }
            } else {
                ft = Ft::Number;
            }
        } else if c == b'.' {
            push(&mut f, c)?;
            i += 1;
            while at(i).is_ascii_digit() {
                push(&mut f, s[i])?;
                i += 1;
            }
            ft = Ft::Number;
        } else if c.is_ascii_alphabetic() {
            while at(i).is_ascii_alphabetic() {
                push(&mut f, s[i])?;
                i += 1;
            }
            let next = at(i);
            let is_date = matches!(next, b'-' | b'/' | b'.')
                || ((next == b'+' || next.is_ascii_digit()) && date_keyword(&f).is_none());
            if is_date {
                loop {
                    push(&mut f, s[i])?;
                    i += 1;
                    let n = at(i);
                    if !(matches!(n, b'+' | b'-' | b'/' | b'_' | b'.' | b':') || n.is_ascii_alphanumeric()) {
                        break;
                    }
                }
                ft = Ft::Date;
            } else {
                ft = Ft::Str;
            }
        } else if c == b'+' || c == b'-' {
            push(&mut f, c)?;
            i += 1;
            while is_space(at(i)) {
                i += 1;
            }
            if at(i).is_ascii_digit() {
                ft = Ft::Tz;
                push(&mut f, s[i])?;
                i += 1;
                while at(i).is_ascii_digit() || matches!(at(i), b':' | b'.' | b'-') {
                    push(&mut f, s[i])?;
                    i += 1;
                }
            } else if at(i).is_ascii_alphabetic() {
                ft = Ft::Special;
                while at(i).is_ascii_alphabetic() {
                    push(&mut f, s[i])?;
                    i += 1;
                }
            } else {
                return Err(Fail::Format);
            }
        } else if c.is_ascii_punctuation() {
            i += 1;
            continue;
        } else {
            return Err(Fail::Format);
        }
        used += 1;
        fields.push((ft, f));
    }
    Ok(fields)
}

// ---------------------------------------------------------------------
// Keywords

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reserved {
    Early,
    Late,
    Epoch,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    Zulu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
    /// What "ago" leaves behind: no unit a number can take.
    AfterAgo,
    Microsec,
    Millisec,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Julian,
    Dow,
    Doy,
    IsoDow,
    IsoYear,
    Tz,
    TzHour,
    TzMinute,
    /// The ISO 8601 `T`.
    Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    Reserved(Reserved),
    Month(i32),
    Dow,
    AmPm(bool),
    AdBc(bool),
    Units(Unit),
    IsoTime,
    Ignore,
    DstModifier,
    Ago,
}

/// PostgreSQL compares keywords on their first ten bytes. Keywords are
/// ASCII, so a cut inside a multibyte character matches none of them.
fn keyword_key(lower: &str) -> &str {
    lower.get(..lower.len().min(10)).unwrap_or(lower)
}

/// The date/time keywords (not zone abbreviations).
pub(super) fn date_keyword(lower: &str) -> Option<Key> {
    use Key::*;
    Some(match keyword_key(lower) {
        "-infinity" => Reserved(self::Reserved::Early),
        "ad" => AdBc(false),
        "allballs" => Reserved(self::Reserved::Zulu),
        "am" => AmPm(false),
        "apr" | "april" => Month(4),
        "at" | "on" => Ignore,
        "aug" | "august" => Month(8),
        "bc" => AdBc(true),
        "d" => Units(Unit::Day),
        "dec" | "december" => Month(12),
        "dow" => Units(Unit::Dow),
        "doy" => Units(Unit::Doy),
        "dst" => DstModifier,
        "epoch" => Reserved(self::Reserved::Epoch),
        "feb" | "february" => Month(2),
        "fri" | "friday" | "mon" | "monday" | "sat" | "saturday" | "sun" | "sunday" | "thu" | "thur"
        | "thurs" | "thursday" | "tue" | "tues" | "tuesday" | "wed" | "wednesday" | "weds" => Dow,
        "h" => Units(Unit::Hour),
        "infinity" => Reserved(self::Reserved::Late),
        "isodow" => Units(Unit::IsoDow),
        "isoyear" => Units(Unit::IsoYear),
        "j" | "jd" | "julian" => Units(Unit::Julian),
        "jan" | "january" => Month(1),
        "jul" | "july" => Month(7),
        "jun" | "june" => Month(6),
        "m" => Units(Unit::Month),
        "mar" | "march" => Month(3),
        "may" => Month(5),
        "mm" => Units(Unit::Minute),
        "nov" | "november" => Month(11),
        "now" => Reserved(self::Reserved::Now),
        "oct" | "october" => Month(10),
        "pm" => AmPm(true),
        "s" => Units(Unit::Second),
        "sep" | "sept" | "september" => Month(9),
        "t" => IsoTime,
        "today" => Reserved(self::Reserved::Today),
        "tomorrow" => Reserved(self::Reserved::Tomorrow),
        "y" => Units(Unit::Year),
        "yesterday" => Reserved(self::Reserved::Yesterday),
        _ => return None,
    })
}

/// The interval unit words.
pub(super) fn delta_keyword(lower: &str) -> Option<Key> {
    use Unit::*;
    Some(Key::Units(match keyword_key(lower) {
        "@" => return Some(Key::Ignore),
        "ago" => return Some(Key::Ago),
        "c" | "cent" | "centuries" | "century" => Century,
        "d" | "day" | "days" => Day,
        "dec" | "decade" | "decades" | "decs" => Decade,
        "h" | "hour" | "hours" | "hr" | "hrs" => Hour,
        "m" | "min" | "mins" | "minute" | "minutes" => Minute,
        "microsecon" | "us" | "usec" | "usecond" | "usecs" | "useconds" => Microsec,
        "mil" | "millennia" | "millennium" | "mils" => Millennium,
        "millisecon" | "ms" | "msec" | "msecond" | "msecs" | "mseconds" => Millisec,
        "mon" | "mons" | "month" | "months" => Month,
        "qtr" | "quarter" => Quarter,
        "s" | "sec" | "second" | "seconds" | "secs" => Second,
        "timezone" => Tz,
        "timezone_h" => TzHour,
        "timezone_m" => TzMinute,
        "w" | "week" | "weeks" => Week,
        "y" | "year" | "years" | "yr" | "yrs" => Year,
        _ => return None,
    }))
}

// ---------------------------------------------------------------------
// Field masks

const M_YEAR: u32 = 1 << 2;
const M_MONTH: u32 = 1 << 1;
const M_DAY: u32 = 1 << 3;
const M_TZ: u32 = 1 << 5;
const M_DTZ: u32 = 1 << 6;
const M_DYNTZ: u32 = 1 << 7;
const M_AMPM: u32 = 1 << 9;
const M_HOUR: u32 = 1 << 10;
const M_MINUTE: u32 = 1 << 11;
const M_SECOND: u32 = 1 << 12;
const M_MILLISEC: u32 = 1 << 13;
const M_MICROSEC: u32 = 1 << 14;
const M_DOY: u32 = 1 << 15;
const M_DOW: u32 = 1 << 16;
const M_ADBC: u32 = 1 << 18;
const M_WEEK: u32 = 1 << 24;
const M_DECADE: u32 = 1 << 25;
const M_CENTURY: u32 = 1 << 26;
const M_MILLENNIUM: u32 = 1 << 27;
const M_DTZMOD: u32 = 1 << 28;
const M_RESERV: u32 = 1;
const DATE_M: u32 = M_YEAR | M_MONTH | M_DAY;
const TIME_M: u32 = M_HOUR | M_MINUTE | M_SECOND | M_MILLISEC | M_MICROSEC;
const ALL_SECS_M: u32 = M_SECOND | M_MILLISEC | M_MICROSEC;

// ---------------------------------------------------------------------
// Numbers as C reads them

/// strtol: optional spaces and sign, then digits; the value (`None` on
/// overflow of `i64`) and where reading stopped (the start if no digit).
fn strtol(s: &[u8], start: usize) -> (Option<i64>, usize) {
    let mut i = start;
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
    let digits_at = i;
    let mut v: Option<i64> = Some(0);
    while i < s.len() && s[i].is_ascii_digit() {
        let d = i64::from(s[i] - b'0');
        v = v
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| if neg { v.checked_sub(d) } else { v.checked_add(d) });
        i += 1;
    }
    if i == digits_at {
        return (Some(0), start);
    }
    (v, i)
}

/// strtol into an `int`: `Err(Field)`-worthy overflow as `None`.
fn strtoint(s: &[u8], start: usize) -> (Option<i32>, usize) {
    let (v, end) = strtol(s, start);
    (v.and_then(|v| i32::try_from(v).ok()), end)
}

/// strtod on a prefix: the value and where it stopped (the start if no
/// number).
fn strtod(s: &[u8], start: usize) -> (f64, usize) {
    let mut i = start;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let num_start = i;
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let rest = std::str::from_utf8(&s[i..]).unwrap_or("").to_ascii_lowercase();
    for word in ["infinity", "inf", "nan"] {
        if rest.starts_with(word) {
            let neg = s[num_start] == b'-';
            let v = if word == "nan" {
                f64::NAN
            } else if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            return (v, i + word.len());
        }
    }
    let mut digits = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return (0.0, start);
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        if j < s.len() && s[j].is_ascii_digit() {
            while j < s.len() && s[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let text = std::str::from_utf8(&s[num_start..i]).unwrap_or("0");
    (text.parse::<f64>().unwrap_or(0.0), i)
}

/// A fraction `.ddd` that must end the text.
fn parse_fraction(s: &[u8], at: usize) -> Res<f64> {
    if at + 1 >= s.len() {
        return Ok(0.0);
    }
    let (v, end) = strtod(s, at);
    if end != s.len() || end == at || v.is_infinite() {
        return Err(Fail::Format);
    }
    Ok(v)
}

fn parse_fractional_second(s: &[u8], at: usize) -> Res<i64> {
    Ok((parse_fraction(s, at)? * 1e6).round_ties_even() as i64)
}

// ---------------------------------------------------------------------
// Broken-down time

#[derive(Clone, Copy, Debug, Default)]
struct Tm {
    year: i32,
    mon: i32,
    mday: i32,
    hour: i32,
    min: i32,
    sec: i32,
    yday: i32,
    usec: i64,
}

/// Julian day number of a date.
fn date2j(y: i64, m: i64, d: i64) -> i64 {
    // The month may be out of 1..=12 only in ways the callers rule out.
    day_number(y, m.clamp(1, 12) as u32, 1) + d - 1 + 2_451_545
}

fn j2date(j: i64) -> (i32, i32, i32) {
    let (y, m, d) = super::civil_date(j - 2_451_545);
    (y as i32, m as i32, d as i32)
}

/// What the input named besides fields: a special value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dtype {
    Date,
    Time,
    Epoch,
    Late,
    Early,
}

struct Decoded {
    dtype: Dtype,
    tm: Tm,
    /// Seconds west of UTC.
    tz: i32,
}

/// The instant `now` (UTC) on the session's wall clock, as fields.
fn current(now: i64, zone: Zone) -> (Tm, i32) {
    let offset = zone.offset_at(now);
    let local = now.saturating_add(offset);
    let days = local.div_euclid(USECS_PER_DAY);
    let time = local.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = super::civil_date(days);
    let tm = Tm {
        year: y as i32,
        mon: m as i32,
        mday: d as i32,
        hour: (time / 3_600_000_000) as i32,
        min: (time / 60_000_000 % 60) as i32,
        sec: (time / 1_000_000 % 60) as i32,
        usec: time % 1_000_000,
        yday: 0,
    };
    (tm, -((offset / 1_000_000) as i32))
}

/// The offset (seconds west) of `zone` at the wall-clock time `tm`.
fn zone_offset(tm: &Tm, zone: Zone) -> i32 {
    if !valid_julian(i64::from(tm.year), tm.mon.clamp(1, 12) as u32) {
        return 0;
    }
    let days = date2j(i64::from(tm.year), i64::from(tm.mon), i64::from(tm.mday)) - 2_451_545;
    let time = ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * 1_000_000;
    let Some(local) = days.checked_mul(USECS_PER_DAY).and_then(|d| d.checked_add(time)) else { return 0 };
    let utc = zone.to_utc(local);
    -(((local - utc) / 1_000_000) as i32)
}

/// The offset (seconds west) a dynamic abbreviation has at the wall-clock
/// time `tm` in its zone; the zone's own offset if it never used it.
fn abbrev_offset(tm: &Tm, zone: Zone, name: &str) -> i32 {
    if valid_julian(i64::from(tm.year), tm.mon.clamp(1, 12) as u32) {
        let days = date2j(i64::from(tm.year), i64::from(tm.mon), i64::from(tm.mday)) - 2_451_545;
        let time = ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * 1_000_000;
        if let Some(local) = days.checked_mul(USECS_PER_DAY).and_then(|d| d.checked_add(time)) {
            if let Some(east) = zone.abbreviation_offset(name, local) {
                return -east;
            }
        }
    }
    zone_offset(tm, zone)
}

/// A numeric zone `±hh[:mm[:ss]]` or `±hhmm`: seconds west.
fn decode_timezone(s: &[u8]) -> Res<i32> {
    if !matches!(s.first(), Some(b'+' | b'-')) {
        return Err(Fail::Format);
    }
    let (hr, mut cp) = strtoint(s, 1);
    let mut hr = hr.ok_or(Fail::Displacement)?;
    let mut sec = 0;
    let min;
    if s.get(cp) == Some(&b':') {
        let (m, c) = strtoint(s, cp + 1);
        min = m.ok_or(Fail::Displacement)?;
        cp = c;
        if s.get(cp) == Some(&b':') {
            let (sv, c) = strtoint(s, cp + 1);
            sec = sv.ok_or(Fail::Displacement)?;
            cp = c;
        }
    } else if cp == s.len() && s.len() > 3 {
        min = hr % 100;
        hr /= 100;
    } else {
        min = 0;
    }
    if !(0..=15).contains(&hr) || !(0..60).contains(&min) || !(0..60).contains(&sec) {
        return Err(Fail::Displacement);
    }
    let mut tz = (hr * 60 + min) * 60 + sec;
    if s[0] == b'-' {
        tz = -tz;
    }
    if cp != s.len() {
        return Err(Fail::Format);
    }
    Ok(-tz)
}

/// `h:m[:s[.f]]` or `m:s.f` into (hour, minute, second, microseconds);
/// `minute_second` reads `a:b` as minutes and seconds (an interval typed
/// MINUTE TO SECOND).
fn decode_time_common(s: &[u8], minute_second: bool) -> Res<(i64, i32, i32, i64)> {
    let (hour, cp) = strtol(s, 0);
    let mut hour = hour.ok_or(Fail::Field)?;
    if s.get(cp) != Some(&b':') {
        return Err(Fail::Format);
    }
    let (min, cp) = strtoint(s, cp + 1);
    let mut min = min.ok_or(Fail::Field)?;
    let mut sec = 0;
    let mut usec = 0;
    match s.get(cp) {
        None => {
            if minute_second {
                sec = min;
                min = i32::try_from(hour).map_err(|_| Fail::Field)?;
                hour = 0;
            }
        }
        Some(b'.') => {
            usec = parse_fractional_second(s, cp)?;
            sec = min;
            min = i32::try_from(hour).map_err(|_| Fail::Field)?;
            hour = 0;
        }
        Some(b':') => {
            let (sv, cp) = strtoint(s, cp + 1);
            sec = sv.ok_or(Fail::Field)?;
            match s.get(cp) {
                Some(b'.') => usec = parse_fractional_second(s, cp)?,
                None => {}
                Some(_) => return Err(Fail::Format),
            }
        }
        Some(_) => return Err(Fail::Format),
    }
    if hour < 0 || !(0..=59).contains(&min) || !(0..=60).contains(&sec) || !(0..=1_000_000).contains(&usec) {
        return Err(Fail::Field);
    }
    Ok((hour, min, sec, usec))
}

fn decode_time(s: &[u8], tm: &mut Tm) -> Res<u32> {
    let (h, m, sec, usec) = decode_time_common(s, false)?;
    tm.hour = i32::try_from(h).map_err(|_| Fail::Field)?;
    tm.min = m;
    tm.sec = sec;
    tm.usec = usec;
    Ok(TIME_M)
}

fn time_overflows(h: i32, m: i32, s: i32, usec: i64) -> bool {
    if !(0..=24).contains(&h)
        || !(0..60).contains(&m)
        || !(0..=60).contains(&s)
        || !(0..=1_000_000).contains(&usec)
    {
        return true;
    }
    ((i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(s)) * 1_000_000 + usec > USECS_PER_DAY
}

/// C's atoi on a run of digits (wrapping as glibc's does through long).
fn atoi(s: &[u8]) -> i32 {
    strtol(s, 0).0.unwrap_or(i64::MAX) as i32
}

/// A run of digits as a concatenated date (`yyyymmdd`, `yymmdd`) or time
/// (`hhmmss`, `hhmm`), with an optional fraction.
fn decode_number_field(
    s: &[u8],
    fmask: u32,
    tm: &mut Tm,
    is2digits: &mut bool,
) -> Res<(u32, bool /* a date */)> {
    let mut s = s;
    if let Some(dot) = s.iter().position(|&b| b == b'.') {
        if dot + 1 == s.len() {
            tm.usec = 0;
        } else {
            let (frac, end) = strtod(s, dot);
            if end == dot {
                return Err(Fail::Format);
            }
            tm.usec = (frac * 1e6).round_ties_even() as i64;
        }
        s = &s[..dot];
    } else if fmask & DATE_M != DATE_M && s.len() >= 6 {
        let len = s.len();
        tm.mday = atoi(&s[len - 2..]);
        tm.mon = atoi(&s[len - 4..len - 2]);
        tm.year = atoi(&s[..len - 4]);
        if len - 4 == 2 {
            *is2digits = true;
        }
        return Ok((DATE_M, true));
    }
    if fmask & TIME_M != TIME_M {
        if s.len() == 6 {
            tm.sec = atoi(&s[4..]);
            tm.min = atoi(&s[2..4]);
            tm.hour = atoi(&s[..2]);
            return Ok((TIME_M, false));
        } else if s.len() == 4 {
            tm.sec = 0;
            tm.min = atoi(&s[2..]);
            tm.hour = atoi(&s[..2]);
            return Ok((TIME_M, false));
        }
    }
    Err(Fail::Format)
}

/// A number read in the context of the date fields known so far and the
/// DateStyle field order.
fn decode_number(
    s: &[u8],
    have_text_month: bool,
    fmask: u32,
    tm: &mut Tm,
    is2digits: &mut bool,
    order: DateOrder,
) -> Res<u32> {
    let flen = s.len();
    let (val, cp) = strtoint(s, 0);
    let val = val.ok_or(Fail::Field)?;
    if cp == 0 {
        return Err(Fail::Format);
    }
    if s.get(cp) == Some(&b'.') {
        if cp > 2 {
            return decode_number_field(s, fmask | DATE_M, tm, is2digits).map(|(m, _)| m);
        }
        tm.usec = parse_fractional_second(s, cp)?;
    } else if cp != s.len() {
        return Err(Fail::Format);
    }
    if flen == 3 && fmask & DATE_M == M_YEAR && (1..=366).contains(&val) {
        tm.yday = val;
        return Ok(M_DOY | M_MONTH | M_DAY);
    }
    let tmask = match fmask & DATE_M {
        0 => {
            if flen >= 3 || order == DateOrder::Ymd {
                tm.year = val;
                M_YEAR
            } else if order == DateOrder::Dmy {
                tm.mday = val;
                M_DAY
            } else {
                tm.mon = val;
                M_MONTH
            }
        }
        M_YEAR => {
            tm.mon = val;
            M_MONTH
        }
        M_MONTH => {
            if have_text_month && (flen >= 3 || order == DateOrder::Ymd) {
                tm.year = val;
                M_YEAR
            } else {
                tm.mday = val;
                M_DAY
            }
        }
        m if m == M_YEAR | M_MONTH => {
            if have_text_month && flen >= 3 && *is2digits {
                tm.mday = tm.year;
                tm.year = val;
                *is2digits = false;
            } else {
                tm.mday = val;
            }
            M_DAY
        }
        M_DAY => {
            tm.mon = val;
            M_MONTH
        }
        m if m == M_MONTH | M_DAY => {
            tm.year = val;
            M_YEAR
        }
        DATE_M => return decode_number_field(s, fmask, tm, is2digits).map(|(m, _)| m),
        _ => return Err(Fail::Format),
    };
    if tmask == M_YEAR {
        *is2digits = flen <= 2;
    }
    Ok(tmask)
}

/// A date with separators: `1999-01-08`, `1/8/1999`, `jan-08-1999`,
/// `1999.008`.
fn decode_date(s: &[u8], mut fmask: u32, is2digits: &mut bool, tm: &mut Tm, order: DateOrder) -> Res<u32> {
    let mut fields: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while i < s.len() && fields.len() < 25 {
        while i < s.len() && !s[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i == s.len() {
            return Err(Fail::Format);
        }
        let start = i;
        if s[i].is_ascii_digit() {
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            while i < s.len() && s[i].is_ascii_alphabetic() {
                i += 1;
            }
        }
        fields.push(&s[start..i]);
        // The character after the run is overwritten by the terminator.
        if i < s.len() {
            i += 1;
        }
    }
    let mut tmask = 0;
    let mut have_text_month = false;
    let mut numeric = Vec::new();
    for f in &fields {
        if f[0].is_ascii_alphabetic() {
            let word = std::str::from_utf8(f).unwrap_or("");
            match date_keyword(word) {
                Some(Key::Ignore) => continue,
                Some(Key::Month(m)) => {
                    tm.mon = m;
                    have_text_month = true;
                    if fmask & M_MONTH != 0 {
                        return Err(Fail::Format);
                    }
                    fmask |= M_MONTH;
                    tmask |= M_MONTH;
                }
                _ => return Err(Fail::Format),
            }
        } else {
            numeric.push(*f);
        }
    }
    for f in numeric {
        if f.is_empty() {
            return Err(Fail::Format);
        }
        let dmask = decode_number(f, have_text_month, fmask, tm, is2digits, order)?;
        if fmask & dmask != 0 {
            return Err(Fail::Format);
        }
        fmask |= dmask;
        tmask |= dmask;
    }
    if fmask & !(M_DOY | M_TZ) != DATE_M {
        return Err(Fail::Format);
    }
    Ok(tmask)
}

fn validate_date(fmask: u32, is_julian: bool, is2digits: bool, bc: bool, tm: &mut Tm) -> Res<()> {
    if fmask & M_YEAR != 0 {
        if is_julian {
        } else if bc {
            if tm.year <= 0 {
                return Err(Fail::Field);
            }
            tm.year = -(tm.year - 1);
        } else if is2digits {
            if tm.year < 0 {
                return Err(Fail::Field);
            }
            if tm.year < 70 {
                tm.year += 2000;
            } else if tm.year < 100 {
                tm.year += 1900;
            }
        } else if tm.year <= 0 {
            return Err(Fail::Field);
        }
    }
    if fmask & M_DOY != 0 {
        let (y, m, d) = j2date(date2j(i64::from(tm.year), 1, 1) + i64::from(tm.yday) - 1);
        (tm.year, tm.mon, tm.mday) = (y, m, d);
    }
    if fmask & M_MONTH != 0 && !(1..=12).contains(&tm.mon) {
        return Err(Fail::MonthDay);
    }
    if fmask & M_DAY != 0 && !(1..=31).contains(&tm.mday) {
        return Err(Fail::MonthDay);
    }
    if fmask & DATE_M == DATE_M && tm.mday as u32 > days_in_month(i64::from(tm.year), tm.mon as u32) {
        return Err(Fail::Field);
    }
    Ok(())
}

/// Seconds and microseconds from a day fraction (a Julian day's).
fn day_fraction(frac: f64, tm: &mut Tm) {
    let t = (frac * USECS_PER_DAY as f64) as i64;
    tm.hour = (t / 3_600_000_000) as i32;
    tm.min = (t / 60_000_000 % 60) as i32;
    tm.sec = (t / 1_000_000 % 60) as i32;
    tm.usec = t % 1_000_000;
}

fn unknown_zone(name: &str) -> Fail {
    Fail::Other(SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("time zone \"{name}\" not recognized"),
    ))
}

/// A zone abbreviation of the `Default` set.
fn zone_abbrev(word: &str) -> Option<zone::Abbreviation> {
    zone::abbreviation(word)
}

/// The labelled-field forms (`y2001m02d04`, `j2451187`, `t040506`): the
/// number after a unit word.
fn decode_labelled(
    ptype: Unit,
    field: &str,
    fmask: u32,
    tm: &mut Tm,
    tz: &mut i32,
    is_julian: &mut bool,
    is2digits: &mut bool,
) -> Res<u32> {
    let s = field.as_bytes();
    let (val, cp) = strtoint(s, 0);
    let val = val.ok_or(Fail::Field)?;
    match s.get(cp) {
        Some(b'.') if matches!(ptype, Unit::Julian | Unit::Time | Unit::Second) => {}
        None => {}
        Some(_) => return Err(Fail::Format),
    }
    Ok(match ptype {
        Unit::Year => {
            tm.year = val;
            M_YEAR
        }
        Unit::Month => {
            if fmask & M_MONTH != 0 && fmask & M_HOUR != 0 {
                tm.min = val;
                M_MINUTE
            } else {
                tm.mon = val;
                M_MONTH
            }
        }
        Unit::Day => {
            tm.mday = val;
            M_DAY
        }
        Unit::Hour => {
            tm.hour = val;
            M_HOUR
        }
        Unit::Minute => {
            tm.min = val;
            M_MINUTE
        }
        Unit::Second => {
            tm.sec = val;
            if s.get(cp) == Some(&b'.') {
                tm.usec = parse_fractional_second(s, cp)?;
                ALL_SECS_M
            } else {
                M_SECOND
            }
        }
        Unit::Tz => {
            *tz = decode_timezone(s)?;
            M_TZ
        }
        Unit::Julian => {
            if val < 0 {
                return Err(Fail::Field);
            }
            (tm.year, tm.mon, tm.mday) = j2date(i64::from(val));
            *is_julian = true;
            if s.get(cp) == Some(&b'.') {
                let frac = parse_fraction(s, cp)?;
                day_fraction(frac, tm);
                DATE_M | TIME_M
            } else {
                DATE_M
            }
        }
        Unit::Time => {
            let (tmask, _) = decode_number_field(s, fmask | DATE_M, tm, is2digits)?;
            if tmask != TIME_M {
                return Err(Fail::Format);
            }
            tmask
        }
        _ => return Err(Fail::Format),
    })
}

/// Interprets the fields of a date or timestamp (DecodeDateTime).
fn decode_date_time(fields: &[(Ft, String)], style: &Style, now: i64) -> Res<Decoded> {
    let order = style.order;
    let mut fmask = 0u32;
    let mut ptype: Option<Unit> = None;
    let mut tm = Tm::default();
    let mut tz = 0i32;
    let mut dtype = Dtype::Date;
    let mut mer: Option<bool> = None;
    let mut have_text_month = false;
    let (mut is_julian, mut is2digits, mut bc) = (false, false, false);
    let mut named: Option<Zone> = None;
    let mut abbrev_zone: Option<(Zone, String)> = None;
    for (i, (ft, field)) in fields.iter().enumerate() {
        let s = field.as_bytes();
        let tmask;
        match ft {
            Ft::Date => {
                if ptype == Some(Unit::Julian) {
                    let (val, cp) = strtoint(s, 0);
                    let val = val.ok_or(Fail::Field)?;
                    if val < 0 {
                        return Err(Fail::Field);
                    }
                    (tm.year, tm.mon, tm.mday) = j2date(i64::from(val));
                    is_julian = true;
                    tz = decode_timezone(&s[cp..])?;
                    tmask = DATE_M | TIME_M | M_TZ;
                    ptype = None;
                } else if ptype.is_some() || fmask & (M_MONTH | M_DAY) == M_MONTH | M_DAY {
                    if s[0].is_ascii_digit() || ptype.is_some() {
                        if let Some(p) = ptype {
                            if p != Unit::Time {
                                return Err(Fail::Format);
                            }
                            ptype = None;
                        }
                        if fmask & TIME_M == TIME_M {
                            return Err(Fail::Format);
                        }
                        let Some(dash) = s.iter().position(|&b| b == b'-') else {
                            return Err(Fail::Format);
                        };
                        tz = decode_timezone(&s[dash..])?;
                        let (m, _) = decode_number_field(&s[..dash], fmask, &mut tm, &mut is2digits)?;
                        tmask = m | M_TZ;
                    } else {
                        named = Some(Zone::full_name(field).ok_or_else(|| unknown_zone(field))?);
                        tmask = M_TZ;
                    }
                } else {
                    tmask = decode_date(s, fmask, &mut is2digits, &mut tm, order)?;
                }
            }
            Ft::Time => {
                if let Some(p) = ptype {
                    if p != Unit::Time {
                        return Err(Fail::Format);
                    }
                    ptype = None;
                }
                tmask = decode_time(s, &mut tm)?;
                if time_overflows(tm.hour, tm.min, tm.sec, tm.usec) {
                    return Err(Fail::Field);
                }
            }
            Ft::Tz => {
                tz = decode_timezone(s)?;
                tmask = M_TZ;
            }
            Ft::Number => {
                if let Some(p) = ptype {
                    tmask =
                        decode_labelled(p, field, fmask, &mut tm, &mut tz, &mut is_julian, &mut is2digits)?;
                    ptype = None;
                    dtype = Dtype::Date;
                } else {
                    let flen = s.len();
                    let dot = s.iter().position(|&b| b == b'.');
                    if dot.is_some() && fmask & DATE_M == 0 {
                        tmask = decode_date(s, fmask, &mut is2digits, &mut tm, order)?;
                    } else if dot.is_some_and(|d| d > 2)
                        || (flen >= 6 && (fmask & DATE_M == 0 || fmask & TIME_M == 0))
                    {
                        tmask = decode_number_field(s, fmask, &mut tm, &mut is2digits)?.0;
                    } else {
                        tmask = decode_number(s, have_text_month, fmask, &mut tm, &mut is2digits, order)?;
                    }
                }
            }
            Ft::Str | Ft::Special => {
                if let Some(a) = zone_abbrev(field) {
                    if let Some(z) = a.zone {
                        tmask = M_DYNTZ | M_TZ;
                        abbrev_zone = Some((z, field.to_string()));
                    } else {
                        tmask = if a.dst { M_TZ | M_DTZ } else { M_TZ };
                        tz = -a.east;
                    }
                } else {
                    match date_keyword(field) {
                        Some(Key::Ignore) => continue,
                        Some(Key::Reserved(r)) => match r {
                            Reserved::Now => {
                                tmask = DATE_M | TIME_M | M_TZ;
                                dtype = Dtype::Date;
                                (tm, tz) = current(now, style.zone);
                            }
                            Reserved::Yesterday | Reserved::Today | Reserved::Tomorrow => {
                                tmask = DATE_M;
                                dtype = Dtype::Date;
                                let (cur, _) = current(now, style.zone);
                                let shift = match r {
                                    Reserved::Yesterday => -1,
                                    Reserved::Tomorrow => 1,
                                    _ => 0,
                                };
                                let j = date2j(i64::from(cur.year), i64::from(cur.mon), i64::from(cur.mday))
                                    + shift;
                                (tm.year, tm.mon, tm.mday) = j2date(j);
                            }
                            Reserved::Zulu => {
                                tmask = TIME_M | M_TZ;
                                dtype = Dtype::Date;
                                (tm.hour, tm.min, tm.sec) = (0, 0, 0);
                                tz = 0;
                            }
                            Reserved::Epoch | Reserved::Late | Reserved::Early => {
                                tmask = M_RESERV;
                                dtype = match r {
                                    Reserved::Epoch => Dtype::Epoch,
                                    Reserved::Late => Dtype::Late,
                                    _ => Dtype::Early,
                                };
                            }
                        },
                        Some(Key::Month(m)) => {
                            let mut t = M_MONTH;
                            if fmask & M_MONTH != 0
                                && !have_text_month
                                && fmask & M_DAY == 0
                                && (1..=31).contains(&tm.mon)
                            {
                                tm.mday = tm.mon;
                                t = M_DAY;
                            }
                            have_text_month = true;
                            tm.mon = m;
                            tmask = t;
                        }
                        Some(Key::DstModifier) => {
                            tmask = M_DTZMOD | M_DTZ;
                            tz -= 3600;
                        }
                        Some(Key::AmPm(pm)) => {
                            mer = Some(pm);
                            tmask = M_AMPM;
                        }
                        Some(Key::AdBc(is_bc)) => {
                            bc = is_bc;
                            tmask = M_ADBC;
                        }
                        Some(Key::Dow) => tmask = M_DOW,
                        Some(Key::Units(u)) => {
                            tmask = 0;
                            ptype = Some(u);
                        }
                        Some(Key::IsoTime) => {
                            tmask = 0;
                            if fmask & DATE_M != DATE_M {
                                return Err(Fail::Format);
                            }
                            match fields.get(i + 1) {
                                Some((Ft::Number | Ft::Time | Ft::Date, _)) => {}
                                _ => return Err(Fail::Format),
                            }
                            ptype = Some(Unit::Time);
                        }
                        Some(Key::Ago) => return Err(Fail::Format),
                        None => {
                            named = Some(Zone::full_name(field).ok_or(Fail::Format)?);
                            tmask = M_TZ;
                        }
                    }
                }
            }
        }
        if tmask & fmask != 0 {
            return Err(Fail::Format);
        }
        fmask |= tmask;
    }
    validate_date(fmask, is_julian, is2digits, bc, &mut tm)?;
    apply_meridian(mer, &mut tm)?;
    if dtype == Dtype::Date {
        if fmask & DATE_M != DATE_M {
            return Err(Fail::Format);
        }
        if let Some(z) = named {
            if fmask & M_DTZMOD != 0 {
                return Err(Fail::Format);
            }
            tz = zone_offset(&tm, z);
        }
        if let Some((z, name)) = abbrev_zone {
            if fmask & M_DTZMOD != 0 {
                return Err(Fail::Format);
            }
            tz = abbrev_offset(&tm, z, &name);
        }
        if fmask & M_TZ == 0 {
            if fmask & M_DTZMOD != 0 {
                return Err(Fail::Format);
            }
            tz = zone_offset(&tm, style.zone);
        }
    }
    Ok(Decoded { dtype, tm, tz })
}

fn apply_meridian(mer: Option<bool>, tm: &mut Tm) -> Res<()> {
    if let Some(pm) = mer {
        if tm.hour > 12 {
            return Err(Fail::Field);
        }
        if !pm && tm.hour == 12 {
            tm.hour = 0;
        } else if pm && tm.hour != 12 {
            tm.hour += 12;
        }
    }
    Ok(())
}

/// Interprets the fields of a time or timetz (DecodeTimeOnly).
fn decode_time_only(fields: &mut [(Ft, String)], style: &Style, now: i64) -> Res<Decoded> {
    let order = style.order;
    let nf = fields.len();
    let mut fmask = 0u32;
    let mut ptype: Option<Unit> = None;
    let mut tm = Tm::default();
    let mut tz = 0i32;
    let mut mer: Option<bool> = None;
    let (mut is_julian, mut is2digits, mut bc) = (false, false, false);
    let mut named: Option<Zone> = None;
    let mut abbrev_zone: Option<(Zone, String)> = None;
    for i in 0..nf {
        let (ft, field) = fields[i].clone();
        let s = field.as_bytes();
        let tmask;
        match ft {
            Ft::Date => {
                if i == 0 && nf >= 2 && (fields[nf - 1].0 == Ft::Date || fields[1].0 == Ft::Time) {
                    tmask = decode_date(s, fmask, &mut is2digits, &mut tm, order)?;
                } else if s[0].is_ascii_digit() {
                    if fmask & TIME_M == TIME_M {
                        return Err(Fail::Format);
                    }
                    let Some(dash) = s.iter().position(|&b| b == b'-') else {
                        return Err(Fail::Format);
                    };
                    tz = decode_timezone(&s[dash..])?;
                    let (m, date) = decode_number_field(&s[..dash], fmask | DATE_M, &mut tm, &mut is2digits)?;
                    fields[i].0 = if date { Ft::Date } else { Ft::Time };
                    tmask = m | M_TZ;
                } else {
                    named = Some(Zone::full_name(&field).ok_or_else(|| unknown_zone(&field))?);
                    fields[i].0 = Ft::Tz;
                    tmask = M_TZ;
                }
            }
            Ft::Time => tmask = decode_time(s, &mut tm)?,
            Ft::Tz => {
                tz = decode_timezone(s)?;
                tmask = M_TZ;
            }
            Ft::Number => {
                if let Some(p) = ptype {
                    tmask =
                        decode_labelled(p, &field, fmask, &mut tm, &mut tz, &mut is_julian, &mut is2digits)?;
                    ptype = None;
                } else {
                    let flen = s.len();
                    let dot = s.iter().position(|&b| b == b'.');
                    if let Some(d) = dot {
                        if i == 0 && nf >= 2 && fields[nf - 1].0 == Ft::Date {
                            tmask = decode_date(s, fmask, &mut is2digits, &mut tm, order)?;
                        } else if d > 2 {
                            let (m, date) = decode_number_field(s, fmask | DATE_M, &mut tm, &mut is2digits)?;
                            fields[i].0 = if date { Ft::Date } else { Ft::Time };
                            tmask = m;
                        } else {
                            return Err(Fail::Format);
                        }
                    } else if flen > 4 {
                        let (m, date) = decode_number_field(s, fmask | DATE_M, &mut tm, &mut is2digits)?;
                        fields[i].0 = if date { Ft::Date } else { Ft::Time };
                        tmask = m;
                    } else {
                        tmask = decode_number(s, false, fmask | DATE_M, &mut tm, &mut is2digits, order)?;
                    }
                }
            }
            Ft::Str | Ft::Special => {
                if let Some(a) = zone_abbrev(&field) {
                    if let Some(z) = a.zone {
                        tmask = M_DYNTZ | M_TZ;
                        abbrev_zone = Some((z, field.to_string()));
                    } else {
                        tmask = if a.dst { M_TZ | M_DTZ } else { M_TZ };
                        tz = -a.east;
                    }
                    fields[i].0 = Ft::Tz;
                } else {
                    match date_keyword(&field) {
                        Some(Key::Ignore) => continue,
                        Some(Key::Reserved(Reserved::Now)) => {
                            tmask = TIME_M;
                            let (cur, _) = current(now, style.zone);
                            (tm.hour, tm.min, tm.sec, tm.usec) = (cur.hour, cur.min, cur.sec, cur.usec);
                        }
                        Some(Key::Reserved(Reserved::Zulu)) => {
                            tmask = TIME_M | M_TZ;
                            (tm.hour, tm.min, tm.sec) = (0, 0, 0);
                        }
                        Some(Key::Reserved(_)) => return Err(Fail::Format),
                        Some(Key::DstModifier) => {
                            tmask = M_DTZMOD | M_DTZ;
                            tz -= 3600;
                        }
                        Some(Key::AmPm(pm)) => {
                            mer = Some(pm);
                            tmask = M_AMPM;
                        }
                        Some(Key::AdBc(is_bc)) => {
                            bc = is_bc;
                            tmask = M_ADBC;
                        }
                        Some(Key::Units(u)) => {
                            tmask = 0;
                            ptype = Some(u);
                        }
                        Some(Key::IsoTime) => {
                            tmask = 0;
                            match fields.get(i + 1) {
                                Some((Ft::Number | Ft::Time | Ft::Date, _)) => {}
                                _ => return Err(Fail::Format),
                            }
                            ptype = Some(Unit::Time);
                        }
                        Some(Key::Month(_) | Key::Dow | Key::Ago) => return Err(Fail::Format),
                        None => {
                            named = Some(Zone::full_name(&field).ok_or(Fail::Format)?);
                            tmask = M_TZ;
                        }
                    }
                }
            }
        }
        if tmask & fmask != 0 {
            return Err(Fail::Format);
        }
        fmask |= tmask;
    }
    validate_date(fmask, is_julian, is2digits, bc, &mut tm)?;
    apply_meridian(mer, &mut tm)?;
    if time_overflows(tm.hour, tm.min, tm.sec, tm.usec) {
        return Err(Fail::Field);
    }
    if fmask & TIME_M != TIME_M {
        return Err(Fail::Format);
    }
    // The zone's offset on the date given, else today.
    let on_date = |tm: &Tm| -> Res<Tm> {
        let mut t = *tm;
        if fmask & DATE_M == 0 {
            let (cur, _) = current(now, style.zone);
            (t.year, t.mon, t.mday) = (cur.year, cur.mon, cur.mday);
        } else if fmask & DATE_M != DATE_M {
            return Err(Fail::Format);
        }
        Ok(t)
    };
    if let Some(z) = named {
        if fmask & M_DTZMOD != 0 {
            return Err(Fail::Format);
        }
        tz = match z.single_offset() {
            Some(east) => -east,
            None => {
                if fmask & DATE_M != DATE_M {
                    return Err(Fail::Format);
                }
                zone_offset(&tm, z)
            }
        };
    }
    if let Some((z, name)) = abbrev_zone {
        if fmask & M_DTZMOD != 0 {
            return Err(Fail::Format);
        }
        tz = abbrev_offset(&on_date(&tm)?, z, &name);
    }
    if fmask & M_TZ == 0 {
        if fmask & M_DTZMOD != 0 {
            return Err(Fail::Format);
        }
        tz = zone_offset(&on_date(&tm)?, style.zone);
    }
    Ok(Decoded { dtype: Dtype::Time, tm, tz })
}

// ---------------------------------------------------------------------
// Public date/time entry points

fn decode(input: &str, kind: &str, buflen: usize, style: &Style, now: i64) -> Result<Decoded, SqlError> {
    let fields = tokenize(input, buflen).map_err(|f| report(f, input, kind))?;
    decode_date_time(&fields, style, now).map_err(|f| report(f, input, kind))
}

fn out_of_range(kind: &str, input: &str) -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("{kind} out of range: \"{input}\""))
}

/// Days from 2000-01-01 of a broken-down date, if PostgreSQL's calendar
/// holds it.
fn tm_days(tm: &Tm) -> Option<i64> {
    valid_julian(i64::from(tm.year), tm.mon as u32)
        .then(|| date2j(i64::from(tm.year), i64::from(tm.mon), i64::from(tm.mday)) - 2_451_545)
}

/// Parses date input under `style` (its field order and zone); `now` is
/// the current instant (microseconds since 2000-01-01 UTC) for `today`,
/// `now` and the like. `infinity` and `-infinity` are `i32::MAX` and
/// `i32::MIN`.
pub fn parse_date_styled(input: &str, style: &Style, now: i64) -> Result<i32, SqlError> {
    let d = decode(input, "date", 129, style, now)?;
    let tm = match d.dtype {
        Dtype::Date => d.tm,
        Dtype::Epoch => return Ok(-10_957),
        Dtype::Late => return Ok(i32::MAX),
        Dtype::Early => return Ok(i32::MIN),
        Dtype::Time => return Err(report(Fail::Format, input, "date")),
    };
    let days = tm_days(&tm).ok_or_else(|| out_of_range("date", input))?;
    // 4714-11-24 BC up to 5874898-01-01.
    if !(-2_451_545..2_147_483_494 - 2_451_545).contains(&days) {
        return Err(out_of_range("date", input));
    }
    Ok(days as i32)
}

/// A broken-down date and time as a timestamp (tm2timestamp): local, or
/// UTC if `tz` (seconds west) is given.
fn tm_to_timestamp(tm: &Tm, tz: Option<i32>) -> Option<i64> {
    let days = tm_days(tm)?;
    let time = ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * 1_000_000 + tm.usec;
    let t = days.checked_mul(USECS_PER_DAY)?.checked_add(time)?;
    if (t < 0 && days > 0) || (t > 0 && days < -1) {
        return None;
    }
    let t = match tz {
        Some(west) => t.checked_add(i64::from(west) * 1_000_000)?,
        None => t,
    };
    super::timestamp_in_range(t).then_some(t)
}

/// Parses timestamp input under `style`; a zone in the input is read and
/// ignored, as PostgreSQL does. `infinity`/`-infinity` are `i64::MAX`
/// and `i64::MIN`.
pub fn parse_timestamp_styled(input: &str, style: &Style, now: i64) -> Result<i64, SqlError> {
    let d = decode(input, "timestamp", 153, style, now)?;
    match d.dtype {
        Dtype::Date | Dtype::Time => {
            tm_to_timestamp(&d.tm, None).ok_or_else(|| out_of_range("timestamp", input))
        }
        Dtype::Epoch => Ok(-946_684_800_000_000),
        Dtype::Late => Ok(i64::MAX),
        Dtype::Early => Ok(i64::MIN),
    }
}

/// Parses timestamp with time zone input: the instant (microseconds since
/// 2000-01-01 UTC). A zone in the input (`-08`, `PST`, `America/New_York`,
/// `Z`) says where the wall clock was read; without one it is
/// `style.zone`.
pub fn parse_timestamptz_styled(input: &str, style: &Style, now: i64) -> Result<i64, SqlError> {
    let d = decode(input, "timestamp with time zone", 153, style, now)?;
    match d.dtype {
        Dtype::Date | Dtype::Time => {
            tm_to_timestamp(&d.tm, Some(d.tz)).ok_or_else(|| out_of_range("timestamp", input))
        }
        Dtype::Epoch => Ok(-946_684_800_000_000),
        Dtype::Late => Ok(i64::MAX),
        Dtype::Early => Ok(i64::MIN),
    }
}

/// Rounds a time of day to `precision` fractional digits (`time(p)`,
/// 0 to 6), as PostgreSQL's AdjustTimeForTypmod.
pub fn round_time(micros: i64, precision: Option<u8>) -> i64 {
    const SCALES: [i64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
    match precision {
        Some(p) if p <= 6 => {
            let scale = SCALES[p as usize];
            let half = scale / 2;
            if micros >= 0 {
                (micros + half) / scale * scale
            } else {
                -((-micros + half) / scale * scale)
            }
        }
        _ => micros,
    }
}

fn decode_time_input(input: &str, kind: &str, style: &Style, now: i64) -> Result<Decoded, SqlError> {
    let mut fields = tokenize(input, 129).map_err(|f| report(f, input, kind))?;
    decode_time_only(&mut fields, style, now).map_err(|f| report(f, input, kind))
}

fn tm_time(tm: &Tm) -> i64 {
    ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * 1_000_000 + tm.usec
}

/// Parses time input (microseconds since midnight, `24:00:00` allowed),
/// rounded to `precision` digits if given. A date or zone in the input
/// is read and ignored.
pub fn parse_time_styled(
    input: &str,
    style: &Style,
    now: i64,
    precision: Option<u8>,
) -> Result<i64, SqlError> {
    let d = decode_time_input(input, "time", style, now)?;
    Ok(round_time(tm_time(&d.tm), precision))
}

/// Parses time with time zone input: microseconds since midnight and the
/// zone in seconds *west* of UTC (PostgreSQL's sign). Without a zone in
/// the input, `style.zone`'s offset today (or on the date given).
pub fn parse_timetz_styled(
    input: &str,
    style: &Style,
    now: i64,
    precision: Option<u8>,
) -> Result<(i64, i32), SqlError> {
    let d = decode_time_input(input, "time with time zone", style, now)?;
    Ok((round_time(tm_time(&d.tm), precision), d.tz))
}

// ---------------------------------------------------------------------
// Intervals

#[derive(Default)]
struct ItmIn {
    usec: i64,
    mday: i32,
    mon: i32,
    year: i32,
}

fn adjust_fract_micros(frac: f64, scale: i64, itm: &mut ItmIn) -> bool {
    if frac == 0.0 {
        return true;
    }
    let frac = frac * scale as f64;
    let mut usec = frac as i64;
    let rest = frac - usec as f64;
    if rest > 0.5 {
        usec += 1;
    } else if rest < -0.5 {
        usec -= 1;
    }
    itm.usec.checked_add(usec).map(|u| itm.usec = u).is_some()
}

fn adjust_fract_days(frac: f64, scale: i32, itm: &mut ItmIn) -> bool {
    if frac == 0.0 {
        return true;
    }
    let frac = frac * f64::from(scale);
    let extra = frac as i32;
    let Some(d) = itm.mday.checked_add(extra) else { return false };
    itm.mday = d;
    adjust_fract_micros(frac - f64::from(extra), USECS_PER_DAY, itm)
}

fn adjust_fract_years(frac: f64, scale: i32, itm: &mut ItmIn) -> bool {
    let extra = (frac * f64::from(scale) * 12.0).round_ties_even() as i32;
    itm.mon.checked_add(extra).map(|m| itm.mon = m).is_some()
}

fn adjust_micros(val: i64, fval: f64, scale: i64, itm: &mut ItmIn) -> bool {
    let Some(u) = val.checked_mul(scale).and_then(|p| itm.usec.checked_add(p)) else { return false };
    itm.usec = u;
    adjust_fract_micros(fval, scale, itm)
}

fn adjust_days(val: i64, scale: i32, itm: &mut ItmIn) -> bool {
    let Ok(v) = i32::try_from(val) else { return false };
    v.checked_mul(scale).and_then(|d| itm.mday.checked_add(d)).map(|d| itm.mday = d).is_some()
}

fn adjust_months(val: i64, itm: &mut ItmIn) -> bool {
    let Ok(v) = i32::try_from(val) else { return false };
    itm.mon.checked_add(v).map(|m| itm.mon = m).is_some()
}

fn adjust_years(val: i64, scale: i32, itm: &mut ItmIn) -> bool {
    let Ok(v) = i32::try_from(val) else { return false };
    v.checked_mul(scale).and_then(|y| itm.year.checked_add(y)).map(|y| itm.year = y).is_some()
}

fn check(ok: bool) -> Res<()> {
    if ok {
        Ok(())
    } else {
        Err(Fail::Field)
    }
}

fn time_for_interval(s: &[u8], itm: &mut ItmIn, range: u32) -> Res<()> {
    // `12:34` is minutes and seconds under MINUTE TO SECOND.
    let minute_second = range == crate::interval::range::MINUTE | crate::interval::range::SECOND;
    let (h, m, sec, usec) = decode_time_common(s, minute_second)?;
    itm.usec = usec;
    check(adjust_micros(h, 0.0, 3_600_000_000, itm))?;
    check(adjust_micros(i64::from(m), 0.0, 60_000_000, itm))?;
    check(adjust_micros(i64::from(sec), 0.0, 1_000_000, itm))
}

/// The unit of a number written without one: the qualifier's last field
/// (seconds without a qualifier).
fn bare_unit(range: u32) -> Unit {
    use crate::interval::range::*;
    match range {
        YEAR => Unit::Year,
        r if r == MONTH || r == YEAR | MONTH => Unit::Month,
        DAY => Unit::Day,
        r if r == HOUR || r == DAY | HOUR => Unit::Hour,
        r if r == MINUTE || r == HOUR | MINUTE || r == DAY | HOUR | MINUTE => Unit::Minute,
        _ => Unit::Second,
    }
}

/// Interprets interval fields right to left (DecodeInterval), under the
/// qualifier `range` (`range::FULL` for none).
fn decode_interval(fields: &[(Ft, String)], style: IntervalStyle, range: u32) -> Res<ItmIn> {
    let mut itm = ItmIn::default();
    let mut is_before = false;
    let mut fmask = 0u32;
    // `None`: no unit yet (a bare number is seconds).
    let mut unit: Option<Unit> = None;
    let starts = |f: &str, c: char| f.starts_with(c);
    let force_negative = style == IntervalStyle::SqlStandard
        && fields.first().is_some_and(|(_, f)| starts(f, '-'))
        && !fields[1..].iter().any(|(_, f)| starts(f, '-') || starts(f, '+'));
    for (ft, field) in fields.iter().rev() {
        let s = field.as_bytes();
        let mut tmask;
        let mut as_number = false;
        match ft {
            Ft::Time => {
                time_for_interval(s, &mut itm, range)?;
                if force_negative && itm.usec > 0 {
                    itm.usec = -itm.usec;
                }
                tmask = TIME_M;
                unit = Some(Unit::Day);
            }
            Ft::Tz => {
                tmask = TIME_M;
                if s[1..].contains(&b':') && time_for_interval(&s[1..], &mut itm, range).is_ok() {
                    if s[0] == b'-' {
                        itm.usec = itm.usec.checked_neg().ok_or(Fail::Field)?;
                    }
                    if force_negative && itm.usec > 0 {
                        itm.usec = -itm.usec;
                    }
                    unit = Some(Unit::Day);
                } else {
                    as_number = true;
                }
            }
            Ft::Date | Ft::Number => {
                tmask = 0;
                as_number = true;
            }
            Ft::Str | Ft::Special => {
                tmask = 0;
                match delta_keyword(field) {
                    Some(Key::Ignore) => continue,
                    Some(Key::Units(u)) => unit = Some(u),
                    Some(Key::Ago) => {
                        is_before = true;
                        unit = Some(Unit::AfterAgo);
                    }
                    _ => return Err(Fail::Format),
                }
            }
        }
        if as_number {
            let u = *unit.get_or_insert(bare_unit(range));
            let (val, cp) = strtol(s, 0);
            let mut val = val.ok_or(Fail::Field)?;
            let mut fval;
            let mut u = u;
            match s.get(cp) {
                Some(b'-') => {
                    let (v2, cp2) = strtoint(s, cp + 1);
                    let mut v2 = v2.ok_or(Fail::Field)?;
                    if !(0..12).contains(&v2) {
                        return Err(Fail::Field);
                    }
                    if cp2 != s.len() {
                        return Err(Fail::Format);
                    }
                    u = Unit::Month;
                    unit = Some(u);
                    if s[0] == b'-' {
                        v2 = -v2;
                    }
                    val =
                        val.checked_mul(12).and_then(|v| v.checked_add(i64::from(v2))).ok_or(Fail::Field)?;
                    fval = 0.0;
                }
                Some(b'.') => {
                    fval = parse_fraction(s, cp)?;
                    if s[0] == b'-' {
                        fval = -fval;
                    }
                }
                None => fval = 0.0,
                Some(_) => return Err(Fail::Format),
            }
            if force_negative {
                if val > 0 {
                    val = -val;
                }
                if fval > 0.0 {
                    fval = -fval;
                }
            }
            tmask = match u {
                Unit::Microsec => {
                    check(adjust_micros(val, fval, 1, &mut itm))?;
                    M_MICROSEC
                }
                Unit::Millisec => {
                    check(adjust_micros(val, fval, 1000, &mut itm))?;
                    M_MILLISEC
                }
                Unit::Second => {
                    check(adjust_micros(val, fval, 1_000_000, &mut itm))?;
                    if fval == 0.0 {
                        M_SECOND
                    } else {
                        ALL_SECS_M
                    }
                }
                Unit::Minute => {
                    check(adjust_micros(val, fval, 60_000_000, &mut itm))?;
                    M_MINUTE
                }
                Unit::Hour => {
                    check(adjust_micros(val, fval, 3_600_000_000, &mut itm))?;
                    unit = Some(Unit::Day);
                    M_HOUR
                }
                Unit::Day => {
                    check(
                        adjust_days(val, 1, &mut itm) && adjust_fract_micros(fval, USECS_PER_DAY, &mut itm),
                    )?;
                    M_DAY
                }
                Unit::Week => {
                    check(adjust_days(val, 7, &mut itm) && adjust_fract_days(fval, 7, &mut itm))?;
                    M_WEEK
                }
                Unit::Month => {
                    check(adjust_months(val, &mut itm) && adjust_fract_days(fval, 30, &mut itm))?;
                    M_MONTH
                }
                Unit::Year => {
                    check(adjust_years(val, 1, &mut itm) && adjust_fract_years(fval, 1, &mut itm))?;
                    M_YEAR
                }
                Unit::Decade => {
                    check(adjust_years(val, 10, &mut itm) && adjust_fract_years(fval, 10, &mut itm))?;
                    M_DECADE
                }
                Unit::Century => {
                    check(adjust_years(val, 100, &mut itm) && adjust_fract_years(fval, 100, &mut itm))?;
                    M_CENTURY
                }
                Unit::Millennium => {
                    check(adjust_years(val, 1000, &mut itm) && adjust_fract_years(fval, 1000, &mut itm))?;
                    M_MILLENNIUM
                }
                _ => return Err(Fail::Format),
            };
        }
        if tmask & fmask != 0 {
            return Err(Fail::Format);
        }
        fmask |= tmask;
    }
    if fmask == 0 {
        return Err(Fail::Format);
    }
    if is_before {
        itm.usec = itm.usec.checked_neg().ok_or(Fail::Field)?;
        itm.mday = itm.mday.checked_neg().ok_or(Fail::Field)?;
        itm.mon = itm.mon.checked_neg().ok_or(Fail::Field)?;
        itm.year = itm.year.checked_neg().ok_or(Fail::Field)?;
    }
    Ok(itm)
}

/// An ISO 8601 number: integer and fraction parts, and where it ended.
fn iso_number(s: &[u8], at: usize) -> Res<(i64, f64, usize)> {
    match s.get(at) {
        Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'.' => {}
        _ => return Err(Fail::Format),
    }
    let (val, end) = strtod(s, at);
    if end == at {
        return Err(Fail::Format);
    }
    if val.is_nan() || !(-1.0e15..=1.0e15).contains(&val) {
        return Err(Fail::Field);
    }
    let ipart = if val >= 0.0 { val.floor() } else { -(-val).floor() } as i64;
    Ok((ipart, val - ipart as f64, end))
}

fn iso_integer_width(s: &[u8], at: usize) -> usize {
    let at = if s.get(at) == Some(&b'-') { at + 1 } else { at };
    s[at.min(s.len())..].iter().take_while(|b| b.is_ascii_digit()).count()
}

/// `P1Y2M3DT4H5M6S`, `P0001-02-03T04:05:06`, `P00010203T040506`.
fn decode_iso8601_interval(input: &str) -> Res<ItmIn> {
    let s = input.as_bytes();
    let mut itm = ItmIn::default();
    if s.len() < 2 || s[0] != b'P' {
        return Err(Fail::Format);
    }
    let mut i = 1;
    let mut datepart = true;
    let mut havefield = false;
    while i < s.len() {
        if s[i] == b'T' {
            datepart = false;
            havefield = false;
            i += 1;
            continue;
        }
        let start = i;
        let (val, fval, end) = iso_number(s, i)?;
        i = end;
        let unit = s.get(i).copied().unwrap_or(0);
        i += 1;
        if datepart {
            match unit {
                b'Y' => check(adjust_years(val, 1, &mut itm) && adjust_fract_years(fval, 1, &mut itm))?,
                b'M' => check(adjust_months(val, &mut itm) && adjust_fract_days(fval, 30, &mut itm))?,
                b'W' => check(adjust_days(val, 7, &mut itm) && adjust_fract_days(fval, 7, &mut itm))?,
                b'D' => check(
                    adjust_days(val, 1, &mut itm) && adjust_fract_micros(fval, USECS_PER_DAY, &mut itm),
                )?,
                b'T' | 0 | b'-' => {
                    if unit != b'-' && iso_integer_width(s, start) == 8 && !havefield {
                        check(
                            adjust_years(val / 10000, 1, &mut itm)
                                && adjust_months((val / 100) % 100, &mut itm)
                                && adjust_days(val % 100, 1, &mut itm)
                                && adjust_fract_micros(fval, USECS_PER_DAY, &mut itm),
                        )?;
                        if unit == 0 {
                            return Ok(itm);
                        }
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    if havefield {
                        return Err(Fail::Format);
                    }
                    check(adjust_years(val, 1, &mut itm) && adjust_fract_years(fval, 1, &mut itm))?;
                    if unit == 0 {
                        return Ok(itm);
                    }
                    if unit == b'T' {
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    let (val, fval, end) = iso_number(s, i)?;
                    i = end;
                    check(adjust_months(val, &mut itm) && adjust_fract_days(fval, 30, &mut itm))?;
                    match s.get(i) {
                        None => return Ok(itm),
                        Some(b'T') => {
                            datepart = false;
                            havefield = false;
                            i += 1;
                            continue;
                        }
                        Some(b'-') => i += 1,
                        Some(_) => return Err(Fail::Format),
                    }
                    let (val, fval, end) = iso_number(s, i)?;
                    i = end;
                    check(
                        adjust_days(val, 1, &mut itm) && adjust_fract_micros(fval, USECS_PER_DAY, &mut itm),
                    )?;
                    match s.get(i) {
                        None => return Ok(itm),
                        Some(b'T') => {
                            datepart = false;
                            havefield = false;
                            i += 1;
                            continue;
                        }
                        Some(_) => return Err(Fail::Format),
                    }
                }
                _ => return Err(Fail::Format),
            }
        } else {
            match unit {
                b'H' => check(adjust_micros(val, fval, 3_600_000_000, &mut itm))?,
                b'M' => check(adjust_micros(val, fval, 60_000_000, &mut itm))?,
                b'S' => check(adjust_micros(val, fval, 1_000_000, &mut itm))?,
                0 | b':' => {
                    if unit == 0 && iso_integer_width(s, start) == 6 && !havefield {
                        check(
                            adjust_micros(val / 10000, 0.0, 3_600_000_000, &mut itm)
                                && adjust_micros((val / 100) % 100, 0.0, 60_000_000, &mut itm)
                                && adjust_micros(val % 100, 0.0, 1_000_000, &mut itm)
                                && adjust_fract_micros(fval, 1, &mut itm),
                        )?;
                        return Ok(itm);
                    }
                    if havefield {
                        return Err(Fail::Format);
                    }
                    check(adjust_micros(val, fval, 3_600_000_000, &mut itm))?;
                    if unit == 0 {
                        return Ok(itm);
                    }
                    let (val, fval, end) = iso_number(s, i)?;
                    i = end;
                    check(adjust_micros(val, fval, 60_000_000, &mut itm))?;
                    match s.get(i) {
                        None => return Ok(itm),
                        Some(b':') => i += 1,
                        Some(_) => return Err(Fail::Format),
                    }
                    let (val, fval, end) = iso_number(s, i)?;
                    i = end;
                    check(adjust_micros(val, fval, 1_000_000, &mut itm))?;
                    if i == s.len() {
                        return Ok(itm);
                    }
                    return Err(Fail::Format);
                }
                _ => return Err(Fail::Format),
            }
        }
        havefield = true;
    }
    Ok(itm)
}

/// Parses interval input as PostgreSQL does under `style.interval`:
/// number–unit pairs (`1 year 2 months`, `1.5 weeks`, `3 hours ago`,
/// `@ 1 minute ago`), clock times (`1 day 02:03:04`), SQL-standard
/// `1-2` and `1 2:03:04` (a leading `-` negating every field under
/// `sql_standard`), and ISO 8601 (`P1Y2M3DT4H5M6S`, `P0001-02-03T04:05:06`).
pub fn parse_interval_styled(input: &str, style: &Style) -> Result<Interval, SqlError> {
    parse_interval_qualified(input, style, crate::interval::range::FULL)
}

/// Interval input under a qualifier (`INTERVAL '2' HOUR`, a column of
/// type `interval minute to second`): a number without a unit is in the
/// qualifier's last field. The fields below it are the caller's to drop
/// ([`Interval::adjust`]).
pub fn parse_interval_qualified(input: &str, style: &Style, range: u32) -> Result<Interval, SqlError> {
    let kind = "interval";
    let decoded = tokenize(input, 256).and_then(|fields| decode_interval(&fields, style.interval, range));
    let itm = match decoded {
        Err(Fail::Format) => decode_iso8601_interval(input),
        other => other,
    };
    let itm = itm.map_err(|f| match f {
        Fail::Field => report(Fail::IntervalField, input, kind),
        f => report(f, input, kind),
    })?;
    let months = i64::from(itm.year) * 12 + i64::from(itm.mon);
    let months = i32::try_from(months)
        .map_err(|_| SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range"))?;
    Ok(Interval { months, days: itm.mday, micros: itm.usec })
}
