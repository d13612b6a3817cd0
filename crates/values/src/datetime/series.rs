//! generate_series(start, stop, step) over timestamps and instants.
//!
//! Each value is the previous one plus the step (not `start + k *
//! step`), as PostgreSQL steps: a month from January 31 is February 29,
//! and from there March 29. The next value is computed before the current
//! one is given, so a step past the end of the timestamp range fails even
//! when that value would not have been returned, as in PostgreSQL.

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;
use crate::interval::Interval;
use crate::zone::Zone;

/// The series from `start` to `stop` by `step`; an instant series
/// (`zone` given) adds the step on that zone's wall clock. More than
/// `limit` values is 54000, as a bound on memory: the caller keeps them
/// all.
pub fn timestamp_series(
    start: i64,
    stop: i64,
    step: Interval,
    zone: Option<Zone>,
    limit: usize,
) -> Result<Vec<i64>, SqlError> {
    let zero = Interval::default();
    if step == zero {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "step size cannot equal zero"));
    }
    let forward = step > zero;
    let mut out = Vec::new();
    let mut current = start;
    while if forward { current <= stop } else { current >= stop } {
        if out.len() == limit {
            return Err(SqlError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!("generate_series would return more than {limit} rows"),
            ));
        }
        out.push(current);
        let next = match zone {
            Some(z) => step.shift_in(current, false, z)?,
            None => step.shift(current, false)?,
        };
        // An infinite start never moves: it would repeat forever.
        if next == current && !crate::calendar::is_finite_timestamp(current) {
            return Err(SqlError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!("generate_series would return more than {limit} rows"),
            ));
        }
        current = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{format_timestamp, parse_interval, parse_timestamp};

    fn series(start: &str, stop: &str, step: &str) -> Result<Vec<String>, SqlError> {
        let t = |s: &str| parse_timestamp(s).unwrap();
        let got = timestamp_series(t(start), t(stop), parse_interval(step).unwrap(), None, 1000)?;
        Ok(got.into_iter().map(format_timestamp).collect())
    }

    // Each expected value is PostgreSQL 15's answer.
    #[test]
    fn steps_from_the_previous_value() {
        assert_eq!(
            series("2020-01-31", "2020-05-01", "1 mon").unwrap(),
            ["2020-01-31 00:00:00", "2020-02-29 00:00:00", "2020-03-29 00:00:00", "2020-04-29 00:00:00"]
        );
        assert_eq!(
            series("2020-01-03", "2020-01-01", "-1 day").unwrap(),
            ["2020-01-03 00:00:00", "2020-01-02 00:00:00", "2020-01-01 00:00:00"]
        );
        assert!(series("2020-01-03", "2020-01-01", "1 day").unwrap().is_empty());
        let e = series("2020-01-01", "2020-01-03", "1 mon -30 days").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (SqlState::INVALID_PARAMETER_VALUE, "step size cannot equal zero")
        );
        let e = series("294276-12-31", "294276-12-31", "1 day").unwrap_err();
        assert_eq!(e.message, "timestamp out of range");
    }
}
