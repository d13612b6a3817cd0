//! snapscale's server: the PostgreSQL wire protocol (startup through
//! pgwire, wrapped here and nowhere else; the query phase our own), one
//! proc-array session per connection, and the settings. See README.md in this crate for what is implemented so far.

mod auth;
mod backend;
mod connection;
mod conninfo;
pub mod frontend;
#[doc(hidden)]
pub mod fuzzing;
pub mod malloc;
mod named;
mod replication;
mod server;
pub mod settings;
mod shared;
mod startup;
mod transport;
mod workers;

pub use server::Server;
pub use settings::{AuthMethod, ConfigError, SessionSettings, SettingError, Settings};
