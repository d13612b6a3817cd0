//! The durable side of the database: opening it with recovery,
//! checkpoints, and the running-transactions records a standby prunes by.

use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

use snapscale_storage::checkpoint;
use snapscale_storage::log::{Log, Lsn};
use snapscale_txn::{IsolationLevel, Xid};
use snapscale_values::Value;
use tracing::info;

use crate::catalog::Row;
use crate::database::{Database, DatabaseConfig};
use crate::redo::{self, CheckpointHeader, Image, ImageWriter};
use crate::xact::now_micros;

fn startup_error(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

/// Takes the data directory's lock file: a second server on the same
/// directory is refused.
pub fn lock_data_dir(dir: &Path) -> Result<std::fs::File, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| startup_error(&format!("could not create \"{}\"", dir.display()), e))?;
    let lock_path = dir.join("snapscale.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| startup_error("could not open the lock file", e))?;
    lock.try_lock().map_err(|_| {
        format!(
            "data directory \"{}\" is in use by another server (lock file {})",
            dir.display(),
            lock_path.display()
        )
    })?;
    Ok(lock)
}

/// The latest checkpoint of `dir`: its redo point, header and image (an
/// empty database at LSN 0 if it never had one).
pub fn read_checkpoint(dir: &Path) -> Result<(Lsn, CheckpointHeader, Image), String> {
    match checkpoint::read_latest(dir)? {
        Some((redo, payload)) => {
            let (header, image) =
                Image::decode(&payload).map_err(|e| format!("the latest checkpoint: {e}"))?;
            Ok((redo, header, image))
        }
        None => Ok((
            0,
            CheckpointHeader { cut: 0, next_xid: Xid::FIRST_NORMAL, running: Vec::new() },
            Image::default(),
        )),
    }
}

/// The data directory's system identifier, chosen when it is first
/// opened (PostgreSQL's initdb does the same: seconds since 1970 in the
/// high bits, something varying in the low ones) and kept in
/// `system_identifier`.
pub fn system_identifier(dir: &Path) -> Result<u64, String> {
    let path = dir.join("system_identifier");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            u64::from_str_radix(text.trim(), 16).map_err(|_| format!("\"{}\" is corrupt", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let id = (now.as_secs() << 32) | u64::from(now.subsec_nanos() ^ std::process::id());
            write_system_identifier(dir, id)?;
            Ok(id)
        }
        Err(e) => Err(startup_error(&format!("could not read \"{}\"", path.display()), e)),
    }
}

/// Records `id` as the data directory's system identifier (a standby
/// takes its primary's).
pub fn write_system_identifier(dir: &Path, id: u64) -> Result<(), String> {
    let path = dir.join("system_identifier");
    let tmp = dir.join("system_identifier.tmp");
    std::fs::write(&tmp, format!("{id:016X}\n"))
        .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .and_then(|()| std::fs::File::open(dir)?.sync_all())
        .map_err(|e| startup_error(&format!("could not write \"{}\"", path.display()), e))
}

