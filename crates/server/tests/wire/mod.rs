//! A minimal PostgreSQL frontend for tests: enough of protocol 3.0 to check
//! exact command tags, SQLSTATEs, notices and ReadyForQuery status bytes,
//! which driver crates do not expose. And a server started on an ephemeral
//! port.
#![allow(dead_code)]

use std::net::SocketAddr;

use snapscale_server::{Server, Settings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// A backend message, decoded as far as the tests need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    ParameterStatus(String, String),
    Complete(String),
    Error {
        severity: String,
        code: String,
        message: String,
    },
    Notice {
        code: String,
        message: String,
    },
    Row(Vec<Option<String>>),
    Columns(Vec<String>),
    Ready(char),
    EmptyQuery,
    /// An authentication request: 0 = ok, 10 = SASL.
    Auth(i32),
    Other(char),
}

pub struct Raw {
    stream: TcpStream,
}

fn cstr(buf: &[u8], at: &mut usize) -> String {
    let end = buf[*at..].iter().position(|&b| b == 0).expect("nul") + *at;
    let s = String::from_utf8_lossy(&buf[*at..end]).into_owned();
    *at = end + 1;
    s
}

fn fields(body: &[u8]) -> (String, String, String) {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    let mut at = 0;
    while at < body.len() && body[at] != 0 {
        let kind = body[at];
        at += 1;
        let v = cstr(body, &mut at);
        match kind {
            b'S' => severity = v,
            b'C' => code = v,
            b'M' => message = v,
            _ => {}
        }
    }
    (severity, code, message)
}

impl Raw {
    /// Sends the startup message and returns only the server's first answer
    /// (an authentication request, ReadyForQuery's prelude, or an error).
    pub async fn first_answer(addr: SocketAddr) -> Msg {
        let (mut raw, _) = Self::start(addr).await;
        raw.read_message().await.expect("an answer")
    }

    /// Connects and runs the startup exchange; returns the messages up to
    /// ReadyForQuery, or up to the error that ended the connection.
    pub async fn connect(addr: SocketAddr) -> (Raw, Vec<Msg>) {
        let (mut raw, ()) = Self::start(addr).await;
        let msgs = raw.read_until_ready().await;
        (raw, msgs)
    }

    async fn start(addr: SocketAddr) -> (Raw, ()) {
        Self::start_with(
            addr,
            &[("user", "tester"), ("database", "tests"), ("application_name", "wire-tests")],
        )
        .await
    }

    /// Connects and sends a startup packet with these parameters; returns
    /// the messages up to ReadyForQuery or the error that ended it.
    pub async fn connect_with(addr: SocketAddr, params: &[(&str, &str)]) -> (Raw, Vec<Msg>) {
        let (mut raw, ()) = Self::start_with(addr, params).await;
        let msgs = raw.read_until_ready().await;
        (raw, msgs)
    }

    async fn start_with(addr: SocketAddr, params: &[(&str, &str)]) -> (Raw, ()) {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let mut body = Vec::new();
        body.extend_from_slice(&196_608i32.to_be_bytes()); // protocol 3.0
        for &(k, v) in params {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        msg.extend_from_slice(&body);
        stream.write_all(&msg).await.expect("startup");
        (Raw { stream }, ())
    }

    /// Writes bytes as they are (hand-built messages, malformed ones too).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("send");
    }

