//! TLS settings: whether the server offers TLS, where its certificate,
//! key and client CA are, and which protocol versions it accepts, with
//! PostgreSQL's names and defaults. A reload (SIGHUP) reads them again;
//! `SET` refuses them (55P02, "cannot be changed now").

use std::path::{Path, PathBuf};

use super::{invalid, on_off, parse_bool, SettingError};

/// The settings a reload may change, as PostgreSQL's `sighup` context.
pub(super) const NAMES: [&str; 6] = [
    "ssl",
    "ssl_cert_file",
    "ssl_key_file",
    "ssl_ca_file",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
];

/// A TLS protocol version, as `ssl_min_protocol_version` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    V1_0,
    V1_1,
    V1_2,
    V1_3,
}

impl TlsVersion {
    fn parse(name: &str, value: &str) -> Result<TlsVersion, SettingError> {
        Ok(match value.trim().to_ascii_lowercase().as_str() {
            "tlsv1" => TlsVersion::V1_0,
            "tlsv1.1" => TlsVersion::V1_1,
            "tlsv1.2" => TlsVersion::V1_2,
            "tlsv1.3" => TlsVersion::V1_3,
            _ => return Err(invalid(name, value, "Available values: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3.")),
        })
    }

    /// PostgreSQL's spelling.
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::V1_0 => "TLSv1",
            TlsVersion::V1_1 => "TLSv1.1",
            TlsVersion::V1_2 => "TLSv1.2",
            TlsVersion::V1_3 => "TLSv1.3",
        }
    }
}

/// The TLS settings (PostgreSQL's defaults: off, `server.crt` and
/// `server.key` in the data directory, no client CA, TLS 1.2 at least).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    /// `ssl`: whether an SSLRequest is answered with `S`.
    pub enabled: bool,
    /// `ssl_cert_file`: the server's certificate chain (PEM), leaf first.
    pub cert_file: PathBuf,
    /// `ssl_key_file`: its private key (PEM).
    pub key_file: PathBuf,
    /// `ssl_ca_file`: CAs whose client certificates are verified; none
    /// asked for when empty.
    pub ca_file: Option<PathBuf>,
    /// `ssl_min_protocol_version`.
    pub min_protocol: TlsVersion,
    /// `ssl_max_protocol_version` (`None`: the newest there is).
    pub max_protocol: Option<TlsVersion>,
}

impl Default for TlsSettings {
    fn default() -> Self {
        TlsSettings {
            enabled: false,
            cert_file: PathBuf::from("server.crt"),
            key_file: PathBuf::from("server.key"),
            ca_file: None,
            min_protocol: TlsVersion::V1_2,
            max_protocol: None,
        }
    }
}

impl TlsSettings {
    /// Sets `name` (one of [`NAMES`]).
    pub(super) fn apply(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        match name {
            "ssl" => self.enabled = parse_bool(name, value)?,
            "ssl_cert_file" => self.cert_file = PathBuf::from(value.trim()),
            "ssl_key_file" => self.key_file = PathBuf::from(value.trim()),
            "ssl_ca_file" => {
                self.ca_file = Some(PathBuf::from(value.trim())).filter(|p| !p.as_os_str().is_empty())
            }
            "ssl_min_protocol_version" => self.min_protocol = TlsVersion::parse(name, value)?,
            "ssl_max_protocol_version" => {
                self.max_protocol = match value.trim() {
                    "" => None,
                    v => Some(TlsVersion::parse(name, v)?),
                }
            }
            _ => return Err(SettingError::Unknown(name.into())),
        }
        Ok(())
    }

    /// The value `SHOW name` prints.
    pub(super) fn show(&self, name: &str) -> Option<String> {
        Some(match name {
            "ssl" => on_off(self.enabled),
            "ssl_cert_file" => self.cert_file.display().to_string(),
            "ssl_key_file" => self.key_file.display().to_string(),
            "ssl_ca_file" => self.ca_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            "ssl_min_protocol_version" => self.min_protocol.name().into(),
            "ssl_max_protocol_version" => self.max_protocol.map(TlsVersion::name).unwrap_or_default().into(),
            _ => return None,
        })
    }

    /// `path` as the server opens it: a relative name is in the data
    /// directory, as PostgreSQL resolves it.
    pub fn resolve(path: &Path, data_directory: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            data_directory.join(path)
        }
    }
}
