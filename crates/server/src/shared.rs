//! What every connection shares: the database, the settings, the SCRAM
//! handler, and the cancel keys of live connections.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use pgwire::messages::startup::SecretKey;
use snapscale_sql::guc::Settings;
use snapscale_sql::{Cancel, Database};

use crate::auth::Scram;

/// What every connection shares.
pub struct Shared {
    pub db: Arc<Database>,
    pub settings: Settings,
    /// `Some` under auth_method = scram-sha-256.
    pub scram: Option<Arc<Scram>>,
    /// Cancel keys of live connections: pid → (secret, handle).
    cancels: Mutex<HashMap<i32, (i32, Arc<Cancel>)>>,
    random: RandomState,
    /// Replication connections now (bounded by max_wal_senders).
    senders: Arc<AtomicUsize>,
    /// Cancelled when the server shuts down (`terminate_all`).
    terminating: tokio_util::sync::CancellationToken,
}

/// The message of the FATAL that ends connections at a shutdown
/// (PostgreSQL's wording).
pub(crate) const TERMINATED: &str = "terminating connection due to administrator command";

/// The FATAL that ends connections at a shutdown (57P01).
pub(crate) fn terminated() -> snapscale_sql::SqlError {
    snapscale_sql::SqlError::new(snapscale_sql::SqlState::ADMIN_SHUTDOWN, TERMINATED)
}

/// A replication connection's place among `max_wal_senders`, given back
/// when dropped.
pub struct SenderSlot(Arc<AtomicUsize>);

impl Drop for SenderSlot {
    fn drop(&mut self) {
        // Relaxed: a count; the slot's holder published nothing through it.
        self.0.fetch_sub(1, Relaxed);
    }
}

impl Shared {
    pub fn new(db: Arc<Database>, settings: Settings, scram: Option<Arc<Scram>>) -> Shared {
        Shared {
            db,
            settings,
            scram,
            cancels: Mutex::new(HashMap::new()),
            random: RandomState::new(),
            senders: Arc::new(AtomicUsize::new(0)),
            terminating: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// A place for a replication connection, if fewer than
    /// `max_wal_senders` are connected.
    pub fn sender_slot(&self) -> Option<SenderSlot> {
        let max = self.settings.max_wal_senders;
        // Relaxed: a bounded counter; the RMW alone makes the bound hold.
        self.senders
            .fetch_update(Relaxed, Relaxed, |n| (n < max).then_some(n + 1))
            .ok()
            .map(|_| SenderSlot(Arc::clone(&self.senders)))
    }

    /// A random cancel secret for a new connection.
    pub fn new_secret(&self) -> i32 {
        (self.random.hash_one(std::time::Instant::now()) >> 1) as i32
    }

    /// Registers a connection's cancel key.
    pub fn register_cancel(&self, pid: i32, secret: i32, cancel: Arc<Cancel>) {
        let mut cancels = self.cancels();
        // A connection registered after `terminate_all` went through the
        // map is terminated here: that call cancelled the token before it
        // took the map's lock, which this one holds now.
        if self.terminating.is_cancelled() {
            cancel.terminate();
        }
        cancels.insert(pid, (secret, cancel));
    }

    /// Forgets a connection's cancel key (it ended).
    pub fn forget_cancel(&self, pid: i32) {
        self.cancels().remove(&pid);
    }

    fn cancels(&self) -> std::sync::MutexGuard<'_, HashMap<i32, (i32, Arc<Cancel>)>> {
        // A panic never happens under this lock (map operations only), but
        // a poisoned registry must not stop cancels: the map is whole.
        self.cancels.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The server is shutting down: every connection's statement stops at
    /// its next check or wait, and every connection ends with a FATAL
    /// 57P01, as PostgreSQL's fast shutdown ends them.
    pub fn terminate_all(&self) {
        self.terminating.cancel();
        for (_, cancel) in self.cancels().values() {
            cancel.terminate();
        }
    }

    /// Resolves once `terminate_all` was called (at once if it was). For
    /// WAL senders; a client connection waits on its own `Cancel`
    /// (`Cancel::terminated`), not on this server-wide token.
    pub fn terminating(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.terminating.cancelled()
    }

    /// A CancelRequest: wakes the statement of the connection with this
    /// key, if the secret matches (otherwise silently nothing, as in
    /// PostgreSQL).
    pub fn cancel(&self, pid: i32, secret: &SecretKey) {
        if let Some((s, cancel)) = self.cancels().get(&pid) {
            // A cancel connection decodes the key as bytes.
            if SecretKey::I32(*s).eq_value(secret) {
                cancel.request();
            }
        }
    }
}
