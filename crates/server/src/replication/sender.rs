//! A replication connection (`replication=true` in the startup packet):
//! PostgreSQL's walsender commands over the simple query protocol.
//!
//! ```text
//!   IDENTIFY_SYSTEM                       systemid, timeline, xlogpos, dbname
//!   BASE_BACKUP                           the primary's latest checkpoint, taken
//!                                         for the standby: one row (redo LSN,
//!                                         size), then the file as CopyOut data
//!   START_REPLICATION [PHYSICAL] X/Y [TIMELINE 1]
//!                                         CopyBoth: the server sends XLogData
//!                                         ('w') and keepalives ('k'); the standby
//!                                         sends status updates ('r') and
//!                                         feedback ('h', ignored: a standby
//!                                         prunes by its own horizon)
//!   SHOW name                             a setting
//! ```
//!
//! The XLogData payload is the WAL byte stream itself (snapscale's record
//! format, crates/storage/README.md), sent only once durable here. The
//! base backup is snapscale's checkpoint file, not PostgreSQL's tar
//! format: only a snapscale standby reads it.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use snapscale_sql::replication::{format_lsn, parse_lsn, Retention};
use snapscale_sql::{Column, SqlError, SqlState, SqlType, Value, Zone};
use tracing::info;

use crate::backend::{
    self, CommandComplete, CopyData, CopyResponse, DataRow, Formats, ReadyForQuery, RowDescription,
};
use crate::frontend::{Frontend, Refused};
use crate::shared::{terminated, Shared, TERMINATED};
use crate::transport::Transport;

/// The most WAL one XLogData message carries.
const MAX_SEND: usize = 128 << 10;
/// How long the sender waits for new WAL before sending a keepalive
/// (PostgreSQL sends one at half its wal_sender_timeout).
const KEEPALIVE: Duration = Duration::from_secs(1);

/// At a shutdown, how long a WAL sender waits for more WAL to become
/// durable (the log's last sync) before it ends the stream.
const DRAIN: Duration = Duration::from_millis(200);

/// Microseconds since 2000-01-01, as replication messages carry time.
pub fn pg_now() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    d.as_micros() as i64 - 946_684_800_000_000
}

enum Command {
    IdentifySystem,
    BaseBackup,
    StartReplication { lsn: u64 },
    Show(String),
}

fn syntax(query: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error in replication command \"{}\"", query.trim()))
}

fn parse(query: &str) -> Result<Command, SqlError> {
    let text = query.trim().trim_end_matches(';').trim();
    let words: Vec<&str> = text.split_whitespace().collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let upper: Vec<&str> = upper.iter().map(String::as_str).collect();
    match upper.as_slice() {
        ["IDENTIFY_SYSTEM"] => Ok(Command::IdentifySystem),
        ["BASE_BACKUP", ..] => Ok(Command::BaseBackup),
        ["SHOW", _] => Ok(Command::Show(words[1].to_ascii_lowercase())),
        ["START_REPLICATION", "SLOT", ..] => Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "replication slots are not supported; a connected standby's WAL is kept while it streams",
        )),
        ["START_REPLICATION", rest @ ..] => {
            let rest = match rest {
                ["PHYSICAL", rest @ ..] => rest,
                ["LOGICAL", ..] => {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "logical replication is not supported",
                    ))
                }
                rest => rest,
            };
            let (lsn, rest) = rest.split_first().ok_or_else(|| syntax(query))?;
            let lsn = parse_lsn(lsn).ok_or_else(|| syntax(query))?;
            match rest {
                [] | ["TIMELINE", "1"] => Ok(Command::StartReplication { lsn }),
                ["TIMELINE", t] => Err(SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("requested timeline {t} is not in this server's history"),
                )),
                _ => Err(syntax(query)),
            }
        }
        _ => Err(syntax(query)),
    }
}

/// A replication connection's loop. It holds no proc-array slot: it runs
/// no transactions.
pub struct WalSender {
    shared: Arc<Shared>,
    transport: Transport,
    /// Keeps a base backup's WAL until the standby streams it.
    retention: Option<Retention>,
}

