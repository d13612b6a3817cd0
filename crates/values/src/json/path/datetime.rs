//! `.datetime()`: a subset of PostgreSQL's to_timestamp template engine
//! in its strict (SQL/JSON) mode, the ISO formats `.datetime()` tries
//! without a template, comparison between datetime types (with
//! PostgreSQL's errors for casts that would need a time zone), and the
//! ISO text jsonb output gives datetime items.
//!
//! Supported template fields: YYYY, YYY, YY, Y, MM, DD, HH24, HH12, HH,
//! MI, SS, MS, US, FF1-FF6, TZH, TZM, AM/PM; separators and quoted text.
//! Month and day names, ordinal suffixes, Julian days and the other
//! to_timestamp fields are not supported (they give "invalid datetime
//! format separator").

use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use crate::datetime::{civil_date, day_number};
use crate::SqlError;

const USECS_PER_DAY: i64 = 86_400_000_000;

/// A datetime item. Offsets are seconds east of UTC.
#[derive(Clone, Debug)]
pub(crate) enum DateTime {
    Date(i64),
    Time(i64),
    TimeTz(i64, i32),
    Timestamp(i64),
    /// UTC microseconds since 2000-01-01 and the offset it was given in.
    TimestampTz(i64, i32),
}

impl DateTime {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            DateTime::Date(_) => "date",
            DateTime::Time(_) => "time without time zone",
            DateTime::TimeTz(..) => "time with time zone",
            DateTime::Timestamp(_) => "timestamp without time zone",
            DateTime::TimestampTz(..) => "timestamp with time zone",
        }
    }

    /// The text jsonb output gives the item (ISO 8601 with `T`).
    pub(crate) fn to_iso(&self) -> String {
        match self {
            DateTime::Date(d) => date_text(*d),
            DateTime::Time(t) => time_text(*t),
            DateTime::TimeTz(t, z) => format!("{}{}", time_text(*t), zone_text(*z)),
            DateTime::Timestamp(ts) => ts_text(*ts),
            DateTime::TimestampTz(ts, z) => {
                format!("{}{}", ts_text(ts + i64::from(*z) * 1_000_000), zone_text(*z))
            }
        }
    }
}

fn date_text(d: i64) -> String {
    let (y, m, day) = civil_date(d);
    if y <= 0 {
        format!("{:04}-{m:02}-{day:02} BC", 1 - y)
    } else {
        format!("{y:04}-{m:02}-{day:02}")
    }
}

fn time_text(t: i64) -> String {
    let secs = t / 1_000_000;
    let us = t % 1_000_000;
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if us != 0 {
        let f = format!("{us:06}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

fn ts_text(ts: i64) -> String {
    let d = ts.div_euclid(USECS_PER_DAY);
    let t = ts.rem_euclid(USECS_PER_DAY);
    let date = date_text(d);
    match date.strip_suffix(" BC") {
        Some(dd) => format!("{dd}T{} BC", time_text(t)),
        None => format!("{date}T{}", time_text(t)),
    }
}

fn zone_text(z: i32) -> String {
    let sign = if z < 0 { '-' } else { '+' };
    let a = z.unsigned_abs();
    let mut s = format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60);
    if !a.is_multiple_of(60) {
        s.push_str(&format!(":{:02}", a % 60));
    }
    s
}

fn no_tz(from: &str, to: &str) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("cannot convert value from {from} to {to} without time zone usage"),
    )
    .with_hint("Use *_tz() function for time zone support.")
}