impl Database {
    /// Opens the database: with `config.durability`, in its data
    /// directory, loading the latest checkpoint and replaying the WAL after
    /// it (`recovery.rs`), then opening the log for appending and logging
    /// that nothing older is running. A corrupt checkpoint stops here.
    /// Reads files: call it where blocking is allowed.
    pub fn open(config: DatabaseConfig) -> Result<Arc<Database>, String> {
        let Some(durability) = config.durability.clone() else { return Ok(Database::in_memory(config)) };
        let started = Instant::now();
        let dir = &durability.data_dir;
        let lock = lock_data_dir(dir)?;
        let (redo, header, mut image) = read_checkpoint(dir)?;
        let wal_dir = dir.join("wal");
        std::fs::create_dir_all(&wal_dir)
            .map_err(|e| startup_error("could not create the WAL directory", e))?;
        let replayed = crate::recovery::replay(&wal_dir, redo, &header, &mut image)?;
        if let Some(why) = &replayed.stopped {
            info!(reason = %why, "the WAL ends with a torn tail; replay stops there");
        }
        let mut end = replayed.end;
        if end < header.cut {
            // The WAL lost its tail beyond the checkpoint's cut (fsync = off
            // and a machine crash): the checkpoint alone is consistent.
            // Start a fresh log at the cut, and name the cut as the
            // checkpoint's redo point so that no later recovery looks for
            // the lost records.
            info!(
                wal_end = format!("{end:X}"),
                cut = format!("{:X}", header.cut),
                "the WAL ends before the checkpoint; starting at its cut"
            );
            end = header.cut;
            for entry in
                std::fs::read_dir(&wal_dir).map_err(|e| startup_error("could not read the WAL", e))?
            {
                let path = entry.map_err(|e| startup_error("could not read the WAL", e))?.path();
                std::fs::remove_file(&path)
                    .map_err(|e| startup_error("could not remove a WAL segment", e))?;
            }
            let header = CheckpointHeader { cut: end, next_xid: replayed.next_xid, running: Vec::new() };
            checkpoint::write(dir, end, &image.encode(&header))
                .map_err(|e| startup_error("could not rewrite the checkpoint", e))?;
        }
        let log = Log::open(&wal_dir, end, durability.segment_size, durability.fsync)
            .map_err(|e| startup_error("could not open the WAL", e))?;
        let mut db = Database::build(&config, replayed.next_xid);
        db.system_id = system_identifier(dir)?;
        db.log = Some(log);
        db.data_dir = Some(dir.clone());
        db._lock = Some(lock);
        let db = Arc::new(db);
        db.load(image)?;
        // Every xid before this start has finished: committed ones are in
        // the image, the rest never will (a standby prunes them by this).
        db.log_running_xacts().map_err(|e| startup_error("could not write the WAL", e))?;
        let elapsed = started.elapsed();
        info!(
            checkpoint_redo = format!("{redo:X}"),
            wal_end = format!("{end:X}"),
            replayed_bytes = replayed.bytes,
            transactions = replayed.committed,
            next_xid = replayed.next_xid.0,
            ms = elapsed.as_millis() as u64,
            mb_per_s = format!("{:.1}", replayed.bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9)),
            "recovery done"
        );
        Ok(db)
    }

    /// Loads a recovered image into tables as frozen versions, visible to
    /// every snapshot.
    pub fn load(&self, image: Image) -> Result<(), String> {
        self.catalog.resume_ids(image.next_oid, image.next_storage);
        let mut storages = image.storages;
        for mut entry in image.catalog.into_values() {
            entry.share_labels(&self.enums);
            let heap = self.catalog.create_storage_with_id(entry.storage);
            let mut max_id = 0;
            for (id, mut row) in storages.remove(&entry.storage).unwrap_or_default() {
                max_id = max_id.max(id);
                self.enums.intern_row(&mut row);
                heap.table.insert_frozen(Row::from(row));
            }
            // Relaxed: before any session can insert (ROW-ID).
            heap.next_row_id.store(max_id + 1, Relaxed);
            heap.install_sequence(&entry, image.sequences.get(&entry.storage).copied());
            self.catalog.table.insert_frozen(Arc::new(entry));
        }
        Ok(())
    }

    /// Appends a running-transactions record: the next xid, and the oldest
    /// one that may still be running. No commit gate is needed: an xid
    /// below the oldest running one had finished before it was computed,
    /// and a committed one had appended its COMMIT record before it became
    /// visible (RUNNING-XACTS in the README).
    pub fn log_running_xacts(&self) -> Result<(), String> {
        let Some(log) = &self.log else { return Ok(()) };
        let running = self.engine.running_xacts();
        let payload = redo::encode_running_xacts(running.next_xid, running.oldest_running, now_micros());
        let end = log.append(&[(redo::RUNNING_XACTS, &payload)]).map_err(|e| e.to_string())?;
        log.flush_soon(end);
        Ok(())
    }

    /// Takes a checkpoint with the checkpointer's session: a consistent
    /// image of every permanent table as of one snapshot, taken at a cut no
    /// commit straddles (CHECKPOINT-CUT), with the transactions running
    /// then and the redo point where the oldest of them started
    /// (TREE-START); then older WAL is removed. `None` without a WAL.
    pub async fn checkpoint(&self) -> Result<Option<Lsn>, String> {
        Ok(self.checkpoint_file().await?.map(|(redo, _)| redo))
    }

    /// [`Self::checkpoint`], returning the checkpoint's payload too.
    pub async fn checkpoint_file(&self) -> Result<Option<(Lsn, Vec<u8>)>, String> {
        let (Some(log), Some(dir)) = (&self.log, &self.data_dir) else { return Ok(None) };
        let mut guard = self.checkpointer.lock().await;
        let Some(session) = guard.as_mut() else { return Ok(None) };
        let started = Instant::now();
        let (redo, header, snapshot) = {
            let _cut = self.commit_gate.write().await;
            let cut = log.insert_lsn();
            let running = self.engine.running_xacts();
            let redo = self.oldest_tree_start().map_or(cut, |start| start.min(cut));
            session.begin(IsolationLevel::RepeatableRead).map_err(|e| e.to_string())?;
            let snapshot = match session.statement_snapshot() {
                Ok(snapshot) => snapshot,
                Err(e) => {
                    session.abort();
                    return Err(e.to_string());
                }
            };
            // For standbys streaming past the cut: what finished before it.
            let record = redo::encode_running_xacts(running.next_xid, running.oldest_running, now_micros());
            log.append(&[(redo::RUNNING_XACTS, &record)]).map_err(|e| e.to_string())?;
            (redo, CheckpointHeader { cut, next_xid: running.next_xid, running: running.xids }, snapshot)
        };
        let (payload, rows) = self.image_payload(&session.reader(&snapshot), &header);
        // Read-only: ending it by abort changes nothing. The guard stays
        // held until the file is written: checkpoints are serialized, so
        // that a later one never installs before (or removes) an earlier.
        session.abort();
        // The WAL up to the cut must be durable before a checkpoint names
        // it: records below it that nobody waited for (aborts, asynchronous
        // commits) may not have been flushed yet, and recovery must find
        // the log reaching the cut.
        let upto = log.insert_lsn();
        log.flush(upto).await.map_err(|e| format!("could not flush the WAL before a checkpoint: {e}"))?;
        let dir = dir.clone();
        let log2 = Arc::clone(log);
        let bytes = payload.len();
        let keep = self.wal_kept_from(redo);
        let payload = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, String> {
            checkpoint::write(&dir, redo, &payload)
                .map_err(|e| format!("could not write a checkpoint: {e}"))?;
            log2.remove_before(keep).map_err(|e| format!("could not remove old WAL: {e}"))?;
            Ok(payload)
        })
        .await
        .map_err(|e| e.to_string())??;
        drop(guard);
        info!(
            redo = format!("{redo:X}"),
            cut = format!("{:X}", header.cut),
            running = header.running.len(),
            rows,
            bytes,
            ms = started.elapsed().as_millis() as u64,
            "checkpoint done"
        );
        Ok(Some((redo, payload)))
    }

    /// The image payload (see `redo/image.rs`) of every permanent relation
    /// and its rows as `reader` sees them, for a checkpoint or a
    /// restartpoint at `header`, and how many rows it holds. Rows are
    /// encoded as the scan reads them: the image never exists decoded.
    pub fn image_payload(
        &self,
        reader: &snapscale_txn::Reader<'_>,
        header: &CheckpointHeader,
    ) -> (Vec<u8>, usize) {
        let (next_oid, next_storage) = self.catalog.next_ids();
        // Every sequence's value, even one whose creating transaction is
        // still running: recovery may replay its creation from after the
        // cut, while its values were logged before it (SEQ-ORDER).
        let sequences = self.catalog.sequence_values();
        let relations: Vec<_> = self
            .catalog
            .table
            .scan(reader)
            .into_iter()
            .filter(|(_, entry)| entry.temp_owner.is_none())
            .filter_map(|(_, entry)| Some((self.catalog.storage(entry.storage)?, entry)))
            .collect();
        let mut image =
            ImageWriter::new(header, next_oid, next_storage, relations.iter().map(|(_, entry)| &**entry));
        for (heap, entry) in &relations {
            let rows = heap.table.scan(reader);
            image.storage(
                entry.storage,
                rows.iter().map(|(_, row)| &**row).filter(|row| matches!(row.last(), Some(Value::Int(_)))),
            );
        }
        image.finish(sequences.into_iter())
    }

    /// The oldest LSN whose segment a checkpoint at `redo` must keep: the
    /// redo point, or older WAL a connected standby has not received yet.
    pub fn wal_kept_from(&self, redo: Lsn) -> Lsn {
        redo.min(self.senders.oldest_needed().unwrap_or(redo))
    }

    /// Where the next WAL record will go (0 without a WAL).
    pub fn wal_insert_lsn(&self) -> Lsn {
        self.log.as_ref().map_or(0, |l| l.insert_lsn())
    }

    /// Bytes of WAL written since `lsn` (the checkpointer's volume trigger).
    pub fn wal_since(&self, lsn: Lsn) -> u64 {
        self.log.as_ref().map_or(0, |l| l.bytes_since(lsn))
    }

    /// Stops the WAL after a last sync (the server's shutdown, after its
    /// final checkpoint).
    pub fn shutdown(&self) {
        if let Some(log) = &self.log {
            log.shutdown();
        }
    }

    /// The data directory, if the database is durable.
    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }
}
