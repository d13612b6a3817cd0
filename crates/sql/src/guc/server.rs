//! The server's settings: from a config file, flags and `SET`.
//!
//! A config file holds `name = value` lines (`#` starts a comment, values
//! may be single-quoted), as postgresql.conf does. Flags override the file.
//! The settings a session may change with `SET` are its
//! [`SessionSettings`]; here they are every session's start-up values.
//! The others are the server's own and change only with a restart.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use snapscale_engine::{AutovacuumConfig, IsolationLevel, SnapshotMode, WaitPolicy, XidLogs};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Zone};

use super::{
    format_bytes, format_duration, invalid, on_off, parse_bool, parse_bytes, parse_duration, tls,
    SessionSettings, SettingError, TlsSettings,
};

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
    /// How clients authenticate (`auth_method`).
    pub auth_method: AuthMethod,
    /// The password every role authenticates with under `scram-sha-256`
    /// (`password`; never shown).
    pub password: Option<String>,
    /// fdatasync the WAL (`fsync`; off only for benchmarks: a crash of the
    /// machine can then lose anything not yet written back).
    pub fsync: bool,
    /// Longest time between checkpoints (`checkpoint_timeout`).
    pub checkpoint_timeout: Duration,
    /// WAL volume that triggers a checkpoint (`max_wal_size`, bytes).
    pub max_wal_size: u64,
    /// The longest frontend message accepted (`max_message_size`, bytes);
    /// a longer declared length ends the connection before anything is
    /// allocated for it.
    pub max_message_size: usize,
    /// Where a standby's primary is (`primary_conninfo`: `host=… port=…
    /// user=… [password=…]`); set, the server is a hot standby.
    pub primary_conninfo: Option<String>,
    /// Most standbys streaming at once (`max_wal_senders`).
    pub max_wal_senders: usize,
    /// Freezing and autovacuum (`autovacuum`, `autovacuum_naptime`,
    /// `autovacuum_vacuum_threshold`, `autovacuum_vacuum_scale_factor`,
    /// `autovacuum_analyze_threshold`, `autovacuum_analyze_scale_factor`,
    /// `vacuum_freeze_min_age`, `autovacuum_freeze_max_age`).
    pub autovacuum: AutovacuumConfig,
    /// The xid logs' sizes (`status_log_pages`, `csn_log_pages`,
    /// `parent_link_pages`, `xid_log_page_size`).
    pub xid_logs: XidLogs,
    /// What every session starts with (lock_timeout, deadlock_timeout,
    /// statement_timeout, default_transaction_isolation, application_name,
    /// synchronous_commit, max_stack_depth, and the client's settings:
    /// TimeZone, DateStyle, …), and may change with `SET`.
    pub session: SessionSettings,
    /// TLS (`ssl`, `ssl_cert_file`, …): a reload reads them again.
    pub tls: TlsSettings,
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
            auth_method: AuthMethod::Trust,
            password: None,
            fsync: true,
            checkpoint_timeout: Duration::from_secs(300),
            max_wal_size: 256 << 20,
            max_message_size: 64 << 20,
            primary_conninfo: None,
            max_wal_senders: 10,
            autovacuum: AutovacuumConfig::default(),
            xid_logs: XidLogs::default(),
            session: SessionSettings::default(),
            tls: TlsSettings::default(),
        }
    }
}

/// A config file that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A setting refused its value.
    Setting(SettingError),
    /// A line that is not `name = value` (F0000).
    BadLine { path: PathBuf, line: usize },
    /// The file cannot be read (58P01).
    Io { path: PathBuf, message: String },
}

impl ConfigError {
    /// PostgreSQL's SQLSTATE.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            ConfigError::Setting(e) => e.sqlstate(),
            ConfigError::BadLine { .. } => SqlState::CONFIG_FILE_ERROR,
            ConfigError::Io { .. } => SqlState::UNDEFINED_FILE,
        }
    }
}

