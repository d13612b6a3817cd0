//! The listener: accepts connections and hands each to a connection
//! worker (`workers.rs`), on whose thread it stays for its life.
//!
//! The server runs on threads of its own, whatever runtime its caller
//! uses, because statement work needs threads whose stacks hold
//! `max_stack_depth` (see `snapscale_sql::stack`): the caller's threads
//! (a test's, say) may have the 2 MiB default. Its background runtime
//! accepts, answers cancel requests, and runs the checkpointer and a
//! standby's WAL receiver; connections run on the workers.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use snapscale_sql::guc::{AuthMethod, Settings};
use snapscale_sql::replication::{Standby, StandbyConfig};
use snapscale_sql::{AutovacuumWorker, Database, DatabaseConfig, Durability};
use tokio::net::{TcpListener, TcpStream};
use tracing::{info, warn};

use crate::auth::Secret;
use crate::connection::serve;
use crate::shared::Shared;
use crate::workers::Workers;

/// A bound server, ready to run.
pub struct Server {
    shared: Arc<Shared>,
    /// What `run` hands to the server's runtime.
    listener: Option<TcpListener>,
    /// Where connections and the checkpointer run; `None` once running.
    runtime: Option<OwnRuntime>,
    /// A hot standby's replay, fed by its WAL receiver.
    standby: Option<Arc<Standby>>,
    /// A primary's autovacuum worker (a standby freezes on its replay
    /// thread).
    autovacuum: Option<AutovacuumWorker>,
    /// How a reload (SIGHUP) reads the settings again; without one, a
    /// reload reads the TLS files the start-up settings name.
    reload: Option<Arc<Reload>>,
}

/// Reads the settings again, as at start (config file, then flags).
pub type Reload = Box<dyn Fn() -> Result<Settings, String> + Send + Sync>;

/// The server's runtime. Dropping it (from `run`'s future, possibly inside
/// the caller's runtime, where blocking is not allowed) lets its threads
/// wind down on their own: its tasks are dropped there, and each
/// connection's `Conn` releases what it holds as it drops.
struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl std::ops::Deref for OwnRuntime {
    type Target = tokio::runtime::Runtime;

    fn deref(&self) -> &tokio::runtime::Runtime {
        self.0.as_ref().expect("present until dropped")
    }
}

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// WAL segment size.
const SEGMENT_SIZE: u64 = 16 << 20;

/// How often a primary with activity logs its running transactions.
const RUNNING_XACTS_INTERVAL: std::time::Duration = std::time::Duration::from_secs(15);

