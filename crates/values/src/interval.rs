//! interval: a span of days and microseconds, in PostgreSQL's default
//! (`IntervalStyle = postgres`) text format.
//!
//! PostgreSQL keeps months, days and microseconds apart because a month
//! and a day have no fixed length under time zones. snapscale has no time
//! zones, so a day is always 24 hours; it keeps days apart from the time
//! only so that `'1 day'` and `'24 hours'` print as written (they compare
//! equal, as in PostgreSQL). Months and years are refused with 0A000 rather
//! than approximated.

use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;

/// An interval value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Whole days.
    pub days: i32,
    /// The time part, in microseconds (may exceed a day: `'25 hours'`).
    pub micros: i64,
}

impl Interval {
    /// The span as microseconds (a day = 24 hours), for comparison and
    /// timestamp arithmetic.
    pub fn total_micros(self) -> i128 {
        i128::from(self.days) * i128::from(USECS_PER_DAY) + i128::from(self.micros)
    }

    /// The difference of two timestamps, whole days split out as
    /// PostgreSQL's `timestamp - timestamp` does (hours below 24).
    pub fn between(later: i64, earlier: i64) -> Result<Interval, SqlError> {
        let diff = later.checked_sub(earlier).ok_or_else(out_of_range)?;
        let days = i32::try_from(diff / USECS_PER_DAY).map_err(|_| out_of_range())?;
        Ok(Interval { days, micros: diff % USECS_PER_DAY })
    }

    /// `self + other` (component-wise), or `self - other` if `negate`.
    pub fn add(self, other: Interval, negate: bool) -> Result<Interval, SqlError> {
        let (d, m) = if negate {
            (other.days.checked_neg(), other.micros.checked_neg())
        } else {
            (Some(other.days), Some(other.micros))
        };
        let days = d.and_then(|d| self.days.checked_add(d)).ok_or_else(out_of_range)?;
        let micros = m.and_then(|m| self.micros.checked_add(m)).ok_or_else(out_of_range)?;
        Ok(Interval { days, micros })
    }

    /// A timestamp moved by this interval (backwards if `negate`).
    pub fn shift(self, timestamp: i64, negate: bool) -> Result<i64, SqlError> {
        let span = if negate { -self.total_micros() } else { self.total_micros() };
        i64::try_from(i128::from(timestamp) + span)
            .map_err(|_| SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
    }

    /// Adds (or with `negate` subtracts) the interval to an instant whose
    /// wall clock runs in `zone`: the days move the wall clock, so a day
    /// across a daylight-saving change keeps the time of day, and the rest
    /// is elapsed time — PostgreSQL's timestamptz + interval.
    pub fn shift_in(self, instant: i64, negate: bool, zone: super::Zone) -> Result<i64, SqlError> {
        let (days, micros) =
            if negate { (-i64::from(self.days), -self.micros) } else { (i64::from(self.days), self.micros) };
        let overflow = || SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range");
        let moved = if days == 0 {
            instant
        } else {
            let local =
                zone.local(instant).checked_add(days.checked_mul(86_400_000_000).ok_or_else(overflow)?);
            zone.to_utc(local.ok_or_else(overflow)?)
        };
        moved.checked_add(micros).ok_or_else(overflow)
    }

    /// Orders as PostgreSQL does: by the whole span.
    pub fn cmp_span(self, other: Interval) -> Ordering {
        self.total_micros().cmp(&other.total_micros())
    }
}

fn out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

fn bad_input(input: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_DATETIME_FORMAT,
        format!("invalid input syntax for type interval: \"{input}\""),
    )
}

/// Formats as PostgreSQL: `3 days`, `1 day 02:03:04.5`, `-00:00:01`,
/// `00:00:00` for zero.
pub fn format_interval(v: Interval) -> String {
    let mut out = String::new();
    if v.days != 0 {
        out.push_str(&format!("{} day{}", v.days, if v.days == 1 { "" } else { "s" }));
    }
    if v.micros != 0 || v.days == 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        // A negative time after positive days keeps its own sign, as in
        // PostgreSQL ("1 day -02:00:00").
        if v.micros < 0 {
            out.push('-');
        }
        let m = v.micros.unsigned_abs();
        let secs = m / USECS_PER_SEC as u64;
        out.push_str(&format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60));
        let frac = m % USECS_PER_SEC as u64;
        if frac != 0 {
            let digits = format!("{frac:06}");
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
    }
    out
}

