//! The English words and numerals the templates print and read: month and
//! day names, AM/PM and AD/BC markers, Roman numerals and ordinal
//! suffixes. PostgreSQL's C locale uses exactly these, and `TM` (the
//! translation modifier) resolves to them too.

use snapscale_sqlstate::SqlState;

use crate::SqlError;

pub(super) const MONTHS_FULL: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub(super) const MONTHS_SHORT: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

pub(super) const DAYS_FULL: [&str; 7] =
    ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

pub(super) const DAYS_SHORT: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// Roman month numerals, December first (the order the reader searches:
/// longer numerals before their prefixes).
pub(super) const RM_MONTHS_UPPER: [&str; 12] =
    ["XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"];
pub(super) const RM_MONTHS_LOWER: [&str; 12] =
    ["xii", "xi", "x", "ix", "viii", "vii", "vi", "v", "iv", "iii", "ii", "i"];

/// Meridiem and era markers in the order the reader searches them; an
/// odd index means PM (or BC).
pub(super) const AMPM: [&str; 4] = ["am", "pm", "AM", "PM"];
pub(super) const AMPM_LONG: [&str; 4] = ["a.m.", "p.m.", "A.M.", "P.M."];
pub(super) const ADBC: [&str; 4] = ["ad", "bc", "AD", "BC"];
pub(super) const ADBC_LONG: [&str; 4] = ["a.d.", "b.c.", "A.D.", "B.C."];

const RM1: [&str; 9] = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"];
const RM10: [&str; 9] = ["X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"];
const RM100: [&str; 9] = ["C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"];

/// `n` in Roman numerals (1 to 3999), or fifteen `#` outside that range.
pub(super) fn roman(n: i64) -> String {
    if !(1..=3999).contains(&n) {
        return "#".repeat(15);
    }
    let mut out = "M".repeat((n / 1000) as usize);
    for (unit, table) in [(100, &RM100), (10, &RM10), (1, &RM1)] {
        let d = (n / unit % 10) as usize;
        if d > 0 {
            out.push_str(table[d - 1]);
        }
    }
    out
}

/// The ordinal suffix for the number text `num` (`st`, `nd`, `rd`, `th`,
/// upper-cased if `upper`); 22P02 `"x" is not a number` if it does not
/// end in a digit.
pub(super) fn ordinal_suffix(num: &[u8], upper: bool) -> Result<&'static str, SqlError> {
    let last = num.last().copied().unwrap_or(0);
    if !last.is_ascii_digit() {
        return Err(SqlError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("\"{}\" is not a number", String::from_utf8_lossy(num)),
        ));
    }
    let teen = num.len() > 1 && num[num.len() - 2] == b'1';
    let i = match last {
        _ if teen => 3,
        b'1' => 0,
        b'2' => 1,
        b'3' => 2,
        _ => 3,
    };
    Ok(if upper { ["ST", "ND", "RD", "TH"][i] } else { ["st", "nd", "rd", "th"][i] })
}
