//! The session settings that shape date/time text: TimeZone, DateStyle
//! (output style and input field order) and IntervalStyle.
//!
//! [`Style`] carries them together so that the values crate can read and
//! print dates, timestamps, times and intervals as PostgreSQL does under
//! any combination of them. The SQL layer keeps one per session.

use crate::zone::Zone;

/// DateStyle's output part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DateStyle {
    /// `2020-01-31 10:00:00-08`.
    Iso,
    /// `01/31/2020 10:00:00 PST` (day first under DMY).
    Sql,
    /// `Fri Jan 31 10:00:00 2020 PST` (day first under DMY).
    Postgres,
    /// `31.01.2020 10:00:00 PST`.
    German,
}

/// DateStyle's field-order part: how `1/2/3` is read (and the order SQL
/// and Postgres styles print day and month in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DateOrder {
    /// Month, day, year.
    Mdy,
    /// Day, month, year.
    Dmy,
    /// Year, month, day.
    Ymd,
}

/// IntervalStyle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntervalStyle {
    /// `1 year 2 mons 3 days 04:05:06`.
    Postgres,
    /// `@ 1 year 2 mons 3 days 4 hours 5 mins 6 secs`.
    PostgresVerbose,
    /// `+1-2 +3 +4:05:06`.
    SqlStandard,
    /// `P1Y2M3DT4H5M6S`.
    Iso8601,
}

/// How date/time values are read and printed: the session's TimeZone,
/// DateStyle and IntervalStyle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// The session time zone.
    pub zone: Zone,
    /// DateStyle's output style.
    pub date: DateStyle,
    /// DateStyle's field order.
    pub order: DateOrder,
    /// IntervalStyle.
    pub interval: IntervalStyle,
    /// bytea_output = escape (else hex, the default).
    pub bytea_escape: bool,
}

impl Default for Style {
    fn default() -> Style {
        Style::from(Zone::UTC)
    }
}

/// PostgreSQL's defaults (`ISO, MDY`, `postgres`) in `zone`.
impl From<Zone> for Style {
    fn from(zone: Zone) -> Style {
        Style {
            zone,
            date: DateStyle::Iso,
            order: DateOrder::Mdy,
            interval: IntervalStyle::Postgres,
            bytea_escape: false,
        }
    }
}

impl Style {
    /// Reads a DateStyle setting from the defaults (`ISO, MDY`): what is
    /// not named keeps its default. The error is PostgreSQL's DETAIL
    /// (`Unrecognized key word: "foo".`, `Conflicting "datestyle"
    /// specifications.`); see [`Style::setting_error`].
    pub fn parse_datestyle(value: &str) -> Result<(DateStyle, DateOrder), String> {
        Style::parse_datestyle_over(value, DateStyle::Iso, DateOrder::Mdy)
    }

    /// Reads a DateStyle setting over the current one, as `SET datestyle`
    /// does: `SET datestyle = dmy` keeps the output style.
    pub fn parse_datestyle_over(
        value: &str,
        style: DateStyle,
        order: DateOrder,
    ) -> Result<(DateStyle, DateOrder), String> {
        let (mut new_style, mut new_order) = (style, order);
        let (mut have_style, mut have_order) = (false, false);
        let mut ok = true;
        for token in split_list(value)? {
            let t = token.to_ascii_lowercase();
            let set_style = |s: DateStyle, new_style: &mut DateStyle, have: &mut bool| {
                let conflict = *have && *new_style != s;
                *new_style = s;
                *have = true;
                !conflict
            };
            match t.as_str() {
                "iso" => ok &= set_style(DateStyle::Iso, &mut new_style, &mut have_style),
                "sql" => ok &= set_style(DateStyle::Sql, &mut new_style, &mut have_style),
                "postgres" => ok &= set_style(DateStyle::Postgres, &mut new_style, &mut have_style),
                "german" => {
                    ok &= set_style(DateStyle::German, &mut new_style, &mut have_style);
                    if !have_order {
                        new_order = DateOrder::Dmy;
                    }
                }
                "ymd" | "dmy" | "european" | "euro" | "mdy" | "us" | "noneuro" | "noneuropean" => {
                    let o = match t.as_str() {
                        "ymd" => DateOrder::Ymd,
                        "dmy" | "european" | "euro" => DateOrder::Dmy,
                        _ => DateOrder::Mdy,
                    };
                    ok &= !(have_order && new_order != o);
                    new_order = o;
                    have_order = true;
                }
                "default" => {
                    if !have_style {
                        new_style = DateStyle::Iso;
                    }
                    if !have_order {
                        new_order = DateOrder::Mdy;
                    }
                }
                _ => return Err(format!("Unrecognized key word: \"{token}\".")),
            }
        }
        if !ok {
            return Err("Conflicting \"datestyle\" specifications.".to_owned());
        }
        Ok((new_style, new_order))
    }

