//! The settings clients set and read at connection start-up: how values
//! are presented (TimeZone, DateStyle, IntervalStyle, extra_float_digits,
//! client_encoding), which messages reach them (client_min_messages), the
//! search path, and the fixed facts drivers check (server_version_num,
//! standard_conforming_strings, integer_datetimes, …).
//!
//! TimeZone takes what PostgreSQL takes (tz database names, POSIX zones,
//! hours east as a number; `types::Zone` reads them) and shows it as
//! PostgreSQL does. A value snapscale cannot honour is refused with 0A000
//! rather than stored and ignored: dates print only in ISO style, floats print shortest-exact (what
//! extra_float_digits ≥ 1 asks), and the only encoding is UTF8.

use snapscale_values::{DateOrder, DateStyle, IntervalStyle, Style, Zone};

use super::{invalid, parse_bool, SettingError};

/// Message levels, least severe first (client_min_messages).
const LEVELS: [&str; 11] =
    ["debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error", "info", "debug"];

/// The client-facing settings of one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientSettings {
    /// client_min_messages, lower-case.
    pub client_min_messages: String,
    /// extra_float_digits (1–3: snapscale always prints shortest-exact).
    pub extra_float_digits: i32,
    /// search_path, as set.
    pub search_path: String,
    /// TimeZone as SHOW prints it.
    pub time_zone: String,
    /// The zone it names: how timestamptz is read and shown.
    pub zone: Zone,
    /// DateStyle's output style and field order.
    pub date: DateStyle,
    pub order: DateOrder,
    /// IntervalStyle.
    pub interval: IntervalStyle,
    /// bytea_output: escape (true) or hex.
    pub bytea_escape: bool,
    /// escape_string_warning (warns of nothing here: backslashes in plain
    /// literals are always literal).
    pub escape_string_warning: bool,
    /// The user the session authenticated as (session_authorization).
    pub session_user: String,
    /// The database it connected to.
    pub database: String,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            client_min_messages: "notice".into(),
            extra_float_digits: 1,
            search_path: "\"$user\", public".into(),
            time_zone: "UTC".into(),
            zone: Zone::UTC,
            date: DateStyle::Iso,
            order: DateOrder::Mdy,
            interval: IntervalStyle::Postgres,
            bytea_escape: false,
            escape_string_warning: true,
            session_user: "postgres".into(),
            database: "postgres".into(),
        }
    }
}

/// Settable per session.
pub(super) const SESSION: [&str; 11] = [
    "client_min_messages",
    "bytea_output",
    "extra_float_digits",
    "search_path",
    "timezone",
    "datestyle",
    "intervalstyle",
    "client_encoding",
    "standard_conforming_strings",
    "idle_in_transaction_session_timeout",
    "escape_string_warning",
];

/// Read-only facts (PostgreSQL's internal settings).
pub(super) const FIXED: [&str; 8] = [
    "session_authorization",
    "server_version_num",
    "integer_datetimes",
    "server_encoding",
    "max_identifier_length",
    "lc_collate",
    "lc_ctype",
    "is_superuser",
];

fn unsupported(name: &str, value: &str, why: &str) -> SettingError {
    SettingError::Unsupported { name: name.into(), value: value.into(), why: why.into() }
}

/// A bad DateStyle or IntervalStyle, in PostgreSQL's words.
fn style_error(name: &str, value: &str, text: String, hint: bool) -> SettingError {
    let message = format!("invalid value for parameter \"{name}\": \"{value}\"");
    if hint {
        SettingError::InvalidValue { message, detail: None, hint: Some(text) }
    } else {
        SettingError::InvalidValue { message, detail: Some(text), hint: None }
    }
}

impl ClientSettings {
    /// How values are read and shown: TimeZone, DateStyle, IntervalStyle.
    pub fn style(&self) -> Style {
        Style {
            zone: self.zone,
            date: self.date,
            order: self.order,
            interval: self.interval,
            bytea_escape: self.bytea_escape,
        }
    }

