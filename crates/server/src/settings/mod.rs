//! Server settings: PostgreSQL's names, from a config file, flags and `SET`.
//!
//! A config file holds `name = value` lines (`#` starts a comment, values
//! may be single-quoted), as postgresql.conf does. Flags override the file.
//! Settings marked `restart` can only be changed by restarting; the others
//! can also be changed per session with `SET`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use snapscale_sql::{IsolationLevel, SnapshotMode};

mod client;

pub use client::ClientSettings;

/// Every setting the server knows.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Address to listen on (`listen_addresses`; one address).
    pub listen_addresses: String,
    /// TCP port (`port`).
    pub port: u16,
    /// Data directory (`data_directory`).
    pub data_directory: PathBuf,
    /// Most concurrent connections (`max_connections`).
    pub max_connections: usize,
    /// Snapshot strategy (`snapshot_mode`).
    pub snapshot_mode: SnapshotMode,
    /// Wait before checking for deadlock (`deadlock_timeout`).
    pub deadlock_timeout: Duration,
    /// Longest lock wait, zero = forever (`lock_timeout`).
    pub lock_timeout: Duration,
    /// Longest statement, zero = no limit (`statement_timeout`).
    pub statement_timeout: Duration,
    /// Isolation of new transactions (`default_transaction_isolation`).
    pub default_transaction_isolation: IsolationLevel,
    /// The client's application name (`application_name`).
    pub application_name: String,
    /// How clients authenticate (`auth_method`).
    pub auth_method: AuthMethod,
    /// The password every role authenticates with under `scram-sha-256`
    /// (`password`; never shown).
    pub password: Option<String>,
    /// Acknowledge a commit only after its WAL is durable
    /// (`synchronous_commit`; off bounds the loss to one flush cycle).
    pub synchronous_commit: bool,
    /// fdatasync the WAL (`fsync`; off only for benchmarks: a crash of the
    /// machine can then lose anything not yet written back).
    pub fsync: bool,
    /// Longest time between checkpoints (`checkpoint_timeout`).
    pub checkpoint_timeout: Duration,
    /// WAL volume that triggers a checkpoint (`max_wal_size`, bytes).
    pub max_wal_size: u64,
    /// How much stack statement work may use (`max_stack_depth`, bytes);
    /// deeper recursion fails with 54001.
    pub max_stack_depth: usize,
    /// The longest frontend message accepted (`max_message_size`, bytes);
    /// a longer declared length ends the connection before anything is
    /// allocated for it.
    pub max_message_size: usize,
    /// Where a standby's primary is (`primary_conninfo`: `host=… port=…
    /// user=… [password=…]`); set, the server is a hot standby.
    pub primary_conninfo: Option<String>,
    /// Most standbys streaming at once (`max_wal_senders`).
    pub max_wal_senders: usize,
    /// What clients set and read at start-up (TimeZone, DateStyle, …).
    pub client: ClientSettings,
}

/// How clients authenticate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AuthMethod {
    /// No password (only allowed while listening on loopback).
    Trust,
    /// SCRAM-SHA-256 with the configured `password`.
    ScramSha256,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen_addresses: "127.0.0.1".into(),
            port: 5433,
            data_directory: PathBuf::from("snapscale-data"),
            max_connections: 100,
            snapshot_mode: SnapshotMode::Csn,
            deadlock_timeout: Duration::from_secs(1),
            lock_timeout: Duration::ZERO,
            statement_timeout: Duration::ZERO,
            default_transaction_isolation: IsolationLevel::ReadCommitted,
            application_name: String::new(),
            auth_method: AuthMethod::Trust,
            password: None,
            synchronous_commit: true,
            fsync: true,
            checkpoint_timeout: Duration::from_secs(300),
            max_wal_size: 256 << 20,
            max_stack_depth: snapscale_sql::stack::DEFAULT_MAX_STACK_DEPTH,
            max_message_size: 64 << 20,
            primary_conninfo: None,
            max_wal_senders: 10,
            client: ClientSettings::default(),
        }
    }
}

/// When a setting may change.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Context {
    /// Only at server start (PostgreSQL's postmaster context).
    Restart,
    /// Also per session, with `SET`.
    Session,
}

