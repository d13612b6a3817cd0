//! date, timestamp and timestamp with time zone in ISO text format.
//!
//! Dates count days from 2000-01-01 and timestamps microseconds from
//! 2000-01-01 00:00:00, PostgreSQL's epoch. Input accepts ISO 8601
//! (`YYYY-MM-DD`, and for timestamps `YYYY-MM-DD[ T]HH:MM[:SS[.ffffff]]`);
//! other styles answer 22007 until they are needed.

use snapscale_sqlstate::SqlState;

use super::zone::{self, Zone};
use crate::error::SqlError;

const USECS_PER_DAY: i64 = 86_400_000_000;

/// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
/// (Howard Hinnant's days_from_civil, restated).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

const EPOCH_2000: i64 = 10_957; // days from 1970-01-01 to 2000-01-01

/// The calendar date of a day counted from 2000-01-01.
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    civil_from_days(days + EPOCH_2000)
}

/// The day, counted from 2000-01-01, of a calendar date (`d` may run past
/// the month's end; it counts on).
pub fn day_number(y: i64, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, 1) - EPOCH_2000 + i64::from(d) - 1
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn parse_ymd(kind: &str, input: &str, text: &str) -> Result<i64, SqlError> {
    let bad = || {
        SqlError::new(
            SqlState::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type {kind}: \"{input}\""),
        )
    };
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    // ISO years have at least four digits; other styles are not read yet.
    if y.len() < 4 {
        return Err(bad());
    }
    let (y, m, d): (i64, u32, u32) =
        (y.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?, d.parse().map_err(|_| bad())?);
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        ));
    }
    Ok(days_from_civil(y, m, d) - EPOCH_2000)
}

/// Parses an ISO date. A time and a zone may follow (a timestamp's text):
/// PostgreSQL reads them and keeps the date.
pub fn parse_date(input: &str) -> Result<i32, SqlError> {
    let (days, _, _) = parse_datetime("date", input)?;
    i32::try_from(days).map_err(|_| {
        SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("date out of range: \"{input}\""))
    })
}

/// Parses an ISO timestamp. A zone suffix (`Z`, `+00`, `-05:30`, `UTC`,
/// `Europe/Paris`) is read and ignored, as PostgreSQL ignores it for
/// timestamp without time zone.
pub fn parse_timestamp(input: &str) -> Result<i64, SqlError> {
    let (days, usecs, _) = parse_datetime("timestamp", input)?;
    in_timestamp_range(days.checked_mul(USECS_PER_DAY).and_then(|d| d.checked_add(usecs)), input)
}

/// PostgreSQL's timestamp range, in microseconds since 2000-01-01:
/// 4714-11-24 00:00:00 BC up to, not including, 294277-01-01 00:00:00.
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// Whether `usecs` is a timestamp PostgreSQL can hold.
pub fn timestamp_in_range(usecs: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&usecs)
}

/// `usecs` if it is a timestamp PostgreSQL can hold, else its 22008.
fn in_timestamp_range(usecs: Option<i64>, input: &str) -> Result<i64, SqlError> {
    usecs.filter(|t| timestamp_in_range(*t)).ok_or_else(|| {
        SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("timestamp out of range: \"{input}\""))
    })
}

/// Parses an ISO timestamp with time zone: the instant, in microseconds
/// since 2000-01-01 UTC. A zone suffix says where the wall-clock time was
/// read; without one it is `zone`'s, the session's.
pub fn parse_timestamptz(input: &str, zone: Zone) -> Result<i64, SqlError> {
    let (days, usecs, suffix) = parse_datetime("timestamp with time zone", input)?;
    // The wall-clock time may lie a zone's offset outside the range; the
    // instant may not.
    let local = days
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(usecs))
        // A day's margin holds every zone's offset, and stays inside i64.
        .filter(|l| (MIN_TIMESTAMP - USECS_PER_DAY..END_TIMESTAMP + USECS_PER_DAY).contains(l));
    let Some(local) = local else { return in_timestamp_range(None, input) };
    in_timestamp_range(
        Some(match suffix {
            Suffix::Offset(east) => local - east,
            Suffix::Zone(z) => z.to_utc(local),
            Suffix::None => zone.to_utc(local),
        }),
        input,
    )
}

/// What follows the clock in date/time input.
enum Suffix {
    None,
    /// `Z`, `+05:30`, …: microseconds east of UTC.
    Offset(i64),
    /// A named zone (`UTC`, `Europe/Paris`, `EST`).
    Zone(Zone),
}

