//! A standby's WAL receiver: a replication client of the primary.
//!
//! It connects with `replication=true`, authenticated like any client
//! (trust, password or SCRAM-SHA-256), checks that the primary is the
//! system its data came from (IDENTIFY_SYSTEM), takes a base backup into an
//! empty data directory, and streams: START_REPLICATION at the end of the
//! WAL it holds, XLogData handed to the standby's replay, and a status
//! update (written, flushed, applied) every second or when the primary
//! asks. A lost connection is retried every few seconds, resuming where
//! the local WAL ends.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::frontend;
use snapscale_sql::guc::Conninfo;
use snapscale_sql::replication::{format_lsn, Standby};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tracing::{info, warn};

use super::sender::pg_now;

/// How long to wait before reconnecting (PostgreSQL's
/// wal_retrieve_retry_interval).
const RETRY: Duration = Duration::from_secs(2);
/// How often the standby reports its positions.
const STATUS_INTERVAL: Duration = Duration::from_secs(1);
/// The most a backend message may declare (a base backup arrives in
/// chunks; XLogData carries at most the sender's chunk).
const MAX_MESSAGE: usize = 64 << 20;

type Error = String;

/// A replication connection to the primary.
struct Client {
    socket: TcpStream,
    input: BytesMut,
    output: BytesMut,
}

/// One backend message: its type and body.
struct Message {
    ty: u8,
    body: Bytes,
}

/// An ErrorResponse's severity, code and message.
fn error_text(mut body: Bytes) -> String {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    while body.has_remaining() {
        let field = body.get_u8();
        if field == 0 {
            break;
        }
        let end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
        let value = String::from_utf8_lossy(&body[..end]).into_owned();
        body.advance((end + 1).min(body.len()));
        match field {
            b'S' => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            _ => {}
        }
    }
    format!("{severity} {code}: {message}")
}

impl Client {
    async fn connect(info: &Conninfo) -> Result<Client, Error> {
        let addr = format!("{}:{}", info.host, info.port);
        let socket = tokio::time::timeout(Duration::from_secs(10), TcpStream::connect(&addr))
            .await
            .map_err(|_| format!("could not connect to the primary at {addr}: timed out"))?
            .map_err(|e| format!("could not connect to the primary at {addr}: {e}"))?;
        socket.set_nodelay(true).map_err(|e| e.to_string())?;
        let mut client = Client { socket, input: BytesMut::with_capacity(64 << 10), output: BytesMut::new() };
        let params = [
            ("user", info.user.as_str()),
            ("replication", "true"),
            ("application_name", info.application_name.as_str()),
        ];
        frontend::startup_message(params.iter().copied(), &mut client.output).map_err(|e| e.to_string())?;
        client.flush().await?;
        client.authenticate(info).await?;
        Ok(client)
    }

    async fn flush(&mut self) -> Result<(), Error> {
        self.socket
            .write_all(&self.output)
            .await
            .map_err(|e| format!("could not send to the primary: {e}"))?;
        self.output.clear();
        Ok(())
    }

    /// The next message (an ErrorResponse becomes an error).
    async fn read(&mut self) -> Result<Message, Error> {
        loop {
            if self.input.len() >= 5 {
                let len = i32::from_be_bytes([self.input[1], self.input[2], self.input[3], self.input[4]]);
                if len < 4 || len as usize - 4 > MAX_MESSAGE {
                    return Err("the primary sent a message of impossible length".into());
                }
                let total = 1 + len as usize;
                if self.input.len() >= total {
                    let mut m = self.input.split_to(total);
                    let ty = m[0];
                    m.advance(5);
                    if ty == b'E' {
                        return Err(format!("the primary refused: {}", error_text(m.freeze())));
                    }
                    return Ok(Message { ty, body: m.freeze() });
                }
                self.input.reserve(total - self.input.len());
            } else {
                self.input.reserve(4096);
            }
            let n =
                self.socket.read_buf(&mut self.input).await.map_err(|e| format!("lost the primary: {e}"))?;
            if n == 0 {
                return Err("the primary closed the connection".into());
            }
        }
    }

