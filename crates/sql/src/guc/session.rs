//! One session's settings besides the client's: timeouts, the default
//! isolation, synchronous_commit, and the limits on a statement's work
//! (max_stack_depth, temp_file_limit), as SET changes them and SHOW shows
//! them.

use std::time::Duration;

use snapscale_engine::{IsolationLevel, WaitPolicy};
use snapscale_values::SqlError;

use super::client::{self, ClientSettings};
use super::{
    format_bytes, format_duration, isolation_name, on_off, parse_bool, parse_bytes, parse_duration,
    parse_isolation, SettingError,
};
use crate::session::Gucs;
use crate::stack::{DEFAULT_MAX_STACK_DEPTH, MAX_MAX_STACK_DEPTH};

/// max_stack_depth: kB by default, PostgreSQL's lower bound, and no more
/// than the statement threads' stacks hold (PostgreSQL's bound is the
/// platform's stack limit; its messages, with our bound).
fn parse_stack_depth(name: &str, value: &str) -> Result<usize, SettingError> {
    let bytes = parse_bytes(name, value, 10)?;
    let kb = bytes >> 10;
    if kb < 100 || kb > i32::MAX as u64 {
        return Err(SettingError::InvalidValue {
            message: format!(
                "{kb} kB is outside the valid range for parameter \"{name}\" (100 .. 2147483647)"
            ),
            detail: None,
            hint: None,
        });
    }
    if bytes > MAX_MAX_STACK_DEPTH as u64 {
        return Err(SettingError::InvalidValue {
            message: format!("invalid value for parameter \"{name}\": {kb}"),
            detail: Some(format!("\"{name}\" must not exceed {}kB.", MAX_MAX_STACK_DEPTH >> 10)),
            hint: Some("The threads that run statements leave no more for it.".into()),
        });
    }
    Ok(bytes as usize)
}

/// temp_file_limit: kB by default, -1 for no limit, PostgreSQL's range.
fn parse_temp_file_limit(name: &str, value: &str) -> Result<Option<u64>, SettingError> {
    if value.trim() == "-1" {
        return Ok(None);
    }
    let bytes = parse_bytes(name, value, 10)?;
    if bytes >> 10 > i32::MAX as u64 {
        return Err(SettingError::InvalidValue {
            message: format!(
                "{} kB is outside the valid range for parameter \"{name}\" (-1 .. 2147483647)",
                bytes >> 10
            ),
            detail: None,
            hint: None,
        });
    }
    Ok(Some(bytes))
}

/// A custom setting's name is two or more identifiers joined by dots
/// (PostgreSQL's placeholder rule; SET folds case before it gets here).
fn check_custom_name(name: &str) -> Result<(), SettingError> {
    let identifier = |part: &str| {
        let mut chars = part.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_' || !c.is_ascii())
            && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii())
    };
    if name.split('.').all(identifier) {
        Ok(())
    } else {
        Err(SettingError::BadName(name.into()))
    }
}

/// One session's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSettings {
    /// Longest statement, zero = no limit (`statement_timeout`).
    pub statement_timeout: Duration,
    /// Wait before checking for deadlock (`deadlock_timeout`).
    pub deadlock_timeout: Duration,
    /// Longest lock wait, zero = forever (`lock_timeout`).
    pub lock_timeout: Duration,
    /// Isolation of new transactions (`default_transaction_isolation`).
    pub default_transaction_isolation: IsolationLevel,
    /// The client's application name (`application_name`).
    pub application_name: String,
    /// Acknowledge a commit only after its WAL is durable
    /// (`synchronous_commit`; off bounds the loss to one flush cycle).
    pub synchronous_commit: bool,
    /// How much stack statement work may use (`max_stack_depth`, bytes);
    /// deeper recursion fails with 54001.
    pub max_stack_depth: usize,
    /// How much a statement may hold of what PostgreSQL would spill to
    /// temporary files (`temp_file_limit`, bytes; `None`: -1, no limit).
    pub temp_file_limit: Option<u64>,
    /// What clients set and read at start-up (TimeZone, DateStyle, …).
    pub client: ClientSettings,
    /// The planner's enable_* switches.
    pub planner: super::PlannerSettings,
    /// Settings no module defines, named `prefix.name` (`SET app.user_id
    /// = '42'`): applications and row-level-security policies keep their
    /// own values here, as PostgreSQL's placeholder variables.
    pub custom: std::collections::BTreeMap<String, String>,
    /// `session_replication_role`: origin, replica or local (which
    /// triggers fire).
    pub session_replication_role: String,
    /// work_mem, parallel query's, JIT's and the like: checked and kept,
    /// acting on nothing here (guc/tunables.rs).
    pub tunables: super::tunables::Tunables,
}