/// compareDatetime without time zone support: an order, None for types
/// that don't compare, or PostgreSQL's error for casts needing a zone.
pub(crate) fn compare(a: &DateTime, b: &DateTime) -> Result<Option<Ordering>, SqlError> {
    use DateTime::*;
    let timetz_key = |t: i64, z: i32| t - i64::from(z) * 1_000_000;
    Ok(Some(match (a, b) {
        (Date(x), Date(y)) => x.cmp(y),
        (Date(x), Timestamp(y)) => (i128::from(*x) * i128::from(USECS_PER_DAY)).cmp(&i128::from(*y)),
        (Timestamp(x), Date(y)) => i128::from(*x).cmp(&(i128::from(*y) * i128::from(USECS_PER_DAY))),
        (Date(_), TimestampTz(..)) | (TimestampTz(..), Date(_)) => return Err(no_tz("date", "timestamptz")),
        (Timestamp(_), TimestampTz(..)) | (TimestampTz(..), Timestamp(_)) => {
            return Err(no_tz("timestamp", "timestamptz"))
        }
        (Time(x), Time(y)) => x.cmp(y),
        (Time(_), TimeTz(..)) | (TimeTz(..), Time(_)) => return Err(no_tz("time", "timetz")),
        (TimeTz(x, zx), TimeTz(y, zy)) => {
            timetz_key(*x, *zx).cmp(&timetz_key(*y, *zy)).then_with(|| (-zx).cmp(&-zy))
        }
        (Timestamp(x), Timestamp(y)) => x.cmp(y),
        (TimestampTz(x, _), TimestampTz(y, _)) => x.cmp(y),
        _ => return Ok(None),
    }))
}

fn fmt_err(msg: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_DATETIME_FORMAT, msg)
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Field(&'static str),
    Sep(char),
    Space,
    Lit(String),
}

const FIELDS: &[&str] = &[
    "HH24", "HH12", "HH", "MI", "SS", "MS", "US", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "TZH", "TZM",
    "YYYY", "YYY", "YY", "Y", "MM", "DD", "AM", "PM",
];

fn compile(t: &str) -> Result<Vec<Node>, SqlError> {
    let mut out = Vec::new();
    let mut i = 0;
    let b = t.as_bytes();
    while i < b.len() {
        let rest = &t[i..];
        if let Some(f) =
            FIELDS.iter().find(|f| rest.len() >= f.len() && rest[..f.len()].eq_ignore_ascii_case(f))
        {
            out.push(Node::Field(f));
            i += f.len();
            continue;
        }
        let c = rest.chars().next().expect("char");
        if c == '"' {
            let mut lit = String::new();
            let mut j = i + 1;
            let mut chars = t[j..].chars();
            while let Some(ch) = chars.next() {
                j += ch.len_utf8();
                if ch == '"' {
                    break;
                }
                if ch == '\\' {
                    if let Some(n) = chars.next() {
                        j += n.len_utf8();
                        lit.push(n);
                    }
                    continue;
                }
                lit.push(ch);
            }
            out.push(Node::Lit(lit));
            i = j;
            continue;
        }
        if c == ' ' {
            out.push(Node::Space);
        } else if c.is_ascii_punctuation() {
            out.push(Node::Sep(c));
        } else {
            return Err(fmt_err(format!("invalid datetime format separator: \"{c}\"")));
        }
        i += c.len_utf8();
    }
    Ok(out)
}

fn field_len(f: &str) -> usize {
    match f {
        "YYYY" => 4,
        "YYY" => 3,
        "Y" => 1,
        "MS" => 3,
        "US" => 6,
        _ if f.starts_with("FF") => f[2..].parse().unwrap_or(6),
        _ => 2,
    }
}

#[derive(Default)]
struct Parts {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    hour: Option<i64>,
    h12: bool,
    pm: Option<bool>,
    min: Option<i64>,
    sec: Option<i64>,
    us: Option<i64>,
    tzh: Option<i64>,
    tzm: Option<i64>,
    tzsign: i64,
}