impl Server {
    /// Prepares the data directory, builds the engine and binds the port.
    /// Port 0 binds an ephemeral port (see [`Server::local_addr`]).
    pub async fn bind(settings: Settings) -> io::Result<Server> {
        settings.check().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let secret = match (settings.auth_method, &settings.password) {
            (AuthMethod::ScramSha256, Some(password)) => Some(Secret::new(password)?),
            _ => None,
        };
        std::fs::create_dir_all(&settings.data_directory).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("could not create data directory \"{}\": {e}", settings.data_directory.display()),
            )
        })?;
        // After the directory exists (relative TLS files are in it), and
        // before recovery: a bad certificate stops the start at once.
        crate::tls::acceptor(&settings)?;
        let config = DatabaseConfig {
            max_connections: settings.max_connections,
            snapshot_mode: settings.snapshot_mode,
            deadlock_timeout: settings.session.deadlock_timeout,
            lock_timeout: (!settings.session.lock_timeout.is_zero()).then_some(settings.session.lock_timeout),
            durability: Some(Durability {
                data_dir: settings.data_directory.clone(),
                fsync: settings.fsync,
                segment_size: SEGMENT_SIZE,
            }),
            xid_logs: settings.xid_logs,
            autovacuum: settings.autovacuum.clone(),
        };
        let runtime = OwnRuntime(Some(
            tokio::runtime::Builder::new_multi_thread()
                .thread_name("snapscale-worker")
                .thread_stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
                .enable_all()
                .build()?,
        ));
        // Before recovery or replay: index keys may need SQL to compute.
        snapscale_sql::install_index_keys();
        let (db, standby) = match settings.primary_conninfo.clone() {
            None => {
                // Recovery reads files: off the async workers.
                let db = runtime
                    .spawn_blocking(move || Database::open(config))
                    .await
                    .map_err(io::Error::other)?
                    .map_err(|e| io::Error::other(format!("start-up failed: {e}")))?;
                (db, None)
            }
            Some(conninfo) => {
                let dir = settings.data_directory.clone();
                if !snapscale_sql::replication::has_checkpoint(&dir) {
                    runtime
                        .spawn(
                            async move { crate::replication::receiver::base_backup(&conninfo, &dir).await },
                        )
                        .await
                        .map_err(io::Error::other)?
                        .map_err(|e| io::Error::other(format!("the base backup failed: {e}")))?;
                }
                let standby_config = StandbyConfig {
                    restartpoint_interval: settings.checkpoint_timeout,
                    max_wal_size: settings.max_wal_size,
                };
                let (db, standby) = runtime
                    .spawn_blocking(move || Standby::open(config, standby_config))
                    .await
                    .map_err(io::Error::other)?
                    .map_err(|e| io::Error::other(format!("standby start-up failed: {e}")))?;
                (db, Some(Arc::new(standby)))
            }
        };
        let autovacuum = match standby {
            None => Some(db.start_autovacuum().map_err(io::Error::other)?),
            Some(_) => None,
        };
        let addr = format!("{}:{}", settings.listen_addresses, settings.port);
        let listener = std::net::TcpListener::bind(&addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| io::Error::new(e.kind(), format!("could not listen on {addr}: {e}")))?;
        // Registered with the server's own runtime, which accepts on it.
        let listener = {
            let _in_runtime = runtime.enter();
            TcpListener::from_std(listener)?
        };
        Ok(Server {
            shared: Arc::new(Shared::new(db, settings, secret)?),
            listener: Some(listener),
            runtime: Some(runtime),
            standby,
            autovacuum,
            reload: None,
        })
    }

    /// Has a reload (SIGHUP) read the settings with `reload`: of what
    /// it reads, the TLS settings take effect (the rest needs a restart).
    pub fn on_reload(mut self, reload: Reload) -> Server {
        self.reload = Some(Arc::new(reload));
        self
    }

    /// What SIGHUP does, to call at will (a test's reload): the TLS
    /// certificate, key and CA files are read again, for connections that
    /// start from then on. An error leaves the previous ones in use.
    pub fn reloader(&self) -> impl Fn() -> io::Result<()> + Send + Sync + 'static {
        let (shared, reloads) = (Arc::clone(&self.shared), self.reload.clone());
        move || reload(&shared, reloads.as_deref())
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match &self.listener {
            Some(listener) => listener.local_addr(),
            None => Err(io::Error::other("the server has started running")),
        }
    }

    /// The database (for tests and diagnostics).
    pub fn database(&self) -> &Arc<Database> {
        &self.shared.db
    }

    /// Accepts connections until `shutdown` resolves. Then stops accepting;
    /// open connections end with the runtime, and their sessions abort any
    /// open transaction as they are dropped.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let runtime = self.runtime.take().expect("a server runs once");
        let listener = self.listener.take().expect("a server runs once");
        let (stop_accepting, stop) = tokio::sync::oneshot::channel::<()>();
        let shared = Arc::clone(&self.shared);
        let standby = self.standby.take();
        let autovacuum = self.autovacuum.take();
        let reloads = self.reload.take();
        let workers = Arc::new(Workers::start(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            snapscale_sql::stack::STATEMENT_THREAD_STACK,
            &shared,
        )?);
        let main = runtime.spawn(async move {
            let (stop_checkpoints, stopped) = tokio::sync::oneshot::channel::<()>();
            let checkpoints = match standby {
                // A standby's restartpoints are replay's; it streams instead.
                Some(standby) => {
                    let conninfo = shared.settings.primary_conninfo.clone().expect("a standby has a primary");
                    let receiver = tokio::spawn(crate::replication::receiver::run(standby, conninfo));
                    tokio::spawn(async move {
                        let _ = stopped.await;
                        receiver.abort();
                    })
                }
                None => tokio::spawn(checkpoint_loop(Arc::clone(&shared), stopped)),
            };
            let hangups = tokio::spawn(reload_on_request(Arc::clone(&shared), reloads));
            let result = accept_loop(&shared, &workers, &listener, async {
                let _ = stop.await;
            })
            .await;
            hangups.abort();
            // A final checkpoint, so the next start replays (next to)
            // nothing.
            let _ = stop_checkpoints.send(());
            let _ = checkpoints.await;
            // Stopping autovacuum waits for its round: off the async workers.
            let _ = tokio::task::spawn_blocking(move || drop(autovacuum)).await;
            if let Err(e) = shared.db.checkpoint().await {
                warn!(error = %e, "the shutdown checkpoint failed; the next start replays the WAL");
            }
            // Then the connections end, as PostgreSQL's fast shutdown ends
            // them: each statement stops at its next check or wait, and each
            // connection gets a FATAL 57P01. The log refuses appends from
            // here on (57P01 too). They end after the final checkpoint, not
            // before it: a commit whose task is dropped while it waits for
            // its flush leaves a COMMIT record that the next start replays,
            // never an image that says otherwise.
            shared.terminate_all();
            shared.db.shutdown();
            // Each `Conn` releases what it holds as its worker's runtime
            // drops it. Waited for, so that when `run` returns nothing holds
            // the database (a next server on the same directory finds its
            // lock file free).
            let _ = tokio::task::spawn_blocking(move || workers.stop()).await;
            result
        });
        tokio::pin!(main);
        let result = tokio::select! {
            r = &mut main => r,
            () = shutdown => {
                let _ = stop_accepting.send(());
                (&mut main).await
            }
        };
        drop(runtime);
        result.map_err(io::Error::other)?
    }
}