impl Default for SessionSettings {
    fn default() -> Self {
        Self {
            statement_timeout: Duration::ZERO,
            deadlock_timeout: Duration::from_secs(1),
            lock_timeout: Duration::ZERO,
            default_transaction_isolation: IsolationLevel::ReadCommitted,
            application_name: String::new(),
            synchronous_commit: true,
            max_stack_depth: DEFAULT_MAX_STACK_DEPTH,
            temp_file_limit: Some(crate::limits::DEFAULT_TEMP_FILE_LIMIT),
            client: ClientSettings::default(),
            planner: super::PlannerSettings::default(),
            custom: std::collections::BTreeMap::new(),
            session_replication_role: "origin".into(),
            tunables: super::tunables::Tunables::default(),
        }
    }
}

/// The session settings besides the client's.
const NAMES: [&str; 9] = [
    "statement_timeout",
    "deadlock_timeout",
    "lock_timeout",
    "default_transaction_isolation",
    "application_name",
    "synchronous_commit",
    "max_stack_depth",
    "temp_file_limit",
    "session_replication_role",
];

impl SessionSettings {
    /// Whether SET may change `name` (lower-case) in a session.
    pub fn is_session(name: &str) -> bool {
        NAMES.contains(&name)
            || client::SESSION.contains(&name)
            || super::PlannerSettings::names().any(|n| n == name)
            || super::tunables::Tunables::has(name)
    }

    /// Whether `name` (lower-case) is a read-only fact (55P02 for SET).
    pub fn is_fixed(name: &str) -> bool {
        client::FIXED.contains(&name)
    }

    /// SET name = value.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        if Self::is_fixed(name) {
            return Err(SettingError::Fixed(name.into()));
        }
        if let Some(result) = self.client.apply(name, value) {
            return result;
        }
        if super::PlannerSettings::is_switch(name) {
            self.planner.set(name, parse_bool(name, value)?);
            return Ok(());
        }
        if super::tunables::Tunables::has(name) {
            return self.tunables.set(name, value);
        }
        match name {
            "statement_timeout" => self.statement_timeout = parse_duration(name, value)?,
            "deadlock_timeout" => self.deadlock_timeout = parse_duration(name, value)?,
            "lock_timeout" => self.lock_timeout = parse_duration(name, value)?,
            "default_transaction_isolation" => {
                self.default_transaction_isolation = parse_isolation(name, value)?
            }
            "application_name" => self.application_name = value.into(),
            "synchronous_commit" => self.synchronous_commit = parse_bool(name, value)?,
            "max_stack_depth" => self.max_stack_depth = parse_stack_depth(name, value)?,
            "temp_file_limit" => self.temp_file_limit = parse_temp_file_limit(name, value)?,
            "session_replication_role" => {
                let v = value.to_ascii_lowercase();
                if !["origin", "replica", "local"].contains(&v.as_str()) {
                    return Err(SettingError::InvalidValue {
                        message: format!("invalid value for parameter \"{name}\": \"{value}\""),
                        detail: None,
                        hint: Some("Available values: origin, replica, local.".into()),
                    });
                }
                self.session_replication_role = v;
            }
            _ if name.contains('.') => {
                check_custom_name(name)?;
                self.custom.insert(name.into(), value.into());
            }
            _ => return Err(SettingError::Unknown(name.into())),
        }
        Ok(())
    }

    /// The value `SHOW name` prints.
    pub fn show(&self, name: &str) -> Result<String, SettingError> {
        if let Some(value) =
            self.client.show(name).or_else(|| self.planner.show(name)).or_else(|| self.tunables.show(name))
        {
            return Ok(value);
        }
        Ok(match name {
            "statement_timeout" => format_duration(self.statement_timeout),
            "deadlock_timeout" => format_duration(self.deadlock_timeout),
            "lock_timeout" => format_duration(self.lock_timeout),
            "default_transaction_isolation" => isolation_name(self.default_transaction_isolation).into(),
            "application_name" => self.application_name.clone(),
            "synchronous_commit" => on_off(self.synchronous_commit),
            "max_stack_depth" => format_bytes(self.max_stack_depth as u64),
            "temp_file_limit" => self.temp_file_limit.map_or_else(|| "-1".into(), format_bytes),
            "session_replication_role" => self.session_replication_role.clone(),
            _ => match self.custom.get(name) {
                Some(value) => value.clone(),
                None => return Err(SettingError::Unknown(name.into())),
            },
        })
    }
}