fn text_column(name: &str) -> Column {
    Column { name: name.into(), ty: SqlType::Text }
}

impl WalSender {
    pub fn new(shared: Arc<Shared>, transport: Transport) -> WalSender {
        WalSender { shared, transport, retention: None }
    }

    async fn ready(&mut self) -> std::io::Result<()> {
        self.transport.send(ReadyForQuery(b'I')).await?;
        self.transport.flush().await
    }

    async fn rows(&mut self, columns: &[Column], rows: &[Vec<Value>], tag: &str) -> std::io::Result<()> {
        self.transport.send(RowDescription { columns, formats: &Formats::Text }).await?;
        for row in rows {
            // Replication commands return no timestamptz columns.
            self.transport
                .send(DataRow { columns, formats: &Formats::Text, row, zone: Zone::UTC.into() })
                .await?;
        }
        self.transport.send(CommandComplete(tag)).await
    }

    /// Serves commands until the standby leaves.
    pub async fn run(mut self) -> std::io::Result<()> {
        loop {
            let read = tokio::select! {
                biased;
                () = self.shared.terminating() => return self.terminate().await,
                read = self.transport.read() => read?,
            };
            let query = match read {
                None | Some(Ok(Frontend::Terminate)) => return Ok(()),
                Some(Ok(Frontend::Query(q))) => q,
                Some(Ok(_)) => {
                    let e = SqlError::new(
                        SqlState::PROTOCOL_VIOLATION,
                        "a replication connection accepts only simple queries",
                    );
                    self.transport.send(backend::fatal(&e)).await?;
                    return self.transport.flush().await;
                }
                Some(Err(Refused::Fatal(e))) => {
                    self.transport.send(backend::fatal(&e)).await?;
                    return self.transport.flush().await;
                }
                Some(Err(Refused::Error { error, .. })) => {
                    self.transport.send(backend::error(&error)).await?;
                    self.ready().await?;
                    continue;
                }
            };
            let result = match parse(&query) {
                Ok(Command::IdentifySystem) => self.identify_system().await,
                Ok(Command::BaseBackup) => self.base_backup().await,
                Ok(Command::Show(name)) => {
                    match snapscale_sql::guc::Settings::show(&self.shared.settings, &name) {
                        Ok(v) => {
                            self.rows(&[text_column(&name)], &[vec![Value::Text(v)]], "SHOW").await.map(Ok)
                        }
                        Err(e) => Ok(Err(SqlError::from(e))),
                    }
                }
                Ok(Command::StartReplication { lsn }) => self.stream(lsn).await,
                Err(e) => Ok(Err(e)),
            };
            match result? {
                Ok(()) => {}
                Err(e) => self.transport.send(backend::error(&e)).await?,
            }
            self.ready().await?;
        }
    }

    async fn identify_system(&mut self) -> std::io::Result<Result<(), SqlError>> {
        let id = match snapscale_sql::replication::identify_system(&self.shared.db) {
            Ok(id) => id,
            Err(e) => return Ok(Err(e)),
        };
        let columns = [
            text_column("systemid"),
            Column { name: "timeline".into(), ty: SqlType::Int4 },
            text_column("xlogpos"),
            text_column("dbname"),
        ];
        let row = vec![
            Value::Text(id.system_id.to_string()),
            Value::Int(i64::from(id.timeline)),
            Value::Text(format_lsn(id.flushed)),
            Value::Null,
        ];
        self.rows(&columns, &[row], "IDENTIFY_SYSTEM").await.map(Ok)
    }

