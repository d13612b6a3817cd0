//! EXTRACT and date_part: the fields of a date, time, timetz, timestamp,
//! timestamptz or interval, as PostgreSQL 15 computes them.
//!
//! One computation serves both functions: EXTRACT answers in numeric
//! (exact, with PostgreSQL's display scales: `1.500000` seconds) and
//! date_part in double precision. Each [`Part`] keeps the pieces its
//! value was made of, because PostgreSQL's double precision formulas
//! round at different steps than the exact value does, and the last digit
//! of a float shows it.

use snapscale_sqlstate::SqlState;

use super::decode::{date_keyword, delta_keyword, Key, Reserved, Unit};
use super::time::TimeTz;
use crate::calendar::{civil_date, day_number, EPOCH_2000, USECS_PER_DAY};
use crate::error::SqlError;
use crate::interval::Interval;
use crate::numeric::Numeric;

/// The Julian day of 2000-01-01, PostgreSQL's epoch.
const JULIAN_2000: i64 = 2_451_545;
/// 1970-01-01 00:00:00 in microseconds since 2000-01-01.
const UNIX_EPOCH_USECS: i64 = -EPOCH_2000 * USECS_PER_DAY;
const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;

/// A field a unit names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Microseconds,
    Milliseconds,
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
    IsoDow,
    Doy,
    IsoYear,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
}

/// What a unit's name means, looked up as PostgreSQL looks it up: the
/// interval units first, then the date keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitName {
    Field(Field),
    /// `epoch`.
    Epoch,
    /// A reserved word that is no field (`now`, `today`, `infinity`).
    OtherReserved,
    /// Anything else, month and day names included.
    Unknown,
}

/// A unit as the error messages show it: lower case (ASCII letters only,
/// as PostgreSQL folds identifiers) and cut to 63 bytes.
pub fn lower_units(name: &str) -> String {
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_ascii_lowercase()
}

fn field_of_unit(u: Unit) -> Option<Field> {
    Some(match u {
        Unit::Microsec => Field::Microseconds,
        Unit::Millisec => Field::Milliseconds,
        Unit::Second => Field::Second,
        Unit::Minute => Field::Minute,
        Unit::Hour => Field::Hour,
        Unit::Day => Field::Day,
        Unit::Week => Field::Week,
        Unit::Month => Field::Month,
        Unit::Quarter => Field::Quarter,
        Unit::Year => Field::Year,
        Unit::Decade => Field::Decade,
        Unit::Century => Field::Century,
        Unit::Millennium => Field::Millennium,
        Unit::Julian => Field::Julian,
        Unit::Dow => Field::Dow,
        Unit::Doy => Field::Doy,
        Unit::IsoDow => Field::IsoDow,
        Unit::IsoYear => Field::IsoYear,
        Unit::Tz => Field::Timezone,
        Unit::TzHour => Field::TimezoneHour,
        Unit::TzMinute => Field::TimezoneMinute,
        Unit::AfterAgo | Unit::Time => return None,
    })
}

/// The field an interval unit names (PostgreSQL's DecodeUnits alone, as
/// date_trunc reads its unit); `lower` as [`lower_units`] makes it.
pub fn delta_unit(lower: &str) -> Option<Field> {
    match delta_keyword(lower) {
        Some(Key::Units(u)) => field_of_unit(u),
        _ => None,
    }
}

/// What EXTRACT's and date_part's unit means; `lower` as [`lower_units`]
/// makes it.
pub fn unit_name(lower: &str) -> UnitName {
    // A word the interval table knows (`ago`, `@`) is not looked up again.
    match delta_keyword(lower).or_else(|| date_keyword(lower)) {
        Some(Key::Units(u)) => field_of_unit(u).map_or(UnitName::Unknown, UnitName::Field),
        Some(Key::Reserved(Reserved::Epoch)) => UnitName::Epoch,
        Some(Key::Reserved(_)) => UnitName::OtherReserved,
        _ => UnitName::Unknown,
    }
}

