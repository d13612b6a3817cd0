//! Date/time templates for output: `to_char` of timestamp, timestamp with
//! time zone and interval.
//!
//! A value is first broken into PostgreSQL's calendar fields (year 0 is
//! 1 BC; an interval's fields are its years, months, days and clock, with
//! a day of year approximated at 30-day months), then each template node
//! prints one field. Patterns that make no sense for an interval (names,
//! eras, zones) fail as they do in PostgreSQL.

use snapscale_sqlstate::SqlState;

use super::calendar::{date2isoweek, date2isoyear, date2isoyearday, date2j, j2date, POSTGRES_EPOCH_JDATE};
use super::names::{
    ordinal_suffix, DAYS_FULL, DAYS_SHORT, MONTHS_FULL, MONTHS_SHORT, RM_MONTHS_LOWER, RM_MONTHS_UPPER,
};
use super::template::{parse_datetime, DtKey, Node, S_FM, S_TH_LOWER, S_TH_UPPER, S_TM};
use crate::zone::Zone;
use crate::SqlError;

const USECS_PER_DAY: i64 = 86_400_000_000;

/// The fields a template prints.
#[derive(Debug, Default)]
struct Fields {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    /// Microseconds.
    fsec: i64,
    /// 0 = Sunday.
    wday: i64,
    yday: i64,
    /// Seconds east of UTC.
    gmtoff: i64,
    /// The zone abbreviation (`TZ`), if the value has a zone.
    tzn: Option<String>,
}

/// A zone abbreviation when the tz database has only a number for it:
/// `+05`, `-0330`.
fn numeric_abbreviation(secs: i64) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.abs();
    let (h, m) = (a / 3600, a / 60 % 60);
    if m == 0 {
        format!("{sign}{h:02}")
    } else {
        format!("{sign}{h:02}{m:02}")
    }
}

/// The abbreviation PostgreSQL prints for `zone` at instant `utc`.
fn abbreviation(zone: Zone, utc: i64) -> String {
    use chrono::TimeZone;
    use chrono_tz::OffsetName;
    let offset = zone.offset_at(utc) / 1_000_000;
    match zone {
        Zone::Fixed(_) => crate::zone::offset_text(offset as i32),
        Zone::Named(tz) => {
            // Beyond chrono's calendar, name the zone as at its edge.
            const EDGE: i64 = 8_000_000_000_000_000_000;
            let unix = utc.clamp(-EDGE, EDGE).saturating_add(946_684_800_000_000);
            let name = chrono::DateTime::from_timestamp_micros(unix)
                .map(|t| tz.offset_from_utc_datetime(&t.naive_utc()))
                .and_then(|o| o.abbreviation().map(str::to_owned));
            name.unwrap_or_else(|| numeric_abbreviation(offset))
        }
    }
}