    async fn base_backup(&mut self) -> std::io::Result<Result<(), SqlError>> {
        let backup = match snapscale_sql::replication::base_backup(&self.shared.db).await {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        info!(redo = %format_lsn(backup.redo), bytes = backup.checkpoint.len(), "sending a base backup");
        let columns = [text_column("redo"), Column { name: "size".into(), ty: SqlType::Int8 }];
        let row = vec![Value::Text(format_lsn(backup.redo)), Value::Int(backup.checkpoint.len() as i64)];
        self.rows(&columns, &[row], "SELECT 1").await?;
        self.transport.send(CopyResponse { kind: b'H', binary: true, columns: 0 }).await?;
        for chunk in backup.checkpoint.chunks(MAX_SEND) {
            self.transport.send(CopyData(chunk)).await?;
        }
        self.transport.send(backend::COPY_DONE).await?;
        self.transport.send(CommandComplete("BASE_BACKUP")).await?;
        self.retention = Some(backup.retention);
        Ok(Ok(()))
    }

    /// Ends the connection at a shutdown: FATAL 57P01, as PostgreSQL's
    /// fast shutdown ends a WAL sender's standby connection.
    async fn terminate(&mut self) -> std::io::Result<()> {
        self.transport.send(backend::fatal(&terminated())).await?;
        self.transport.flush().await?;
        Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, TERMINATED))
    }

    /// START_REPLICATION: CopyBoth until the standby ends it or leaves.
    async fn stream(&mut self, from: u64) -> std::io::Result<Result<(), SqlError>> {
        let mut sender = match snapscale_sql::replication::wal_sender(&self.shared.db, from) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        // Streaming keeps the WAL from here: the base backup's hold goes.
        self.retention = None;
        info!(from = %format_lsn(from), "a standby started streaming");
        self.transport.send(CopyResponse { kind: b'W', binary: false, columns: 0 }).await?;
        self.transport.flush().await?;
        // Set at a shutdown: the WAL that becomes durable still goes out
        // (the final checkpoint's included), then the connection ends.
        let mut terminating = false;
        loop {
            let wait = if terminating { DRAIN } else { KEEPALIVE };
            tokio::select! {
                biased;
                () = self.shared.terminating(), if !terminating => terminating = true,
                next = sender.next(MAX_SEND, wait) => {
                    let message = match next {
                        Ok(Some((start, bytes))) => {
                            let mut m = BytesMut::with_capacity(25 + bytes.len());
                            m.put_u8(b'w');
                            m.put_u64(start);
                            m.put_u64(sender.durable_end());
                            m.put_i64(pg_now());
                            m.put_slice(&bytes);
                            m
                        }
                        Ok(None) if terminating => return self.terminate().await.map(Ok),
                        Ok(None) => {
                            let mut m = BytesMut::with_capacity(18);
                            m.put_u8(b'k');
                            m.put_u64(sender.durable_end());
                            m.put_i64(pg_now());
                            m.put_u8(0);
                            m
                        }
                        Err(e) if terminating && e.code == SqlState::ADMIN_SHUTDOWN => {
                            return self.terminate().await.map(Ok);
                        }
                        Err(e) => {
                            self.transport.send(backend::error(&e)).await?;
                            self.transport.flush().await?;
                            return Ok(Ok(()));
                        }
                    };
                    self.transport.send(CopyData(&message)).await?;
                    self.transport.flush().await?;
                }
                message = self.transport.read() => match message? {
                    None | Some(Ok(Frontend::Terminate)) => return Ok(Ok(())),
                    Some(Ok(Frontend::CopyData(data))) => standby_message(&sender, data),
                    Some(Ok(Frontend::CopyDone)) => {
                        self.transport.send(backend::COPY_DONE).await?;
                        self.transport.send(CommandComplete("START_REPLICATION")).await?;
                        return Ok(Ok(()));
                    }
                    Some(Ok(_)) | Some(Err(_)) => {
                        let e = SqlError::new(SqlState::PROTOCOL_VIOLATION, "unexpected message in replication streaming");
                        self.transport.send(backend::fatal(&e)).await?;
                        self.transport.flush().await?;
                        return Err(std::io::Error::other("protocol violation"));
                    }
                },
            }
        }
    }
}

/// A standby status update ('r': written, flushed, applied, time, reply)
/// releases WAL the standby has made durable; hot standby feedback ('h')
/// is not needed (the standby prunes by its own horizon). Malformed ones
/// are ignored, as PostgreSQL ignores what it cannot use.
fn standby_message(sender: &snapscale_sql::replication::WalSender, mut data: Bytes) {
    if data.first() == Some(&b'r') && data.len() >= 34 {
        data.advance(1);
        let _written = data.get_u64();
        let flushed = data.get_u64();
        sender.confirm(flushed);
    }
}