    /// The next message, or `None` once the server closed the connection.
    pub async fn read_message(&mut self) -> Option<Msg> {
        let kind = self.stream.read_u8().await.ok()?;
        let len = self.stream.read_i32().await.ok()? as usize;
        let mut body = vec![0; len - 4];
        self.stream.read_exact(&mut body).await.ok()?;
        Some(match kind {
            b'S' => {
                let mut at = 0;
                let k = cstr(&body, &mut at);
                Msg::ParameterStatus(k, cstr(&body, &mut at))
            }
            b'C' => Msg::Complete(cstr(&body, &mut 0)),
            b'E' => {
                let (severity, code, message) = fields(&body);
                Msg::Error { severity, code, message }
            }
            b'N' => {
                let (_, code, message) = fields(&body);
                Msg::Notice { code, message }
            }
            b'T' => {
                let n = u16::from_be_bytes([body[0], body[1]]) as usize;
                let mut at = 2;
                let mut names = Vec::new();
                for _ in 0..n {
                    names.push(cstr(&body, &mut at));
                    at += 18;
                }
                Msg::Columns(names)
            }
            b'D' => {
                let n = u16::from_be_bytes([body[0], body[1]]) as usize;
                let mut at = 2;
                let mut values = Vec::new();
                for _ in 0..n {
                    let len = i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
                    at += 4;
                    if len < 0 {
                        values.push(None);
                    } else {
                        values.push(Some(String::from_utf8_lossy(&body[at..at + len as usize]).into_owned()));
                        at += len as usize;
                    }
                }
                Msg::Row(values)
            }
            b'Z' => Msg::Ready(body[0] as char),
            b'I' => Msg::EmptyQuery,
            b'R' => Msg::Auth(i32::from_be_bytes([body[0], body[1], body[2], body[3]])),
            other => Msg::Other(other as char),
        })
    }

    /// Messages up to ReadyForQuery (or a FATAL error, or the end).
    pub async fn read_until_ready(&mut self) -> Vec<Msg> {
        let mut out = Vec::new();
        while let Some(m) = self.read_message().await {
            let done = matches!(m, Msg::Ready(_));
            let fatal = matches!(&m, Msg::Error { severity, .. } if severity == "FATAL");
            out.push(m);
            if done || fatal {
                break;
            }
        }
        out
    }

    /// Sends one simple Query message and returns everything up to ReadyForQuery.
    pub async fn query(&mut self, sql: &str) -> Vec<Msg> {
        let mut msg = vec![b'Q'];
        msg.extend_from_slice(&((sql.len() + 5) as i32).to_be_bytes());
        msg.extend_from_slice(sql.as_bytes());
        msg.push(0);
        self.stream.write_all(&msg).await.expect("query");
        self.read_until_ready().await
    }
}

