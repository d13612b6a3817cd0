//! Replay on a standby: the primary's records applied to live tables as
//! row versions stamped with the primary's xids, while standby sessions
//! read them (REPLAY-VERSIONS in the crate README).
//!
//! A change is applied when its record arrives, long before its commit,
//! exactly as the primary's own tables held it: an insert adds a version
//! whose xmin is the writer's xid; an update stamps the row's newest
//! version with the writer as xmax and adds the new version; a delete
//! stamps xmax. Whether a reader sees any of it is decided by its snapshot
//! and the engine's replay state (`snapscale_txn::Replayer`): the xid is
//! running until its COMMIT record is replayed, so no standby snapshot
//! sees a change before the primary committed it, and one COMMIT record
//! makes the whole tree visible at once.
//!
//! Rows are found by their row id (the hidden last column): the applier
//! keeps, per storage, the tid of each row's newest version. An aborted
//! transaction's changes are undone in that map (its versions stay, dead,
//! until pruning), so the next writer of the row stamps the version the
//! primary's next writer changed.
//!
//! Before the start checkpoint's cut, only the records of transactions
//! that were running at the cut are applied: everything that committed
//! before it is already in the image (CHECKPOINT-CUT).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use snapscale_engine::catalog::{Heap, RelEntry, Row};
use snapscale_engine::database::Database;
use snapscale_engine::redo::{Record, Redo};
use snapscale_engine::sequence::SeqValue;
use snapscale_sinval::Invalidation;
use snapscale_storage::log::Lsn;
use snapscale_storage::Tid;
use snapscale_txn::{Replayer, RunningXacts, Xid};
use snapscale_values::Value;

/// What to undo if an xid aborts: a map entry's previous value.
#[derive(Clone, Copy, Debug)]
enum Undo {
    Row { storage: u64, row_id: i64, prev: Option<Tid> },
    Relation { oid: u32, prev: Option<Tid> },
}

/// What one running (sub)transaction of the primary did that its end
/// settles.
#[derive(Debug, Default)]
struct Pending {
    undo: Vec<Undo>,
    /// Storage it created: freed if it aborts.
    created: Vec<u64>,
    /// Storage it dropped or replaced: freed once no snapshot can need it.
    dropped: Vec<u64>,
    /// Rows and relations it deleted: their map entries go at commit.
    deleted_rows: Vec<(u64, i64)>,
    deleted_relations: Vec<u32>,
    /// Relations whose definition it changed (invalidated at commit).
    invalidations: Vec<u32>,
    /// A change that may alter what a name resolves to (REL-KEY): every
    /// backend forgets every name at commit.
    names_changed: bool,
}

/// Applies replayed records. Owned by the replay thread.
pub(crate) struct Applier {
    db: Arc<Database>,
    pub(crate) replayer: Replayer,
    /// storage → row id → tid of the row's newest version.
    rows: HashMap<u64, HashMap<i64, Tid>>,
    /// oid → tid of the relation's newest catalog version.
    relations: HashMap<u32, Tid>,
    /// storage → the newest definition naming it (its indexes).
    definitions: HashMap<u64, Arc<RelEntry>>,
    pending: HashMap<Xid, Pending>,
    /// LSN of the first record of each xid still running (a restartpoint's
    /// redo point is the oldest).
    first_seen: HashMap<Xid, Lsn>,
    /// Storage dropped by a committed transaction, freed once the standby's
    /// horizon passes that transaction (no snapshot can resolve it then).
    graveyard: Vec<(Xid, u64)>,
    /// Until replay reaches the start checkpoint's cut: the xids running
    /// there, the only ones whose records are applied before it.
    before_cut: Option<(Lsn, HashSet<Xid>)>,
    /// The time of the last commit replayed (microseconds since 2000).
    pub(crate) last_commit_time: Option<i64>,
    /// Sequence values logged before the record creating their storage
    /// (a sequence used in the transaction that creates it: its CATALOG
    /// record waits in that backend's buffer, its values do not).
    early_sequences: HashMap<u64, SeqValue>,
}

fn replay_error(lsn: Lsn, what: impl std::fmt::Display) -> String {
    format!("replay of the WAL record at {}: {what}", snapscale_engine::format_lsn(lsn))
}

