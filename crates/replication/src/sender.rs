//! The primary's side of streaming replication: base backups, and WAL
//! senders that stream the durable log to standbys.
//!
//! A standby is sent only WAL that is durable on the primary, so it never
//! holds a transaction the primary could lose in a crash. A sender waits
//! for more on the log's durable-end watch; when records were written but
//! nobody asked for them to be flushed (a large transaction in progress,
//! an asynchronous commit), it asks the flusher, as PostgreSQL's WAL
//! writer does every `wal_writer_delay`.
//!
//! Every sender (and every base backup in progress) registers the oldest
//! LSN its standby still needs; checkpoints keep the segments from there
//! (WAL-RETAIN), as a physical replication slot would while connected.

use std::sync::Arc;
use std::time::Duration;

use snapscale_engine::database::Database;
use snapscale_engine::errors::log_error;
use snapscale_engine::{format_lsn, Lsn};
use snapscale_sqlstate::SqlState;
use snapscale_storage::log::LogError;
use snapscale_values::SqlError;
use tokio::sync::watch;

/// Keeps WAL from one LSN on disk while held (WAL-RETAIN).
pub struct Retention {
    db: Arc<Database>,
    id: u64,
}

impl std::fmt::Debug for Retention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retention").field("id", &self.id).finish_non_exhaustive()
    }
}

impl Drop for Retention {
    fn drop(&mut self) {
        self.db.senders.remove(self.id);
    }
}

/// What a standby needs to start: the latest checkpoint, taken for it.
#[derive(Debug)]
pub struct BaseBackup {
    /// The checkpoint file, byte for byte (its redo point, image and CRC).
    pub checkpoint: Vec<u8>,
    /// Replay starts here.
    pub redo: Lsn,
    /// Keeps the WAL from `redo` until the standby streams it.
    pub retention: Retention,
}

/// The answer to IDENTIFY_SYSTEM.
#[derive(Clone, Copy, Debug)]
pub struct SystemIdentity {
    /// Chosen when the data directory was created; a standby copies it.
    pub system_id: u64,
    /// Always 1: there is no promotion yet, so no new timeline.
    pub timeline: u32,
    /// The durable end of the WAL.
    pub flushed: Lsn,
}

fn no_wal() -> SqlError {
    SqlError::new(
        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
        "this server keeps no write-ahead log to stream",
    )
}

/// IDENTIFY_SYSTEM.
pub fn identify_system(db: &Database) -> Result<SystemIdentity, SqlError> {
    let log = db.log.as_ref().ok_or_else(no_wal)?;
    Ok(SystemIdentity { system_id: db.system_id, timeline: 1, flushed: log.durable().map_err(log_error)? })
}

/// BASE_BACKUP: takes a checkpoint for the standby and returns it, with the
/// WAL from its redo point kept until the returned retention is dropped.
pub async fn base_backup(db: &Arc<Database>) -> Result<BaseBackup, SqlError> {
    let internal = |e: String| SqlError::new(SqlState::INTERNAL_ERROR, e);
    // Registered before the checkpoint, so that no checkpoint in between
    // removes what the standby will ask for.
    let id = db
        .senders
        .register(db.wal_insert_lsn().min(db.log.as_ref().ok_or_else(no_wal)?.oldest_lsn().unwrap_or(0)));
    let retention = Retention { db: Arc::clone(db), id };
    let (redo, payload) = db.checkpoint_file().await.map_err(internal)?.ok_or_else(no_wal)?;
    db.senders.update(id, redo);
    let checkpoint = snapscale_storage::checkpoint::file_bytes(redo, &payload);
    Ok(BaseBackup { checkpoint, redo, retention })
}

/// START_REPLICATION: a sender of the WAL from `from`. Refused if that WAL
/// was removed, or lies beyond the durable end.
pub fn wal_sender(db: &Arc<Database>, from: Lsn) -> Result<WalSender, SqlError> {
    let log = db.log.as_ref().ok_or_else(no_wal)?;
    let durable = log.durable().map_err(log_error)?;
    if from > durable {
        return Err(SqlError::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "requested starting point {} is ahead of the WAL flush position of this server {}",
                format_lsn(from),
                format_lsn(durable)
            ),
        ));
    }
    let oldest = log.oldest_lsn().map_err(|e| SqlError::new(SqlState::IO_ERROR, e.to_string()))?;
    if from < oldest {
        return Err(removed(from));
    }
    let id = db.senders.register(from);
    Ok(WalSender {
        retention: Retention { db: Arc::clone(db), id },
        sent: from,
        durable: log.watch_durable(),
    })
}

fn removed(lsn: Lsn) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_FILE,
        format!("requested WAL segment containing {} has already been removed", format_lsn(lsn)),
    )
}

/// Streams the durable WAL to one standby (see the module docs).
#[derive(Debug)]
pub struct WalSender {
    retention: Retention,
    /// The next byte to send.
    sent: Lsn,
    durable: watch::Receiver<Result<Lsn, LogError>>,
}

impl WalSender {
    /// The next LSN to send.
    pub fn sent(&self) -> Lsn {
        self.sent
    }

    /// The durable end of the primary's WAL.
    pub fn durable_end(&self) -> Lsn {
        self.durable.borrow().clone().unwrap_or(self.sent)
    }

    /// The standby reports it has made WAL up to `flushed` durable: older
    /// WAL is no longer kept for it.
    pub fn confirm(&self, flushed: Lsn) {
        self.retention.db.senders.update(self.retention.id, flushed.min(self.sent));
    }

    /// Up to `max` bytes of durable WAL after what was sent, with the LSN of
    /// their first byte; `None` if none became durable within `wait` (the
    /// caller sends a keepalive).
    pub async fn next(&mut self, max: usize, wait: Duration) -> Result<Option<(Lsn, Vec<u8>)>, SqlError> {
        let db = Arc::clone(&self.retention.db);
        let log = db.log.as_ref().ok_or_else(no_wal)?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let durable = self.durable.borrow_and_update().clone().map_err(log_error)?;
            if durable > self.sent {
                let (log2, from) = (Arc::clone(log), self.sent);
                let bytes = tokio::task::spawn_blocking(move || log2.read_bytes(from, durable, max))
                    .await
                    .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?
                    .map_err(|e| {
                        if e.kind() == std::io::ErrorKind::NotFound {
                            removed(from)
                        } else {
                            SqlError::new(SqlState::IO_ERROR, format!("could not read the WAL: {e}"))
                        }
                    })?;
                if !bytes.is_empty() {
                    self.sent += bytes.len() as u64;
                    return Ok(Some((from, bytes)));
                }
            }
            // Written but not yet asked to be durable: ask (the WAL writer's
            // job in PostgreSQL), so a standby sees a large transaction's
            // records while it runs.
            let written = log.insert_lsn();
            if written > durable {
                log.flush_soon(written);
            }
            match tokio::time::timeout_at(deadline, self.durable.changed()).await {
                Err(_) => return Ok(None),
                Ok(Err(_)) => {
                    return Err(SqlError::new(SqlState::ADMIN_SHUTDOWN, "the write-ahead log is closed"))
                }
                Ok(Ok(())) => {}
            }
        }
    }
}