impl From<SettingError> for ConfigError {
    fn from(e: SettingError) -> Self {
        ConfigError::Setting(e)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Setting(e) => e.fmt(f),
            ConfigError::BadLine { path, line } => {
                write!(f, "syntax error in file \"{}\" line {line}: expected name = value", path.display())
            }
            ConfigError::Io { path, message } => {
                write!(f, "could not read configuration file \"{}\": {message}", path.display())
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// The server's own settings: `SHOW` shows them, only a restart changes
/// them (55P02 for `SET`).
const SERVER_NAMES: [&str; 29] = [
    "auth_method",
    "password",
    "listen_addresses",
    "port",
    "data_directory",
    "max_connections",
    "snapshot_mode",
    "server_version",
    "fsync",
    "checkpoint_timeout",
    "max_wal_size",
    "max_message_size",
    "primary_conninfo",
    "max_wal_senders",
    "in_hot_standby",
    "transaction_read_only",
    "autovacuum",
    "autovacuum_naptime",
    "autovacuum_vacuum_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_analyze_scale_factor",
    "vacuum_freeze_min_age",
    "autovacuum_freeze_max_age",
    "status_log_pages",
    "csn_log_pages",
    "parent_link_pages",
    "xid_log_page_size",
    "multixact_log_pages",
];

/// A count of at least `min`.
fn parse_count(name: &str, value: &str, min: u64) -> Result<u64, SettingError> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| n >= min)
        .ok_or_else(|| invalid(name, value, &format!("expected an integer of at least {min}")))
}

/// A number of pages: at least two, at most 2^24.
fn parse_pages(name: &str, value: &str) -> Result<usize, SettingError> {
    let n = parse_count(name, value, 2)?;
    if n > 1 << 24 {
        return Err(invalid(name, value, "at most 16777216 pages"));
    }
    Ok(n as usize)
}

/// A size in bytes: a power of two from 64B to 1MB (`B` or no unit: bytes).
fn parse_page_size(name: &str, value: &str) -> Result<usize, SettingError> {
    let v = value.trim();
    let bytes = match v.strip_suffix('B').filter(|d| d.chars().all(|c| c.is_ascii_digit())) {
        Some(digits) => parse_count(name, digits, 0)?,
        None => parse_bytes(name, v, 0)?,
    };
    if !bytes.is_power_of_two() || !(64..=1 << 20).contains(&bytes) {
        return Err(invalid(name, value, "expected a power of two from 64B to 1MB"));
    }
    Ok(bytes as usize)
}

/// A size as PostgreSQL shows it, in bytes below 1kB.
fn format_size(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format_bytes(bytes)
    } else {
        format!("{bytes}B")
    }
}

/// A size: a number with kB, MB or GB; no unit means MB (as max_wal_size).
fn parse_size(name: &str, value: &str) -> Result<u64, SettingError> {
    let bytes = parse_bytes(name, value, 20)?;
    if bytes < 1 << 20 {
        return Err(invalid(name, value, "must be at least 1MB"));
    }
    Ok(bytes)
}