    async fn authenticate(&mut self, info: &Conninfo) -> Result<(), Error> {
        let password = || info.password.clone().ok_or_else(|| "the primary asks for a password".to_owned());
        let mut scram: Option<ScramSha256> = None;
        loop {
            let m = self.read().await?;
            match m.ty {
                b'R' => {
                    let mut body = m.body;
                    match body.get_i32() {
                        0 => {}
                        3 => {
                            frontend::password_message(password()?.as_bytes(), &mut self.output)
                                .map_err(|e| e.to_string())?;
                            self.flush().await?;
                        }
                        5 => {
                            let salt: [u8; 4] =
                                body.get(..4).and_then(|s| s.try_into().ok()).ok_or("bad md5 salt")?;
                            let hash = postgres_protocol::authentication::md5_hash(
                                info.user.as_bytes(),
                                password()?.as_bytes(),
                                salt,
                            );
                            frontend::password_message(hash.as_bytes(), &mut self.output)
                                .map_err(|e| e.to_string())?;
                            self.flush().await?;
                        }
                        10 => {
                            let offered = String::from_utf8_lossy(&body).into_owned();
                            if !offered.split('\0').any(|m| m == SCRAM_SHA_256) {
                                return Err(format!(
                                    "the primary offers no SASL mechanism this standby knows ({offered})"
                                ));
                            }
                            let s = ScramSha256::new(password()?.as_bytes(), ChannelBinding::unsupported());
                            frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), &mut self.output)
                                .map_err(|e| e.to_string())?;
                            self.flush().await?;
                            scram = Some(s);
                        }
                        11 => {
                            let s = scram.as_mut().ok_or("SASL continue without a start")?;
                            s.update(&body).map_err(|e| format!("SCRAM: {e}"))?;
                            frontend::sasl_response(s.message(), &mut self.output)
                                .map_err(|e| e.to_string())?;
                            self.flush().await?;
                        }
                        12 => {
                            let s = scram.as_mut().ok_or("SASL final without a start")?;
                            s.finish(&body)
                                .map_err(|e| format!("SCRAM: the primary could not be verified: {e}"))?;
                        }
                        other => {
                            return Err(format!(
                                "the primary asks for an unsupported authentication ({other})"
                            ))
                        }
                    }
                }
                b'Z' => return Ok(()),
                // ParameterStatus, BackendKeyData, NoticeResponse.
                _ => {}
            }
        }
    }

    /// Sends a standby status update.
    async fn send_status(&mut self, standby: &Standby) -> Result<(), Error> {
        frontend::CopyData::new(status_update(standby, false))
            .map_err(|e| e.to_string())?
            .write(&mut self.output);
        self.flush().await
    }

    /// A simple query's rows (text columns), up to ReadyForQuery.
    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, Error> {
        frontend::query(sql, &mut self.output).map_err(|e| e.to_string())?;
        self.flush().await?;
        let mut rows = Vec::new();
        loop {
            let m = self.read().await?;
            match m.ty {
                b'D' => rows.push(data_row(m.body)?),
                b'Z' => return Ok(rows),
                _ => {}
            }
        }
    }
}

fn data_row(mut body: Bytes) -> Result<Vec<Option<String>>, Error> {
    let n = body.get_i16();
    let mut out = Vec::new();
    for _ in 0..n {
        let len = body.get_i32();
        if len < 0 {
            out.push(None);
        } else {
            let len = len as usize;
            if body.len() < len {
                return Err("a truncated data row".into());
            }
            out.push(Some(String::from_utf8_lossy(&body[..len]).into_owned()));
            body.advance(len);
        }
    }
    Ok(out)
}

