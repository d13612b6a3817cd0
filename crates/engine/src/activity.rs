//! What each backend is doing, for `pg_stat_activity` (PostgreSQL's
//! PgBackendStatus): one record per proc-array slot, written only by its
//! own session (at connection start, when a query starts and when the
//! session goes idle) and read by anyone who asks.
//!
//! Each record sits behind its own mutex: a writer never waits for another
//! session's writes, only (rarely, and briefly) for a reader copying that
//! record. A reader copies the records one at a time, so the view is not
//! one instant, as PostgreSQL's is not.

use std::sync::{Arc, Mutex};

/// A backend's state as pg_stat_activity shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Active,
    Idle,
    IdleInTransaction,
    IdleInTransactionAborted,
    /// A COPY FROM STDIN waiting for its data (PostgreSQL shows "active").
    Copying,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Active | State::Copying => "active",
            State::Idle => "idle",
            State::IdleInTransaction => "idle in transaction",
            State::IdleInTransactionAborted => "idle in transaction (aborted)",
        }
    }
}

/// One backend's record.
#[derive(Clone, Debug)]
pub struct BackendStatus {
    pub user: String,
    pub database: String,
    pub application_name: String,
    pub client_addr: Option<String>,
    pub client_port: Option<i32>,
    /// Microseconds since 2000-01-01 UTC, like timestamptz.
    pub backend_start: i64,
    pub xact_start: Option<i64>,
    pub query_start: Option<i64>,
    pub state_change: i64,
    pub state: State,
    /// The last query's text (the one running, if active).
    pub query: Arc<str>,
    /// The connection's TLS, if it has it (pg_stat_ssl).
    pub ssl: Option<SslStatus>,
}

/// A TLS connection's facts, as pg_stat_ssl shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SslStatus {
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: String,
    /// The cipher suite, as OpenSSL names it (as PostgreSQL shows it).
    pub cipher: String,
    /// The cipher's key length in bits.
    pub bits: i32,
    /// The client certificate's subject (RFC 2253), serial number (in
    /// decimal) and issuer, if the client presented one.
    pub client_dn: Option<String>,
    pub client_serial: Option<String>,
    pub issuer_dn: Option<String>,
}

/// Who the connection is, as the server learned it at startup.
#[derive(Clone, Debug, Default)]
pub struct ClientInfo {
    pub application_name: String,
    pub client_addr: Option<String>,
    pub client_port: Option<i32>,
    pub ssl: Option<SslStatus>,
}

/// The records of every slot.
pub struct Activity {
    slots: Box<[Mutex<Option<BackendStatus>>]>,
}

impl Activity {
    pub fn new(slots: usize) -> Activity {
        Activity { slots: (0..slots).map(|_| Mutex::new(None)).collect() }
    }

    /// Sets slot `slot`'s record (a connection started), or clears it.
    pub fn set(&self, slot: u32, status: Option<BackendStatus>) {
        if let Some(s) = self.slots.get(slot as usize) {
            *s.lock().expect("activity record poisoned") = status;
        }
    }

    /// Changes slot `slot`'s record, if it has one.
    pub fn update(&self, slot: u32, f: impl FnOnce(&mut BackendStatus)) {
        if let Some(s) = self.slots.get(slot as usize) {
            if let Some(status) = s.lock().expect("activity record poisoned").as_mut() {
                f(status);
            }
        }
    }

    /// A copy of every record, with its slot.
    pub fn all(&self) -> Vec<(u32, BackendStatus)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.lock().expect("activity record poisoned").clone().map(|st| (i as u32, st)))
            .collect()
    }
}
