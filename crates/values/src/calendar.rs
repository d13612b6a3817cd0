//! The proleptic Gregorian calendar and PostgreSQL's date and timestamp
//! ranges: day numbers from 2000-01-01 (PostgreSQL's epoch) and back,
//! month lengths, and the bounds. A leaf: datetime, interval and zone all
//! count days with it.

pub(crate) const USECS_PER_DAY: i64 = 86_400_000_000;

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

pub(crate) const EPOCH_2000: i64 = 10_957; // days from 1970-01-01 to 2000-01-01

/// The calendar date of a day counted from 2000-01-01 (years before 1 AD
/// counted astronomically: 0 is 1 BC).
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    civil_from_days(days + EPOCH_2000)
}

/// The day, counted from 2000-01-01, of a calendar date (`d` may run past
/// the month's end; it counts on).
pub fn day_number(y: i64, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, 1) - EPOCH_2000 + i64::from(d) - 1
}

pub(crate) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Whether PostgreSQL's Julian-day routines take the year and month:
/// 4714-11 BC up to 5874898-06 AD.
pub(crate) fn valid_julian(y: i64, m: u32) -> bool {
    (y > -4713 || (y == -4713 && m >= 11)) && (y < 5_874_898 || (y == 5_874_898 && m < 6))
}

/// PostgreSQL's timestamp range, in microseconds since 2000-01-01:
/// 4714-11-24 00:00:00 BC up to, not including, 294277-01-01 00:00:00.
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// Whether `usecs` is a (finite) timestamp PostgreSQL can hold.
pub fn timestamp_in_range(usecs: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&usecs)
}

/// Whether a timestamp is neither `infinity` nor `-infinity`.
pub fn is_finite_timestamp(usecs: i64) -> bool {
    usecs != i64::MIN && usecs != i64::MAX
}