/// Parses PostgreSQL's interval input: number–unit pairs (`1 day`,
/// `5 minutes`, `-3 hours`, `1.5 seconds`) and an optional `[-]HH:MM[:SS[.f]]`
/// time, with an optional trailing `ago`. Months and years answer 0A000.
pub fn parse_interval(input: &str) -> Result<Interval, SqlError> {
    let mut tokens: Vec<&str> = input.split_whitespace().collect();
    if tokens.is_empty() {
        return Err(bad_input(input));
    }
    let ago = tokens.last().is_some_and(|t| t.eq_ignore_ascii_case("ago"));
    if ago {
        tokens.pop();
    }
    let mut days: i64 = 0;
    let mut micros: i128 = 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        if token.contains(':') {
            micros += parse_clock(token).ok_or_else(|| bad_input(input))?;
            i += 1;
            continue;
        }
        // A number glued to its unit ("5min") or followed by it.
        let split = token.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(token.len());
        let (number, mut unit) = token.split_at(split);
        if unit.is_empty() {
            i += 1;
            unit = tokens.get(i).copied().unwrap_or("second");
        }
        let n: f64 = number.parse().map_err(|_| bad_input(input))?;
        if !n.is_finite() {
            return Err(bad_input(input));
        }
        let per = match unit.to_ascii_lowercase().as_str() {
            "us" | "usec" | "usecs" | "microsecond" | "microseconds" => 1.0,
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1e3,
            "s" | "sec" | "secs" | "second" | "seconds" => 1e6,
            "m" | "min" | "mins" | "minute" | "minutes" => 60e6,
            "h" | "hour" | "hours" => 3600e6,
            "d" | "day" | "days" => {
                if n.fract() == 0.0 {
                    days += n as i64;
                    i += 1;
                    continue;
                }
                86_400e6
            }
            "w" | "week" | "weeks" => {
                days += (n * 7.0) as i64;
                micros += ((n * 7.0).fract() * 86_400e6).round() as i128;
                i += 1;
                continue;
            }
            "mon" | "mons" | "month" | "months" | "y" | "year" | "years" => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "interval months and years are not supported",
                ))
            }
            _ => return Err(bad_input(input)),
        };
        micros += (n * per).round() as i128;
        i += 1;
    }
    let sign = if ago { -1 } else { 1 };
    let days = i32::try_from(days * sign).map_err(|_| out_of_range())?;
    let micros = i64::try_from(micros * i128::from(sign)).map_err(|_| out_of_range())?;
    Ok(Interval { days, micros })
}

/// `[-]HH:MM[:SS[.ffffff]]` as microseconds.
fn parse_clock(token: &str) -> Option<i128> {
    let (negative, body) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    let parts: Vec<&str> = body.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let hours: i128 = parts[0].parse().ok()?;
    let minutes: i128 = parts[1].parse().ok()?;
    let seconds: f64 = parts.get(2).map_or(Some(0.0), |s| s.parse().ok())?;
    if !(0..60).contains(&minutes) || !(0.0..60.0).contains(&seconds) || parts[0].starts_with('-') {
        return None;
    }
    let total = (hours * 3600 + minutes * 60) * 1_000_000 + (seconds * 1e6).round() as i128;
    Some(if negative { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(input: &str) -> String {
        format_interval(parse_interval(input).unwrap())
    }

    #[test]
    fn prints_as_postgres_does() {
        assert_eq!(text("1 day"), "1 day");
        assert_eq!(text("3 days 4 hours"), "3 days 04:00:00");
        assert_eq!(text("24 hours"), "24:00:00");
        assert_eq!(text("1.5 seconds"), "00:00:01.5");
        assert_eq!(text("-1 second"), "-00:00:01");
        assert_eq!(text("1 day -2 hours"), "1 day -02:00:00");
        assert_eq!(text("01:02:03.25"), "01:02:03.25");
        assert_eq!(text("5 minutes ago"), "-00:05:00");
        assert_eq!(text("2 weeks"), "14 days");
        assert_eq!(text("0 seconds"), "00:00:00");
        assert_eq!(text("-1 days"), "-1 days");
    }

    #[test]
    fn refuses_bad_input_and_months() {
        assert_eq!(parse_interval("soon").unwrap_err().code, SqlState::INVALID_DATETIME_FORMAT);
        assert_eq!(parse_interval("").unwrap_err().code, SqlState::INVALID_DATETIME_FORMAT);
        assert_eq!(parse_interval("1:99").unwrap_err().code, SqlState::INVALID_DATETIME_FORMAT);
        assert_eq!(parse_interval("1 month").unwrap_err().code, SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(parse_interval("99999999999 days").unwrap_err().code, SqlState::DATETIME_FIELD_OVERFLOW);
    }

    #[test]
    fn differences_split_whole_days_and_compare_by_span() {
        let d = Interval::between(USECS_PER_DAY + 3_600_000_000, 0).unwrap();
        assert_eq!(d, Interval { days: 1, micros: 3_600_000_000 });
        assert_eq!(format_interval(Interval::between(0, 1_500_000).unwrap()), "-00:00:01.5");
        let a = parse_interval("1 day").unwrap();
        let b = parse_interval("24 hours").unwrap();
        assert_eq!(a.cmp_span(b), Ordering::Equal);
        assert_eq!(a.shift(0, false).unwrap(), USECS_PER_DAY);
        assert_eq!(a.add(b, true).unwrap().total_micros(), 0);
    }
}