/// A frontend message: type byte, length, body.
pub fn message(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstring(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Parse: statement `name`, `sql`, declared parameter type OIDs.
pub fn parse_message(name: &str, sql: &str, oids: &[u32]) -> Vec<u8> {
    let mut b = Vec::new();
    cstring(&mut b, name);
    cstring(&mut b, sql);
    b.extend_from_slice(&(oids.len() as u16).to_be_bytes());
    for o in oids {
        b.extend_from_slice(&o.to_be_bytes());
    }
    message(b'P', &b)
}

/// Bind: parameters given as (length field, bytes), so that lengths can lie.
pub fn bind_message(
    portal: &str,
    statement: &str,
    formats: &[i16],
    params: &[(i32, &[u8])],
    results: &[i16],
) -> Vec<u8> {
    let mut b = Vec::new();
    cstring(&mut b, portal);
    cstring(&mut b, statement);
    b.extend_from_slice(&(formats.len() as u16).to_be_bytes());
    for f in formats {
        b.extend_from_slice(&f.to_be_bytes());
    }
    b.extend_from_slice(&(params.len() as u16).to_be_bytes());
    for (len, bytes) in params {
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(bytes);
    }
    b.extend_from_slice(&(results.len() as u16).to_be_bytes());
    for f in results {
        b.extend_from_slice(&f.to_be_bytes());
    }
    message(b'B', &b)
}

/// Describe of a statement ('S') or portal ('P').
pub fn describe_message(kind: u8, name: &str) -> Vec<u8> {
    let mut b = vec![kind];
    cstring(&mut b, name);
    message(b'D', &b)
}

/// Execute a portal (0 = all rows).
pub fn execute_message(portal: &str, max_rows: i32) -> Vec<u8> {
    let mut b = Vec::new();
    cstring(&mut b, portal);
    b.extend_from_slice(&max_rows.to_be_bytes());
    message(b'E', &b)
}

pub fn sync_message() -> Vec<u8> {
    message(b'S', &[])
}

pub fn flush_message() -> Vec<u8> {
    message(b'H', &[])
}

/// The (first) error among `msgs`: (severity, SQLSTATE, message).
pub fn error_of(msgs: &[Msg]) -> Option<(String, String, String)> {
    msgs.iter().find_map(|m| match m {
        Msg::Error { severity, code, message } => Some((severity.clone(), code.clone(), message.clone())),
        _ => None,
    })
}

/// The SQLSTATE of the (first) error among `msgs`.
pub fn error_code(msgs: &[Msg]) -> Option<String> {
    msgs.iter().find_map(|m| match m {
        Msg::Error { code, .. } => Some(code.clone()),
        _ => None,
    })
}

/// The command tags among `msgs`.
pub fn tags(msgs: &[Msg]) -> Vec<String> {
    msgs.iter()
        .filter_map(|m| match m {
            Msg::Complete(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// The final ReadyForQuery status.
pub fn status(msgs: &[Msg]) -> char {
    match msgs.last() {
        Some(Msg::Ready(s)) => *s,
        other => panic!("no ReadyForQuery at the end: {other:?}"),
    }
}

/// A server on an ephemeral port; dropping the guard shuts it down.
pub struct TestServer {
    pub addr: SocketAddr,
    pub db: std::sync::Arc<snapscale_sql::Database>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// A clean shutdown (with its final checkpoint), waited for.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("server run");
        }
    }

    /// A crash, as far as the data directory can tell: the server stops at
    /// once, with no final checkpoint; what it wrote stays in the files.
    pub async fn crash(mut self) {
        self.stop.take();
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub async fn start(configure: impl FnOnce(&mut Settings)) -> TestServer {
    start_in(None, configure).await
}

/// A server on `dir` (reused across restarts), or a fresh directory.
pub async fn start_in(dir: Option<&std::path::Path>, configure: impl FnOnce(&mut Settings)) -> TestServer {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // Relaxed: only uniqueness matters.
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let data_directory = match dir {
        Some(d) => d.to_owned(),
        None => {
            let d = std::env::temp_dir().join(format!("snapscale-wire-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            d
        }
    };
    let mut settings = Settings { port: 0, data_directory, ..Settings::default() };
    configure(&mut settings);
    // The previous server on this directory may still be letting go of it
    // after a `crash` (an aborted run leaves its connection workers to end
    // on their own); a `shutdown` has released it before returning.
    let mut tries = 0;
    let server = loop {
        match Server::bind(settings.clone()).await {
            Ok(s) => break s,
            Err(e) if e.to_string().contains("in use") && tries < 100 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("bind: {e}"),
        }
    };
    serve(server)
}

/// Runs a bound `server` until its guard stops it.
pub fn serve(server: Server) -> TestServer {
    let addr = server.local_addr().unwrap();
    let db = std::sync::Arc::clone(server.database());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    TestServer { addr, db, stop: Some(stop), task: Some(task) }
}

/// A tokio-postgres client of `server` (its connection task spawned).
pub async fn connect(server: &TestServer) -> tokio_postgres::Client {
    connect_with_task(server).await.0
}

/// A tokio-postgres client of `server` and its spawned connection task,
/// whose result tells how the server ended the connection.
pub async fn connect_with_task(
    server: &TestServer,
) -> (tokio_postgres::Client, tokio::task::JoinHandle<Result<(), tokio_postgres::Error>>) {
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester dbname=tests", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .expect("connects");
    (client, tokio::spawn(conn))
}

/// The SQLSTATE of a statement that must fail.
pub fn code<T: std::fmt::Debug>(r: Result<T, tokio_postgres::Error>) -> String {
    let e = r.expect_err("the statement must fail");
    e.code().map(|c| c.code().to_owned()).unwrap_or_else(|| format!("no SQLSTATE: {e}"))
}

/// Rows of a simple query, as text.
pub async fn rows(c: &tokio_postgres::Client, sql: &str) -> Vec<Vec<Option<String>>> {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_owned)).collect())
            }
            _ => None,
        })
        .collect()
}