/// Parses `s` with a to_timestamp template in strict mode.
pub(crate) fn parse_template(s: &str, template: &str) -> Result<DateTime, SqlError> {
    let nodes = compile(template)?;
    let b = s.as_bytes();
    let mut p = 0usize;
    let mut parts = Parts { tzsign: 1, ..Parts::default() };
    for (ni, n) in nodes.iter().enumerate() {
        if p >= b.len() {
            return Err(fmt_err("input string is too short for datetime format"));
        }
        match n {
            Node::Space | Node::Sep(_) => {
                let want = if let Node::Sep(c) = n { *c as u8 } else { b' ' };
                if b[p] != want {
                    return Err(fmt_err(format!("unmatched format separator \"{}\"", want as char)));
                }
                p += 1;
            }
            Node::Lit(l) => {
                for ch in l.chars() {
                    if !s[p..].starts_with(ch) {
                        return Err(fmt_err(format!("unmatched format character \"{ch}\"")));
                    }
                    p += ch.len_utf8();
                }
            }
            Node::Field(f @ ("AM" | "PM")) => {
                let r = s[p..].get(..2).unwrap_or("");
                let pm = if r.eq_ignore_ascii_case("am") {
                    false
                } else if r.eq_ignore_ascii_case("pm") {
                    true
                } else {
                    return Err(fmt_err(format!("invalid value \"{r}\" for \"{f}\"")).with_detail(
                        "The given value did not match any of the allowed values for this field.",
                    ));
                };
                parts.pm = Some(pm);
                p += 2;
            }
            Node::Field(f) => {
                if *f == "TZH" && matches!(b[p], b'+' | b'-' | b' ') {
                    if b[p] == b'-' {
                        parts.tzsign = -1;
                    }
                    p += 1;
                }
                let len = field_len(f);
                let greedy =
                    !matches!(nodes.get(ni + 1), Some(Node::Field(f)) if !matches!(*f, "TZH" | "AM" | "PM"));
                let avail = &s[p..];
                let digits = avail.bytes().take_while(u8::is_ascii_digit).count();
                let take = if greedy { digits } else { digits.min(len) };
                if take == 0 {
                    let shown: String = avail.chars().take(len).collect();
                    return Err(fmt_err(format!("invalid value \"{shown}\" for \"{f}\""))
                        .with_detail("Value must be an integer."));
                }
                if !greedy && take < len {
                    return Err(fmt_err(format!("source string too short for \"{f}\" formatting field"))
                        .with_detail(format!("Field requires {len} characters, but only {take} remain."))
                        .with_hint(
                            "If your source string is not fixed-width, try using the \"FM\" modifier.",
                        ));
                }
                let v: i64 = avail[..take]
                    .parse()
                    .map_err(|_| fmt_err(format!("value for \"{f}\" in source string is out of range")))?;
                p += take;
                match *f {
                    "YYYY" | "YYY" | "YY" | "Y" => parts.year = Some(v),
                    "MM" => parts.month = Some(v),
                    "DD" => parts.day = Some(v),
                    "HH24" => parts.hour = Some(v),
                    "HH12" | "HH" => {
                        parts.hour = Some(v);
                        parts.h12 = true;
                    }
                    "MI" => parts.min = Some(v),
                    "SS" => parts.sec = Some(v),
                    "MS" => parts.us = Some(v * 10i64.pow(3u32.saturating_sub(take as u32)) * 1000),
                    "TZH" => parts.tzh = Some(v),
                    "TZM" => parts.tzm = Some(v),
                    _ => parts.us = Some(v * 10i64.pow(6u32.saturating_sub(take as u32))),
                }
            }
        }
    }
    if p < b.len() {
        return Err(fmt_err("trailing characters remain in input string after datetime format"));
    }
    build(s, &parts)
}

fn out_of_range(s: &str) -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("date/time field value out of range: \"{s}\""))
}

