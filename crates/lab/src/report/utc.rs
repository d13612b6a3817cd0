//! UTC timestamps for report headers.
//!
//! A report only needs "when was this measured" to the minute, so a few lines
//! of calendar arithmetic are cheaper than a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

const SECONDS_PER_DAY: u64 = 86_400;

/// Formats `time` as `YYYY-MM-DD HH:MM UTC`.
///
/// Times before 1970 cannot come from a sane clock on a measurement machine,
/// so they are shown as the epoch rather than treated as an error.
pub(crate) fn format_utc(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs());
    let days = seconds / SECONDS_PER_DAY;
    let of_day = seconds % SECONDS_PER_DAY;
    // u64 seconds / 86400 always fits in i64.
    let (year, month, day) = civil_from_days(days as i64);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", of_day / 3600, of_day % 3600 / 60)
}

/// Converts days since 1970-01-01 into a proleptic Gregorian (year, month, day).
///
/// This is Howard Hinnant's `civil_from_days`: counting in 400-year eras that
/// start on March 1st puts the leap day at the end of each year, which removes
/// every special case except the era arithmetic itself.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // shift the epoch to 0000-03-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097); // [0, 146096]
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153; // [0, 11], 0 = March
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn epoch_is_first_of_january_1970() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(format_utc(UNIX_EPOCH), "1970-01-01 00:00 UTC");
    }

    #[test]
    fn known_timestamps() {
        // `date -u -d @1700000000` → Tue Nov 14 22:13:20 UTC 2023
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(format_utc(t), "2023-11-14 22:13 UTC");
        // 2000 is a leap year divisible by 400: Feb 29 exists.
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(format_utc(leap), "2000-02-29 00:00 UTC");
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
    }

    #[test]
    fn days_before_epoch() {
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(-719_468), (0, 3, 1));
    }

    #[test]
    fn every_day_advances_by_one() {
        let mut previous = civil_from_days(-1);
        for days in 0..200_000 {
            let today = civil_from_days(days);
            let (y, m, d) = previous;
            let next_day = (y, m, d + 1);
            let next_month = (y, m + 1, 1);
            let next_year = (y + 1, 1, 1);
            assert!(
                today == next_day || today == next_month || today == next_year,
                "{previous:?} -> {today:?}"
            );
            previous = today;
        }
    }
}
