//! snapscale's streaming replication, both ends of it but the network:
//!
//! ```text
//!   primary   base backups, WAL senders (what each standby still   sender.rs
//!             needs is kept: WAL-RETAIN)
//!   standby   received WAL written locally and replayed as live    standby/
//!             row versions (apply.rs); restartpoints and pruning
//!             (restartpoint.rs)
//! ```
//!
//! The network ends (the replication connection's commands, the WAL
//! receiver's connection to its primary) are the server's
//! (`snapscale-server`'s `replication/`: sender.rs, receiver.rs), which
//! reaches this crate through `snapscale_sql::replication`; the WAL
//! records are the engine's (`snapscale_engine::redo`), which a primary's
//! crash recovery replays too. The invariants are in README.md.

pub mod sender;
pub mod standby;

pub use sender::{
    base_backup, identify_system, wal_sender, BaseBackup, Retention, SystemIdentity, WalSender,
};
pub use snapscale_engine::{format_lsn, parse_lsn, Lsn};
pub use standby::{has_checkpoint, install_base_backup, Standby, StandbyConfig};
