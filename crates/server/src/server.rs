//! The listener: accepts connections and runs each on its own task.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use snapscale_lock::LockConfig;
use snapscale_sql::{Database, Durability};
use snapscale_txn::{Engine, EngineConfig, Session};
use tokio::net::TcpListener;
use tracing::{info, warn};

use crate::connection::{scram, serve, Shared};
use crate::settings::{AuthMethod, Settings};

/// A bound server, ready to run.
pub struct Server {
    shared: Arc<Shared>,
    engine: Arc<Engine>,
    listener: TcpListener,
    /// The checkpointer's own proc-array session (PostgreSQL's auxiliary
    /// process slot), attached before clients can take the slots.
    checkpointer: Session,
}

/// WAL segment size.
const SEGMENT_SIZE: u64 = 16 << 20;

impl Server {
    /// Prepares the data directory, builds the engine and binds the port.
    /// Port 0 binds an ephemeral port (see [`Server::local_addr`]).
    pub async fn bind(settings: Settings) -> io::Result<Server> {
        settings.check().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let scram = match (settings.auth_method, &settings.password) {
            (AuthMethod::ScramSha256, Some(password)) => Some(scram(password)?),
            _ => None,
        };
        std::fs::create_dir_all(&settings.data_directory).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("could not create data directory \"{}\": {e}", settings.data_directory.display()),
            )
        })?;
        let engine = Engine::new(EngineConfig {
            // One more slot for the checkpointer.
            max_sessions: settings.max_connections + 1,
            snapshot_mode: settings.snapshot_mode,
            ..EngineConfig::default()
        });
        let lock_timeout = (!settings.lock_timeout.is_zero()).then_some(settings.lock_timeout);
        let durability = Durability {
            data_dir: settings.data_directory.clone(),
            fsync: settings.fsync,
            segment_size: SEGMENT_SIZE,
        };
        let locks =
            LockConfig { deadlock_timeout: settings.deadlock_timeout, lock_timeout, ..LockConfig::default() };
        let engine2 = Arc::clone(&engine);
        // Recovery reads files: off the async workers.
        let db = tokio::task::spawn_blocking(move || Database::open(engine2, locks, &durability))
            .await
            .map_err(io::Error::other)?
            .map_err(|e| io::Error::other(format!("start-up failed: {e}")))?;
        let checkpointer = engine.attach().map_err(io::Error::other)?;
        let addr = format!("{}:{}", settings.listen_addresses, settings.port);
        let listener = TcpListener::bind(&addr)
            .await
            .map_err(|e| io::Error::new(e.kind(), format!("could not listen on {addr}: {e}")))?;
        Ok(Server { shared: Arc::new(Shared::new(db, settings, scram)), engine, listener, checkpointer })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The database (for tests and diagnostics).
    pub fn database(&self) -> &Arc<Database> {
        &self.shared.db
    }

    /// The transaction engine (for tests and diagnostics).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Accepts connections until `shutdown` resolves. Then stops accepting;
    /// open connections end with the runtime, and their sessions abort any
    /// open transaction as they are dropped.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let Server { shared, engine: _, listener, checkpointer } = self;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let checkpoints = tokio::spawn(checkpoint_loop(Arc::clone(&shared), checkpointer, stopped));
        let result = accept_loop(&shared, &listener, shutdown).await;
        // A final checkpoint, so the next start replays nothing.
        let _ = stop.send(());
        if let Ok(mut session) = checkpoints.await {
            if let Err(e) = shared.db.checkpoint(&mut session).await {
                warn!(error = %e, "the shutdown checkpoint failed; the next start replays the WAL");
            }
        }
        if let Some(log) = &shared.db.log {
            log.shutdown();
        }
        result
    }
}

/// Takes a checkpoint every `checkpoint_timeout`, or sooner once
/// `max_wal_size` bytes of WAL were written since the last one.
async fn checkpoint_loop(
    shared: Arc<Shared>,
    mut session: Session,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) -> Session {
    let timeout = shared.settings.checkpoint_timeout;
    let mut last = std::time::Instant::now();
    let mut redo = shared.db.log.as_ref().map_or(0, |l| l.insert_lsn());
    loop {
        tokio::select! {
            _ = &mut stop => return session,
            () = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
        }
        let due = last.elapsed() >= timeout || shared.db.wal_since(redo) >= shared.settings.max_wal_size;
        if !due {
            continue;
        }
        match shared.db.checkpoint(&mut session).await {
            Ok(Some(at)) => redo = at,
            Ok(None) => {}
            Err(e) => warn!(error = %e, "checkpoint failed; the WAL is kept"),
        }
        last = std::time::Instant::now();
    }
}

async fn accept_loop(
    shared: &Arc<Shared>,
    listener: &TcpListener,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    {
        info!(
            addr = %listener.local_addr()?,
            snapshot_mode = %shared.settings.snapshot_mode,
            max_connections = shared.settings.max_connections,
            data_directory = %shared.settings.data_directory.display(),
            synchronous_commit = shared.settings.synchronous_commit,
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
                    let shared = Arc::clone(shared);
                    tokio::spawn(async move {
                        if let Err(e) = serve(socket, shared).await {
                            info!(%peer, error = %e, "connection ended with an error");
                        }
                    });
                }
            }
        }
    }
}
