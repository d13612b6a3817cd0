//! Julian day numbers and ISO 8601 week arithmetic, computed exactly as
//! PostgreSQL computes them (C integer division, its unsigned tricks), so
//! that even the nonsense an interval's fields produce under `J` or `IW`
//! matches.

/// Julian day of 2000-01-01, PostgreSQL's epoch.
pub(super) const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;

/// Julian day number of a (proleptic Gregorian, year 0 = 1 BC) date.
pub(super) fn date2j(y: i64, m: i64, d: i64) -> i64 {
    let (y, m) = if m > 2 { (y + 4800, m + 1) } else { (y + 4799, m + 13) };
    let century = y / 100;
    let mut julian = y * 365 - 32167;
    julian += y / 4 - century + century / 4;
    julian += 7834 * m / 256 + d;
    i64::from(julian as i32)
}

/// The date of a Julian day number.
pub(super) fn j2date(jd: i64) -> (i64, i64, i64) {
    let mut julian = (jd as i32 as u32).wrapping_add(32044);
    let mut quad = julian / 146_097;
    let extra = (julian.wrapping_sub(quad.wrapping_mul(146_097))).wrapping_mul(4).wrapping_add(3);
    julian = julian.wrapping_add(60 + quad.wrapping_mul(3) + extra / 146_097);
    quad = julian / 1461;
    julian = julian.wrapping_sub(quad.wrapping_mul(1461));
    let mut y = (julian.wrapping_mul(4) / 1461) as i32;
    julian = if y != 0 { (julian + 305) % 365 } else { (julian + 306) % 366 } + 123;
    y = y.wrapping_add((quad.wrapping_mul(4)) as i32);
    let year = i64::from(y) - 4800;
    let q = julian.wrapping_mul(2141) / 65536;
    let day = i64::from(julian) - i64::from(7834 * q / 256);
    let month = i64::from((q + 10) % 12 + 1);
    (year, month, day)
}

/// Day of the week of a Julian day, 0 = Sunday.
pub(super) fn j2day(date: i64) -> i64 {
    let d = (date + 1) % 7;
    if d < 0 {
        d + 7
    } else {
        d
    }
}

/// Julian day of the Monday of ISO week `week` of ISO year `year`.
pub(super) fn isoweek2j(year: i64, week: i64) -> i64 {
    let day4 = date2j(year, 1, 4);
    let day0 = j2day(day4 - 1);
    (week - 1) * 7 + (day4 - day0)
}

/// The date of ISO week `week`'s Monday in ISO year `year`.
pub(super) fn isoweek2date(week: i64, year: i64) -> (i64, i64, i64) {
    j2date(isoweek2j(year, week))
}

/// The date of ISO week `week`, Gregorian weekday `wday` (1 = Sunday).
pub(super) fn isoweekdate2date(week: i64, wday: i64, year: i64) -> (i64, i64, i64) {
    let mut jday = isoweek2j(year, week);
    if wday > 1 {
        jday += wday - 2;
    } else {
        jday += 6;
    }
    j2date(jday)
}

/// Julian day of the Monday of ISO week 1 of the ISO year that starts
/// near January 4th of `year`.
fn week1_monday(year: i64) -> i64 {
    let day4 = date2j(year, 1, 4);
    day4 - j2day(day4 - 1)
}

/// ISO 8601 week number of a date.
pub(super) fn date2isoweek(year: i64, mon: i64, mday: i64) -> i64 {
    let dayn = date2j(year, mon, mday);
    let mut start = week1_monday(year);
    if dayn < start {
        start = week1_monday(year - 1);
    }
    let mut result = (dayn - start) / 7 + 1;
    if result >= 52 {
        let next = week1_monday(year + 1);
        if dayn >= next {
            result = (dayn - next) / 7 + 1;
        }
    }
    result
}

/// ISO 8601 year of a date.
pub(super) fn date2isoyear(year: i64, mon: i64, mday: i64) -> i64 {
    let mut year = year;
    let dayn = date2j(year, mon, mday);
    let mut start = week1_monday(year);
    if dayn < start {
        start = week1_monday(year - 1);
        year -= 1;
    }
    let result = (dayn - start) / 7 + 1;
    if result >= 52 && dayn >= week1_monday(year + 1) {
        year += 1;
    }
    year
}

/// Day of the ISO year (1 to 371).
pub(super) fn date2isoyearday(year: i64, mon: i64, mday: i64) -> i64 {
    date2j(year, mon, mday) - isoweek2j(date2isoyear(year, mon, mday), 1) + 1
}

/// Gregorian leap year (year 0 is one).
pub(super) fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// Days in month `m` (1-based) of year `y`.
pub(super) fn days_in_month(y: i64, m: i64) -> i64 {
    const DAYS: [i64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if m == 2 && is_leap(y) {
        29
    } else {
        DAYS[(m - 1).clamp(0, 11) as usize]
    }
}