/// One field's value, kept in the pieces it is computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Part {
    /// No value (a field of day or time of an infinite timestamp).
    Null,
    /// ±Infinity (a field that grows with time, of an infinite value).
    Infinite {
        negative: bool,
    },
    Int(i64),
    /// Seconds of the minute and their microseconds, as seconds (scale
    /// 6) or, with `millis`, milliseconds (scale 3).
    Seconds {
        sec: i64,
        usec: i64,
        millis: bool,
    },
    /// A timestamp's (or instant's) seconds since 1970, from its
    /// microseconds since 2000.
    TimestampEpoch(i64),
    /// An interval in seconds, a year as 365.25 days, a month as 30.
    IntervalEpoch(Interval),
    /// A time's seconds since midnight in UTC (`zone` seconds west).
    TimeEpoch {
        micros: i64,
        zone: i32,
    },
    /// The Julian day and the fraction of it a time of day is.
    Julian {
        day: i64,
        time: i64,
    },
}

impl Part {
    /// The value as EXTRACT gives it: exact numeric; `None` for NULL.
    pub fn to_numeric(self) -> Result<Option<Numeric>, SqlError> {
        let scaled = |v: i64, scale: u16| Numeric::from_scaled(v, scale).expect("small scale");
        Ok(Some(match self {
            Part::Null => return Ok(None),
            Part::Infinite { negative: true } => Numeric::NEG_INFINITY,
            Part::Infinite { negative: false } => Numeric::INFINITY,
            Part::Int(v) => Numeric::from(v),
            Part::Seconds { sec, usec, millis } => {
                scaled(sec * USECS_PER_SEC + usec, if millis { 3 } else { 6 })
            }
            Part::TimestampEpoch(t) => match t.checked_sub(UNIX_EPOCH_USECS) {
                Some(v) => scaled(v, 6),
                None => scaled(t, 6).sub(&scaled(UNIX_EPOCH_USECS, 6))?,
            },
            Part::IntervalEpoch(i) => {
                let secs = interval_epoch_secs(i);
                match secs.checked_mul(USECS_PER_SEC).and_then(|v| v.checked_add(i.micros)) {
                    Some(v) => scaled(v, 6),
                    None => scaled(i.micros, 6).add(&Numeric::from(secs))?,
                }
            }
            Part::TimeEpoch { micros, zone } => scaled(micros + i64::from(zone) * USECS_PER_SEC, 6),
            Part::Julian { day, time } => {
                let fraction = Numeric::from(time).div(&Numeric::from(USECS_PER_DAY))?;
                Numeric::from(day).add(&fraction)?
            }
        }))
    }

    /// The value as date_part gives it, by PostgreSQL's double precision
    /// formulas; `None` for NULL.
    pub fn to_f64(self) -> Option<f64> {
        Some(match self {
            Part::Null => return None,
            Part::Infinite { negative: true } => f64::NEG_INFINITY,
            Part::Infinite { negative: false } => f64::INFINITY,
            Part::Int(v) => v as f64,
            Part::Seconds { sec, usec, millis: true } => sec as f64 * 1000.0 + usec as f64 / 1000.0,
            Part::Seconds { sec, usec, millis: false } => sec as f64 + usec as f64 / 1e6,
            // The subtraction in integers where it fits, as PostgreSQL
            // does it to keep the microseconds.
            Part::TimestampEpoch(t) => match t.checked_sub(UNIX_EPOCH_USECS) {
                Some(v) => v as f64 / 1e6,
                None => (t as f64 - UNIX_EPOCH_USECS as f64) / 1e6,
            },
            Part::IntervalEpoch(i) => {
                let years = f64::from(i.months / 12);
                let months = f64::from(i.months % 12);
                i.micros as f64 / 1e6
                    + 365.25 * 86_400.0 * years
                    + 30.0 * 86_400.0 * months
                    + 86_400.0 * f64::from(i.days)
            }
            Part::TimeEpoch { micros, zone } => micros as f64 / 1e6 + f64::from(zone),
            Part::Julian { day, time } => {
                let secs = time / USECS_PER_SEC;
                let usec = time % USECS_PER_SEC;
                day as f64 + (secs as f64 + usec as f64 / 1e6) / 86_400.0
            }
        })
    }
}

