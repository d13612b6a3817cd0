//! The listener: accepts connections and runs each on its own task.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use snapscale_lock::LockConfig;
use snapscale_sql::Database;
use snapscale_txn::{Engine, EngineConfig};
use tokio::net::TcpListener;
use tracing::{info, warn};

use crate::connection::{scram, serve, Shared};
use crate::settings::{AuthMethod, Settings};

/// A bound server, ready to run.
pub struct Server {
    shared: Arc<Shared>,
    engine: Arc<Engine>,
    listener: TcpListener,
}

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
            max_sessions: settings.max_connections,
            snapshot_mode: settings.snapshot_mode,
            ..EngineConfig::default()
        });
        let lock_timeout = (!settings.lock_timeout.is_zero()).then_some(settings.lock_timeout);
        let db = Database::new(
            Arc::clone(&engine),
            LockConfig { deadlock_timeout: settings.deadlock_timeout, lock_timeout, ..LockConfig::default() },
        );
        let addr = format!("{}:{}", settings.listen_addresses, settings.port);
        let listener = TcpListener::bind(&addr)
            .await
            .map_err(|e| io::Error::new(e.kind(), format!("could not listen on {addr}: {e}")))?;
        Ok(Server { shared: Arc::new(Shared::new(db, settings, scram)), engine, listener })
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
        info!(
            addr = %self.local_addr()?,
            snapshot_mode = %self.shared.settings.snapshot_mode,
            max_connections = self.shared.settings.max_connections,
            data_directory = %self.shared.settings.data_directory.display(),
            "listening"
        );
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => {
                    info!("shutting down");
                    return Ok(());
                }
                accepted = self.listener.accept() => {
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
                    let shared = Arc::clone(&self.shared);
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