fn build(s: &str, p: &Parts) -> Result<DateTime, SqlError> {
    let has_date = p.year.is_some() || p.month.is_some() || p.day.is_some();
    let has_time = p.hour.is_some() || p.min.is_some() || p.sec.is_some() || p.us.is_some() || p.pm.is_some();
    let has_tz = p.tzh.is_some() || p.tzm.is_some();
    let mut hour = p.hour.unwrap_or(0);
    if p.h12 || p.pm.is_some() {
        if !(1..=12).contains(&hour) && p.hour.is_some() {
            return Err(fmt_err(format!("hour \"{hour}\" is invalid for the 12-hour clock"))
                .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        if p.pm == Some(true) && hour < 12 {
            hour += 12;
        } else if p.pm != Some(true) && hour == 12 {
            hour = 0;
        }
    }
    let (min, sec, us) = (p.min.unwrap_or(0), p.sec.unwrap_or(0), p.us.unwrap_or(0));
    if hour > 24 || min > 59 || sec > 60 || (hour == 24 && (min > 0 || sec > 0 || us > 0)) {
        return Err(out_of_range(s));
    }
    let time = ((hour * 60 + min) * 60 + sec) * 1_000_000 + us;
    let zone = p.tzsign * (p.tzh.unwrap_or(0) * 3600 + p.tzm.unwrap_or(0) * 60);
    if zone.abs() > 15 * 3600 + 59 * 60 {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid input syntax for type time zone: \"{s}\""),
        ));
    }
    let zone = zone as i32;
    let date = if has_date {
        let y = p.year.unwrap_or(1);
        let m = p.month.unwrap_or(1);
        let d = p.day.unwrap_or(1);
        if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) || y == 0 {
            return Err(out_of_range(s));
        }
        Some(day_number(y, m as u32, d as u32))
    } else {
        None
    };
    let ts = |d: i64| {
        d.checked_mul(USECS_PER_DAY)
            .and_then(|v| v.checked_add(time))
            .filter(|v| crate::datetime::timestamp_in_range(*v))
            .ok_or_else(|| SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
    };
    Ok(match (date, has_time, has_tz) {
        (Some(d), false, false) => DateTime::Date(d),
        (Some(d), _, false) => DateTime::Timestamp(ts(d)?),
        (Some(d), _, true) => DateTime::TimestampTz(ts(d)? - i64::from(zone) * 1_000_000, zone),
        (None, _, true) => DateTime::TimeTz(time, zone),
        (None, _, false) => DateTime::Time(time),
    })
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

const AUTO: &[&str] = &[
    "yyyy-mm-dd",
    "HH24:MI:SS.USTZH:TZM",
    "HH24:MI:SS.USTZH",
    "HH24:MI:SSTZH:TZM",
    "HH24:MI:SSTZH",
    "HH24:MI:SS.US",
    "HH24:MI:SS",
    "yyyy-mm-dd HH24:MI:SS.USTZH:TZM",
    "yyyy-mm-dd HH24:MI:SS.USTZH",
    "yyyy-mm-dd HH24:MI:SSTZH:TZM",
    "yyyy-mm-dd HH24:MI:SSTZH",
    "yyyy-mm-dd\"T\"HH24:MI:SS.USTZH:TZM",
    "yyyy-mm-dd\"T\"HH24:MI:SS.USTZH",
    "yyyy-mm-dd\"T\"HH24:MI:SSTZH:TZM",
    "yyyy-mm-dd\"T\"HH24:MI:SSTZH",
    "yyyy-mm-dd HH24:MI:SS.US",
    "yyyy-mm-dd HH24:MI:SS",
    "yyyy-mm-dd\"T\"HH24:MI:SS.US",
    "yyyy-mm-dd\"T\"HH24:MI:SS",
];

/// `.datetime()` without a template: the first ISO format that fits.
pub(crate) fn parse_auto(s: &str) -> Result<DateTime, SqlError> {
    AUTO.iter().find_map(|t| parse_template(s, t).ok()).ok_or_else(|| {
        SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_SQL_JSON_DATETIME_FUNCTION,
            format!("datetime format is not recognized: \"{s}\""),
        )
        .with_hint("Use a datetime template argument to specify the input data format.")
    })
}