impl Applier {
    /// An applier over the tables just loaded from a checkpoint whose
    /// header is `start` (its redo point `redo`).
    pub(crate) fn new(
        db: Arc<Database>,
        replayer: Replayer,
        redo: Lsn,
        cut: Lsn,
        running: &RunningXacts,
    ) -> Applier {
        let mut relations = HashMap::new();
        let mut definitions = HashMap::new();
        let mut rows: HashMap<u64, HashMap<i64, Tid>> = HashMap::new();
        for (tid, entry) in db.catalog.table.all_versions() {
            relations.insert(entry.oid, tid);
            if let Some(heap) = db.catalog.storage(entry.storage) {
                let map = rows.entry(entry.storage).or_default();
                for (tid, row) in heap.table.all_versions() {
                    if let Some(Value::Int(id)) = row.last() {
                        map.insert(*id, tid);
                    }
                }
            }
            definitions.insert(entry.storage, entry);
        }
        let set: HashSet<Xid> = running.xids.iter().map(|&(x, _)| x).collect();
        let first_seen = set.iter().map(|&x| (x, redo)).collect();
        Applier {
            db,
            replayer,
            rows,
            relations,
            definitions,
            pending: HashMap::new(),
            first_seen,
            graveyard: Vec::new(),
            before_cut: (redo < cut).then_some((cut, set)),
            last_commit_time: None,
            early_sequences: HashMap::new(),
        }
    }

    /// The oldest first record of a running transaction: where a
    /// restartpoint's replay must start.
    pub(crate) fn oldest_running_start(&self) -> Option<Lsn> {
        self.first_seen.values().copied().min()
    }

    /// Applies one record found at `lsn`.
    pub(crate) fn apply(&mut self, lsn: Lsn, record: Record) -> Result<(), String> {
        if let Some((cut, running)) = &mut self.before_cut {
            if lsn >= *cut {
                self.before_cut = None;
            } else {
                // Before the cut, a transaction not running there has its
                // effects in the image already, or never will.
                let keep = match &record {
                    Record::Change { xid, .. } => running.contains(xid),
                    Record::Assignment { top, sub } => {
                        if running.contains(top) {
                            running.insert(*sub);
                            true
                        } else {
                            false
                        }
                    }
                    Record::Commit { xid, .. } => running.contains(xid),
                    Record::Abort { xids } => xids.iter().any(|x| running.contains(x)),
                    // The image holds the value as logged before the cut
                    // or later (SEQ-ORDER).
                    Record::RunningXacts { .. } | Record::Sequence { .. } => false,
                };
                if !keep {
                    return Ok(());
                }
            }
        }
        match record {
            Record::Change { xid, change } => {
                self.replayer.observe(xid).map_err(|e| replay_error(lsn, e))?;
                self.first_seen.entry(xid).or_insert(lsn);
                self.change(lsn, xid, change)
            }
            Record::Assignment { top, sub } => {
                self.replayer.assign(top, sub).map_err(|e| replay_error(lsn, e))?;
                self.first_seen.entry(top).or_insert(lsn);
                self.first_seen.entry(sub).or_insert(lsn);
                Ok(())
            }
            Record::Commit { xid, subxids, time } => {
                self.replayer.commit(xid, &subxids).map_err(|e| replay_error(lsn, e))?;
                self.settle_commit(xid, &subxids);
                self.last_commit_time = Some(time);
                Ok(())
            }
            Record::Abort { xids } => {
                self.replayer.abort(&xids).map_err(|e| replay_error(lsn, e))?;
                for xid in xids {
                    self.undo(xid);
                }
                Ok(())
            }
            Record::RunningXacts { next_xid, oldest_running, .. } => {
                let r = RunningXacts { next_xid, oldest_running, xids: Vec::new() };
                self.replayer.running_xacts(&r).map_err(|e| replay_error(lsn, e))?;
                // Transactions the primary lost in a crash: no abort record
                // will come.
                let vanished: Vec<Xid> =
                    self.pending.keys().copied().filter(|&x| x < oldest_running).collect();
                for xid in vanished {
                    self.undo(xid);
                }
                self.first_seen.retain(|&x, _| x >= oldest_running);
                Ok(())
            }
            Record::Sequence { storage, value } => {
                match self.db.catalog.storage(storage).filter(|h| h.sequence.get().is_some()) {
                    Some(heap) => heap.sequence.get().expect("checked").replay(value),
                    // Not created yet, or dropped (then never used).
                    None => {
                        self.early_sequences.insert(storage, value);
                    }
                }
                Ok(())
            }
        }
    }

    fn heap(&self, lsn: Lsn, storage: u64) -> Result<(Arc<Heap>, Arc<RelEntry>), String> {
        let heap = self
            .db
            .catalog
            .storage(storage)
            .ok_or_else(|| replay_error(lsn, format!("storage {storage} does not exist")))?;
        let entry = self
            .definitions
            .get(&storage)
            .cloned()
            .ok_or_else(|| replay_error(lsn, format!("no relation names storage {storage}")))?;
        Ok((heap, entry))
    }

