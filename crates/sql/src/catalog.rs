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
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};

use snapscale_lock::{LockConfig, LockManager};
use snapscale_sinval::{Sinval, SinvalConfig};
use snapscale_storage::{NoWal, Table, TxnLog};
use snapscale_txn::Engine;

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
}

impl Heap {
    fn new(id: u64) -> Heap {
        Heap {
            table: Table::new(id as u32, Arc::new(NoWal)),
            indexes: RwLock::new(HashMap::new()),
            changes: AtomicU64::new(0),
            pruning: Mutex::new(()),
        }
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
    /// Where commit and abort records go (write-ahead hooks; no log yet).
    pub txn_log: Arc<dyn TxnLog>,
    /// The catalog rows.
    pub catalog: Table<Arc<RelEntry>>,
    /// Serialises "is this name free?" with the insert that takes it.
    pub names: Mutex<()>,
    storages: RwLock<HashMap<u64, Arc<Heap>>>,
    next_oid: AtomicU32,
    next_storage: AtomicU64,
    next_connection: AtomicU64,
}

/// The first oid handed out (PostgreSQL's FirstNormalObjectId).
const FIRST_OID: u32 = 16384;

impl Database {
    /// An empty database over `engine`.
    pub fn new(engine: Arc<Engine>, locks: LockConfig) -> Arc<Database> {
        let max_sessions = engine.config().max_sessions;
        Arc::new(Database {
            locks: LockManager::new(LockConfig { max_sessions: max_sessions as u32, ..locks }),
            sinval: Sinval::new(SinvalConfig { max_sessions, ..SinvalConfig::default() }),
            txn_log: Arc::new(NoWal),
            catalog: Table::new(0, Arc::new(NoWal)),
            names: Mutex::new(()),
            storages: RwLock::new(HashMap::new()),
            next_oid: AtomicU32::new(FIRST_OID),
            next_storage: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
            engine,
        })
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

    /// Number of storages (tests: rolled-back DDL leaves none behind).
    pub fn storage_count(&self) -> usize {
        self.storages.read().expect("storage map poisoned").len()
    }
}
