//! Time zones: the session's TimeZone, zones named in timestamp input and
//! after AT TIME ZONE.
//!
//! A zone is either a fixed offset or a zone of the tz database (through
//! chrono-tz, whose rules change the offset over time). Three spellings
//! reach this module, and PostgreSQL reads them differently:
//!
//! - a bare number (`SET TIME ZONE 5`, `'-3.5'`) is hours *east* of UTC;
//! - a tz database name (`Europe/Paris`, `utc`) is matched without regard
//!   to case;
//! - anything else is read as a POSIX zone, `NAME±hh[:mm[:ss]]` or just
//!   `±hh[:mm]`, whose offset counts hours *west* of UTC (`UTC+3` is three
//!   hours behind UTC, as in POSIX `TZ`).
//!
//! Timestamp input also accepts the common abbreviations (`EST`, `CEST`,
//! …) as fixed offsets, as PostgreSQL's default abbreviation set does; the
//! TimeZone setting does not, as in PostgreSQL.

use std::collections::HashMap;
use std::sync::OnceLock;

use chrono::{DateTime, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;

/// Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const UNIX_TO_PG_EPOCH_USECS: i64 = 946_684_800_000_000;

/// A time zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A fixed offset, seconds east of UTC.
    Fixed(i32),
    /// A zone of the tz database.
    Named(Tz),
}

mod abbrevs;

/// A time zone abbreviation of PostgreSQL's `Default` set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Abbreviation {
    /// Seconds east of UTC (today's, for a dynamic one).
    pub east: i32,
    /// Whether it names daylight-saving time.
    pub dst: bool,
    /// The zone a dynamic abbreviation is resolved in, at the date given.
    pub zone: Option<Zone>,
}

/// Looks up an abbreviation (`lower` already in lower case): `pst`,
/// `cest`, `z`, `msk`, ….
pub(crate) fn abbreviation(lower: &str) -> Option<Abbreviation> {
    let i = abbrevs::ABBREVIATIONS.binary_search_by(|(a, ..)| (*a).cmp(lower)).ok()?;
    let (_, east, dst, zone) = abbrevs::ABBREVIATIONS[i];
    let zone = zone.and_then(|z| by_lower_name().get(&z.to_ascii_lowercase())).map(|tz| Zone::Named(*tz));
    Some(Abbreviation { east, dst, zone })
}

/// The tz database's names by lower case (chrono-tz matches them exactly).
fn by_lower_name() -> &'static HashMap<String, Tz> {
    static MAP: OnceLock<HashMap<String, Tz>> = OnceLock::new();
    MAP.get_or_init(|| {
        chrono_tz::TZ_VARIANTS.iter().map(|tz| (tz.name().to_ascii_lowercase(), *tz)).collect()
    })
}

/// `±hh[:mm[:ss]]` or `±hhmm` as seconds, the sign as written; `None` if
/// it is not one. Hours up to 15, as PostgreSQL allows.
pub(super) fn parse_offset(text: &str) -> Option<i32> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if parts.len() > 3 || !parts.iter().all(|p| digits(p)) {
        return None;
    }
    let (h, m) = match parts[0].len() {
        1 | 2 => (parts[0], parts.get(1).copied().unwrap_or("0")),
        4 if parts.len() == 1 => parts[0].split_at(2),
        _ => return None,
    };
    if parts.len() > 1 && parts[1..].iter().any(|p| p.len() != 2) {
        return None;
    }
    let n = |s: &str| s.parse::<i32>().ok();
    let (h, m, s) = (n(h)?, n(m)?, parts.get(2).map_or(Some(0), |s| n(s))?);
    if m >= 60 || s >= 60 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + s))
}

/// PostgreSQL's largest offset is 15:59:59.
pub(super) const MAX_OFFSET_SECS: i32 = 16 * 3600 - 1;

impl Zone {
    /// UTC.
    pub const UTC: Zone = Zone::Fixed(0);

    /// A zone named in timestamp input or after AT TIME ZONE: a tz
    /// database name, an abbreviation, or a POSIX zone.
    pub fn named(name: &str) -> Option<Zone> {
        let lower = name.trim().to_ascii_lowercase();
        // An abbreviation first, then a zone name, as PostgreSQL looks.
        if let Some(a) = abbreviation(&lower) {
            return Some(a.zone.unwrap_or(Zone::Fixed(a.east)));
        }
        Zone::full_name(name)
    }

    /// A tz database name or a POSIX zone (not an abbreviation).
    pub(crate) fn full_name(name: &str) -> Option<Zone> {
        let lower = name.trim().to_ascii_lowercase();
        if let Some(tz) = by_lower_name().get(&lower) {
            return Some(Zone::Named(*tz));
        }
        posix(name.trim())
    }