    /// Reads an IntervalStyle setting (case-insensitive); the error is
    /// PostgreSQL's HINT, `Available values: …`.
    pub fn parse_intervalstyle(value: &str) -> Result<IntervalStyle, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "postgres" => Ok(IntervalStyle::Postgres),
            "postgres_verbose" => Ok(IntervalStyle::PostgresVerbose),
            "sql_standard" => Ok(IntervalStyle::SqlStandard),
            "iso_8601" => Ok(IntervalStyle::Iso8601),
            _ => Err("Available values: postgres, postgres_verbose, sql_standard, iso_8601.".to_owned()),
        }
    }

    /// DateStyle as SHOW prints it: `ISO, MDY`, `Postgres, DMY`.
    pub fn show_datestyle(&self) -> String {
        show_datestyle(self.date, self.order)
    }

    /// IntervalStyle as SHOW prints it: `postgres`, `iso_8601`, ….
    pub fn show_intervalstyle(&self) -> &'static str {
        match self.interval {
            IntervalStyle::Postgres => "postgres",
            IntervalStyle::PostgresVerbose => "postgres_verbose",
            IntervalStyle::SqlStandard => "sql_standard",
            IntervalStyle::Iso8601 => "iso_8601",
        }
    }

    /// PostgreSQL's error for a bad setting: 22023 `invalid value for
    /// parameter "DateStyle": "foo"` with the DETAIL from
    /// [`Style::parse_datestyle`] (`parameter` as PostgreSQL spells it:
    /// `DateStyle`, or `intervalstyle` with `hint` set for the HINT from
    /// [`Style::parse_intervalstyle`]).
    pub fn setting_error(parameter: &str, value: &str, text: &str, hint: bool) -> crate::SqlError {
        let e = crate::SqlError::new(
            snapscale_sqlstate::SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{parameter}\": \"{value}\""),
        );
        if hint {
            e.with_hint(text)
        } else {
            e.with_detail(text)
        }
    }
}

/// `ISO, MDY` and the like.
pub fn show_datestyle(style: DateStyle, order: DateOrder) -> String {
    let s = match style {
        DateStyle::Iso => "ISO",
        DateStyle::Sql => "SQL",
        DateStyle::Postgres => "Postgres",
        DateStyle::German => "German",
    };
    let o = match order {
        DateOrder::Mdy => "MDY",
        DateOrder::Dmy => "DMY",
        DateOrder::Ymd => "YMD",
    };
    format!("{s}, {o}")
}

/// A setting's comma-separated list of identifiers (double quotes keep
/// a word whole); empty elements are a syntax error.
fn split_list(value: &str) -> Result<Vec<String>, String> {
    let v = value.trim();
    if v.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for part in v.split(',') {
        let p = part.trim();
        let p = p.strip_prefix('"').and_then(|p| p.strip_suffix('"')).unwrap_or(p);
        if p.is_empty() {
            return Err("List syntax is invalid.".to_owned());
        }
        out.push(p.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datestyle_settings() {
        let p = |s| {
            Style::parse_datestyle_over(s, DateStyle::Sql, DateOrder::Mdy).map(|(a, b)| show_datestyle(a, b))
        };
        assert_eq!(p("german").unwrap(), "German, DMY");
        assert_eq!(p("Postgres,European").unwrap(), "Postgres, DMY");
        assert_eq!(p("default").unwrap(), "ISO, MDY");
        assert_eq!(p("iso,default").unwrap(), "ISO, MDY");
        assert_eq!(p("us").unwrap(), "SQL, MDY");
        assert_eq!(p("euro").unwrap(), "SQL, DMY");
        assert_eq!(p("\"ISO\"").unwrap(), "ISO, MDY");
        assert_eq!(p("").unwrap(), "SQL, MDY");
        assert_eq!(p("foo").unwrap_err(), "Unrecognized key word: \"foo\".");
        assert_eq!(p("iso, sql").unwrap_err(), "Conflicting \"datestyle\" specifications.");
        assert_eq!(p("dmy, ymd").unwrap_err(), "Conflicting \"datestyle\" specifications.");
        assert_eq!(p("sql, german").unwrap_err(), "Conflicting \"datestyle\" specifications.");
        assert_eq!(Style::parse_datestyle("dmy").unwrap(), (DateStyle::Iso, DateOrder::Dmy));
        assert_eq!(Style::parse_intervalstyle("SQL_standard").unwrap(), IntervalStyle::SqlStandard);
        assert!(Style::parse_intervalstyle("x").is_err());
        assert_eq!(Style::from(Zone::UTC).show_datestyle(), "ISO, MDY");
    }
}
