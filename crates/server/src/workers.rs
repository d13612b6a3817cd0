//! Connection workers: one thread per CPU, each with a single-threaded
//! tokio runtime of its own, and every connection kept on one of them for
//! its whole life.
//!
//! On a work-stealing runtime a statement's round trip crossed threads
//! several times: the worker that polled epoll was often not the one that
//! ran the connection's task, and an idle worker was woken to steal it. At
//! a few clients those wake-ups cost more than the statement did (issue 15:
//! ~45 % of the server's CPU in the scheduler and socket wake-up paths at 2
//! pgbench clients). Here a connection's socket readiness, its statement
//! and its reply are handled by the thread that owns it, and the only
//! cross-thread wake-ups left are the ones the data needs (a lock granted,
//! a WAL flush done, a cancel).
//!
//! The acceptor (on the server's background runtime) hands each new socket
//! to the worker with the fewest connections. Cancel requests never reach
//! a worker: the acceptor answers them itself, so a cancel is heard even
//! while the statement it is for keeps its worker busy.
//!
//! Each worker is a tokio runtime with one worker thread. A statement whose
//! plan does not bound its work (a scan, a join of scans, a series, DDL)
//! hands the worker — its reactor and its other connections — to a fresh
//! thread before it computes (`block_in_place`; OFF-THE-WORKER in
//! snapscale_sql's exec module), so the worker's other connections are not
//! held up by it, as PostgreSQL's other backends are not; point lookups
//! and small inserts run where they are. A bounded statement that still
//! computes long (a huge expression over one row) holds its worker up.
//! Timers that must fire during a statement (statement_timeout) run on a
//! thread of their own (see `snapscale_sql::session`).

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::connection::serve;
use crate::shared::Shared;

/// How long a shutdown waits for connections to end on their own after
/// they were told to (`Shared::terminate_all`) before their workers drop
/// them.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A socket handed to a worker.
struct Assigned {
    socket: std::net::TcpStream,
    peer: SocketAddr,
}

/// One worker thread, as the acceptor sees it.
struct Worker {
    /// Where the acceptor hands the worker sockets. When the worker's loop
    /// ends (`Workers::stop`, or this is dropped), its runtime drops the
    /// connections' tasks on the worker's own thread.
    sockets: mpsc::UnboundedSender<Assigned>,
    /// Connections the worker serves.
    load: Arc<AtomicUsize>,
}

