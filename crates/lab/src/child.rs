//! `snapscale serve` as a child process of the lab, and the little of the
//! protocol the lab needs to talk to it directly (startup, a simple query).

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it next).
pub(crate) fn free_port() -> io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Reads one backend message: its type byte and body.
pub(crate) async fn read_message(stream: &mut TcpStream) -> io::Result<(u8, Vec<u8>)> {
    let kind = stream.read_u8().await?;
    let len = stream.read_i32().await?;
    let len = usize::try_from(len).ok().filter(|&l| l >= 4).ok_or_else(|| io::Error::other("bad length"))?;
    let mut body = vec![0; len - 4];
    stream.read_exact(&mut body).await?;
    Ok((kind, body))
}

/// Sends a startup message for `user` (also the database) and reads until
/// ReadyForQuery; fails on an error. Only trust authentication gets there.
pub(crate) async fn connect(port: u16, user: &str) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for part in ["user", user, "database", user] {
        body.extend_from_slice(part.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    msg.extend_from_slice(&body);
    stream.write_all(&msg).await?;
    loop {
        match read_message(&mut stream).await? {
            (b'Z', _) => return Ok(stream),
            (b'E', rest) => return Err(io::Error::other(String::from_utf8_lossy(&rest).into_owned())),
            _ => {}
        }
    }
}

/// Runs `sql` over the simple protocol and reads up to ReadyForQuery.
pub(crate) async fn simple_query(stream: &mut TcpStream, sql: &str) -> io::Result<()> {
    let mut msg = vec![b'Q'];
    msg.extend_from_slice(&((sql.len() + 5) as i32).to_be_bytes());
    msg.extend_from_slice(sql.as_bytes());
    msg.push(0);
    stream.write_all(&msg).await?;
    let mut error = None;
    loop {
        match read_message(stream).await? {
            (b'Z', _) => return error.map_or(Ok(()), |e| Err(io::Error::other(e))),
            (b'E', rest) => error = Some(String::from_utf8_lossy(&rest).into_owned()),
            _ => {}
        }
    }
}

/// Runs `sql` over the simple protocol; the rows of its (last) result, each
/// value as text (`None` for NULL).
pub(crate) async fn query_rows(stream: &mut TcpStream, sql: &str) -> io::Result<Vec<Vec<Option<String>>>> {
    let mut msg = vec![b'Q'];
    msg.extend_from_slice(&((sql.len() + 5) as i32).to_be_bytes());
    msg.extend_from_slice(sql.as_bytes());
    msg.push(0);
    stream.write_all(&msg).await?;
    let (mut rows, mut error) = (Vec::new(), None);
    loop {
        match read_message(stream).await? {
            (b'Z', _) => return error.map_or(Ok(rows), |e| Err(io::Error::other(e))),
            (b'E', rest) => error = Some(String::from_utf8_lossy(&rest).into_owned()),
            (b'T', _) => rows.clear(),
            (b'D', body) => rows.push(data_row(&body).ok_or_else(|| io::Error::other("bad DataRow"))?),
            _ => {}
        }
    }
}

/// The values of a DataRow message's body.
fn data_row(body: &[u8]) -> Option<Vec<Option<String>>> {
    let n = u16::from_be_bytes(body.get(..2)?.try_into().ok()?) as usize;
    let mut at = 2;
    let mut values = Vec::with_capacity(n);
    for _ in 0..n {
        let len = i32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?);
        at += 4;
        if len < 0 {
            values.push(None);
        } else {
            let end = at + len as usize;
            values.push(Some(String::from_utf8_lossy(body.get(at..end)?).into_owned()));
            at = end;
        }
    }
    Some(values)
}

/// Polls until a server on `port` completes a startup exchange as `user`,
/// failing early if `child` exits.
pub(crate) fn wait_until_accepting(port: u16, user: &str, child: &mut Child) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let attempt = runtime.block_on(connect(port, user));
        let Err(e) = attempt else { return Ok(()) };
        if let Some(status) = child.try_wait()? {
            return Err(io::Error::other(format!("the server exited ({status})")));
        }
        if Instant::now() >= deadline {
            return Err(io::Error::other(format!("no connection within 30 s: {e}")));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// `snapscale serve` as a child process; killed, and its data directory
/// removed, on drop.
pub(crate) struct ServerChild {
    child: Child,
    data_dir: PathBuf,
}

impl ServerChild {
    /// Starts this binary's `serve` on 127.0.0.1:`port`, logging warnings to `stderr`.
    pub(crate) fn spawn(
        port: u16,
        max_connections: usize,
        data_dir: PathBuf,
        stderr: Stdio,
    ) -> io::Result<ServerChild> {
        Self::spawn_with(port, max_connections, data_dir, stderr, &[])
    }

    /// [`ServerChild::spawn`] with `--set name=value` for each of `settings`.
    pub(crate) fn spawn_with(
        port: u16,
        max_connections: usize,
        data_dir: PathBuf,
        stderr: Stdio,
        settings: &[(&str, &str)],
    ) -> io::Result<ServerChild> {
        Self::start(port, max_connections, data_dir, (Stdio::null(), stderr), settings, "warn")
    }

    /// [`ServerChild::spawn_with`], logging at `level` (`SNAPSCALE_LOG`)
    /// into `log` (the server logs to stdout; stderr goes there too).
    pub(crate) fn spawn_logging(
        port: u16,
        max_connections: usize,
        data_dir: PathBuf,
        log: std::fs::File,
        settings: &[(&str, &str)],
        level: &str,
    ) -> io::Result<ServerChild> {
        let out = (Stdio::from(log.try_clone()?), Stdio::from(log));
        Self::start(port, max_connections, data_dir, out, settings, level)
    }

    fn start(
        port: u16,
        max_connections: usize,
        data_dir: PathBuf,
        (stdout, stderr): (Stdio, Stdio),
        settings: &[(&str, &str)],
        level: &str,
    ) -> io::Result<ServerChild> {
        let child = Command::new(std::env::current_exe()?)
            .args(["serve", "--port", &port.to_string(), "--max-connections", &max_connections.to_string()])
            .arg("--data-dir")
            .arg(&data_dir)
            .args(settings.iter().flat_map(|(name, value)| ["--set".to_owned(), format!("{name}={value}")]))
            .env("SNAPSCALE_LOG", level)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()?;
        Ok(ServerChild { child, data_dir })
    }

    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}