    /// The TimeZone setting: the zone and how SHOW prints it, or `None` if
    /// the value names no zone.
    pub fn setting(value: &str) -> Option<(Zone, String)> {
        let v = value.trim();
        // A number is hours east of UTC, shown as the POSIX zone that
        // means the same: `<+05>-05`.
        if let Ok(hours) = v.parse::<f64>() {
            let secs = (hours * 3600.0).round();
            if !hours.is_finite() || secs.abs() > f64::from(MAX_OFFSET_SECS) {
                return None;
            }
            let secs = secs as i32;
            let name = offset_text(secs);
            let posix = offset_text(-secs);
            return Some((Zone::Fixed(secs), format!("<{name}>{posix}")));
        }
        if let Some(tz) = by_lower_name().get(&v.to_ascii_lowercase()) {
            return Some((Zone::Named(*tz), tz.name().to_owned()));
        }
        posix(v).map(|z| (z, v.to_owned()))
    }

    /// The offset east of UTC, in microseconds, at the instant `utc`
    /// (microseconds since 2000-01-01 UTC).
    pub fn offset_at(self, utc: i64) -> i64 {
        match self {
            Zone::Fixed(secs) => i64::from(secs) * 1_000_000,
            Zone::Named(tz) => match naive(in_chrono_range(utc)) {
                Some(t) => i64::from(tz.offset_from_utc_datetime(&t).fix().local_minus_utc()) * 1_000_000,
                // Beyond chrono's calendar (±262 000 years): the zone's
                // rules say nothing there; read it as UTC.
                None => 0,
            },
        }
    }

    /// The zone's abbreviation at the instant `utc` (`PST`, `CEST`), as
    /// Postgres, SQL and German DateStyles print it; `None` where the tz
    /// database has only a numeric one, or the zone is a fixed offset
    /// (then the offset is printed).
    pub fn abbreviation_at(self, utc: i64) -> Option<String> {
        use chrono_tz::OffsetName;
        match self {
            Zone::Fixed(secs) => Some(offset_text(secs)),
            Zone::Named(tz) => {
                let t = naive(in_chrono_range(utc))?;
                let off = tz.offset_from_utc_datetime(&t);
                match off.abbreviation() {
                    Some(a) => Some(a.to_owned()),
                    // The tz database's numeric abbreviations: `+11`, `+0530`.
                    None => {
                        let east = off.fix().local_minus_utc();
                        let a = east.unsigned_abs();
                        let sign = if east < 0 { '-' } else { '+' };
                        Some(match (a / 60 % 60, a % 60) {
                            (0, 0) => format!("{sign}{:02}", a / 3600),
                            (m, 0) => format!("{sign}{:02}{m:02}", a / 3600),
                            (m, s) => format!("{sign}{:02}{m:02}{s:02}", a / 3600),
                        })
                    }
                }
            }
        }
    }

    /// What a dynamic abbreviation (`msk` resolved in Europe/Moscow) means
    /// at the wall-clock time `local`: seconds east, from the zone's time
    /// type in effect at the instant `local` means in the zone if it has
    /// that abbreviation, or the latest earlier one (looked for a day at a
    /// time, up to two years back).
    pub(crate) fn abbreviation_offset(self, lower: &str, local: i64) -> Option<i32> {
        use chrono_tz::OffsetName;
        let Zone::Named(tz) = self else { return None };
        // Probed at the instant the wall-clock time means in the zone.
        let utc = self.to_utc(local);
        (0..731i64).find_map(|k| {
            let t = naive(in_chrono_range(utc.checked_sub(k * 86_400_000_000)?))?;
            let off = tz.offset_from_utc_datetime(&t);
            off.abbreviation().filter(|a| a.eq_ignore_ascii_case(lower)).map(|_| off.fix().local_minus_utc())
        })
    }

    /// The zone's offset (seconds east) if it has only ever had one (UTC,
    /// `Etc/GMT+3`, a fixed offset): what a timetz can take without a date.
    pub(crate) fn single_offset(self) -> Option<i32> {
        const YEAR: i64 = 365 * 86_400_000_000;
        let first = self.offset_at(0);
        let probes = [-200 * YEAR, -100 * YEAR, -50 * YEAR, -20 * YEAR, 20 * YEAR, 20 * YEAR + YEAR / 2];
        probes.iter().all(|t| self.offset_at(*t) == first).then_some((first / 1_000_000) as i32)
    }

    /// The wall-clock time in this zone at the instant `utc`.
    pub fn local(self, utc: i64) -> i64 {
        utc.saturating_add(self.offset_at(utc))
    }

    /// The instant whose wall-clock time in this zone is `local`. A time
    /// skipped by a jump forward is read with the offset before the jump
    /// (02:30 on the spring-forward night becomes 03:30 summer time); a
    /// time that occurs twice takes the offset after the jump back — both
    /// as PostgreSQL resolves them.
    pub fn to_utc(self, local: i64) -> i64 {
        let offset = match self {
            Zone::Fixed(secs) => i64::from(secs) * 1_000_000,
            Zone::Named(tz) => match naive(in_chrono_range(local)).map(|t| tz.offset_from_local_datetime(&t))
            {
                Some(chrono::LocalResult::Single(o)) => i64::from(o.fix().local_minus_utc()) * 1_000_000,
                Some(chrono::LocalResult::Ambiguous(_, later)) => {
                    i64::from(later.fix().local_minus_utc()) * 1_000_000
                }
                // In a gap: the offset a day earlier is the one before the
                // jump (zones do not change twice in a day).
                Some(chrono::LocalResult::None) => self.offset_at(local.saturating_sub(86_400_000_000)),
                None => 0,
            },
        };
        local.saturating_sub(offset)
    }
}

