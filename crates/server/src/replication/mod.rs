//! The network ends of streaming replication: a replication connection's
//! commands on a primary (`sender.rs`: IDENTIFY_SYSTEM, BASE_BACKUP,
//! START_REPLICATION and the CopyBoth stream), and a standby's connection
//! to its primary (`receiver.rs`). What they send and apply is
//! `snapscale-replication`'s; here is only the protocol.

pub(crate) mod receiver;
pub(crate) mod sender;

pub(crate) use sender::WalSender;
