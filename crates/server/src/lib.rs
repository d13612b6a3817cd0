//! snapscale's server: the PostgreSQL wire protocol (startup through
//! pgwire, wrapped here and nowhere else; the query phase our own), one
//! proc-array session per connection, and the settings. See README.md in this crate for what is implemented so far.

mod auth;
mod backend;
mod connection;
pub mod frontend;
#[doc(hidden)]
pub mod fuzzing;
pub mod malloc;
mod named;
mod replication;
mod server;
mod shared;
mod startup;
mod tls;
mod transport;
mod workers;

pub use server::Server;
pub use snapscale_sql::guc::{AuthMethod, ConfigError, SessionSettings, SettingError, Settings};