/// max_message_size: between 1MB and PostgreSQL's own 1GB limit.
fn parse_message_size(name: &str, value: &str) -> Result<usize, SettingError> {
    let bytes = parse_size(name, value)?;
    if bytes > (1 << 30) - 1 {
        return Err(invalid(name, value, "must be less than 1GB"));
    }
    Ok(bytes as usize)
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
    /// Sets `name` at server start (file or flag): every setting allowed
    /// but the read-only facts.
    pub fn set_at_start(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        if SessionSettings::is_session(name) || SessionSettings::is_fixed(name) {
            return self.session.set(name, value);
        }
        self.apply(name, value)
    }

    /// Sets `name` for one session (`SET`): the server's own settings are
    /// refused.
    pub fn set_in_session(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        if SERVER_NAMES.contains(&name) {
            return Err(SettingError::RestartOnly(name.into()));
        }
        if tls::NAMES.contains(&name) {
            return Err(SettingError::ReloadOnly(name.into()));
        }
        self.session.set(name, value)
    }

    fn apply(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        if tls::NAMES.contains(&name) {
            return self.tls.apply(name, value);
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
            "auth_method" => {
                self.auth_method = match value.trim() {
                    "trust" => AuthMethod::Trust,
                    "scram-sha-256" => AuthMethod::ScramSha256,
                    _ => return Err(invalid(name, value, "expected trust or scram-sha-256")),
                }
            }
            "password" => self.password = Some(value.to_owned()).filter(|p| !p.is_empty()),
            "fsync" => self.fsync = parse_bool(name, value)?,
            "checkpoint_timeout" => {
                self.checkpoint_timeout = parse_duration(name, value)
                    .ok()
                    .filter(|d| *d >= Duration::from_secs(1))
                    .ok_or_else(|| invalid(name, value, "expected a time of at least 1s"))?
            }
            "max_wal_size" => self.max_wal_size = parse_size(name, value)?,
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
            "autovacuum" => self.autovacuum.enabled = parse_bool(name, value)?,
            "autovacuum_naptime" => {
                // A bare number is in seconds, as PostgreSQL reads it.
                let v = value.trim();
                let naptime = if v.chars().all(|c| c.is_ascii_digit()) {
                    parse_duration(name, &format!("{v}s"))
                } else {
                    parse_duration(name, v)
                };
                self.autovacuum.naptime = naptime
                    .ok()
                    .filter(|d| *d >= Duration::from_secs(1))
                    .ok_or_else(|| invalid(name, value, "expected a time of at least 1s"))?
            }
            "autovacuum_vacuum_threshold" => self.autovacuum.vacuum_threshold = parse_count(name, value, 0)?,
            "autovacuum_vacuum_scale_factor" => {
                self.autovacuum.vacuum_scale_factor = value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| (0.0..=100.0).contains(f))
                    .ok_or_else(|| invalid(name, value, "expected a number from 0 to 100"))?
            }
            "autovacuum_analyze_threshold" => {
                self.autovacuum.analyze_threshold = parse_count(name, value, 0)?
            }
            "autovacuum_analyze_scale_factor" => {
                self.autovacuum.analyze_scale_factor = value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| (0.0..=100.0).contains(f))
                    .ok_or_else(|| invalid(name, value, "expected a number from 0 to 100"))?
            }
            "vacuum_freeze_min_age" => self.autovacuum.freeze_min_age = parse_count(name, value, 0)?,
            "autovacuum_freeze_max_age" => self.autovacuum.freeze_max_age = parse_count(name, value, 1)?,
            "status_log_pages" => self.xid_logs.status_log_pages = parse_pages(name, value)?,
            "csn_log_pages" => self.xid_logs.csn_log_pages = parse_pages(name, value)?,
            "parent_link_pages" => self.xid_logs.parent_link_pages = parse_pages(name, value)?,
            "xid_log_page_size" => self.xid_logs.page_bytes = parse_page_size(name, value)?,
            "multixact_log_pages" => self.xid_logs.multixact_log_pages = parse_pages(name, value)?,
            "server_version" | "in_hot_standby" | "transaction_read_only" => {
                return Err(SettingError::RestartOnly(name.into()))
            }
            _ => return Err(SettingError::Unknown(name.into())),
        }
        Ok(())
    }

    /// The value `SHOW name` prints.
    pub fn show(&self, name: &str) -> Result<String, SettingError> {
        Ok(match name {
            "listen_addresses" => self.listen_addresses.clone(),
            "port" => self.port.to_string(),
            "data_directory" => self.data_directory.display().to_string(),
            "max_connections" => self.max_connections.to_string(),
            "snapshot_mode" => self.snapshot_mode.to_string(),
            "auth_method" => match self.auth_method {
                AuthMethod::Trust => "trust".into(),
                AuthMethod::ScramSha256 => "scram-sha-256".into(),
            },
            "password" => "********".into(),
            "server_version" => SERVER_VERSION.into(),
            "fsync" => on_off(self.fsync),
            "checkpoint_timeout" => format_duration(self.checkpoint_timeout),
            "max_wal_size" => format_bytes(self.max_wal_size),
            "max_message_size" => format_bytes(self.max_message_size as u64),
            // A password in it is not shown.
            "primary_conninfo" => self.primary_conninfo.as_deref().map(hide_password).unwrap_or_default(),
            "max_wal_senders" => self.max_wal_senders.to_string(),
            "in_hot_standby" | "transaction_read_only" => on_off(self.primary_conninfo.is_some()),
            "autovacuum" => on_off(self.autovacuum.enabled),
            "autovacuum_naptime" => format_duration(self.autovacuum.naptime),
            "autovacuum_vacuum_threshold" => self.autovacuum.vacuum_threshold.to_string(),
            "autovacuum_vacuum_scale_factor" => self.autovacuum.vacuum_scale_factor.to_string(),
            "autovacuum_analyze_threshold" => self.autovacuum.analyze_threshold.to_string(),
            "autovacuum_analyze_scale_factor" => self.autovacuum.analyze_scale_factor.to_string(),
            "vacuum_freeze_min_age" => self.autovacuum.freeze_min_age.to_string(),
            "autovacuum_freeze_max_age" => self.autovacuum.freeze_max_age.to_string(),
            "status_log_pages" => self.xid_logs.status_log_pages.to_string(),
            "csn_log_pages" => self.xid_logs.csn_log_pages.to_string(),
            // 0: as many xids as the status log.
            "parent_link_pages" => match self.xid_logs.parent_link_pages {
                0 => (self.xid_logs.status_log_pages * 32).to_string(),
                n => n.to_string(),
            },
            "xid_log_page_size" => format_size(self.xid_logs.page_bytes as u64),
            "multixact_log_pages" => self.xid_logs.multixact_log_pages.to_string(),
            _ => match self.tls.show(name) {
                Some(v) => v,
                None => return self.session.show(name),
            },
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
                super::Conninfo::parse(conninfo)
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
    pub fn load_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::Io { path: path.into(), message: e.to_string() })?;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| ConfigError::BadLine { path: path.into(), line: i + 1 })?;
            let value = value.trim();
            let value = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')).unwrap_or(value);
            self.set_at_start(name.trim(), value)?;
        }
        Ok(())
    }
}