/// Reloads at each SIGHUP, as PostgreSQL's postmaster does, and at each
/// pg_reload_conf().
async fn reload_on_request(shared: Arc<Shared>, reloads: Option<Arc<Reload>>) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(h) => h,
        Err(e) => {
            warn!(error = %e, "could not watch for SIGHUP; reloads need a restart");
            return;
        }
    };
    loop {
        tokio::select! {
            hup = hangups.recv() => {
                if hup.is_none() {
                    return;
                }
                info!("received SIGHUP, reloading configuration files");
            }
            () = shared.db.reloads.notified() => info!("pg_reload_conf() asked for a reload of the configuration files"),
        }
        // A few small files, on the background runtime (connections run
        // on the workers).
        if let Err(e) = reload(&shared, reloads.as_deref()) {
            warn!("{e}; SSL configuration was not reloaded");
        }
    }
}

/// One reload: the settings read again (or the start's), then TLS built
/// from them.
fn reload(shared: &Shared, reloads: Option<&Reload>) -> io::Result<()> {
    let settings = match reloads {
        Some(read) => {
            let mut fresh = read().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            // The data directory is the start's, whatever the file now says.
            fresh.data_directory = shared.settings.data_directory.clone();
            fresh
        }
        None => shared.settings.clone(),
    };
    shared.reload_tls(&settings)
}