/// A POSIX zone without daylight-saving rules: `NAME±hh[:mm[:ss]]`,
/// `<NAME>±hh…` or `±hh[:mm]`, the offset counting west.
fn posix(v: &str) -> Option<Zone> {
    let rest = if let Some(inner) = v.strip_prefix('<') {
        &inner[inner.find('>')? + 1..]
    } else {
        let letters = v.bytes().take_while(u8::is_ascii_alphabetic).count();
        if letters != 0 && letters < 3 {
            return None;
        }
        &v[letters..]
    };
    if rest.is_empty() {
        return None;
    }
    // POSIX allows the sign to be left off (west).
    let secs =
        if rest.starts_with(['+', '-']) { parse_offset(rest)? } else { parse_offset(&format!("+{rest}"))? };
    (secs.abs() <= MAX_OFFSET_SECS).then_some(Zone::Fixed(-secs))
}

/// An offset as PostgreSQL prints it: `+05`, `-03:30`, `-04:56:02`.
pub(super) fn offset_text(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    match (m, s) {
        (0, 0) => format!("{sign}{h:02}"),
        (_, 0) => format!("{sign}{h:02}:{m:02}"),
        _ => format!("{sign}{h:02}:{m:02}:{s:02}"),
    }
}

/// chrono-tz's transitions end with 2099; later years follow the zones'
/// current rules, which depend only on the weekday of January 1 and
/// whether the year is a leap year: moves such an instant to the same
/// date of a year among 2072–2099 that matches on both.
fn in_chrono_range(usecs: i64) -> i64 {
    const DAY: i64 = 86_400_000_000;
    let days = usecs.div_euclid(DAY);
    let (y, _, _) = crate::calendar::civil_date(days);
    if y < 2100 {
        return usecs;
    }
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let jan1 = |y: i64| crate::calendar::day_number(y, 1, 1);
    let weekday = |d: i64| d.rem_euclid(7);
    let like =
        (2072..2100).find(|&c| leap(c) == leap(y) && weekday(jan1(c)) == weekday(jan1(y))).unwrap_or(2072);
    usecs + (jan1(like) - jan1(y)) * DAY
}

/// Microseconds since 2000-01-01 as chrono's date-time, `None` outside its
/// range.
fn naive(usecs: i64) -> Option<NaiveDateTime> {
    let unix = usecs.checked_add(UNIX_TO_PG_EPOCH_USECS)?;
    DateTime::from_timestamp_micros(unix).map(|t| t.naive_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2024-03-10 02:30 (days from 2000-01-01 × a day + the time).
    fn at(days: i64, h: i64, m: i64) -> i64 {
        (days * 86_400 + h * 3600 + m * 60) * 1_000_000
    }

    #[test]
    fn settings_are_read_as_postgresql_reads_them() {
        let (z, shown) = Zone::setting("america/new_york").unwrap();
        assert_eq!(shown, "America/New_York");
        assert!(matches!(z, Zone::Named(_)));
        assert_eq!(Zone::setting("5").unwrap(), (Zone::Fixed(5 * 3600), "<+05>-05".into()));
        assert_eq!(Zone::setting("-3.5").unwrap(), (Zone::Fixed(-12_600), "<-03:30>+03:30".into()));
        assert_eq!(Zone::setting("UTC+3").unwrap(), (Zone::Fixed(-3 * 3600), "UTC+3".into()));
        assert_eq!(Zone::setting("+05:30").unwrap().0, Zone::Fixed(-19_800));
        assert_eq!(Zone::setting("utc").unwrap().1, "UTC");
        for bad in ["foo", "Mars/Olympus", "UT+3", "99", "+16", ""] {
            assert!(Zone::setting(bad).is_none(), "{bad}");
        }
        // Abbreviations are for input only.
        assert!(Zone::setting("CEST").is_none());
        assert_eq!(Zone::named("cest"), Some(Zone::Fixed(7200)));
    }

    #[test]
    fn gaps_and_overlaps_resolve_as_postgresql_does() {
        let ny = Zone::named("America/New_York").unwrap();
        // 2024-03-10 is day 8835 after 2000-01-01; 2024-11-03 is 9073.
        let spring = ny.to_utc(at(8835, 2, 30));
        assert_eq!(spring, at(8835, 7, 30), "02:30 read as EST");
        assert_eq!(ny.offset_at(spring), -4 * 3_600_000_000, "and shown as 03:30 EDT");
        assert_eq!(ny.to_utc(at(9073, 1, 30)), at(9073, 6, 30), "01:30 twice: the later, EST");
        assert_eq!(ny.local(at(9073, 6, 30)), at(9073, 1, 30));
        assert_eq!(ny.offset_at(at(8766, 12, 0)), -5 * 3_600_000_000, "January");
    }
}
