//! Date/time output in every DateStyle and IntervalStyle, byte for byte
//! as PostgreSQL 15 prints it.

use std::fmt::Write;

use super::{civil_date, USECS_PER_DAY};
use crate::interval::Interval;
use crate::style::{DateOrder, DateStyle, IntervalStyle, Style};
use crate::zone::Zone;

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// A year as printed: `-(y - 1)` for the years before 1 AD (the caller
/// adds ` BC`), at least four digits.
fn push_year(out: &mut String, y: i64) {
    let shown = if y > 0 { y } else { 1 - y };
    let _ = write!(out, "{shown:04}");
}

/// Seconds with the fraction's trailing zeros dropped; `fill` pads the
/// whole seconds to two digits.
fn push_seconds(out: &mut String, sec: i64, usec: i64, fill: bool) {
    if fill {
        let _ = write!(out, "{:02}", sec.unsigned_abs());
    } else {
        let _ = write!(out, "{}", sec.unsigned_abs());
    }
    if usec != 0 {
        let digits = format!("{:06}", usec.unsigned_abs());
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// An offset (seconds east) as `+05`, `-03:30`, `+05:30:15`.
pub(crate) fn push_offset(out: &mut String, east: i32) {
    out.push_str(&crate::zone::offset_text(east));
}

fn push_date(out: &mut String, y: i64, m: u32, d: u32, style: &Style) {
    match style.date {
        DateStyle::Iso => {
            push_year(out, y);
            let _ = write!(out, "-{m:02}-{d:02}");
        }
        DateStyle::Sql | DateStyle::Postgres => {
            let sep = if style.date == DateStyle::Sql { '/' } else { '-' };
            if style.order == DateOrder::Dmy {
                let _ = write!(out, "{d:02}{sep}{m:02}{sep}");
            } else {
                let _ = write!(out, "{m:02}{sep}{d:02}{sep}");
            }
            push_year(out, y);
        }
        DateStyle::German => {
            let _ = write!(out, "{d:02}.{m:02}.");
            push_year(out, y);
        }
    }
}

/// Formats a date (days since 2000-01-01) in `style`'s DateStyle:
/// `2020-01-31`, `01/31/2020`, `01-31-2020`, `31.01.2020`, with ` BC`
/// for years before 1 AD; `i32::MIN`/`i32::MAX` are `-infinity` and
/// `infinity`.
pub fn format_date_styled(days: i32, style: &Style) -> String {
    match days {
        i32::MIN => return "-infinity".into(),
        i32::MAX => return "infinity".into(),
        _ => {}
    }
    let (y, m, d) = civil_date(i64::from(days));
    let mut out = String::with_capacity(16);
    push_date(&mut out, y, m, d, style);
    if y <= 0 {
        out.push_str(" BC");
    }
    out
}

/// The zone part of a timestamptz: `None` for timestamp.
struct ZonePart {
    east: i32,
    abbrev: Option<String>,
}

fn encode_datetime(local: i64, zone: Option<ZonePart>, style: &Style) -> String {
    let days = local.div_euclid(USECS_PER_DAY);
    let time = local.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = civil_date(days);
    let (hour, min, sec, usec) =
        (time / 3_600_000_000, time / 60_000_000 % 60, time / 1_000_000 % 60, time % 1_000_000);
    let mut out = String::with_capacity(32);
    let clock = |out: &mut String| {
        let _ = write!(out, "{hour:02}:{min:02}:");
        push_seconds(out, sec, usec, true);
    };
    match style.date {
        DateStyle::Iso => {
            push_date(&mut out, y, m, d, style);
            out.push(' ');
            clock(&mut out);
            if let Some(z) = &zone {
                push_offset(&mut out, z.east);
            }
        }
        DateStyle::Sql | DateStyle::German => {
            if style.date == DateStyle::Sql {
                let sep = '/';
                if style.order == DateOrder::Dmy {
                    let _ = write!(out, "{d:02}{sep}{m:02}{sep}");
                } else {
                    let _ = write!(out, "{m:02}{sep}{d:02}{sep}");
                }
                push_year(&mut out, y);
            } else {
                push_date(&mut out, y, m, d, style);
            }
            out.push(' ');
            clock(&mut out);
            if let Some(z) = &zone {
                match &z.abbrev {
                    Some(a) => {
                        out.push(' ');
                        out.push_str(a);
                    }
                    None => push_offset(&mut out, z.east),
                }
            }
        }
        DateStyle::Postgres => {
            out.push_str(WEEKDAYS[(days + 6).rem_euclid(7) as usize]);
            out.push(' ');
            let mon = MONTHS[m as usize - 1];
            if style.order == DateOrder::Dmy {
                let _ = write!(out, "{d:02} {mon}");
            } else {
                let _ = write!(out, "{mon} {d:02}");
            }
            out.push(' ');
            clock(&mut out);
            out.push(' ');
            push_year(&mut out, y);
            if let Some(z) = &zone {
                out.push(' ');
                match &z.abbrev {
                    Some(a) => out.push_str(a),
                    None => push_offset(&mut out, z.east),
                }
            }
        }
    }
    if y <= 0 {
        out.push_str(" BC");
    }
    out
}

/// Formats a timestamp (microseconds since 2000-01-01) in `style`'s
/// DateStyle: `2020-01-31 10:00:00`, `01/31/2020 10:00:00`,
/// `Fri Jan 31 10:00:00 2020`, `31.01.2020 10:00:00`; `i64::MIN` and
/// `i64::MAX` are `-infinity` and `infinity`.
pub fn format_timestamp_styled(micros: i64, style: &Style) -> String {
    match micros {
        i64::MIN => "-infinity".into(),
        i64::MAX => "infinity".into(),
        _ => encode_datetime(micros, None, style),
    }
}

/// Formats an instant (microseconds since 2000-01-01 UTC) on the wall
/// clock of `style.zone`: ISO with the numeric offset
/// (`2020-01-01 00:00:00-08`), the other styles with the zone's
/// abbreviation (`Wed Jan 01 00:00:00 2020 PST`, `01/01/2020 00:00:00 PST`)
/// or, where it has none, the offset.
pub fn format_timestamptz_styled(utc: i64, style: &Style) -> String {
    match utc {
        i64::MIN => "-infinity".into(),
        i64::MAX => "infinity".into(),
        _ => {
            let offset = style.zone.offset_at(utc);
            let abbrev = if style.date == DateStyle::Iso { None } else { zone_abbrev(style.zone, utc) };
            encode_datetime(
                utc.saturating_add(offset),
                Some(ZonePart { east: (offset / 1_000_000) as i32, abbrev }),
                style,
            )
        }
    }
}

fn zone_abbrev(zone: Zone, utc: i64) -> Option<String> {
    zone.abbreviation_at(utc)
}

/// A time of day (microseconds since midnight, up to 24:00:00) as
/// `HH:MM:SS[.ffffff]`, the same in every DateStyle.
pub fn format_time(micros: i64) -> String {
    let mut out = String::with_capacity(16);
    let _ = write!(out, "{:02}:{:02}:", micros / 3_600_000_000, micros / 60_000_000 % 60);
    push_seconds(&mut out, micros / 1_000_000 % 60, micros % 1_000_000, true);
    out
}

/// A time with time zone: the time and the offset, `zone_west` counting
/// seconds *west* of UTC as PostgreSQL stores it (`10:00:00-08` for
/// 28800).
pub fn format_timetz(micros: i64, zone_west: i32) -> String {
    let mut out = format_time(micros);
    push_offset(&mut out, -zone_west);
    out
}

/// Formats an interval in `style`'s IntervalStyle: `postgres`
/// (`1 year 2 mons -3 days +04:05:06`), `postgres_verbose`
/// (`@ 1 year 2 mons -3 days 4 hours 5 mins 6 secs`), `sql_standard`
/// (`+1-2 -3 +4:05:06`) or `iso_8601` (`P1Y2M-3DT4H5M6S`).
pub fn format_interval_styled(v: &Interval, style: &Style) -> String {
    let year = i64::from(v.months / 12);
    let mon = i64::from(v.months % 12);
    let mday = i64::from(v.days);
    let hour = v.micros / 3_600_000_000;
    let min = v.micros / 60_000_000 % 60;
    let sec = v.micros / 1_000_000 % 60;
    let usec = v.micros % 1_000_000;
    let mut out = String::with_capacity(32);
    match style.interval {
        IntervalStyle::SqlStandard => sql_standard(&mut out, [year, mon, mday, hour, min, sec, usec]),
        IntervalStyle::Iso8601 => {
            if [year, mon, mday, hour, min, sec, usec].iter().all(|f| *f == 0) {
                return "PT0S".into();
            }
            out.push('P');
            for (value, unit) in [(year, 'Y'), (mon, 'M'), (mday, 'D')] {
                if value != 0 {
                    let _ = write!(out, "{value}{unit}");
                }
            }
            if hour != 0 || min != 0 || sec != 0 || usec != 0 {
                out.push('T');
            }
            for (value, unit) in [(hour, 'H'), (min, 'M')] {
                if value != 0 {
                    let _ = write!(out, "{value}{unit}");
                }
            }
            if sec != 0 || usec != 0 {
                if sec < 0 || usec < 0 {
                    out.push('-');
                }
                push_seconds(&mut out, sec, usec, false);
                out.push('S');
            }
        }
        IntervalStyle::Postgres => {
            let (mut is_zero, mut is_before) = (true, false);
            for (value, unit) in [(year, "year"), (mon, "mon"), (mday, "day")] {
                if value == 0 {
                    continue;
                }
                let _ = write!(
                    out,
                    "{}{}{value} {unit}{}",
                    if is_zero { "" } else { " " },
                    if is_before && value > 0 { "+" } else { "" },
                    if value != 1 { "s" } else { "" }
                );
                is_before = value < 0;
                is_zero = false;
            }
            if is_zero || hour != 0 || min != 0 || sec != 0 || usec != 0 {
                let minus = hour < 0 || min < 0 || sec < 0 || usec < 0;
                let _ = write!(
                    out,
                    "{}{}{:02}:{:02}:",
                    if is_zero { "" } else { " " },
                    if minus {
                        "-"
                    } else if is_before {
                        "+"
                    } else {
                        ""
                    },
                    hour.unsigned_abs(),
                    min.unsigned_abs()
                );
                push_seconds(&mut out, sec, usec, true);
            }
        }
        IntervalStyle::PostgresVerbose => {
            out.push('@');
            let (mut is_zero, mut is_before) = (true, false);
            for (value, unit) in [(year, "year"), (mon, "mon"), (mday, "day"), (hour, "hour"), (min, "min")] {
                if value == 0 {
                    continue;
                }
                let mut value = value;
                if is_zero {
                    is_before = value < 0;
                    value = value.abs();
                } else if is_before {
                    value = -value;
                }
                let _ = write!(out, " {value} {unit}{}", if value == 1 { "" } else { "s" });
                is_zero = false;
            }
            if sec != 0 || usec != 0 {
                out.push(' ');
                if sec < 0 || (sec == 0 && usec < 0) {
                    if is_zero {
                        is_before = true;
                    } else if !is_before {
                        out.push('-');
                    }
                } else if is_before {
                    out.push('-');
                }
                push_seconds(&mut out, sec, usec, false);
                let _ = write!(out, " sec{}", if sec.abs() != 1 || usec != 0 { "s" } else { "" });
                is_zero = false;
            }
            if is_zero {
                out.push_str(" 0");
            }
            if is_before {
                out.push_str(" ago");
            }
        }
    }
    out
}

fn sql_standard(out: &mut String, fields: [i64; 7]) {
    let [mut year, mut mon, mut mday, mut hour, mut min, mut sec, mut usec] = fields;
    let has_negative = fields.iter().any(|f| *f < 0);
    let has_positive = fields.iter().any(|f| *f > 0);
    let has_year_month = year != 0 || mon != 0;
    let has_day_time = mday != 0 || hour != 0 || min != 0 || sec != 0 || usec != 0;
    let has_day = mday != 0;
    let standard = !((has_negative && has_positive) || (has_year_month && has_day_time));
    if has_negative && standard {
        out.push('-');
        (year, mon, mday, hour, min, sec, usec) = (-year, -mon, -mday, -hour, -min, -sec, -usec);
    }
    if !has_negative && !has_positive {
        out.push('0');
    } else if !standard {
        let year_sign = if year < 0 || mon < 0 { '-' } else { '+' };
        let day_sign = if mday < 0 { '-' } else { '+' };
        let sec_sign = if hour < 0 || min < 0 || sec < 0 || usec < 0 { '-' } else { '+' };
        let _ = write!(
            out,
            "{year_sign}{}-{} {day_sign}{} {sec_sign}{}:{:02}:",
            year.unsigned_abs(),
            mon.unsigned_abs(),
            mday.unsigned_abs(),
            hour.unsigned_abs(),
            min.unsigned_abs()
        );
        push_seconds(out, sec, usec, true);
    } else if has_year_month {
        let _ = write!(out, "{year}-{mon}");
    } else if has_day {
        let _ = write!(out, "{mday} {hour}:{min:02}:");
        push_seconds(out, sec, usec, true);
    } else {
        let _ = write!(out, "{hour}:{min:02}:");
        push_seconds(out, sec, usec, true);
    }
}