/// Takes a checkpoint every `checkpoint_timeout`, or sooner once
/// `max_wal_size` bytes of WAL were written since the last one; trims the
/// allocator's arenas after each and every `malloc::TRIM_INTERVAL`.
async fn checkpoint_loop(shared: Arc<Shared>, mut stop: tokio::sync::oneshot::Receiver<()>) {
    let timeout = shared.settings.checkpoint_timeout;
    let mut last = std::time::Instant::now();
    let mut redo = shared.db.wal_insert_lsn();
    let mut last_running = (std::time::Instant::now(), shared.db.wal_insert_lsn());
    let mut last_trim = std::time::Instant::now();
    loop {
        tokio::select! {
            _ = &mut stop => return,
            () = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
        }
        // Every 15 s with activity, a running-transactions record lets
        // standbys forget transactions a crash ended without an abort
        // record (PostgreSQL's LOG_SNAPSHOT_INTERVAL_MS).
        if last_running.0.elapsed() >= RUNNING_XACTS_INTERVAL && shared.db.wal_insert_lsn() != last_running.1
        {
            if let Err(e) = shared.db.log_running_xacts() {
                warn!(error = %e, "could not log the running transactions");
            }
            last_running = (std::time::Instant::now(), shared.db.wal_insert_lsn());
        }
        let due = last.elapsed() >= timeout || shared.db.wal_since(redo) >= shared.settings.max_wal_size;
        if due {
            match shared.db.checkpoint().await {
                Ok(Some(at)) => redo = at,
                Ok(None) => {}
                Err(e) => warn!(error = %e, "checkpoint failed; the WAL is kept"),
            }
            last = std::time::Instant::now();
        }
        // After a checkpoint (its image and scans just freed) and between
        // them, the arenas' free pages go back to the system, or the
        // resident set creeps up under a steady load (crate::malloc).
        if due || last_trim.elapsed() >= crate::malloc::TRIM_INTERVAL {
            let started = std::time::Instant::now();
            let _ = tokio::task::spawn_blocking(crate::malloc::trim).await;
            // The trim holds the one arena's lock (crate::malloc): every
            // allocation its thread cache misses waits for it meanwhile.
            let ms = started.elapsed().as_millis() as u64;
            if ms >= 100 {
                warn!(ms, "trimming the allocator's arena took long; allocations waited for it");
            }
            last_trim = std::time::Instant::now();
        }
    }
}

async fn accept_loop(
    shared: &Arc<Shared>,
    workers: &Arc<Workers>,
    listener: &TcpListener,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    {
        info!(
            addr = %listener.local_addr()?,
            snapshot_mode = %shared.settings.snapshot_mode,
            max_connections = shared.settings.max_connections,
            data_directory = %shared.settings.data_directory.display(),
            synchronous_commit = shared.settings.session.synchronous_commit,
            fsync = shared.settings.fsync,
            "listening"
        );
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => {
                    info!("shutting down");
                    return Ok(());
                }
                accepted = listener.accept() => {
                    let (socket, peer) = match accepted {
                        Ok(accepted) => accepted,
                        Err(e) => {
                            // Out of file descriptors and the like: keep
                            // serving the connections we have.
                            warn!(error = %e, "accept failed");
                            continue;
                        }
                    };
                    let _ = socket.set_nodelay(true);
                    tokio::spawn(route(socket, peer, Arc::clone(shared), Arc::clone(workers)));
                }
            }
        }
    }
}

/// The length and code of a CancelRequest packet: it is always 16 bytes,
/// and is the first thing on its connection.
const CANCEL_REQUEST_HEADER: [u8; 8] = [0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e];

/// Serves a cancel request here, on the background runtime, and hands
/// every other connection to a worker. A cancel must not queue behind the
/// very statement it is for, which may keep its worker's thread busy.
async fn route(socket: TcpStream, peer: SocketAddr, shared: Arc<Shared>, workers: Arc<Workers>) {
    let mut head = [0u8; 8];
    // Only peeked: whoever serves the connection reads it from the start.
    // A client that never sends anything is dropped after as long as its
    // startup would have been allowed.
    let peeked = tokio::time::timeout(crate::startup::STARTUP_TIMEOUT, socket.peek(&mut head)).await;
    match peeked {
        Ok(Ok(n)) if n == head.len() && head == CANCEL_REQUEST_HEADER => {
            if let Err(e) = serve(socket, shared, None).await {
                info!(%peer, error = %e, "a cancel request ended with an error");
            }
        }
        // Anything else, even a short first read, is a worker's to judge.
        Ok(Ok(_)) => workers.assign(socket, peer),
        Ok(Err(e)) => info!(%peer, error = %e, "connection ended with an error"),
        Err(_) => {}
    }
}