/// An interval's days and months in whole seconds (a year 365.25 days,
/// so counted in quarter days first).
fn interval_epoch_secs(i: Interval) -> i64 {
    let quarter_days =
        1461 * i64::from(i.months / 12) + 120 * i64::from(i.months % 12) + 4 * i64::from(i.days);
    quarter_days * (86_400 / 4)
}

fn not_recognized(lower: &str, type_name: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("unit \"{lower}\" not recognized for type {type_name}"),
    )
}

fn not_supported(lower: &str, type_name: &str) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("unit \"{lower}\" not supported for type {type_name}"),
    )
}

/// Whether a field grows with time (±Infinity for an infinite value)
/// rather than cycling (NULL).
fn monotonic(name: UnitName) -> bool {
    matches!(
        name,
        UnitName::Epoch
            | UnitName::Field(
                Field::Year
                    | Field::Decade
                    | Field::Century
                    | Field::Millennium
                    | Field::Julian
                    | Field::IsoYear
            )
    )
}

/// A calendar date's fields: the year astronomical (0 is 1 BC).
struct Ymd {
    days: i64,
    year: i64,
    month: u32,
    day: u32,
}

impl Ymd {
    fn of(days: i64) -> Ymd {
        let (year, month, day) = civil_date(days);
        Ymd { days, year, month, day }
    }

    /// The ISO 8601 week's Thursday: its year is the ISO year, and week 1
    /// holds the year's first Thursday.
    fn iso_thursday(&self) -> i64 {
        self.days - self.isodow() + 4
    }

    fn iso_week(&self) -> i64 {
        let thursday = self.iso_thursday();
        let (year, _, _) = civil_date(thursday);
        (thursday - day_number(year, 1, 1)) / 7 + 1
    }

    /// 0 for Sunday (2000-01-01 was a Saturday).
    fn dow(&self) -> i64 {
        (self.days + 6).rem_euclid(7)
    }

    fn isodow(&self) -> i64 {
        match self.dow() {
            0 => 7,
            d => d,
        }
    }

    /// The value of a date field; `None` if the field is not a date's.
    fn field(&self, f: Field) -> Option<i64> {
        let y = self.year;
        Some(match f {
            Field::Day => i64::from(self.day),
            Field::Month => i64::from(self.month),
            Field::Quarter => (i64::from(self.month) - 1) / 3 + 1,
            Field::Week => self.iso_week(),
            // There is no year 0: 1 BC is -1.
            Field::Year if y > 0 => y,
            Field::Year => y - 1,
            Field::Decade if y >= 0 => y / 10,
            Field::Decade => -((8 - (y - 1)) / 10),
            Field::Century if y > 0 => (y + 99) / 100,
            Field::Century => -((99 - (y - 1)) / 100),
            Field::Millennium if y > 0 => (y + 999) / 1000,
            Field::Millennium => -((999 - (y - 1)) / 1000),
            Field::Julian => self.days + JULIAN_2000,
            Field::IsoYear => match civil_date(self.iso_thursday()).0 {
                iso if iso <= 0 => iso - 1,
                iso => iso,
            },
            Field::Dow => self.dow(),
            Field::IsoDow => self.isodow(),
            Field::Doy => self.days - day_number(y, 1, 1) + 1,
            _ => return None,
        })
    }
}