/// `to_char(timestamp, text)` when `zone` is `None` (`micros` is then the
/// wall-clock time), `to_char(timestamptz, text)` in the session's `zone`
/// otherwise (`micros` is then the instant, UTC). `None` is SQL NULL: an
/// empty template or an infinite timestamp (`i64::MIN`, `i64::MAX`).
pub fn to_char_timestamp(micros: i64, fmt: &str, zone: Option<Zone>) -> Result<Option<String>, SqlError> {
    if fmt.is_empty() || micros == i64::MIN || micros == i64::MAX {
        return Ok(None);
    }
    let (local, gmtoff, tzn) = match zone {
        Some(z) => (z.local(micros), z.offset_at(micros) / 1_000_000, Some(abbreviation(z, micros))),
        None => (micros, 0, None),
    };
    let date = local.div_euclid(USECS_PER_DAY) + POSTGRES_EPOCH_JDATE;
    let time = local.rem_euclid(USECS_PER_DAY);
    if !(0..=i64::from(i32::MAX)).contains(&date) {
        return Err(SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range"));
    }
    let (year, mon, mday) = j2date(date);
    let secs = time / 1_000_000;
    let f = Fields {
        year,
        mon,
        mday,
        hour: secs / 3600,
        min: secs / 60 % 60,
        sec: secs % 60,
        fsec: time % 1_000_000,
        wday: (date + 1) % 7,
        yday: date - date2j(year, 1, 1) + 1,
        gmtoff,
        tzn,
    };
    render(fmt, &f, false).map(Some)
}

/// `to_char(interval, text)` for an interval of `months`, `days` and
/// `micros`. `None` is SQL NULL (an empty template).
pub fn to_char_interval(months: i32, days: i32, micros: i64, fmt: &str) -> Result<Option<String>, SqlError> {
    if fmt.is_empty() {
        return Ok(None);
    }
    let year = i64::from(months / 12);
    let mon = i64::from(months % 12);
    let hour = micros / 3_600_000_000;
    let rest = micros - hour * 3_600_000_000;
    let min = rest / 60_000_000;
    let rest = rest - min * 60_000_000;
    let sec = rest / 1_000_000;
    let f = Fields {
        year,
        mon,
        mday: i64::from(days),
        hour,
        min,
        sec,
        fsec: rest - sec * 1_000_000,
        wday: 0,
        yday: (year * 12 + mon) * 30 + i64::from(days),
        gmtoff: 0,
        tzn: None,
    };
    render(fmt, &f, true).map(Some)
}

/// PostgreSQL's year for display: BC years count from 1 (not for
/// intervals, whose years are a count).
fn adjust_year(year: i64, is_interval: bool) -> i64 {
    if is_interval || year > 0 {
        year
    } else {
        -(year - 1)
    }
}

fn interval_error() -> SqlError {
    SqlError::new(SqlState::INVALID_DATETIME_FORMAT, "invalid format specification for an interval value")
        .with_hint("Intervals are not tied to specific calendar dates.")
}

/// `%0*d`: `v` zero-padded to `width` (the sign counts toward it).
fn padded(v: i64, width: usize) -> String {
    format!("{v:0width$}")
}

/// Width 0 under FM, else `pos` for non-negative values and `neg` below.
fn width(fm: bool, v: i64, pos: usize, neg: usize) -> usize {
    if fm {
        0
    } else if v >= 0 {
        pos
    } else {
        neg
    }
}

/// `s` padded on the right to nine characters unless FM.
fn name9(s: &str, fm: bool) -> String {
    if fm {
        s.to_owned()
    } else {
        format!("{s:<9}")
    }
}

fn initcap(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Case of a name as the keyword asks for it.
#[derive(Clone, Copy)]
enum Case {
    Upper,
    Cap,
    Lower,
}

fn cased(s: &str, case: Case) -> String {
    match case {
        Case::Upper => s.to_uppercase(),
        Case::Cap => initcap(s),
        Case::Lower => s.to_lowercase(),
    }
}

fn render(fmt: &str, f: &Fields, is_interval: bool) -> Result<String, SqlError> {
    let nodes = parse_datetime(fmt);
    let mut out = String::new();
    let check = |bad: bool| if bad { Err(interval_error()) } else { Ok(()) };
    for node in &nodes {
        let (kw, suffix) = match node {
            Node::Action(kw, s) => (*kw, *s),
            Node::Char(c) | Node::Separator(c) | Node::Space(c) => {
                out.push_str(c);
                continue;
            }
        };
        let fm = suffix & S_FM != 0;
        let tm = suffix & S_TM != 0;
        let pm = f.hour % 24 >= 12;
        let bc = f.year <= 0;
        // Numbers may take an ordinal suffix; text never does.
        let mut num: Option<String> = None;
        match kw.key {
            DtKey::AMUpperDots | DtKey::PMUpperDots => out.push_str(if pm { "P.M." } else { "A.M." }),
            DtKey::AMUpper | DtKey::PMUpper => out.push_str(if pm { "PM" } else { "AM" }),
            DtKey::AMLowerDots | DtKey::PMLowerDots => out.push_str(if pm { "p.m." } else { "a.m." }),
            DtKey::AMLower | DtKey::PMLower => out.push_str(if pm { "pm" } else { "am" }),
            DtKey::Hh | DtKey::Hh12 => {
                let h = if f.hour % 12 == 0 { 12 } else { f.hour % 12 };
                num = Some(padded(h, width(fm, f.hour, 2, 3)));
            }
            DtKey::Hh24 => num = Some(padded(f.hour, width(fm, f.hour, 2, 3))),
            DtKey::Mi => num = Some(padded(f.min, width(fm, f.min, 2, 3))),
            DtKey::Ss => num = Some(padded(f.sec, width(fm, f.sec, 2, 3))),
            DtKey::Ff(n) => {
                let n = u32::from(n);
                num = Some(padded(f.fsec / 10i64.pow(6 - n), n as usize));
            }
            DtKey::Ms => num = Some(padded(f.fsec / 1000, 3)),
            DtKey::Us => num = Some(padded(f.fsec, 6)),
            DtKey::Ssss => num = Some((f.hour * 3600 + f.min * 60 + f.sec).to_string()),
            DtKey::TzLower => {
                check(is_interval)?;
                if let Some(t) = &f.tzn {
                    out.push_str(&t.to_ascii_lowercase());
                }
            }
            DtKey::TzUpper => {
                check(is_interval)?;
                if let Some(t) = &f.tzn {
                    out.push_str(t);
                }
            }
            DtKey::Tzh => {
                check(is_interval)?;
                let sign = if f.gmtoff >= 0 { '+' } else { '-' };
                out.push_str(&format!("{sign}{:02}", f.gmtoff.abs() / 3600));
            }
            DtKey::Tzm => {
                check(is_interval)?;
                out.push_str(&format!("{:02}", f.gmtoff.abs() % 3600 / 60));
            }
            DtKey::Of => {
                check(is_interval)?;
                let sign = if f.gmtoff >= 0 { '+' } else { '-' };
                let a = f.gmtoff.abs();
                out.push_str(&format!("{sign}{}", padded(a / 3600, if fm { 0 } else { 2 })));
                if a % 3600 != 0 {
                    out.push_str(&format!(":{:02}", a % 3600 / 60));
                }
            }
            DtKey::ADUpperDots | DtKey::BCUpperDots => {
                check(is_interval)?;
                out.push_str(if bc { "B.C." } else { "A.D." });
            }
            DtKey::ADUpper | DtKey::BCUpper => {
                check(is_interval)?;
                out.push_str(if bc { "BC" } else { "AD" });
            }
            DtKey::ADLowerDots | DtKey::BCLowerDots => {
                check(is_interval)?;
                out.push_str(if bc { "b.c." } else { "a.d." });
            }
            DtKey::ADLower | DtKey::BCLower => {
                check(is_interval)?;
                out.push_str(if bc { "bc" } else { "ad" });
            }
            DtKey::MonthUpper | DtKey::MonthCap | DtKey::MonthLower => {
                check(is_interval)?;
                if f.mon == 0 {
                    continue;
                }
                let case = match kw.key {
                    DtKey::MonthUpper => Case::Upper,
                    DtKey::MonthCap => Case::Cap,
                    _ => Case::Lower,
                };
                let name = cased(MONTHS_FULL[(f.mon - 1) as usize], case);
                out.push_str(&if tm { name } else { name9(&name, fm) });
            }
            DtKey::MonUpper | DtKey::MonCap | DtKey::MonLower => {
                check(is_interval)?;
                if f.mon == 0 {
                    continue;
                }
                let case = match kw.key {
                    DtKey::MonUpper => Case::Upper,
                    DtKey::MonCap => Case::Cap,
                    _ => Case::Lower,
                };
                out.push_str(&cased(MONTHS_SHORT[(f.mon - 1) as usize], case));
            }
            DtKey::Mm => num = Some(padded(f.mon, width(fm, f.mon, 2, 3))),
            DtKey::DayUpper | DtKey::DayCap | DtKey::DayLower => {
                check(is_interval)?;
                let case = match kw.key {
                    DtKey::DayUpper => Case::Upper,
                    DtKey::DayCap => Case::Cap,
                    _ => Case::Lower,
                };
                let name = cased(DAYS_FULL[f.wday.rem_euclid(7) as usize], case);
                out.push_str(&if tm { name } else { name9(&name, fm) });
            }
            DtKey::DyUpper | DtKey::DyCap | DtKey::DyLower => {
                check(is_interval)?;
                let case = match kw.key {
                    DtKey::DyUpper => Case::Upper,
                    DtKey::DyCap => Case::Cap,
                    _ => Case::Lower,
                };
                out.push_str(&cased(DAYS_SHORT[f.wday.rem_euclid(7) as usize], case));
            }
            DtKey::Ddd => num = Some(padded(f.yday, if fm { 0 } else { 3 })),
            DtKey::Iddd => {
                num = Some(padded(date2isoyearday(f.year, f.mon, f.mday), if fm { 0 } else { 3 }));
            }
            DtKey::Dd => num = Some(padded(f.mday, if fm { 0 } else { 2 })),
            DtKey::D => {
                check(is_interval)?;
                num = Some((f.wday + 1).to_string());
            }
            DtKey::Id => {
                check(is_interval)?;
                num = Some(if f.wday == 0 { 7 } else { f.wday }.to_string());
            }
            DtKey::Ww => num = Some(padded((f.yday - 1) / 7 + 1, if fm { 0 } else { 2 })),
            DtKey::Iw => num = Some(padded(date2isoweek(f.year, f.mon, f.mday), if fm { 0 } else { 2 })),
            DtKey::Q => {
                if f.mon == 0 {
                    continue;
                }
                num = Some(((f.mon - 1) / 3 + 1).to_string());
            }
            DtKey::CC => {
                let i = if is_interval {
                    f.year / 100
                } else if f.year > 0 {
                    (f.year - 1) / 100 + 1
                } else {
                    f.year / 100 - 1
                };
                num =
                    Some(if (-99..=99).contains(&i) { padded(i, width(fm, i, 2, 3)) } else { i.to_string() });
            }
            DtKey::YCommaYyy => {
                let y = adjust_year(f.year, is_interval);
                let i = y / 1000;
                num = Some(format!("{i},{}", padded(y - i * 1000, 3)));
            }
            DtKey::Yyyy
            | DtKey::Iyyy
            | DtKey::Yyy
            | DtKey::Iyy
            | DtKey::Yy
            | DtKey::Iy
            | DtKey::Y
            | DtKey::I => {
                let y = adjust_year(f.year, is_interval);
                let v = match kw.key {
                    DtKey::Iyyy | DtKey::Iyy | DtKey::Iy | DtKey::I => {
                        adjust_year(date2isoyear(f.year, f.mon, f.mday), is_interval)
                    }
                    _ => y,
                };
                num = Some(match kw.key {
                    DtKey::Yyyy | DtKey::Iyyy => padded(v, width(fm, y, 4, 5)),
                    DtKey::Yyy | DtKey::Iyy => padded(v % 1000, width(fm, y, 3, 4)),
                    DtKey::Yy | DtKey::Iy => padded(v % 100, width(fm, y, 2, 3)),
                    _ => (v % 10).to_string(),
                });
            }
            DtKey::RmUpper | DtKey::RmLower => {
                if f.mon == 0 && f.year == 0 {
                    continue;
                }
                let idx = if f.mon == 0 {
                    if f.year >= 0 {
                        0
                    } else {
                        11
                    }
                } else if f.mon < 0 {
                    -(f.mon + 1)
                } else {
                    12 - f.mon
                };
                let table = if kw.key == DtKey::RmUpper { &RM_MONTHS_UPPER } else { &RM_MONTHS_LOWER };
                let s = table[idx.clamp(0, 11) as usize];
                out.push_str(&if fm { s.to_owned() } else { format!("{s:<4}") });
            }
            DtKey::W => num = Some(((f.mday - 1) / 7 + 1).to_string()),
            DtKey::J => num = Some(date2j(f.year, f.mon, f.mday).to_string()),
            DtKey::Fx => {}
        }
        if let Some(n) = num {
            out.push_str(&n);
            if suffix & (S_TH_UPPER | S_TH_LOWER) != 0 {
                out.push_str(ordinal_suffix(n.as_bytes(), suffix & S_TH_UPPER != 0)?);
            }
        }
    }
    Ok(out)
}
