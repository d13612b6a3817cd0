//! Every setting, in one place: PostgreSQL's names, how a value is read
//! and shown, and why one is refused, with PostgreSQL's spellings and
//! SQLSTATEs.
//!
//! ```text
//!   server.rs    Settings: the server's own (port, max_connections,
//!                snapshot_mode, the WAL, autovacuum, …; a restart changes
//!                them) and every session's start-up values; the config
//!                file; the combination checked before the server starts
//!   session.rs   SessionSettings: what SET changes in one session
//!   client.rs    ClientSettings: what drivers set and read at start-up
//!                (TimeZone, DateStyle, …) and the fixed facts they check
//!   startup.rs   a startup packet's parameters as a session's settings
//!   tunables.rs  settings checked and kept but tuning machinery this
//!                engine lacks (work_mem, parallel query, JIT, …)
//!   conninfo.rs  primary_conninfo's keyword/value connection string
//!   tls.rs       ssl, ssl_cert_file, …: what a reload reads again
//! ```
//!
//! Both [`Settings`] and [`SessionSettings`] implement [`Gucs`], the
//! settings a session runs over: the server runs its sessions over the
//! first, the script runner (`tests/scripts.rs`) over the second.
//!
//! [`Gucs`]: crate::Gucs

use std::fmt;
use std::time::Duration;

use snapscale_engine::IsolationLevel;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

mod client;
mod conninfo;
mod server;
mod session;
mod startup;
mod tls;
mod tunables;

pub use crate::plan::switches::PlannerSettings;
pub use client::ClientSettings;
pub use conninfo::Conninfo;
pub use server::{AuthMethod, ConfigError, Settings, SERVER_VERSION};
pub use session::SessionSettings;
pub use startup::session_settings;
pub use tls::{TlsSettings, TlsVersion};

/// Why a setting could not be set or shown; each maps to PostgreSQL's
/// SQLSTATE ([`SettingError::sqlstate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// No such setting (42704).
    Unknown(String),
    /// A bad value (22023): PostgreSQL's message, and what it would say
    /// beside it.
    InvalidValue { message: String, detail: Option<String>, hint: Option<String> },
    /// Needs a restart (55P02).
    RestartOnly(String),
    /// Changes only at a reload (55P02).
    ReloadOnly(String),
    /// Never changes (55P02).
    Fixed(String),
    /// A value PostgreSQL accepts that snapscale cannot honour (0A000).
    Unsupported { name: String, value: String, why: String },
    /// A custom setting's name that is not identifiers joined by dots
    /// (42602).
    BadName(String),
    /// A value naming an object of the wrong kind (55000), PostgreSQL's
    /// message.
    WrongKind(String),
}