impl Gucs for SessionSettings {
    fn set(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        SessionSettings::set(self, name, value).map_err(SqlError::from)
    }

    fn show(&self, name: &str) -> Result<String, SqlError> {
        SessionSettings::show(self, name).map_err(SqlError::from)
    }

    fn setting_names(&self) -> Vec<(&'static str, &'static str)> {
        let user = NAMES
            .iter()
            .chain(client::SESSION.iter())
            .copied()
            .chain(super::PlannerSettings::names())
            .chain(super::tunables::Tunables::names());
        user.map(|n| (n, "user")).chain(client::FIXED.iter().map(|n| (*n, "internal"))).collect()
    }

    fn planner(&self) -> super::PlannerSettings {
        self.planner
    }

    fn default_isolation(&self) -> IsolationLevel {
        self.default_transaction_isolation
    }

    fn synchronous_commit(&self) -> bool {
        self.synchronous_commit
    }

    fn max_stack_depth(&self) -> usize {
        self.max_stack_depth
    }

    fn temp_file_limit(&self) -> Option<u64> {
        self.temp_file_limit
    }

    fn statement_timeout(&self) -> Option<Duration> {
        (!self.statement_timeout.is_zero()).then_some(self.statement_timeout)
    }

    fn search_path(&self) -> String {
        self.show("search_path").unwrap_or_else(|_| "\"$user\", public".into())
    }

    fn session_user(&self) -> String {
        self.client.session_user.clone()
    }

    fn database(&self) -> String {
        self.client.database.clone()
    }

    fn time_zone(&self) -> snapscale_values::Zone {
        self.client.zone
    }

    fn style(&self) -> snapscale_values::Style {
        self.client.style()
    }

    fn wait_policy(&self) -> WaitPolicy {
        WaitPolicy {
            deadlock_timeout: self.deadlock_timeout,
            lock_timeout: (!self.lock_timeout.is_zero()).then_some(self.lock_timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use snapscale_sqlstate::SqlState;

    use super::*;

    #[test]
    fn session_settings_read_show_and_refuse_as_postgresql() {
        let mut s = SessionSettings::default();
        s.set("lock_timeout", "2s").unwrap();
        assert_eq!(s.show("lock_timeout").unwrap(), "2s");
        for (value, shown) in
            [("1500", "1500ms"), ("2000ms", "2s"), ("60s", "1min"), ("90min", "90min"), ("24h", "1d")]
        {
            s.set("deadlock_timeout", value).unwrap();
            assert_eq!(s.show("deadlock_timeout").unwrap(), shown, "{value}");
        }
        assert_eq!(s.show("statement_timeout").unwrap(), "0");
        let e = s.set("lock_timeout", "2 fortnights").unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(
            SqlError::from(e).message,
            "invalid value for parameter \"lock_timeout\": \"2 fortnights\""
        );
        assert_eq!(
            s.set("default_transaction_isolation", "serializable").unwrap_err().sqlstate(),
            SqlState::INVALID_PARAMETER_VALUE
        );
        assert_eq!(s.show("max_stack_depth").unwrap(), "2MB");
        s.set("max_stack_depth", "512").unwrap();
        assert_eq!(s.max_stack_depth, 512 << 10);
        let e = SqlError::from(s.set("max_stack_depth", "1GB").unwrap_err());
        assert_eq!(
            (e.code, e.message.as_str()),
            (SqlState::INVALID_PARAMETER_VALUE, "invalid value for parameter \"max_stack_depth\": 1048576")
        );
        let e = SqlError::from(s.set("max_stack_depth", "10kB").unwrap_err());
        assert_eq!(
            e.message,
            "10 kB is outside the valid range for parameter \"max_stack_depth\" (100 .. 2147483647)"
        );
        assert_eq!(s.set("no_such", "5").unwrap_err().sqlstate(), SqlState::UNDEFINED_OBJECT);
        assert_eq!(s.show("no_such").unwrap_err().sqlstate(), SqlState::UNDEFINED_OBJECT);
        let e = s.set("server_version_num", "1").unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::CANT_CHANGE_RUNTIME_PARAM);
        assert_eq!(s.show("server_version_num").unwrap(), "150000");
    }
}
