//! date_trunc of an interval: each field below the unit cleared, the
//! fields as the interval holds them (its time split into hours,
//! minutes, seconds and microseconds, signs kept).

use snapscale_sqlstate::SqlState;

use super::extract::{delta_unit, lower_units, Field};
use crate::error::SqlError;
use crate::interval::Interval;

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;

/// `date_trunc(unit, interval)`, with PostgreSQL's errors (a week is no
/// unit of an interval: months have fractional weeks).
pub fn trunc_interval(i: Interval, unit: &str) -> Result<Interval, SqlError> {
    let lower = lower_units(unit);
    let Some(field) = delta_unit(&lower) else {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unit \"{lower}\" not recognized for type interval"),
        ));
    };
    // C division truncates towards zero, so negative fields keep their sign.
    let (years, months) = (i.months / 12, i.months % 12);
    let cut = |v: i32, step: i32| v / step * step;
    let years = match field {
        Field::Millennium => cut(years, 1000),
        Field::Century => cut(years, 100),
        Field::Decade => cut(years, 10),
        _ => years,
    };
    let time_step = |step: i64| i.micros / step * step;
    let (months, days, micros) = match field {
        Field::Millennium | Field::Century | Field::Decade | Field::Year => (0, 0, 0),
        Field::Quarter => (cut(months, 3), 0, 0),
        Field::Month => (months, 0, 0),
        Field::Day => (months, i.days, 0),
        Field::Hour => (months, i.days, time_step(USECS_PER_HOUR)),
        Field::Minute => (months, i.days, time_step(USECS_PER_MINUTE)),
        Field::Second => (months, i.days, time_step(USECS_PER_SEC)),
        Field::Milliseconds => (months, i.days, time_step(1000)),
        Field::Microseconds => (months, i.days, i.micros),
        _ => {
            let e = SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("unit \"{lower}\" not supported for type interval"),
            );
            return Err(if field == Field::Week {
                e.with_detail("Months usually have fractional weeks.")
            } else {
                e
            });
        }
    };
    Ok(Interval { months: years * 12 + months, days, micros })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{format_interval, parse_interval};

    fn trunc(unit: &str, s: &str) -> Result<String, SqlError> {
        trunc_interval(parse_interval(s).unwrap(), unit).map(format_interval)
    }

    // Each expected value is PostgreSQL 15's answer.
    #[test]
    fn clears_the_fields_below_the_unit() {
        assert_eq!(trunc("day", "1 year 2 mons 3 days 04:05:06.7").unwrap(), "1 year 2 mons 3 days");
        assert_eq!(trunc("hour", "-3 days -04:05:06").unwrap(), "-3 days -04:00:00");
        assert_eq!(trunc("millennium", "2500 years").unwrap(), "2000 years");
        assert_eq!(trunc("quarter", "1 year 5 mons 3 days").unwrap(), "1 year 3 mons");
        let e = trunc("week", "1 day").unwrap_err();
        assert_eq!(
            (e.code, e.detail.as_deref()),
            (SqlState::FEATURE_NOT_SUPPORTED, Some("Months usually have fractional weeks."))
        );
        assert_eq!(
            trunc("foo", "1 day").unwrap_err().message,
            "unit \"foo\" not recognized for type interval"
        );
        assert_eq!(trunc("timezone", "1 day").unwrap_err().code, SqlState::FEATURE_NOT_SUPPORTED);
    }
}
