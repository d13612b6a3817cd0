//! The protocol fuzzers' harness (hidden from the documented API): an
//! in-process server, one input fed to it as a client's byte stream, and
//! the checks that must hold after every input.
//!
//! Two drivers use it: the proptest generator in `tests/fuzz.rs`, which runs
//! in the normal suite with a time bound, and the libFuzzer target in the
//! repository's `fuzz/` directory for long runs. Both replay the corpus in
//! `fuzz/corpus/protocol/`.
//!
//! An input is the bytes a client sends after connecting. If its first byte
//! is even, a valid startup packet is sent first, so most inputs exercise
//! the query phase; an odd first byte leaves the startup to the input.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use snapscale_sql::Database;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{Server, SessionSettings, Settings};

/// How long an input's connection may stay silent before the harness
/// gives up reading and closes it.
const QUIET: Duration = Duration::from_millis(100);

/// How long the checks wait for the server to release a closed
/// connection's slot and locks (it learns of the close asynchronously).
const SETTLE: Duration = Duration::from_secs(10);

/// An in-process server and a client runtime to drive it.
pub struct Harness {
    runtime: tokio::runtime::Runtime,
    addr: SocketAddr,
    db: Arc<Database>,
    /// Sessions attached with no client connected (the checkpointer).
    baseline: usize,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// The query that tells the harness an input has been answered.
const SENTINEL: &str = "SELECT 'fuzz-end-7f3a'";
const SENTINEL_VALUE: &[u8] = b"fuzz-end-7f3a";

/// A simple Query message.
fn simple_query(sql: &str) -> Vec<u8> {
    let mut m = vec![b'Q'];
    m.extend_from_slice(&((sql.len() + 5) as i32).to_be_bytes());
    m.extend_from_slice(sql.as_bytes());
    m.push(0);
    m
}

/// A startup packet for user `fuzz`, database `fuzz`.
pub fn startup_packet() -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for (k, v) in [("user", "fuzz"), ("database", "fuzz")] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut packet = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    packet
}

impl Harness {
    /// A server on an ephemeral port with a fresh data directory under
    /// `dir`, with short lock timeouts so no input can stall the checks.
    pub fn start(dir: &std::path::Path) -> Harness {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("client runtime");
        let _ = std::fs::remove_dir_all(dir);
        let settings = Settings {
            port: 0,
            data_directory: dir.to_owned(),
            max_connections: 8,
            max_message_size: 4 << 20,
            session: SessionSettings {
                lock_timeout: Duration::from_secs(2),
                deadlock_timeout: Duration::from_millis(200),
                ..SessionSettings::default()
            },
            ..Settings::default()
        };
        let (server, addr) = runtime.block_on(async {
            let server = Server::bind(settings).await.expect("bind");
            let addr = server.local_addr().expect("address");
            (server, addr)
        });
        let db = Arc::clone(server.database());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        runtime.spawn(server.run(async {
            let _ = stopped.await;
        }));
        let baseline = db.attached_sessions();
        Harness { runtime, addr, db, baseline, _stop: stop }
    }

    /// Sends `input` as one client would, then a Sync and a sentinel query;
    /// reads until the sentinel's answer comes back, the server closes the
    /// connection, or it goes quiet (the input left it mid-message or in
    /// COPY); then closes it.
    pub fn feed(&self, input: &[u8]) {
        self.runtime.block_on(async {
            let Ok(mut stream) = TcpStream::connect(self.addr).await else { return };
            if input.first().is_none_or(|b| b % 2 == 0) {
                let _ = stream.write_all(&startup_packet()).await;
            }
            let _ = stream.write_all(input.get(1..).unwrap_or_default()).await;
            let mut tail = b"S\0\0\0\x04".to_vec();
            tail.extend_from_slice(&simple_query(SENTINEL));
            let _ = stream.write_all(&tail).await;
            let mut seen: Vec<u8> = Vec::new();
            let mut buf = vec![0u8; 64 << 10];
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                match tokio::time::timeout(QUIET, stream.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => {
                        // Keep only a tail long enough to hold the sentinel.
                        seen.extend_from_slice(&buf[..n]);
                        if seen.windows(SENTINEL_VALUE.len()).any(|w| w == SENTINEL_VALUE) {
                            break;
                        }
                        let keep = seen.len().saturating_sub(SENTINEL_VALUE.len());
                        seen.drain(..keep);
                    }
                    _ => break,
                }
            }
        });
    }

    /// What must hold after every input: the connection's slot and locks
    /// are released, and a new client is served. Panics otherwise.
    pub fn check(&self) {
        let deadline = Instant::now() + SETTLE;
        while self.db.attached_sessions() > self.baseline || self.db.locks_held() > 0 {
            assert!(
                Instant::now() < deadline,
                "leaked after the connection closed: {} sessions attached (baseline {}), {} locks held",
                self.db.attached_sessions(),
                self.baseline,
                self.db.locks_held()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(self.db.lock_waits(), 0, "a lock request is still queued");
        let answer = self.runtime.block_on(self.select_one());
        assert!(answer, "a fresh connection is not answered SELECT 1");
    }

    async fn select_one(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(self.addr).await else { return false };
        let mut bytes = startup_packet();
        bytes.extend_from_slice(&simple_query("SELECT 1"));
        if stream.write_all(&bytes).await.is_err() {
            return false;
        }
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = Instant::now() + SETTLE;
        while Instant::now() < deadline {
            match tokio::time::timeout(SETTLE, stream.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
                _ => return false,
            }
            // DataRow with one column "1", then CommandComplete "SELECT 1".
            let row = b"D\0\0\0\x0b\0\x01\0\0\0\x011";
            if seen.windows(row.len()).any(|w| w == row) && seen.windows(9).any(|w| w == b"SELECT 1\0") {
                return true;
            }
        }
        false
    }
}