impl SettingError {
    /// PostgreSQL's SQLSTATE.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            SettingError::Unknown(_) => SqlState::UNDEFINED_OBJECT,
            SettingError::InvalidValue { .. } => SqlState::INVALID_PARAMETER_VALUE,
            SettingError::RestartOnly(_) | SettingError::ReloadOnly(_) | SettingError::Fixed(_) => {
                SqlState::CANT_CHANGE_RUNTIME_PARAM
            }
            SettingError::Unsupported { .. } => SqlState::FEATURE_NOT_SUPPORTED,
            SettingError::BadName(_) => SqlState::INVALID_NAME,
            SettingError::WrongKind(_) => SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
        }
    }
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingError::Unknown(name) => write!(f, "unrecognized configuration parameter \"{name}\""),
            SettingError::InvalidValue { message, detail, hint } => {
                write!(f, "{message}")?;
                match (detail, hint) {
                    (Some(d), _) => write!(f, " ({})", d.trim_end_matches('.')),
                    (None, Some(h)) => write!(f, " ({h})"),
                    (None, None) => Ok(()),
                }
            }
            SettingError::RestartOnly(name) => {
                write!(f, "parameter \"{name}\" cannot be changed without restarting the server")
            }
            SettingError::ReloadOnly(name) => write!(f, "parameter \"{name}\" cannot be changed now"),
            SettingError::Fixed(name) => write!(f, "parameter \"{name}\" cannot be changed"),
            SettingError::Unsupported { name, value, why } => {
                write!(f, "parameter \"{name}\" cannot be set to \"{value}\": {why}")
            }
            SettingError::BadName(name) => write!(f, "invalid configuration parameter name \"{name}\""),
            SettingError::WrongKind(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for SettingError {}

impl From<SettingError> for SqlError {
    fn from(e: SettingError) -> SqlError {
        let code = e.sqlstate();
        match e {
            SettingError::InvalidValue { message, detail, hint } => {
                let mut error = SqlError::new(code, message);
                error.detail = detail;
                error.hint = hint;
                error
            }
            SettingError::BadName(_) => SqlError::new(code, e.to_string()).with_detail(
                "Custom parameter names must be two or more simple identifiers separated by dots.",
            ),
            other => SqlError::new(code, other.to_string()),
        }
    }
}

/// A bad value, as PostgreSQL words it, with why as a hint.
pub fn invalid(name: &str, value: &str, hint: &str) -> SettingError {
    SettingError::InvalidValue {
        message: format!("invalid value for parameter \"{name}\": \"{value}\""),
        detail: None,
        hint: Some(hint.to_owned()),
    }
}

/// Parses a PostgreSQL time value: a number with an optional unit (ms, s,
/// min, h, d); no unit means milliseconds, as for deadlock_timeout.
pub fn parse_duration(name: &str, value: &str) -> Result<Duration, SettingError> {
    let v = value.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(split);
    let n: u64 = digits.parse().map_err(|_| invalid(name, value, "expected a time such as 1s or 500ms"))?;
    let ms = match unit.trim() {
        "" | "ms" => n,
        "s" => n * 1_000,
        "min" => n * 60_000,
        "h" => n * 3_600_000,
        "d" => n * 86_400_000,
        _ => return Err(invalid(name, value, "valid units are ms, s, min, h and d")),
    };
    Ok(Duration::from_millis(ms))
}

/// A time as PostgreSQL shows it: in the largest unit that divides it, and
/// a disabled timeout (0) without a unit.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0".to_owned();
    }
    for (unit, size) in [("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000)] {
        if ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// A boolean as PostgreSQL reads one.
pub fn parse_bool(name: &str, value: &str) -> Result<bool, SettingError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(SettingError::InvalidValue {
            message: format!("parameter \"{name}\" requires a Boolean value"),
            detail: None,
            hint: None,
        }),
    }
}

/// A boolean as PostgreSQL shows one.
pub fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// A number of bytes with an optional unit (kB, MB, GB); a bare number is
/// in units of `1 << default_shift` bytes.
pub fn parse_bytes(name: &str, value: &str, default_shift: u32) -> Result<u64, SettingError> {
    let v = value.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(split);
    let n: u64 = digits.parse().map_err(|_| invalid(name, value, "expected a size such as 64MB"))?;
    let shift = match unit.trim() {
        "" => default_shift,
        "kB" => 10,
        "MB" => 20,
        "GB" => 30,
        _ => return Err(invalid(name, value, "valid units are kB, MB and GB")),
    };
    n.checked_mul(1 << shift).ok_or_else(|| invalid(name, value, "too large"))
}

/// A size as PostgreSQL shows it: the largest unit that divides it.
pub fn format_bytes(bytes: u64) -> String {
    if bytes != 0 && bytes.is_multiple_of(1 << 30) {
        format!("{}GB", bytes >> 30)
    } else if bytes != 0 && bytes.is_multiple_of(1 << 20) {
        format!("{}MB", bytes >> 20)
    } else {
        format!("{}kB", bytes >> 10)
    }
}

/// Parses an isolation level as PostgreSQL spells it. SERIALIZABLE is
/// refused (0A000 at the statement level; here an invalid value), never
/// silently downgraded; READ UNCOMMITTED behaves as READ COMMITTED, as in
/// PostgreSQL.
pub fn parse_isolation(name: &str, value: &str) -> Result<IsolationLevel, SettingError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "read committed" | "read uncommitted" => Ok(IsolationLevel::ReadCommitted),
        "repeatable read" => Ok(IsolationLevel::RepeatableRead),
        "serializable" => Err(invalid(name, value, "SERIALIZABLE is not supported yet")),
        _ => Err(invalid(name, value, "expected read committed or repeatable read")),
    }
}

/// PostgreSQL's spelling of an isolation level.
pub fn isolation_name(level: IsolationLevel) -> &'static str {
    match level {
        IsolationLevel::ReadCommitted => "read committed",
        IsolationLevel::RepeatableRead => "repeatable read",
    }
}