/// A time of day's fields (`time` microseconds since midnight, 24:00:00
/// included); `None` if the field is not a time's.
fn time_field(time: i64, f: Field) -> Option<Part> {
    let in_minute = time % USECS_PER_MINUTE;
    let (sec, usec) = (in_minute / USECS_PER_SEC, in_minute % USECS_PER_SEC);
    Some(match f {
        Field::Microseconds => Part::Int(in_minute),
        Field::Milliseconds => Part::Seconds { sec, usec, millis: true },
        Field::Second => Part::Seconds { sec, usec, millis: false },
        Field::Minute => Part::Int(time / USECS_PER_MINUTE % 60),
        Field::Hour => Part::Int(time / USECS_PER_HOUR),
        _ => return None,
    })
}

const TIMESTAMP: &str = "timestamp without time zone";
const TIMESTAMPTZ: &str = "timestamp with time zone";

/// A field of a timestamp, or with `offset` (microseconds east of UTC in
/// the session's zone at that instant) of a timestamptz; `unit` as
/// written.
pub fn extract_timestamp(t: i64, offset: Option<i64>, unit: &str) -> Result<Part, SqlError> {
    let lower = lower_units(unit);
    let name = unit_name(&lower);
    let type_name = if offset.is_some() { TIMESTAMPTZ } else { TIMESTAMP };
    if t == i64::MIN || t == i64::MAX {
        return match name {
            UnitName::Unknown => Err(not_recognized(&lower, type_name)),
            UnitName::OtherReserved => Err(not_supported(&lower, type_name)),
            n if monotonic(n) => Ok(Part::Infinite { negative: t == i64::MIN }),
            _ => Ok(Part::Null),
        };
    }
    let field = match name {
        UnitName::Field(f) => f,
        UnitName::Epoch => return Ok(Part::TimestampEpoch(t)),
        UnitName::OtherReserved => return Err(not_supported(&lower, type_name)),
        UnitName::Unknown => return Err(not_recognized(&lower, type_name)),
    };
    if let Some(offset) = offset {
        let secs = offset / USECS_PER_SEC;
        match field {
            Field::Timezone => return Ok(Part::Int(secs)),
            Field::TimezoneHour => return Ok(Part::Int(secs / 3600)),
            Field::TimezoneMinute => return Ok(Part::Int(secs / 60 % 60)),
            _ => {}
        }
    }
    let local = t.saturating_add(offset.unwrap_or(0));
    let (days, time) = (local.div_euclid(USECS_PER_DAY), local.rem_euclid(USECS_PER_DAY));
    if field == Field::Julian {
        return Ok(Part::Julian { day: days + JULIAN_2000, time });
    }
    if let Some(p) = time_field(time, field) {
        return Ok(p);
    }
    Ymd::of(days).field(field).map(Part::Int).ok_or_else(|| not_supported(&lower, type_name))
}

/// EXTRACT of a date (days since 2000-01-01, `i32::MIN`/`MAX` the
/// infinities): the date fields only.
pub fn extract_date(d: i32, unit: &str) -> Result<Part, SqlError> {
    const TYPE: &str = "date";
    let lower = lower_units(unit);
    let name = unit_name(&lower);
    if d == i32::MIN || d == i32::MAX {
        return match name {
            UnitName::Unknown => Err(not_recognized(&lower, TYPE)),
            n if monotonic(n) => Ok(Part::Infinite { negative: d == i32::MIN }),
            UnitName::Field(
                Field::Day
                | Field::Month
                | Field::Quarter
                | Field::Week
                | Field::Dow
                | Field::IsoDow
                | Field::Doy,
            ) => Ok(Part::Null),
            _ => Err(not_supported(&lower, TYPE)),
        };
    }
    match name {
        UnitName::Field(f) => {
            Ymd::of(i64::from(d)).field(f).map(Part::Int).ok_or_else(|| not_supported(&lower, TYPE))
        }
        UnitName::Epoch => Ok(Part::Int((i64::from(d) + EPOCH_2000) * 86_400)),
        UnitName::OtherReserved => Err(not_supported(&lower, TYPE)),
        UnitName::Unknown => Err(not_recognized(&lower, TYPE)),
    }
}

