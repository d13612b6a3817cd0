//! The catalog: relation definitions stored as MVCC rows, and the physical
//! storage they name.
//!
//! One catalog row per relation holds its whole definition (name, columns,
//! indexes, and the id of its storage). DDL changes the catalog the way DML
//! changes a table, inside the transaction: CREATE inserts a row, DROP
//! deletes it, ALTER / CREATE INDEX / TRUNCATE update it. A rolled-back
//! CREATE TABLE therefore leaves nothing anyone can see, by the same
//! visibility rules as any row. TRUNCATE gives the relation new, empty
//! storage (PostgreSQL's new relfilenode), so rolling it back restores the
//! old storage with the old catalog row.
//!
//! Storage ids are never reused. A storage is freed when the transaction
//! that dropped or replaced it commits, or when the one that created it
//! aborts; a reader still holding it keeps its `Arc` alive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use snapscale_lock::{LockConfig, LockManager};
use snapscale_sinval::{Sinval, SinvalConfig};
use snapscale_storage::log::{Log, Lsn};
use snapscale_storage::{checkpoint, Table};
use snapscale_txn::{Engine, IsolationLevel, Session};
use tracing::info;

use crate::durable::Image;
use crate::index::Index;
use crate::types::{SqlType, Value};

/// A stored row: values in column order.
pub type Row = Arc<[Value]>;

/// A column definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
}

/// An index definition.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDef {
    pub oid: u32,
    pub name: String,
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
}

/// One catalog row: a relation's whole definition.
#[derive(Clone, Debug, PartialEq)]
pub struct RelEntry {
    pub oid: u32,
    pub name: String,
    /// `Some(connection)` for a temporary table, visible to that
    /// connection only.
    pub temp_owner: Option<u64>,
    /// Which [`Heap`] holds the rows.
    pub storage: u64,
    pub columns: Vec<ColumnDef>,
    pub indexes: Vec<IndexDef>,
}

impl RelEntry {
    /// The position of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// A relation's rows and its indexes' entries.
pub struct Heap {
    pub table: Table<Row>,
    indexes: RwLock<HashMap<u32, Arc<Index>>>,
    /// Updates and deletes since the last prune (opportunistic pruning).
    pub changes: AtomicU64,
    /// One pruner at a time.
    pub pruning: Mutex<()>,
    /// The next row id (the hidden last column that identifies a row
    /// across its versions in the WAL).
    pub next_row_id: AtomicI64,
}

impl Heap {
    fn new(id: u64) -> Heap {
        Heap {
            table: Table::new(),
            indexes: RwLock::new(HashMap::new()),
            changes: AtomicU64::new(0),
            pruning: Mutex::new(()),
            next_row_id: AtomicI64::new(1),
        }
    }

    /// A new row id. Relaxed: only uniqueness matters.
    pub fn new_row_id(&self) -> i64 {
        self.next_row_id.fetch_add(1, Relaxed)
    }

    /// The entries of index `def`, built from the current versions if this
    /// storage has none yet.
    pub fn index(&self, entry: &RelEntry, def: &IndexDef) -> Arc<Index> {
        if let Some(ix) = self.indexes.read().expect("index map poisoned").get(&def.oid) {
            return Arc::clone(ix);
        }
        let mut map = self.indexes.write().expect("index map poisoned");
        Arc::clone(map.entry(def.oid).or_insert_with(|| {
            let types = def.columns.iter().map(|&c| entry.columns[c].ty).collect();
            let ix = Index::new(def.columns.clone(), types, def.unique);
            for (tid, row) in self.table.all_versions() {
                ix.insert(ix.key_of(&row), tid);
            }
            Arc::new(ix)
        }))
    }