/// The connection workers. `stop` ends them and waits; dropping this
/// without `stop` ends them without waiting.
pub(crate) struct Workers {
    workers: Vec<Worker>,
    /// Ends every worker's loop (`stop`): connections still being routed
    /// hold the `Workers`, so closing the channels would wait for them.
    stopping: CancellationToken,
    /// The workers' threads: joined by `stop`, so that a server whose `run`
    /// returned holds nothing of the database any more (its data
    /// directory's lock file included).
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

/// Gives a worker's count back when its connection ends, however it ends.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        // Relaxed: the count only steers where new connections go (and
        // whether a commit syncs on this thread: Xact::sync_here); it
        // publishes nothing. Pairs with the fetch_add in `Workers::assign`.
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Workers {
    /// Starts `n` worker threads with stacks of `stack` bytes (statement
    /// work recurses up to `max_stack_depth`).
    pub(crate) fn start(n: usize, stack: usize, shared: &Arc<Shared>) -> io::Result<Workers> {
        let mut workers = Vec::with_capacity(n);
        let mut threads = Vec::with_capacity(n);
        let stopping = CancellationToken::new();
        for i in 0..n.max(1) {
            // One worker thread: a connection's socket, statements and
            // replies stay on it. Multi-threaded in name so that a long
            // statement can hand the worker (its other connections, its
            // reactor) to a fresh thread and go on computing where it is
            // (`block_in_place`; OFF-THE-WORKER in snapscale_sql's exec).
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                // Its blocking threads, which become the worker after a
                // hand-off, get the same stacks.
                .thread_stack_size(stack)
                .thread_name(format!("snapscale-conn-{i}"))
                .enable_all()
                .build()?;
            let (sockets, mut assigned) = mpsc::unbounded_channel::<Assigned>();
            let load = Arc::new(AtomicUsize::new(0));
            let counts = Arc::clone(&load);
            let shared = Arc::clone(shared);
            let stopping = stopping.clone();
            let thread = std::thread::Builder::new()
                .name(format!("snapscale-accept-{i}"))
                .stack_size(stack)
                .spawn(move || {
                    runtime.block_on(async move {
                        loop {
                            let Assigned { socket, peer } = tokio::select! {
                                biased;
                                () = stopping.cancelled() => break,
                                next = assigned.recv() => match next {
                                    Some(next) => next,
                                    None => break,
                                },
                            };
                            let counted = Counted(Arc::clone(&counts));
                            spawn_connection(socket, peer, Arc::clone(&shared), counted);
                        }
                    });
                    // The connections still open are dropped here, with the
                    // runtime: each `Conn` releases what it holds.
                    drop(runtime);
                })?;
            threads.push(thread);
            workers.push(Worker { sockets, load });
        }
        Ok(Workers { workers, stopping, threads: Mutex::new(threads) })
    }

    /// Stops the workers and waits until their threads are gone: each
    /// worker's runtime has dropped its connections' tasks (every `Conn`
    /// released what it held) and waited for the statements that had
    /// handed it off. Blocks; the caller asked the statements to stop
    /// (`Shared::terminate_all`) so that none keeps this waiting long.
    pub(crate) fn stop(&self) {
        // The connections end on their own first (each answers the
        // termination with its FATAL), for at most `STOP_GRACE`; what is
        // left then is dropped with its worker's runtime.
        let deadline = std::time::Instant::now() + STOP_GRACE;
        // Relaxed: a count (see `Counted`); nothing is read through it.
        while self.workers.iter().any(|w| w.load.load(Ordering::Relaxed) > 0)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.stopping.cancel();
        let threads =
            std::mem::take(&mut *self.threads.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for thread in threads {
            if thread.join().is_err() {
                warn!("a connection worker panicked while it stopped");
            }
        }
    }

    /// Hands an accepted socket to the worker with the fewest connections
    /// (the first such, so ties go to lower numbers).
    pub(crate) fn assign(&self, socket: TcpStream, peer: SocketAddr) {
        // Relaxed: a steering count (see `Counted`), read against the
        // fetch_add below and the fetch_sub in `Counted::drop`.
        let Some(worker) = self.workers.iter().min_by_key(|w| w.load.load(Ordering::Relaxed)) else { return };
        let socket = match socket.into_std() {
            Ok(socket) => socket,
            Err(e) => {
                warn!(%peer, error = %e, "could not hand a connection to a worker");
                return;
            }
        };
        // Relaxed: a steering count (see `Counted`); pairs with its
        // fetch_sub.
        worker.load.fetch_add(1, Ordering::Relaxed);
        if worker.sockets.send(Assigned { socket, peer }).is_err() {
            // The worker has stopped: the server is shutting down.
            // Relaxed: undoes the fetch_add above.
            worker.load.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Runs one connection on the current (worker) runtime.
fn spawn_connection(socket: std::net::TcpStream, peer: SocketAddr, shared: Arc<Shared>, counted: Counted) {
    // Registered with this worker's reactor: its readiness is seen here.
    let socket = match TcpStream::from_std(socket) {
        Ok(socket) => socket,
        Err(e) => {
            warn!(%peer, error = %e, "a worker could not take a connection");
            return;
        }
    };
    tokio::spawn(async move {
        let peers = Arc::clone(&counted.0);
        let _counted = counted;
        if let Err(e) = serve(socket, shared, Some(peers)).await {
            info!(%peer, error = %e, "connection ended with an error");
        }
    });
}