/// Why a setting could not be set; each maps to PostgreSQL's SQLSTATE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// No such setting (42704).
    Unknown(String),
    /// A bad value (22023).
    InvalidValue { name: String, value: String, hint: String },
    /// Needs a restart (55P02).
    RestartOnly(String),
    /// Never changes (55P02).
    Fixed(String),
    /// A value PostgreSQL accepts that snapscale cannot honour (0A000).
    Unsupported { name: String, value: String, why: String },
    /// A config file line that is not `name = value` (F0000).
    BadLine { path: PathBuf, line: usize },
    /// The config file cannot be read (58P01).
    Io { path: PathBuf, message: String },
}

impl SettingError {
    /// PostgreSQL's SQLSTATE.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            SettingError::Unknown(_) => "42704",
            SettingError::InvalidValue { .. } => "22023",
            SettingError::RestartOnly(_) | SettingError::Fixed(_) => "55P02",
            SettingError::Unsupported { .. } => "0A000",
            SettingError::BadLine { .. } => "F0000",
            SettingError::Io { .. } => "58P01",
        }
    }
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingError::Unknown(name) => write!(f, "unrecognized configuration parameter \"{name}\""),
            SettingError::InvalidValue { name, value, hint } => {
                write!(f, "invalid value for parameter \"{name}\": \"{value}\" ({hint})")
            }
            SettingError::RestartOnly(name) => {
                write!(f, "parameter \"{name}\" cannot be changed without restarting the server")
            }
            SettingError::Fixed(name) => write!(f, "parameter \"{name}\" cannot be changed"),
            SettingError::Unsupported { name, value, why } => {
                write!(f, "parameter \"{name}\" cannot be set to \"{value}\": {why}")
            }
            SettingError::BadLine { path, line } => {
                write!(f, "syntax error in file \"{}\" line {line}: expected name = value", path.display())
            }
            SettingError::Io { path, message } => {
                write!(f, "could not read configuration file \"{}\": {message}", path.display())
            }
        }
    }
}

impl std::error::Error for SettingError {}

/// The names `SHOW` and `SET` accept, with their context.
const NAMES: [(&str, Context); 23] = [
    ("statement_timeout", Context::Session),
    ("auth_method", Context::Restart),
    ("password", Context::Restart),
    ("listen_addresses", Context::Restart),
    ("port", Context::Restart),
    ("data_directory", Context::Restart),
    ("max_connections", Context::Restart),
    ("snapshot_mode", Context::Restart),
    ("deadlock_timeout", Context::Session),
    ("lock_timeout", Context::Session),
    ("default_transaction_isolation", Context::Session),
    ("application_name", Context::Session),
    ("server_version", Context::Restart),
    ("synchronous_commit", Context::Session),
    ("fsync", Context::Restart),
    ("checkpoint_timeout", Context::Restart),
    ("max_wal_size", Context::Restart),
    ("max_stack_depth", Context::Session),
    ("max_message_size", Context::Restart),
    ("primary_conninfo", Context::Restart),
    ("max_wal_senders", Context::Restart),
    ("in_hot_standby", Context::Restart),
    ("transaction_read_only", Context::Restart),
];

fn invalid(name: &str, value: &str, hint: &str) -> SettingError {
    SettingError::InvalidValue { name: name.into(), value: value.into(), hint: hint.into() }
}

/// Parses a PostgreSQL time value: a number with an optional unit (ms, s,
/// min, h, d); no unit means milliseconds, as for deadlock_timeout.
fn parse_duration(name: &str, value: &str) -> Result<Duration, SettingError> {
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

fn parse_bool(name: &str, value: &str) -> Result<bool, SettingError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(invalid(name, value, "expected on or off")),
    }
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// A size: a number with kB, MB or GB; no unit means MB (as max_wal_size).
fn parse_size(name: &str, value: &str) -> Result<u64, SettingError> {
    let bytes = parse_bytes(name, value, 20)?;
    if bytes < 1 << 20 {
        return Err(invalid(name, value, "must be at least 1MB"));
    }
    Ok(bytes)
}