async fn identify(client: &mut Client) -> Result<u64, Error> {
    let rows = client.query("IDENTIFY_SYSTEM").await?;
    rows.first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| "IDENTIFY_SYSTEM returned no system identifier".into())
}

/// Takes a base backup from the primary into the empty `dir`.
pub async fn base_backup(conninfo: &str, dir: &Path) -> Result<(), Error> {
    let info = Conninfo::parse(conninfo)?;
    let mut client = Client::connect(&info).await?;
    let system_id = identify(&mut client).await?;
    info!(primary = %info.host, port = info.port, "taking a base backup");
    frontend::query("BASE_BACKUP", &mut client.output).map_err(|e| e.to_string())?;
    client.flush().await?;
    let mut checkpoint = Vec::new();
    loop {
        let m = client.read().await?;
        match m.ty {
            b'd' => checkpoint.extend_from_slice(&m.body),
            b'Z' => break,
            _ => {}
        }
    }
    let dir = dir.to_owned();
    let bytes = checkpoint.len();
    let redo = tokio::task::spawn_blocking(move || {
        snapscale_sql::replication::install_base_backup(&dir, &checkpoint, system_id)
    })
    .await
    .map_err(|e| e.to_string())??;
    info!(redo = %format_lsn(redo), bytes, "base backup installed");
    Ok(())
}

/// Streams from the primary into `standby` until the process ends,
/// reconnecting after every failure.
pub async fn run(standby: Arc<Standby>, conninfo: String) {
    loop {
        if let Err(e) = stream(&standby, &conninfo).await {
            warn!(error = %e, "streaming from the primary stopped; retrying");
        }
        tokio::time::sleep(RETRY).await;
    }
}

fn status_update(standby: &Standby, reply: bool) -> Bytes {
    let (written, flushed, applied) = standby.positions();
    let mut m = BytesMut::with_capacity(34);
    m.put_u8(b'r');
    m.put_u64(written);
    m.put_u64(flushed);
    m.put_u64(applied);
    m.put_i64(pg_now());
    m.put_u8(u8::from(reply));
    m.freeze()
}

async fn stream(standby: &Standby, conninfo: &str) -> Result<(), Error> {
    let info = Conninfo::parse(conninfo)?;
    let mut client = Client::connect(&info).await?;
    let system_id = identify(&mut client).await?;
    if system_id != standby.system_id() {
        return Err(format!(
            "database system identifier differs between the primary and standby: the primary's is {system_id}, \
             the standby's is {}",
            standby.system_id()
        ));
    }
    let from = standby.resume_lsn();
    frontend::query(
        &format!("START_REPLICATION PHYSICAL {} TIMELINE 1", format_lsn(from)),
        &mut client.output,
    )
    .map_err(|e| e.to_string())?;
    client.flush().await?;
    loop {
        let m = client.read().await?;
        match m.ty {
            b'W' => break,
            b'Z' => return Err("the primary ended replication before it started".into()),
            _ => {}
        }
    }
    info!(from = %format_lsn(from), "streaming from the primary");
    let mut ticker = tokio::time::interval(STATUS_INTERVAL);
    loop {
        let message = tokio::select! {
            m = client.read() => m?,
            _ = ticker.tick() => {
                client.send_status(standby).await?;
                continue;
            }
        };
        match message.ty {
            b'd' => {
                let mut body = message.body;
                match body.first() {
                    Some(b'w') if body.len() >= 25 => {
                        body.advance(1);
                        let start = body.get_u64();
                        let _end = body.get_u64();
                        let _sent_at = body.get_i64();
                        standby.receive(start, &body).await?;
                    }
                    Some(b'k') if body.len() >= 18 => {
                        body.advance(17);
                        if body.get_u8() != 0 {
                            client.send_status(standby).await?;
                        }
                    }
                    _ => return Err("the primary sent an unknown replication message".into()),
                }
            }
            b'c' => return Err("the primary ended streaming".into()),
            _ => {}
        }
    }
}