    /// SET for one of [`SESSION`]; `None` if the name is not one of them.
    pub(super) fn apply(&mut self, name: &str, value: &str) -> Option<Result<(), SettingError>> {
        SESSION.contains(&name).then(|| self.set(name, value.trim()))
    }

    fn set(&mut self, name: &str, v: &str) -> Result<(), SettingError> {
        match name {
            "client_min_messages" => {
                let level = v.to_ascii_lowercase();
                if !LEVELS.contains(&level.as_str()) {
                    return Err(invalid(name, v, "expected debug5–debug1, log, notice, warning or error"));
                }
                self.client_min_messages = if level == "debug" { "debug2".into() } else { level };
            }
            "extra_float_digits" => {
                let n: i32 = v.parse().map_err(|_| invalid(name, v, "expected an integer"))?;
                if !(-15..=3).contains(&n) {
                    return Err(invalid(name, v, "must be between -15 and 3"));
                }
                if n < 1 {
                    return Err(unsupported(name, v, "floats are always printed shortest-exact"));
                }
                self.extra_float_digits = n;
            }
            "search_path" => self.search_path = v.to_owned(),
            // SET TIME ZONE LOCAL: the server's zone.
            "timezone" if v.eq_ignore_ascii_case("local") => {
                let d = ClientSettings::default();
                (self.time_zone, self.zone) = (d.time_zone, d.zone);
            }
            "timezone" => {
                let (zone, shown) =
                    Zone::setting(v.trim_matches('\'')).ok_or_else(|| SettingError::InvalidValue {
                        message: format!("invalid value for parameter \"TimeZone\": \"{v}\""),
                        detail: None,
                        hint: None,
                    })?;
                (self.zone, self.time_zone) = (zone, shown);
            }
            // What DateStyle does not name keeps its value, as in PostgreSQL.
            "datestyle" => {
                (self.date, self.order) = Style::parse_datestyle_over(v, self.date, self.order)
                    .map_err(|detail| style_error("DateStyle", v, detail, false))?
            }
            "intervalstyle" => {
                self.interval = Style::parse_intervalstyle(v)
                    .map_err(|hint| style_error("intervalstyle", v, hint, true))?
            }
            "bytea_output" => {
                self.bytea_escape = match v.trim_matches('\'').to_ascii_lowercase().as_str() {
                    "hex" => false,
                    "escape" => true,
                    _ => {
                        return Err(SettingError::InvalidValue {
                            message: format!("invalid value for parameter \"{name}\": \"{v}\""),
                            detail: None,
                            hint: Some("Available values: escape, hex.".into()),
                        })
                    }
                }
            }
            "client_encoding" => {
                let e = v.trim_matches('\'').to_ascii_lowercase().replace(['-', '_'], "");
                if e != "utf8" && e != "unicode" {
                    return Err(unsupported(name, v, "the only encoding is UTF8"));
                }
            }
            "standard_conforming_strings" => {
                if !parse_bool(name, v)? {
                    return Err(unsupported(name, v, "backslashes in strings are always literal"));
                }
            }
            "escape_string_warning" => self.escape_string_warning = parse_bool(name, v)?,
            "idle_in_transaction_session_timeout" => {
                if super::parse_duration(name, v)? != std::time::Duration::ZERO {
                    return Err(unsupported(name, v, "idle sessions are never timed out yet"));
                }
            }
            _ => return Err(SettingError::Unknown(name.into())),
        }
        Ok(())
    }

    /// SHOW for one of [`SESSION`] or [`FIXED`].
    pub(super) fn show(&self, name: &str) -> Option<String> {
        Some(match name {
            "client_min_messages" => self.client_min_messages.clone(),
            "extra_float_digits" => self.extra_float_digits.to_string(),
            "search_path" => self.search_path.clone(),
            "timezone" => self.time_zone.clone(),
            "datestyle" => self.style().show_datestyle(),
            "intervalstyle" => self.style().show_intervalstyle().into(),
            "bytea_output" => if self.bytea_escape { "escape" } else { "hex" }.into(),
            "client_encoding" | "server_encoding" => "UTF8".into(),
            "standard_conforming_strings" | "integer_datetimes" | "is_superuser" => "on".into(),
            "idle_in_transaction_session_timeout" => "0".into(),
            "escape_string_warning" => if self.escape_string_warning { "on" } else { "off" }.into(),
            "server_version_num" => "150000".into(),
            "max_identifier_length" => "63".into(),
            "lc_collate" | "lc_ctype" => "C".into(),
            "session_authorization" => self.session_user.clone(),
            _ => return None,
        })
    }