/// A number of bytes with an optional unit (kB, MB, GB); a bare number is
/// in units of `1 << default_shift` bytes.
fn parse_bytes(name: &str, value: &str, default_shift: u32) -> Result<u64, SettingError> {
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

/// max_stack_depth: kB by default, PostgreSQL's lower bound, and no more
/// than the statement threads' stacks hold.
fn parse_stack_depth(name: &str, value: &str) -> Result<usize, SettingError> {
    use snapscale_sql::stack::MAX_MAX_STACK_DEPTH;
    let bytes = parse_bytes(name, value, 10)?;
    if bytes < 100 << 10 {
        return Err(invalid(name, value, "must be at least 100kB"));
    }
    if bytes > MAX_MAX_STACK_DEPTH as u64 {
        return Err(invalid(
            name,
            value,
            &format!(
                "must not exceed {}kB, what the threads that run statements leave for it",
                MAX_MAX_STACK_DEPTH >> 10
            ),
        ));
    }
    Ok(bytes as usize)
}

/// max_message_size: between 1MB and PostgreSQL's own 1GB limit.
fn parse_message_size(name: &str, value: &str) -> Result<usize, SettingError> {
    let bytes = parse_size(name, value)?;
    if bytes > (1 << 30) - 1 {
        return Err(invalid(name, value, "must be less than 1GB"));
    }
    Ok(bytes as usize)
}

/// A size as PostgreSQL shows it: the largest unit that divides it.
fn format_bytes(bytes: u64) -> String {
    if bytes != 0 && bytes.is_multiple_of(1 << 30) {
        format!("{}GB", bytes >> 30)
    } else if bytes != 0 && bytes.is_multiple_of(1 << 20) {
        format!("{}MB", bytes >> 20)
    } else {
        format!("{}kB", bytes >> 10)
    }
}

fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        // PostgreSQL shows a disabled timeout without a unit.
        "0".to_owned()
    } else if ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        format!("{ms}ms")
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