    fn row_tid(&self, lsn: Lsn, storage: u64, row_id: i64) -> Result<Tid, String> {
        self.rows
            .get(&storage)
            .and_then(|m| m.get(&row_id))
            .copied()
            .ok_or_else(|| replay_error(lsn, format!("row {row_id} of storage {storage} does not exist")))
    }

    /// Adds index entries for a new version: every index of the relation,
    /// built first if this storage has none yet (INDEX-VERSIONS), so the
    /// build never sees the version it is about to be given.
    fn put(
        heap: &Heap,
        entry: &RelEntry,
        row: &Row,
        put: impl FnOnce() -> Result<Tid, String>,
    ) -> Result<Tid, String> {
        let indexes: Vec<_> = entry.indexes.iter().map(|def| heap.index(entry, def)).collect();
        let tid = put()?;
        for index in indexes {
            // The primary computed the same key (index expressions are
            // immutable); one it could not compute, or a row a partial
            // index leaves out, has no entry there either.
            if let Ok(Some(key)) = index.key_of(row) {
                index.insert(key, tid);
            }
        }
        Ok(tid)
    }

    fn change(&mut self, lsn: Lsn, xid: Xid, change: Redo) -> Result<(), String> {
        // Enum values and definitions share their labels' cells with what
        // is already replayed (a rename reaches stored values through them).
        let enums = &self.db.enums;
        let change = match change {
            Redo::Insert { storage, row } => Redo::Insert { storage, row: enums.intern_shared_row(row) },
            Redo::Update { storage, row } => Redo::Update { storage, row: enums.intern_shared_row(row) },
            Redo::Catalog(entry) => Redo::Catalog(entry.with_shared_labels(enums)),
            other => other,
        };
        match change {
            Redo::Insert { storage, row } => {
                let (heap, entry) = self.heap(lsn, storage)?;
                let row_id = row_id(lsn, &row)?;
                let tid = Self::put(&heap, &entry, &row, || Ok(heap.table.replay_insert(xid, row.clone())))?;
                let prev = self.rows.entry(storage).or_default().insert(row_id, tid);
                self.pending.entry(xid).or_default().undo.push(Undo::Row { storage, row_id, prev });
                heap.changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Redo::Update { storage, row } => {
                let (heap, entry) = self.heap(lsn, storage)?;
                let row_id = row_id(lsn, &row)?;
                let old = self.row_tid(lsn, storage, row_id)?;
                let tid = Self::put(&heap, &entry, &row, || {
                    heap.table
                        .replay_update(old, xid, row.clone())
                        .ok_or_else(|| replay_error(lsn, format!("version {old} of row {row_id} is gone")))
                })?;
                self.rows.entry(storage).or_default().insert(row_id, tid);
                self.pending.entry(xid).or_default().undo.push(Undo::Row {
                    storage,
                    row_id,
                    prev: Some(old),
                });
                // Relaxed: a pruning heuristic (PRUNE).
                heap.changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Redo::Delete { storage, row_id } => {
                let (heap, _) = self.heap(lsn, storage)?;
                let tid = self.row_tid(lsn, storage, row_id)?;
                heap.table.replay_delete(tid, xid);
                self.pending.entry(xid).or_default().deleted_rows.push((storage, row_id));
                // Relaxed: a pruning heuristic (PRUNE).
                heap.changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Redo::Catalog(entry) => {
                let catalog = &self.db.catalog;
                let prev = self.relations.get(&entry.oid).copied();
                let old = prev.and_then(|tid| catalog.table.peek(tid));
                let tid = match prev {
                    Some(tid) => {
                        catalog.table.replay_update(tid, xid, Arc::clone(&entry)).ok_or_else(|| {
                            replay_error(lsn, format!("relation {} has no catalog row", entry.oid))
                        })?
                    }
                    None => catalog.table.replay_insert(xid, Arc::clone(&entry)),
                };
                self.relations.insert(entry.oid, tid);
                catalog.resume_ids(entry.oid + 1, entry.storage + 1);
                let pending = self.pending.entry(xid).or_default();
                pending.undo.push(Undo::Relation { oid: entry.oid, prev });
                pending.invalidations.push(entry.oid);
                // REL-KEY: a relation made, renamed or moved, or a schema,
                // may change what another name resolves to.
                let renamed =
                    old.as_ref().is_none_or(|o| o.name != entry.name || o.namespace != entry.namespace);
                pending.names_changed |= renamed || entry.is_schema;
                if catalog.storage(entry.storage).is_none() {
                    let heap = catalog.create_storage_with_id(entry.storage);
                    heap.install_sequence(&entry, self.early_sequences.remove(&entry.storage));
                    pending.created.push(entry.storage);
                }
                if let Some(old) = old.filter(|o| o.storage != entry.storage) {
                    pending.dropped.push(old.storage);
                }
                self.definitions.insert(entry.storage, entry);
            }
            Redo::Drop(oid) => {
                let catalog = &self.db.catalog;
                let tid = *self
                    .relations
                    .get(&oid)
                    .ok_or_else(|| replay_error(lsn, format!("relation {oid} has no catalog row")))?;
                let entry = catalog
                    .table
                    .peek(tid)
                    .ok_or_else(|| replay_error(lsn, format!("relation {oid} has no catalog row")))?;
                catalog.table.replay_delete(tid, xid);
                let pending = self.pending.entry(xid).or_default();
                pending.dropped.push(entry.storage);
                pending.deleted_relations.push(oid);
                pending.invalidations.push(oid);
                pending.names_changed |= entry.is_schema;
            }
        }
        Ok(())
    }

    /// A tree committed: what its members dropped waits for the horizon,
    /// what they deleted leaves the maps, and other sessions' caches are
    /// told (after the commit is visible, as on the primary: PLAN-FRESH).
    /// Not through `Xact`: this is another server's transaction, with no
    /// proc-array transaction here to commit (COMMIT-ORDER in the README).
    fn settle_commit(&mut self, top: Xid, subxids: &[Xid]) {
        let mut invalidations = Vec::new();
        for xid in std::iter::once(top).chain(subxids.iter().copied()) {
            self.first_seen.remove(&xid);
            let Some(p) = self.pending.remove(&xid) else { continue };
            for (storage, row_id) in p.deleted_rows {
                if let Some(map) = self.rows.get_mut(&storage) {
                    map.remove(&row_id);
                }
            }
            for oid in p.deleted_relations {
                self.relations.remove(&oid);
            }
            for storage in p.dropped {
                self.rows.remove(&storage);
                self.definitions.remove(&storage);
                self.graveyard.push((top, storage));
            }
            invalidations.extend(p.invalidations.into_iter().map(Invalidation::Relation));
            if p.names_changed {
                invalidations.push(Invalidation::All);
            }
        }
        if !invalidations.is_empty() {
            self.db.sinval.send(&invalidations);
        }
    }

    /// An xid aborted (or vanished): its map entries go back, in reverse
    /// order, and storage it created is freed (no snapshot ever saw it).
    fn undo(&mut self, xid: Xid) {
        self.first_seen.remove(&xid);
        let Some(p) = self.pending.remove(&xid) else { return };
        for undo in p.undo.into_iter().rev() {
            match undo {
                Undo::Row { storage, row_id, prev } => {
                    let map = self.rows.entry(storage).or_default();
                    match prev {
                        Some(tid) => map.insert(row_id, tid),
                        None => map.remove(&row_id),
                    };
                }
                Undo::Relation { oid, prev: Some(tid) } => {
                    self.relations.insert(oid, tid);
                    // The definition it replaced names its storage again.
                    if let Some(entry) = self.db.catalog.table.peek(tid) {
                        // Its labels take their names back (RENAME VALUE undone).
                        Arc::clone(&entry).with_shared_labels(&self.db.enums);
                        self.definitions.insert(entry.storage, entry);
                    }
                }
                Undo::Relation { oid, prev: None } => {
                    self.relations.remove(&oid);
                }
            }
        }
        for storage in p.created {
            self.db.catalog.drop_storage(storage);
            self.rows.remove(&storage);
            self.definitions.remove(&storage);
        }
    }

    /// Frees dropped storage no snapshot can resolve any more: its dropper
    /// committed below the standby's data horizon.
    pub(crate) fn free_dropped(&mut self, horizon: Xid) {
        let catalog = &self.db.catalog;
        self.graveyard.retain(|&(xid, storage)| {
            if xid < horizon {
                catalog.drop_storage(storage);
                false
            } else {
                true
            }
        });
    }
}

fn row_id(lsn: Lsn, row: &[Value]) -> Result<i64, String> {
    match row.last() {
        Some(Value::Int(id)) => Ok(*id),
        _ => Err(replay_error(lsn, "a row without its row id")),
    }
}
