//! What every connection shares: the database, the settings, the SCRAM
//! handler, the TLS acceptor, and the cancel keys of live connections.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};

use pgwire::messages::startup::SecretKey;
use snapscale_sql::guc::{Settings, TlsSettings};
use snapscale_sql::{Cancel, Database};

use crate::auth::{Scram, Secret};

/// What every connection shares.
pub struct Shared {
    pub db: Arc<Database>,
    pub settings: Settings,
    /// The salted password, under auth_method = scram-sha-256.
    secret: Option<Secret>,
    /// What a reload replaces together. A lock read once per connection
    /// start, never on the query path.
    security: RwLock<Security>,
    /// Cancel keys of live connections: pid → (secret, handle).
    cancels: Mutex<HashMap<i32, (i32, Arc<Cancel>)>>,
    random: RandomState,
    /// Replication connections now (bounded by max_wal_senders).
    senders: Arc<AtomicUsize>,
    /// Cancelled when the server shuts down (`terminate_all`).
    terminating: tokio_util::sync::CancellationToken,
}

/// The TLS acceptor (`None`: SSLRequests are answered `N`), the settings
/// it was built from, and the SCRAM handlers: one for plain connections,
/// and one for TLS connections that also offers SCRAM-SHA-256-PLUS, bound
/// to the certificate (a client refuses PLUS offered without TLS).
struct Security {
    tls: Option<tokio_rustls::TlsAcceptor>,
    settings: TlsSettings,
    scram: Option<Arc<Scram>>,
    scram_over_tls: Option<Arc<Scram>>,
}

impl Security {
    fn build(settings: &Settings, secret: Option<&Secret>) -> std::io::Result<Security> {
        let tls = crate::tls::acceptor(settings)?;
        let (scram, scram_over_tls) = match secret {
            Some(secret) => {
                let plain = crate::auth::scram(secret, settings, None)?;
                let bound = match &tls {
                    Some(t) => crate::auth::scram(secret, settings, Some(&t.certificate))?,
                    None => Arc::clone(&plain),
                };
                (Some(plain), Some(bound))
            }
            None => (None, None),
        };
        Ok(Security { tls: tls.map(|t| t.acceptor), settings: settings.tls.clone(), scram, scram_over_tls })
    }
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
    /// What connections share; an error if the TLS files cannot be used.
    pub fn new(db: Arc<Database>, settings: Settings, secret: Option<Secret>) -> std::io::Result<Shared> {
        Ok(Shared {
            db,
            security: RwLock::new(Security::build(&settings, secret.as_ref())?),
            secret,
            settings,
            cancels: Mutex::new(HashMap::new()),
            random: RandomState::new(),
            senders: Arc::new(AtomicUsize::new(0)),
            terminating: tokio_util::sync::CancellationToken::new(),
        })
    }

    /// The TLS acceptor for a connection starting now.
    pub fn tls_acceptor(&self) -> Option<tokio_rustls::TlsAcceptor> {
        self.security.read().expect("security state").tls.clone()
    }

    /// The TLS settings now (the start's, or the last reload's).
    pub fn tls_settings(&self) -> TlsSettings {
        self.security.read().expect("security state").settings.clone()
    }

    /// The SCRAM handler for a connection starting now, over TLS or not
    /// (`None`: trust).
    pub fn scram(&self, over_tls: bool) -> Option<Arc<Scram>> {
        let security = self.security.read().expect("security state");
        if over_tls {
            security.scram_over_tls.clone()
        } else {
            security.scram.clone()
        }
    }

    /// Builds TLS and SCRAM again from `settings`' TLS part (a reload: the
    /// certificate and key files are read again). On an error the
    /// previous ones stay, as PostgreSQL keeps its SSL context when a
    /// reload's cannot be loaded.
    pub fn reload_tls(&self, settings: &Settings) -> std::io::Result<()> {
        let fresh = Security::build(settings, self.secret.as_ref())?;
        *self.security.write().expect("security state") = fresh;
        Ok(())
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