/// A conninfo string with its password replaced.
fn hide_password(conninfo: &str) -> String {
    conninfo
        .split_whitespace()
        .map(|kv| if kv.starts_with("password=") { "password=********" } else { kv })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_loopback(addr: &str) -> bool {
    addr == "localhost" || addr.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What `SHOW server_version` says; the ParameterStatus sent at startup
/// carries the same string.
pub const SERVER_VERSION: &str = concat!("15.0 (snapscale ", env!("CARGO_PKG_VERSION"), ")");

impl Settings {
    fn context(name: &str) -> Result<Context, SettingError> {
        if client::SESSION.contains(&name) {
            return Ok(Context::Session);
        }
        if client::FIXED.contains(&name) {
            return Err(SettingError::Fixed(name.into()));
        }
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
            .ok_or_else(|| SettingError::Unknown(name.into()))
    }

    /// Sets `name` at server start (file or flag): every setting allowed.
    pub fn set_at_start(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        Self::context(name)?;
        self.apply(name, value)
    }

    /// Sets `name` for one session (`SET`): restart-only settings refused.
    pub fn set_in_session(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        if Self::context(name)? == Context::Restart {
            return Err(SettingError::RestartOnly(name.into()));
        }
        self.apply(name, value)
    }

    fn apply(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        if let Some(result) = self.client.apply(name, value) {
            return result;
        }
        match name {
            "listen_addresses" => self.listen_addresses = value.trim().into(),
            "port" => {
                self.port = value.trim().parse().map_err(|_| invalid(name, value, "expected 1..65535"))?
            }
            "data_directory" => self.data_directory = PathBuf::from(value.trim()),
            "max_connections" => {
                self.max_connections = value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| invalid(name, value, "expected a positive integer"))?
            }
            "snapshot_mode" => {
                self.snapshot_mode = value.trim().parse().map_err(|e: String| invalid(name, value, &e))?
            }
            "deadlock_timeout" => self.deadlock_timeout = parse_duration(name, value)?,
            "lock_timeout" => self.lock_timeout = parse_duration(name, value)?,
            "statement_timeout" => self.statement_timeout = parse_duration(name, value)?,
            "default_transaction_isolation" => {
                self.default_transaction_isolation = parse_isolation(name, value)?
            }
            "application_name" => self.application_name = value.into(),
            "auth_method" => {
                self.auth_method = match value.trim() {
                    "trust" => AuthMethod::Trust,
                    "scram-sha-256" => AuthMethod::ScramSha256,
                    _ => return Err(invalid(name, value, "expected trust or scram-sha-256")),
                }
            }
            "password" => self.password = Some(value.to_owned()).filter(|p| !p.is_empty()),
            "server_version" => return Err(SettingError::RestartOnly(name.into())),
            "synchronous_commit" => self.synchronous_commit = parse_bool(name, value)?,
            "fsync" => self.fsync = parse_bool(name, value)?,
            "checkpoint_timeout" => {
                self.checkpoint_timeout = parse_duration(name, value)
                    .ok()
                    .filter(|d| *d >= Duration::from_secs(1))
                    .ok_or_else(|| invalid(name, value, "expected a time of at least 1s"))?
            }
            "max_wal_size" => self.max_wal_size = parse_size(name, value)?,
            "max_stack_depth" => self.max_stack_depth = parse_stack_depth(name, value)?,
            "max_message_size" => self.max_message_size = parse_message_size(name, value)?,
            "primary_conninfo" => {
                self.primary_conninfo = Some(value.trim().to_owned()).filter(|c| !c.is_empty())
            }
            "max_wal_senders" => {
                self.max_wal_senders = value
                    .trim()
                    .parse()
                    .map_err(|_| invalid(name, value, "expected a non-negative integer"))?
            }
            "in_hot_standby" | "transaction_read_only" => return Err(SettingError::RestartOnly(name.into())),
            _ => return Err(SettingError::Unknown(name.into())),
        }
        Ok(())
    }

    /// The value `SHOW name` prints.
    pub fn show(&self, name: &str) -> Result<String, SettingError> {
        if let Some(value) = self.client.show(name) {
            return Ok(value);
        }
        Self::context(name)?;
        Ok(match name {
            "listen_addresses" => self.listen_addresses.clone(),
            "port" => self.port.to_string(),
            "data_directory" => self.data_directory.display().to_string(),
            "max_connections" => self.max_connections.to_string(),
            "snapshot_mode" => self.snapshot_mode.to_string(),
            "deadlock_timeout" => format_duration(self.deadlock_timeout),
            "lock_timeout" => format_duration(self.lock_timeout),
            "statement_timeout" => format_duration(self.statement_timeout),
            "default_transaction_isolation" => isolation_name(self.default_transaction_isolation).into(),
            "application_name" => self.application_name.clone(),
            "auth_method" => match self.auth_method {
                AuthMethod::Trust => "trust".into(),
                AuthMethod::ScramSha256 => "scram-sha-256".into(),
            },
            "password" => "********".into(),
            "server_version" => SERVER_VERSION.into(),
            "synchronous_commit" => on_off(self.synchronous_commit),
            "fsync" => on_off(self.fsync),
            "checkpoint_timeout" => format_duration(self.checkpoint_timeout),
            "max_wal_size" => format_bytes(self.max_wal_size),
            "max_stack_depth" => format_bytes(self.max_stack_depth as u64),
            "max_message_size" => format_bytes(self.max_message_size as u64),
            // A password in it is not shown.
            "primary_conninfo" => self.primary_conninfo.as_deref().map(hide_password).unwrap_or_default(),
            "max_wal_senders" => self.max_wal_senders.to_string(),
            "in_hot_standby" | "transaction_read_only" => on_off(self.primary_conninfo.is_some()),
            _ => return Err(SettingError::Unknown(name.into())),
        })
    }

    /// Checks the combination of settings before the server starts: SCRAM
    /// needs a password, and `trust` is only allowed on loopback (anyone who
    /// can reach the port could connect as anyone).
    pub fn check(&self) -> Result<(), SettingError> {
        let standby_mode = SnapshotMode::STANDBY.contains(&self.snapshot_mode);
        let primary_mode = SnapshotMode::ALL.contains(&self.snapshot_mode);
        match &self.primary_conninfo {
            None if !primary_mode => {
                return Err(invalid(
                    "snapshot_mode",
                    self.snapshot_mode.name(),
                    "known-assigned is a standby's snapshot mode: set primary_conninfo",
                ))
            }
            Some(_) if !standby_mode => {
                return Err(invalid(
                    "snapshot_mode",
                    self.snapshot_mode.name(),
                    "a standby takes its snapshots as known-assigned or csn",
                ))
            }
            Some(conninfo) => {
                crate::conninfo::Conninfo::parse(conninfo)
                    .map_err(|e| invalid("primary_conninfo", &hide_password(conninfo), &e))?;
            }
            None => {}
        }
        match self.auth_method {
            AuthMethod::ScramSha256 if self.password.is_none() => Err(invalid(
                "auth_method",
                "scram-sha-256",
                "set a password with `password = ...` in the config file or --set password=...",
            )),
            AuthMethod::Trust if !is_loopback(&self.listen_addresses) => Err(invalid(
                "listen_addresses",
                &self.listen_addresses,
                "auth_method = trust is only allowed on loopback; set auth_method = scram-sha-256 and a password",
            )),
            _ => Ok(()),
        }
    }

    /// Applies a config file's `name = value` lines.
    pub fn load_file(&mut self, path: &Path) -> Result<(), SettingError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SettingError::Io { path: path.into(), message: e.to_string() })?;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| SettingError::BadLine { path: path.into(), line: i + 1 })?;
            let value = value.trim();
            let value = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')).unwrap_or(value);
            self.set_at_start(name.trim(), value)?;
        }
        Ok(())
    }
}