/// A session's settings are [`SessionSettings`]; what the server adds is
/// SHOW of its own settings, 55P02 for SET of them, and max_message_size.
impl crate::Gucs for Settings {
    fn set(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        self.set_in_session(name, value).map_err(SqlError::from)
    }

    fn show(&self, name: &str) -> Result<String, SqlError> {
        Settings::show(self, name).map_err(SqlError::from)
    }

    fn setting_names(&self) -> Vec<(&'static str, &'static str)> {
        let mut names = self.session.setting_names();
        names.extend(SERVER_NAMES.iter().filter(|n| **n != "password").map(|n| (*n, "postmaster")));
        names.extend(tls::NAMES.iter().map(|n| (*n, "sighup")));
        names
    }

    fn default_isolation(&self) -> IsolationLevel {
        self.session.default_isolation()
    }

    fn planner(&self) -> crate::plan::switches::PlannerSettings {
        self.session.planner
    }

    fn synchronous_commit(&self) -> bool {
        self.session.synchronous_commit()
    }

    fn max_stack_depth(&self) -> usize {
        self.session.max_stack_depth()
    }

    fn temp_file_limit(&self) -> Option<u64> {
        self.session.temp_file_limit()
    }

    fn max_message_size(&self) -> usize {
        self.max_message_size
    }