    /// Every physical index of this storage (vacuum removes entries from
    /// all of them, including those of rolled-back index builds).
    pub fn all_indexes(&self) -> Vec<Arc<Index>> {
        self.indexes.read().expect("index map poisoned").values().cloned().collect()
    }
}

/// Everything the connections share.
pub struct Database {
    pub engine: Arc<Engine>,
    pub locks: Arc<LockManager>,
    pub sinval: Sinval,
    /// The write-ahead log; `None` keeps everything in memory (tests).
    pub log: Option<Arc<Log>>,
    /// Commits hold it shared from appending their records until they are
    /// visible; a checkpoint takes it exclusively to read its redo point
    /// and take its snapshot (CHECKPOINT-CUT in the README).
    pub commit_gate: tokio::sync::RwLock<()>,
    data_dir: Option<PathBuf>,
    /// Keeps the data directory locked against a second server.
    _lock: Option<std::fs::File>,
    /// The catalog rows.
    pub catalog: Table<Arc<RelEntry>>,
    /// Serialises "is this name free?" with the insert that takes it.
    pub names: Mutex<()>,
    storages: RwLock<HashMap<u64, Arc<Heap>>>,
    next_oid: AtomicU32,
    next_storage: AtomicU64,
    next_connection: AtomicU64,
    /// Tests: a statement whose text contains this panics after taking its
    /// locks (PANIC-CONTAINED is tested with it).
    panic_marker: RwLock<Option<String>>,
    /// Whether `panic_marker` is set: every statement reads this flag, so
    /// it is a plain load of a line nobody writes, not a lock.
    panic_armed: std::sync::atomic::AtomicBool,
}

/// The first oid handed out (PostgreSQL's FirstNormalObjectId).
const FIRST_OID: u32 = 16384;

impl Database {
    /// An empty database over `engine`, in memory only.
    pub fn new(engine: Arc<Engine>, locks: LockConfig) -> Arc<Database> {
        Arc::new(Database::new_unshared(engine, locks))
    }

    fn new_unshared(engine: Arc<Engine>, locks: LockConfig) -> Database {
        let max_sessions = engine.config().max_sessions;
        Database {
            locks: LockManager::new(LockConfig { max_sessions: max_sessions as u32, ..locks }),
            sinval: Sinval::new(SinvalConfig { max_sessions, ..SinvalConfig::default() }),
            log: None,
            commit_gate: tokio::sync::RwLock::new(()),
            data_dir: None,
            _lock: None,
            catalog: Table::new(),
            names: Mutex::new(()),
            storages: RwLock::new(HashMap::new()),
            next_oid: AtomicU32::new(FIRST_OID),
            next_storage: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
            panic_marker: RwLock::new(None),
            panic_armed: std::sync::atomic::AtomicBool::new(false),
            engine,
        }
    }

    /// Tests only: makes every statement whose text contains `marker`
    /// panic once it holds its relation locks (`None` stops it).
    #[doc(hidden)]
    pub fn inject_panic(&self, marker: Option<&str>) {
        *self.panic_marker.write().expect("panic marker poisoned") = marker.map(str::to_owned);
        // Relaxed: the marker itself is read under its lock; a statement
        // that sees the flag late merely runs before the fault is armed.
        self.panic_armed.store(marker.is_some(), Relaxed);
    }

    /// Panics if `statement` carries the injected marker.
    pub(crate) fn maybe_panic(&self, statement: &dyn std::fmt::Display) {
        // Relaxed: see `inject_panic`.
        if !self.panic_armed.load(Relaxed) {
            return;
        }
        let marker = self.panic_marker.read().expect("panic marker poisoned");
        if let Some(m) = marker.as_deref() {
            if statement.to_string().contains(m) {
                panic!("injected panic ({m})");
            }
        }
    }

    /// A new object id. Relaxed: only uniqueness matters.
    pub fn new_oid(&self) -> u32 {
        self.next_oid.fetch_add(1, Relaxed)
    }

    /// A new connection id (temporary tables' owner).
    pub fn new_connection_id(&self) -> u64 {
        // Relaxed: only uniqueness matters.
        self.next_connection.fetch_add(1, Relaxed)
    }

    /// Creates empty storage and returns its id.
    pub fn create_storage(&self) -> u64 {
        // Relaxed: only uniqueness matters.
        let id = self.next_storage.fetch_add(1, Relaxed);
        self.storages.write().expect("storage map poisoned").insert(id, Arc::new(Heap::new(id)));
        id
    }

    fn create_storage_with_id(&self, id: u64) -> Arc<Heap> {
        let heap = Arc::new(Heap::new(id));
        self.storages.write().expect("storage map poisoned").insert(id, Arc::clone(&heap));
        heap
    }

    /// The storage `id`, if it still exists.
    pub fn storage(&self, id: u64) -> Option<Arc<Heap>> {
        self.storages.read().expect("storage map poisoned").get(&id).cloned()
    }

    /// Frees storage `id` (its last reader frees the memory).
    pub fn drop_storage(&self, id: u64) {
        self.storages.write().expect("storage map poisoned").remove(&id);
    }