    /// Whether a message of `severity` (NOTICE, WARNING, …) reaches the
    /// client under client_min_messages.
    pub fn sends(&self, severity: &str) -> bool {
        self.message_filter().sends(severity)
    }

    /// client_min_messages as a filter that needs no settings at hand (a
    /// statement that streams its notices holds the session).
    pub fn message_filter(&self) -> MessageFilter {
        MessageFilter(level_rank(&self.client_min_messages))
    }
}

/// Which messages reach the client: client_min_messages' rank among the
/// levels (`None`: an unknown level, everything is sent).
#[derive(Clone, Copy, Debug)]
pub struct MessageFilter(Option<usize>);

impl MessageFilter {
    /// Whether a message of `severity` reaches the client.
    pub fn sends(self, severity: &str) -> bool {
        match (level_rank(severity), self.0) {
            // INFO is always sent, as in PostgreSQL.
            (Some(9), _) => true,
            (Some(s), Some(min)) => s >= min.min(8),
            _ => true,
        }
    }
}

fn level_rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.eq_ignore_ascii_case(level))
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapscale_sqlstate::SqlState;

    #[test]
    fn values_clients_send_are_taken_and_the_rest_refused() {
        let mut c = ClientSettings::default();
        for (name, value) in [
            ("extra_float_digits", "3"),
            ("timezone", "Etc/UTC"),
            ("datestyle", "ISO, DMY"),
            ("search_path", "public"),
            ("client_encoding", "'utf-8'"),
            ("client_min_messages", "warning"),
            ("standard_conforming_strings", "on"),
        ] {
            c.apply(name, value).unwrap().unwrap();
        }
        assert_eq!(c.show("datestyle").unwrap(), "ISO, DMY");
        assert_eq!(c.show("timezone").unwrap(), "Etc/UTC");
        assert!(!c.sends("NOTICE") && c.sends("WARNING"));
        c.apply("timezone", "europe/paris").unwrap().unwrap();
        assert_eq!(c.show("timezone").unwrap(), "Europe/Paris");
        assert!(matches!(c.zone, Zone::Named(_)));
        c.apply("timezone", "LOCAL").unwrap().unwrap();
        assert_eq!((c.show("timezone").unwrap(), c.zone), ("UTC".into(), Zone::UTC));
        assert_eq!(
            c.apply("timezone", "Mars/Olympus").unwrap().unwrap_err().sqlstate(),
            SqlState::INVALID_PARAMETER_VALUE
        );
        c.apply("datestyle", "Postgres").unwrap().unwrap();
        assert_eq!(c.show("datestyle").unwrap(), "Postgres, DMY", "the order not named is kept");
        c.apply("intervalstyle", "iso_8601").unwrap().unwrap();
        assert_eq!(c.show("intervalstyle").unwrap(), "iso_8601");
        let e = snapscale_values::SqlError::from(c.apply("datestyle", "ISO, Postgres").unwrap().unwrap_err());
        assert_eq!(e.detail.as_deref(), Some("Conflicting \"datestyle\" specifications."));
        for (name, value) in [
            ("extra_float_digits", "0"),
            ("client_encoding", "LATIN1"),
            ("standard_conforming_strings", "off"),
        ] {
            assert_eq!(
                c.apply(name, value).unwrap().unwrap_err().sqlstate(),
                SqlState::FEATURE_NOT_SUPPORTED,
                "{name} = {value}"
            );
        }
        assert_eq!(
            c.apply("extra_float_digits", "9").unwrap().unwrap_err().sqlstate(),
            SqlState::INVALID_PARAMETER_VALUE
        );
        assert!(c.apply("port", "1").is_none());
    }
}