impl snapscale_sql::Gucs for Settings {
    fn set(&mut self, name: &str, value: &str) -> Result<(), snapscale_sql::SqlError> {
        self.set_in_session(name, value).map_err(|e| {
            snapscale_sql::SqlError::new(snapscale_sql::SqlState::from_code(e.sqlstate()), e.to_string())
        })
    }

    fn show(&self, name: &str) -> Result<String, snapscale_sql::SqlError> {
        Settings::show(self, name).map_err(|e| {
            snapscale_sql::SqlError::new(snapscale_sql::SqlState::from_code(e.sqlstate()), e.to_string())
        })
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

    fn max_message_size(&self) -> usize {
        self.max_message_size
    }

    fn statement_timeout(&self) -> Option<Duration> {
        (!self.statement_timeout.is_zero()).then_some(self.statement_timeout)
    }

    fn session_user(&self) -> String {
        self.client.session_user.clone()
    }

    fn database(&self) -> String {
        self.client.database.clone()
    }

    fn wait_policy(&self) -> snapscale_sql::WaitPolicy {
        snapscale_sql::WaitPolicy {
            deadlock_timeout: self.deadlock_timeout,
            lock_timeout: (!self.lock_timeout.is_zero()).then_some(self.lock_timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_flags_and_session_rules() {
        let dir = std::env::temp_dir().join(format!("snapscale-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("snapscale.conf");
        std::fs::write(&file, "# comment\nmax_connections = 12\nsnapshot_mode = 'dense-cached'\ndeadlock_timeout = 250ms # why\n")
            .unwrap();
        let mut s = Settings::default();
        s.load_file(&file).unwrap();
        assert_eq!(s.max_connections, 12);
        assert_eq!(s.snapshot_mode, SnapshotMode::DenseCached);
        assert_eq!(s.show("deadlock_timeout").unwrap(), "250ms");
        assert_eq!(s.set_in_session("max_connections", "5").unwrap_err().sqlstate(), "55P02");
        assert_eq!(s.set_in_session("no_such", "5").unwrap_err().sqlstate(), "42704");
        assert_eq!(
            s.set_in_session("lock_timeout", "2s").map(|_| s.show("lock_timeout").unwrap()).unwrap(),
            "2s"
        );
        assert_eq!(s.set_in_session("lock_timeout", "2 fortnights").unwrap_err().sqlstate(), "22023");
        assert_eq!(
            s.set_in_session("default_transaction_isolation", "serializable").unwrap_err().sqlstate(),
            "22023"
        );
        let mut open = Settings { listen_addresses: "0.0.0.0".into(), ..Settings::default() };
        assert_eq!(open.check().unwrap_err().sqlstate(), "22023", "trust beyond loopback");
        open.set_at_start("auth_method", "scram-sha-256").unwrap();
        assert!(open.check().is_err(), "scram without a password");
        open.set_at_start("password", "secret").unwrap();
        assert!(open.check().is_ok());
        assert_eq!(open.show("password").unwrap(), "********");
        assert_eq!(s.show("max_stack_depth").unwrap(), "2MB");
        s.set_in_session("max_stack_depth", "512").unwrap();
        assert_eq!(s.max_stack_depth, 512 << 10);
        assert_eq!(s.set_in_session("max_stack_depth", "1GB").unwrap_err().sqlstate(), "22023");
        assert_eq!(s.set_in_session("max_stack_depth", "10kB").unwrap_err().sqlstate(), "22023");
        assert_eq!(s.set_in_session("max_message_size", "8MB").unwrap_err().sqlstate(), "55P02");
        assert_eq!(s.show("max_message_size").unwrap(), "64MB");
        std::fs::write(&file, "max_connections\n").unwrap();
        assert_eq!(Settings::default().load_file(&file).unwrap_err().sqlstate(), "F0000");
    }
}