/// The clock part of `time` and the zone written after it. `Ok(None)` if
/// what follows the clock is malformed (the caller's syntax error); a
/// zone name that names no zone or an offset beyond 15:59:59 are errors of
/// their own, as in PostgreSQL.
fn split_zone<'t>(time: &'t str, input: &str) -> Result<Option<(&'t str, Suffix)>, SqlError> {
    let t = time.trim();
    let (clock, last) = t.rsplit_once(' ').map_or(("", t), |(c, l)| (c.trim_end(), l));
    if last.starts_with(|c: char| c.is_ascii_alphabetic()) {
        if last.len() == 1 && last.eq_ignore_ascii_case("z") {
            return Ok(Some((clock, Suffix::Offset(0))));
        }
        return match Zone::named(last) {
            Some(z) => Ok(Some((clock, Suffix::Zone(z)))),
            None => Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("time zone \"{}\" not recognized", last.to_ascii_lowercase()),
            )),
        };
    }
    if let Some(clock) = t.strip_suffix(['Z', 'z']) {
        return Ok(Some((clock.trim_end(), Suffix::Offset(0))));
    }
    let Some(at) = t.find(['+', '-']) else { return Ok(Some((t, Suffix::None))) };
    let (clock, zone) = t.split_at(at);
    let Some(secs) = zone::parse_offset(zone) else { return Ok(None) };
    if secs.abs() > zone::MAX_OFFSET_SECS {
        return Err(SqlError::new(
            SqlState::INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
            format!("time zone displacement out of range: \"{input}\""),
        ));
    }
    Ok(Some((clock.trim_end(), Suffix::Offset(i64::from(secs) * 1_000_000))))
}

/// Days since 2000-01-01, microseconds into the day, and the zone written
/// after the time.
fn parse_datetime(kind: &str, input: &str) -> Result<(i64, i64, Suffix), SqlError> {
    let t = input.trim();
    let bad = || {
        SqlError::new(
            SqlState::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type {kind}: \"{input}\""),
        )
    };
    let (date, (time, suffix)) = match t.split_once([' ', 'T']) {
        Some((_, tm)) if tm.trim().is_empty() => return Err(bad()),
        Some((d, tm)) => (d, split_zone(tm, input)?.ok_or_else(bad)?),
        None => (t, ("", Suffix::None)),
    };
    let days = parse_ymd(kind, input, date)?;
    if time.is_empty() {
        return Ok((days, 0, suffix));
    }
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let fields: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&fields.len()) {
        return Err(bad());
    }
    let num = |s: &str| s.parse::<i64>().map_err(|_| bad());
    let (h, mi, s) = (num(fields[0])?, num(fields[1])?, if fields.len() == 3 { num(fields[2])? } else { 0 });
    if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..60).contains(&s) {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        ));
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // Microsecond precision, rounded like PostgreSQL.
    let mut micros = 0i64;
    for (i, b) in frac.bytes().take(7).enumerate() {
        let digit = i64::from(b - b'0');
        if i < 6 {
            micros = micros * 10 + digit;
        } else if digit >= 5 {
            micros += 1;
        }
    }
    for _ in frac.len().min(6)..6 {
        micros *= 10;
    }
    Ok((days, ((h * 60 + mi) * 60 + s) * 1_000_000 + micros, suffix))
}

/// Formats a date as ISO `YYYY-MM-DD`.
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days) + EPOCH_2000);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Formats a timestamp as ISO `YYYY-MM-DD HH:MM:SS[.ffffff]` (trailing
/// zeros of the fraction dropped, as PostgreSQL does).
pub fn format_timestamp(usecs: i64) -> String {
    let days = usecs.div_euclid(USECS_PER_DAY);
    let rem = usecs.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = civil_from_days(days + EPOCH_2000);
    let secs = rem / 1_000_000;
    let micros = rem % 1_000_000;
    let mut s = format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if micros != 0 {
        let frac = format!("{micros:06}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s
}

/// Formats an instant as PostgreSQL shows a timestamp with time zone: the
/// wall-clock time in `zone` and that zone's offset then (`+01`,
/// `-03:30`, `-04:56:02` for local mean time).
pub fn format_timestamptz(usecs: i64, zone: Zone) -> String {
    let offset = zone.offset_at(usecs);
    let mut s = format_timestamp(usecs.saturating_add(offset));
    s.push_str(&zone::offset_text((offset / 1_000_000) as i32));
    s
}