    /// Row-version slots allocated over all storages, and versions present
    /// in them (memory checks: pruning keeps both flat under updates).
    pub fn version_counts(&self) -> (usize, usize) {
        let storages = self.storages.read().expect("storage map poisoned");
        storages.values().fold((0, 0), |(slots, present), h| {
            (slots + h.table.allocated_slots(), present + h.table.versions_present())
        })
    }

    /// How many locks all sessions hold (leak checks: none once every
    /// connection has gone).
    pub fn locks_held(&self) -> usize {
        (0..self.locks.config().max_sessions).map(|s| self.locks.held_locks(s).len()).sum()
    }

    /// How many lock requests are queued now (tests observe blocking here,
    /// not by sleeping).
    pub fn lock_waits(&self) -> usize {
        self.locks.waiting().len()
    }

    /// Number of storages (tests: rolled-back DDL leaves none behind).
    pub fn storage_count(&self) -> usize {
        self.storages.read().expect("storage map poisoned").len()
    }
}

/// How the write-ahead log is set up.
#[derive(Clone, Debug)]
pub struct Durability {
    pub data_dir: PathBuf,
    pub fsync: bool,
    pub segment_size: u64,
}

fn startup_error(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

impl Database {
    /// Opens the database in `durability.data_dir`: loads the latest
    /// checkpoint, replays the WAL after it to its end (stopping at a torn
    /// or corrupt tail; transactions without a commit record are dropped),
    /// and opens the log for appending. A corrupt checkpoint stops here.
    pub fn open(
        engine: Arc<Engine>,
        locks: LockConfig,
        durability: &Durability,
    ) -> Result<Arc<Database>, String> {
        let started = Instant::now();
        let dir = &durability.data_dir;
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
        let (redo, mut image) = match checkpoint::read_latest(dir)? {
            Some((redo, payload)) => {
                (redo, Image::decode(&payload).map_err(|e| format!("the latest checkpoint: {e}"))?)
            }
            None => (0, Image::default()),
        };
        let wal_dir = dir.join("wal");
        std::fs::create_dir_all(&wal_dir)
            .map_err(|e| startup_error("could not create the WAL directory", e))?;
        let read = snapscale_storage::log::read(&wal_dir, redo)
            .map_err(|e| startup_error("could not read the WAL", e))?;
        if let (Some(why), false) = (&read.stopped, read.torn_tail) {
            // Not a torn tail: committed WAL after this point would be lost.
            return Err(format!("the WAL is damaged before its end ({why}); refusing to start"));
        }
        let bytes = read.end.saturating_sub(redo);
        let mut pending: Vec<(u8, &[u8], Lsn)> = Vec::new();
        let mut committed = 0u64;
        for r in &read.records {
            match r.kind {
                crate::durable::COMMIT => {
                    for (kind, payload, _) in pending.drain(..) {
                        image.apply(kind, payload).map_err(|e| format!("replaying LSN {:X}: {e}", r.lsn))?;
                    }
                    committed += 1;
                }
                crate::durable::ABORT => pending.clear(),
                crate::durable::CSN => {}
                kind => pending.push((kind, &r.payload, r.lsn)),
            }
        }
        // Changes with no commit after them (a batch torn after some whole
        // records) are cut off with the tail: left in place, the next
        // transaction's COMMIT would follow them and adopt them.
        let mut end = pending.first().map_or(read.end, |(_, _, lsn)| *lsn);
        let without_commit = !pending.is_empty();
        if let Some(why) = &read.stopped {
            info!(reason = %why, "the WAL ends with a torn tail; replay stops there");
        }
        if end < redo {
            // The WAL lost its tail beyond the checkpoint (fsync = off and a
            // machine crash): the checkpoint alone is consistent.
            info!(
                wal_end = format!("{end:X}"),
                redo = format!("{redo:X}"),
                "the WAL ends before the checkpoint; starting at its redo point"
            );
            end = redo;
        }
        let log = Log::open(&wal_dir, end, durability.segment_size, durability.fsync)
            .map_err(|e| startup_error("could not open the WAL", e))?;
        let mut db = Database::new_unshared(engine, locks);
        db.log = Some(log);
        db.data_dir = Some(dir.clone());
        db._lock = Some(lock);
        let db = Arc::new(db);
        db.load(image)?;
        let elapsed = started.elapsed();
        info!(
            checkpoint_redo = format!("{redo:X}"),
            wal_end = format!("{end:X}"),
            replayed_bytes = bytes,
            transactions = committed,
            dropped_uncommitted_tail = without_commit,
            ms = elapsed.as_millis() as u64,
            mb_per_s = format!("{:.1}", bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9)),
            "recovery done"
        );
        Ok(db)
    }

    /// Loads a recovered image into tables, as one bootstrap transaction.
    fn load(&self, image: Image) -> Result<(), String> {
        // Relaxed: recovery runs before any session exists; counters only
        // need uniqueness.
        self.next_oid.fetch_max(image.next_oid, Relaxed);
        self.next_storage.fetch_max(image.next_storage, Relaxed);
        if image.catalog.is_empty() {
            return Ok(());
        }
        let mut session = self.engine.attach().map_err(|e| startup_error("recovery", e))?;
        session.begin(IsolationLevel::ReadCommitted).map_err(|e| startup_error("recovery", e))?;
        let mut storages = image.storages;
        for entry in image.catalog.into_values() {
            let heap = self.create_storage_with_id(entry.storage);
            let mut max_id = 0;
            for (id, row) in storages.remove(&entry.storage).unwrap_or_default() {
                max_id = max_id.max(id);
                heap.table.insert(&mut session, Row::from(row)).map_err(|e| startup_error("recovery", e))?;
            }
            // Relaxed: before any session can insert (see above).
            heap.next_row_id.store(max_id + 1, Relaxed);
            self.catalog.insert(&mut session, Arc::new(entry)).map_err(|e| startup_error("recovery", e))?;
        }
        session.commit().map_err(|e| startup_error("recovery", e))?;
        Ok(())
    }

    /// Takes a checkpoint with `session` (not in a transaction): a
    /// consistent image of every permanent table as of one snapshot, taken
    /// at a redo point no commit straddles; then older WAL is removed.
    pub async fn checkpoint(&self, session: &mut Session) -> Result<Option<Lsn>, String> {
        let (Some(log), Some(dir)) = (&self.log, &self.data_dir) else { return Ok(None) };
        let started = Instant::now();
        let (redo, snapshot) = {
            let _cut = self.commit_gate.write().await;
            let redo = log.insert_lsn();
            session.begin(IsolationLevel::RepeatableRead).map_err(|e| e.to_string())?;
            match session.statement_snapshot() {
                Ok(snapshot) => (redo, snapshot),
                Err(e) => {
                    session.abort();
                    return Err(e.to_string());
                }
            }
        };
        let cid = session.command_id().unwrap_or(0);
        // Relaxed: any value at least as large as every id in the image will
        // do, and ids taken after the snapshot are larger still.
        let mut image = Image {
            next_oid: self.next_oid.load(Relaxed),
            next_storage: self.next_storage.load(Relaxed),
            ..Image::default()
        };
        let mut rows = 0usize;
        for (_, entry) in self.catalog.scan(session, &snapshot, cid) {
            if entry.temp_owner.is_some() {
                continue;
            }
            let Some(heap) = self.storage(entry.storage) else { continue };
            let stored = image.storages.entry(entry.storage).or_default();
            for (_, row) in heap.table.scan(session, &snapshot, cid) {
                if let Some(Value::Int(id)) = row.last() {
                    stored.insert(*id, row.to_vec());
                    rows += 1;
                }
            }
            image.catalog.insert(entry.oid, (*entry).clone());
        }
        // Read-only: ending it by abort changes nothing.
        session.abort();
        // The WAL up to the redo point must be durable before a checkpoint
        // names it: records below it (aborts, CSNs, asynchronous commits)
        // may not have been flushed yet, and recovery must find the log
        // reaching the redo point.
        log.flush(redo).await.map_err(|e| format!("could not flush the WAL before a checkpoint: {e}"))?;
        let payload = image.encode();
        let dir = dir.clone();
        let log2 = Arc::clone(log);
        let bytes = payload.len();
        tokio::task::spawn_blocking(move || -> Result<(), String> {
            checkpoint::write(&dir, redo, &payload)
                .map_err(|e| format!("could not write a checkpoint: {e}"))?;
            log2.remove_before(redo).map_err(|e| format!("could not remove old WAL: {e}"))?;
            Ok(())
        })
        .await
        .map_err(|e| e.to_string())??;
        info!(
            redo = format!("{redo:X}"),
            rows,
            bytes,
            ms = started.elapsed().as_millis() as u64,
            "checkpoint done"
        );
        Ok(Some(redo))
    }

    /// Bytes of WAL written since `lsn` (the checkpointer's volume trigger).
    pub fn wal_since(&self, lsn: Lsn) -> u64 {
        self.log.as_ref().map_or(0, |l| l.bytes_since(lsn))
    }

    /// The data directory, if the database is durable.
    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }
}