    fn statement_timeout(&self) -> Option<Duration> {
        self.session.statement_timeout()
    }

    fn search_path(&self) -> String {
        self.show("search_path").unwrap_or_else(|_| "\"$user\", public".into())
    }

    fn session_user(&self) -> String {
        self.session.session_user()
    }

    fn database(&self) -> String {
        self.session.database()
    }

    fn time_zone(&self) -> Zone {
        self.session.time_zone()
    }

    fn style(&self) -> snapscale_values::Style {
        self.session.style()
    }

    fn wait_policy(&self) -> WaitPolicy {
        self.session.wait_policy()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_settings_change_at_start_or_reload_only() {
        let mut s = Settings::default();
        assert_eq!(s.show("ssl").unwrap(), "off");
        assert_eq!(s.show("ssl_cert_file").unwrap(), "server.crt");
        assert_eq!(s.show("ssl_min_protocol_version").unwrap(), "TLSv1.2");
        assert_eq!(s.show("ssl_max_protocol_version").unwrap(), "");
        s.set_at_start("ssl", "on").unwrap();
        s.set_at_start("ssl_min_protocol_version", "tlsv1.3").unwrap();
        assert_eq!(
            (s.show("ssl").unwrap(), s.show("ssl_min_protocol_version").unwrap()),
            ("on".into(), "TLSv1.3".into())
        );
        let e = s.set_at_start("ssl_min_protocol_version", "SSLv3").unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::INVALID_PARAMETER_VALUE);
        let e = s.set_in_session("ssl", "off").unwrap_err();
        assert_eq!(
            (e.sqlstate(), e.to_string()),
            (SqlState::CANT_CHANGE_RUNTIME_PARAM, "parameter \"ssl\" cannot be changed now".into())
        );
        assert!(crate::Gucs::setting_names(&s).contains(&("ssl_ca_file", "sighup")));
    }

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
        assert_eq!(
            s.set_in_session("max_connections", "5").unwrap_err().sqlstate(),
            SqlState::CANT_CHANGE_RUNTIME_PARAM
        );
        assert_eq!(s.set_in_session("no_such", "5").unwrap_err().sqlstate(), SqlState::UNDEFINED_OBJECT);
        assert_eq!(
            s.set_in_session("lock_timeout", "2s").map(|_| s.show("lock_timeout").unwrap()).unwrap(),
            "2s"
        );
        assert_eq!(
            s.set_in_session("lock_timeout", "2 fortnights").unwrap_err().sqlstate(),
            SqlState::INVALID_PARAMETER_VALUE
        );
        let mut open = Settings { listen_addresses: "0.0.0.0".into(), ..Settings::default() };
        assert_eq!(
            open.check().unwrap_err().sqlstate(),
            SqlState::INVALID_PARAMETER_VALUE,
            "trust beyond loopback"
        );
        open.set_at_start("auth_method", "scram-sha-256").unwrap();
        assert!(open.check().is_err(), "scram without a password");
        open.set_at_start("password", "secret").unwrap();
        assert!(open.check().is_ok());
        assert_eq!(open.show("password").unwrap(), "********");
        s.set_at_start("max_stack_depth", "512").unwrap();
        assert_eq!(s.session.max_stack_depth, 512 << 10);
        assert_eq!(
            s.set_in_session("max_message_size", "8MB").unwrap_err().sqlstate(),
            SqlState::CANT_CHANGE_RUNTIME_PARAM
        );
        assert_eq!(s.show("max_message_size").unwrap(), "64MB");
        assert_eq!(
            s.set_at_start("server_version_num", "1").unwrap_err().sqlstate(),
            SqlState::CANT_CHANGE_RUNTIME_PARAM
        );
        std::fs::write(&file, "max_connections\n").unwrap();
        assert_eq!(Settings::default().load_file(&file).unwrap_err().sqlstate(), SqlState::CONFIG_FILE_ERROR);
    }
}
