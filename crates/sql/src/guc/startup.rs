//! The settings a client asks for in its startup packet: every parameter
//! besides `user`, `database` and `replication` is a setting for the new
//! session (pgjdbc sends TimeZone and DateStyle, libpq sends PGTZ as
//! `timezone`), and `options` carries more as `-c name=value` (PGOPTIONS).
//!
//! A bad value ends the connection (FATAL, with the setting's SQLSTATE), as
//! in PostgreSQL. A name snapscale does not know is passed over: PostgreSQL
//! has hundreds of settings, and a driver that sets one of them should not
//! fail to connect here; SET of the same name still answers 42704.

use std::collections::BTreeMap;

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::{SettingError, Settings};

/// Startup parameters that are not settings.
const NOT_SETTINGS: [&str; 4] = ["user", "database", "replication", "options"];

/// `base` (the server's session defaults) as the startup packet's
/// `params` change it.
pub fn session_settings<'a>(
    base: &Settings,
    params: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Result<Settings, SqlError> {
    let params: BTreeMap<&String, &String> = params.into_iter().collect();
    let mut settings = base.clone();
    let param = |name: &str| params.iter().find(|(k, _)| k.as_str() == name).map(|(_, v)| (*v).clone());
    let user = param("user").unwrap_or_default();
    settings.session.client.database = param("database").filter(|d| !d.is_empty()).unwrap_or(user.clone());
    settings.session.client.session_user = user;
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let Some(options) = param("options") {
        pairs.extend(command_line(&options)?);
    }
    // The packet's own parameters win over `options`, applied after them.
    pairs.extend(
        params
            .iter()
            .filter(|(k, _)| !NOT_SETTINGS.contains(&k.as_str()))
            .map(|(k, v)| ((*k).clone(), (*v).clone())),
    );
    for (name, value) in pairs {
        let name = name.to_ascii_lowercase();
        if name == "application_name" {
            settings.session.application_name = value;
            continue;
        }
        match settings.set_in_session(&name, &value) {
            Ok(()) | Err(SettingError::Unknown(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(settings)
}

/// `options`: white-space separated switches, a backslash escaping the
/// next character; `-c name=value`, `-cname=value` and `--name=value` set
/// a setting (PostgreSQL's `-` in a name reads as `_`).
fn command_line(options: &str) -> Result<Vec<(String, String)>, SqlError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let bad = |w: &str| {
        let mut e = SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("invalid command-line argument for server process: {w}"),
        );
        e.hint = Some("Try \"postgres --help\" for more information.".into());
        e
    };
    let mut pairs = Vec::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let assignment = if w == "-c" {
            words.next().ok_or_else(|| bad(&w))?
        } else if let Some(rest) = w.strip_prefix("--").or_else(|| w.strip_prefix("-c")) {
            rest.to_owned()
        } else {
            return Err(bad(&w));
        };
        let (name, value) = assignment.split_once('=').ok_or_else(|| bad(&w))?;
        pairs.push((name.replace('-', "_"), value.to_owned()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn startup_parameters_become_the_sessions_settings() {
        let s = session_settings(
            &Settings::default(),
            params(&[
                ("user", "alice"),
                ("TimeZone", "Europe/Paris"),
                ("DateStyle", "ISO"),
                ("extra_float_digits", "3"),
                ("client_encoding", "UTF8"),
                ("application_name", "app"),
                ("some_setting_of_postgresql", "1"),
                ("options", "-c search_path=s1 --statement-timeout=5s -clock_timeout=1s"),
            ])
            .iter()
            .map(|(k, v)| (k, v)),
        )
        .unwrap();
        assert_eq!(s.show("timezone").unwrap(), "Europe/Paris");
        assert_eq!(s.show("search_path").unwrap(), "s1");
        assert_eq!(s.show("statement_timeout").unwrap(), "5s");
        assert_eq!(s.show("lock_timeout").unwrap(), "1s");
        assert_eq!(s.session.application_name, "app");
        assert_eq!(
            (s.session.client.session_user.as_str(), s.session.client.database.as_str()),
            ("alice", "alice")
        );
    }

    #[test]
    fn bad_values_end_the_connection_with_their_sqlstate() {
        let refuse = |pairs: &[(&str, &str)]| {
            session_settings(&Settings::default(), params(pairs).iter().map(|(k, v)| (k, v)))
                .unwrap_err()
                .code
                .code()
                .to_owned()
        };
        assert_eq!(refuse(&[("user", "u"), ("TimeZone", "Mars/Olympus")]), "22023");
        assert_eq!(refuse(&[("user", "u"), ("options", "-x")]), "42601");
        assert_eq!(refuse(&[("user", "u"), ("max_connections", "5")]), "55P02");
    }
}