/// A field of a time (microseconds since midnight).
pub fn extract_time(time: i64, unit: &str) -> Result<Part, SqlError> {
    const TYPE: &str = "time without time zone";
    let lower = lower_units(unit);
    match unit_name(&lower) {
        UnitName::Field(f) => time_field(time, f).ok_or_else(|| not_supported(&lower, TYPE)),
        UnitName::Epoch => Ok(Part::TimeEpoch { micros: time, zone: 0 }),
        _ => Err(not_recognized(&lower, TYPE)),
    }
}

/// A field of a time with time zone.
pub fn extract_timetz(t: TimeTz, unit: &str) -> Result<Part, SqlError> {
    const TYPE: &str = "time with time zone";
    let lower = lower_units(unit);
    let east = -i64::from(t.zone);
    match unit_name(&lower) {
        UnitName::Field(Field::Timezone) => Ok(Part::Int(east)),
        UnitName::Field(Field::TimezoneHour) => Ok(Part::Int(east / 3600)),
        UnitName::Field(Field::TimezoneMinute) => Ok(Part::Int(east / 60 % 60)),
        UnitName::Field(f) => time_field(t.micros, f).ok_or_else(|| not_supported(&lower, TYPE)),
        UnitName::Epoch => Ok(Part::TimeEpoch { micros: t.micros, zone: t.zone }),
        _ => Err(not_recognized(&lower, TYPE)),
    }
}

/// A field of an interval: each field as the interval holds it (months
/// past the years, the time's hours unbounded), signs kept.
pub fn extract_interval(i: Interval, unit: &str) -> Result<Part, SqlError> {
    const TYPE: &str = "interval";
    let lower = lower_units(unit);
    let field = match unit_name(&lower) {
        UnitName::Field(f) => f,
        UnitName::Epoch => return Ok(Part::IntervalEpoch(i)),
        _ => return Err(not_recognized(&lower, TYPE)),
    };
    let years = i64::from(i.months / 12);
    let months = i64::from(i.months % 12);
    let in_minute = i.micros % USECS_PER_MINUTE;
    Ok(match field {
        Field::Microseconds => Part::Int(in_minute),
        Field::Milliseconds | Field::Second => Part::Seconds {
            sec: in_minute / USECS_PER_SEC,
            usec: in_minute % USECS_PER_SEC,
            millis: field == Field::Milliseconds,
        },
        Field::Minute => Part::Int(i.micros % USECS_PER_HOUR / USECS_PER_MINUTE),
        Field::Hour => Part::Int(i.micros / USECS_PER_HOUR),
        Field::Day => Part::Int(i64::from(i.days)),
        Field::Month => Part::Int(months),
        Field::Quarter => Part::Int(months / 3 + 1),
        Field::Year => Part::Int(years),
        Field::Decade => Part::Int(years / 10),
        Field::Century => Part::Int(years / 100),
        Field::Millennium => Part::Int(years / 1000),
        _ => return Err(not_supported(&lower, TYPE)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_interval, parse_timestamp};

    fn numeric(p: Result<Part, SqlError>) -> String {
        p.unwrap().to_numeric().unwrap().map_or_else(|| "NULL".into(), |n| n.to_string())
    }

    fn ts(unit: &str, s: &str) -> String {
        numeric(extract_timestamp(parse_timestamp(s).unwrap(), None, unit))
    }

    // Each expected value is PostgreSQL 15's answer.
    #[test]
    fn timestamp_fields_as_numeric() {
        for (unit, input, want) in [
            ("second", "2020-01-01 00:00:01.5", "1.500000"),
            ("milliseconds", "2020-01-01 00:00:01.5", "1500.000"),
            ("microsecondsxyz", "2020-01-01 00:00:01.5", "1500000"),
            ("epoch", "2020-01-01 00:00:00.123457", "1577836800.123457"),
            ("julian", "2020-01-01 12:00", "2458850.50000000000000000000"),
            ("julian", "2020-01-01 00:00:00.000001", "2458850.0000000000115740740740740741"),
            ("year", "0001-01-01 BC", "-1"),
            ("decade", "0010-01-01 BC", "-1"),
            ("century", "2000-12-31", "20"),
            ("millennium", "2001-01-01", "3"),
            ("isoyear", "2021-01-01", "2020"),
            ("week", "2021-01-01", "53"),
            ("dow", "2020-01-05", "0"),
            ("isodow", "2020-01-05", "7"),
            ("doy", "2020-12-31", "366"),
            ("quarter", "2020-08-01", "3"),
        ] {
            assert_eq!(ts(unit, input), want, "{unit} of {input}");
        }
    }

    #[test]
    fn infinities_and_errors() {
        assert_eq!(numeric(extract_timestamp(i64::MAX, None, "year")), "Infinity");
        assert_eq!(numeric(extract_timestamp(i64::MIN, None, "epoch")), "-Infinity");
        assert_eq!(numeric(extract_timestamp(i64::MAX, None, "timezone")), "NULL");
        let e = extract_timestamp(0, None, "timezone").unwrap_err();
        assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(e.message, "unit \"timezone\" not supported for type timestamp without time zone");
        let e = extract_timestamp(0, None, "Foo").unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(e.message, "unit \"foo\" not recognized for type timestamp without time zone");
        assert_eq!(
            extract_timestamp(i64::MAX, None, "now").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(extract_time(0, "now").unwrap_err().code, SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(
            extract_date(i32::MAX, "hour").unwrap_err().message,
            "unit \"hour\" not supported for type date"
        );
        assert_eq!(numeric(extract_date(i32::MIN, "epoch")), "-Infinity");
        assert_eq!(numeric(extract_date(i32::MAX, "dow")), "NULL");
        // A cut inside a multibyte character is no keyword, and no panic.
        assert!(extract_timestamp(0, None, "millisecoñds").is_err());
    }

    #[test]
    fn dates_times_and_intervals() {
        assert_eq!(numeric(extract_date(7305, "julian")), "2458850");
        assert_eq!(numeric(extract_date(7305, "epoch")), "1577836800");
        assert_eq!(numeric(extract_time(86_400_000_000, "epoch")), "86400.000000");
        assert_eq!(numeric(extract_time(86_400_000_000, "hour")), "24");
        let tz = TimeTz { micros: 36_000_000_000, zone: -19_800 };
        assert_eq!(numeric(extract_timetz(tz, "epoch")), "16200.000000");
        assert_eq!(numeric(extract_timetz(tz, "timezone")), "19800");
        let tz = TimeTz { micros: 36_000_000_000, zone: 19_800 };
        assert_eq!(numeric(extract_timetz(tz, "timezone_hour")), "-5");
        assert_eq!(numeric(extract_timetz(tz, "timezone_minute")), "-30");
        let iv = |s: &str| parse_interval(s).unwrap();
        assert_eq!(
            numeric(extract_interval(iv("1 year 2 mons 3 days 04:05:06.7"), "epoch")),
            "37015506.700000"
        );
        assert_eq!(numeric(extract_interval(iv("-4 mons"), "quarter")), "0");
        assert_eq!(numeric(extract_interval(iv("-25 years"), "decade")), "-2");
        assert_eq!(numeric(extract_interval(iv("-1.5 sec"), "millisecond")), "-1500.000");
        assert_eq!(extract_interval(iv("1 day"), "week").unwrap_err().code, SqlState::FEATURE_NOT_SUPPORTED);
    }

    #[test]
    fn float_formulas() {
        let f = |p: Result<Part, SqlError>| p.unwrap().to_f64();
        let t = parse_timestamp("2020-01-01 06:00:00.123").unwrap();
        assert_eq!(f(extract_timestamp(t, None, "julian")), Some(2458850.2500014235));
        assert_eq!(f(extract_interval(parse_interval("1 year").unwrap(), "epoch")), Some(31557600.0));
    }
}
