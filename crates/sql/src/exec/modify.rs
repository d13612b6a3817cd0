//! Writes: INSERT, UPDATE and DELETE, and the row locks of FOR KEY SHARE
//! … FOR UPDATE (ROW-LOCKS in the crate README), with PostgreSQL's rules for rows a concurrent transaction changed (EPQ
//! in the crate README), unique checks (UNIQUE-CHECK), and the redo each
//! change logs as it happens (WAL-TAGGED).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use snapscale_engine::catalog::{IndexDef, RelEntry, Row};
use snapscale_engine::errors::storage_error;
use snapscale_engine::index::{Index, Key};
use snapscale_engine::redo::Redo;
use snapscale_engine::{
    IsolationLevel, Liveness, LockMode, LockTag, Outcome, RowLockMode, StorageError, Tid, TxnError,
};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::triggers::changed_by_trigger;
use super::{serialization_failure, Executor};
use crate::expr::{passes, Expr};
use crate::output::Output;
use crate::plan::physical::{ScanNode, Source};
use crate::plan::{Projection, Rel, RowLock, TableCheck};
use snapscale_engine::triggers::{events, TriggerTiming};

/// What to do with a row found by a scan.
#[derive(Clone, Copy)]
pub(crate) enum Change<'a> {
    /// The SET list and the table's CHECK constraints.
    Update(&'a [(usize, Expr)], &'a [TableCheck]),
    Delete,
    Lock(RowLock, RowLockMode),
}

/// The strength of a change: an UPDATE that leaves every column of a
/// unique index (primary key or unique) as it was is a no-key update, one
/// that changes such a column a key update, as a DELETE; a row lock is its
/// clause's.
fn strength(change: Change<'_>, entry: &RelEntry, old: &Row, new: Option<&Row>) -> RowLockMode {
    match (change, new) {
        (Change::Lock(_, mode), _) => mode,
        (Change::Update(..), Some(new))
            if !entry
                .indexes
                .iter()
                // PostgreSQL's key columns: the plain columns of unique
                // indexes that are not partial.
                .filter(|i| i.unique && i.predicate.is_none())
                .flat_map(|i| &i.columns)
                .any(|&c| c != snapscale_engine::catalog::EXPRESSION && old[c] != new[c]) =>
        {
            RowLockMode::NoKeyUpdate
        }
        _ => RowLockMode::Update,
    }
}

/// The tuple lock a waiter for a row takes, as PostgreSQL maps its row
/// lock strengths to lock modes: FOR KEY SHARE AccessShareLock, FOR SHARE
/// RowShareLock, FOR NO KEY UPDATE (and a no-key UPDATE) ExclusiveLock,
/// FOR UPDATE (a key UPDATE, a DELETE) AccessExclusiveLock. Waiters whose
/// modes are compatible wait side by side.
fn tuple_lock_mode(strength: RowLockMode) -> LockMode {
    match strength {
        RowLockMode::KeyShare => LockMode::AccessShare,
        RowLockMode::Share => LockMode::RowShare,
        RowLockMode::NoKeyUpdate => LockMode::Exclusive,
        RowLockMode::Update => LockMode::AccessExclusive,
    }
}

/// Where an INSERT's rows go: the table, which columns the source fills,
/// the defaults of the others, the table's CHECK constraints and ON
/// CONFLICT.
pub(crate) struct InsertInto<'a> {
    pub rel: &'a Rel,
    pub targets: &'a [usize],
    pub defaults: &'a [(usize, Expr)],
    pub checks: &'a [TableCheck],
    pub on_conflict: Option<&'a crate::plan::OnConflict>,
}

impl Executor<'_> {
    pub(crate) async fn insert(
        &mut self,
        into: &InsertInto<'_>,
        source: &Source,
        returning: Option<&Projection>,
    ) -> Result<Output, SqlError> {
        let InsertInto { rel, targets, defaults, checks, on_conflict } = *into;
        let sources: Vec<Row> = match source {
            Source::Values(rows) => {
                self.evaluate(|ex| {
                    let cx = ex.ctx(&[]);
                    let mut out = Vec::with_capacity(rows.len());
                    for r in rows {
                        out.push(Row::from(r.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?));
                    }
                    Ok(out)
                })
                .await?
            }
            Source::Query(q) => self.query(q).await?,
        };
        let mut returned = Vec::new();
        let mut n = 0;
        // The rows this statement inserted or updated (ON CONFLICT may not
        // change one twice).
        let mut touched = std::collections::HashSet::new();
        let generates = checks.iter().any(|c| c.generated.is_some());
        for values in sources {
            let mut row = self.new_row(rel, targets, values.iter(), defaults).await?;
            if generates {
                // Here too, not only in insert_row: RETURNING and ON
                // CONFLICT see the computed columns.
                let mut values = row.to_vec();
                self.compute_generated(checks, &mut values).await?;
                row = Row::from(values);
            }
            let row = match on_conflict {
                // A view's INSTEAD OF triggers do the insert.
                None if rel.entry.is_view() => {
                    match self.instead_row(rel, events::INSERT, None, Some(row.to_vec())).await? {
                        Some(row) => Row::from(row),
                        None => continue,
                    }
                }
                None => match self.insert_row(rel, row, checks).await? {
                    Some((_, row)) => row,
                    None => continue,
                },
                Some(on) => {
                    // BEFORE ROW INSERT triggers see the row proposed.
                    let row = match self.before_insert(rel, row).await? {
                        Some(row) if generates => {
                            let mut values = row.to_vec();
                            self.compute_generated(checks, &mut values).await?;
                            Row::from(values)
                        }
                        Some(row) => row,
                        None => continue,
                    };
                    match self.upsert(rel, row, checks, on, &mut touched).await? {
                        Some(row) => row,
                        None => continue,
                    }
                }
            };
            n += 1;
            if let Some(r) = returning {
                returned.push(self.evaluate(|ex| ex.project(&r.exprs, &row)).await?);
            }
        }
        let tag = crate::output::counted_tag("INSERT 0", n);
        Ok(match returning {
            Some(r) => Output::Rows { columns: Arc::clone(&r.columns), rows: returned, tag },
            None => Output::Command(tag),
        })
    }

    /// A new row of `rel`: `values` in the `targets` columns, the
    /// `defaults` in theirs, NULL in the rest.
    pub(crate) async fn new_row(
        &mut self,
        rel: &Rel,
        targets: &[usize],
        values: impl Iterator<Item = &Value>,
        defaults: &[(usize, Expr)],
    ) -> Result<Row, SqlError> {
        let mut row = vec![Value::Null; rel.entry.columns.len()];
        for (&t, v) in targets.iter().zip(values) {
            row[t] = v.clone();
        }
        if !defaults.is_empty() {
            let filled = self
                .evaluate(|ex| {
                    let cx = ex.ctx(&[]);
                    defaults.iter().map(|(c, e)| Ok((*c, e.eval(&cx)?))).collect::<Result<Vec<_>, SqlError>>()
                })
                .await?;
            for (c, v) in filled {
                row[c] = v;
            }
        }
        Ok(Arc::from(row))
    }

    pub(crate) async fn update(
        &mut self,
        scan: &ScanNode,
        sets: &[(usize, Expr)],
        returning: Option<&Projection>,
        checks: &[TableCheck],
    ) -> Result<Output, SqlError> {
        self.modify(scan, Change::Update(sets, checks), returning, "UPDATE").await
    }

    pub(crate) async fn delete(
        &mut self,
        scan: &ScanNode,
        returning: Option<&Projection>,
    ) -> Result<Output, SqlError> {
        self.modify(scan, Change::Delete, returning, "DELETE").await
    }

    /// RETURNING's values for a row.
    fn project(&self, exprs: &[Expr], row: &[Value]) -> Result<Row, SqlError> {
        let cx = self.ctx(row);
        Ok(Row::from(exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?))
    }

    async fn modify(
        &mut self,
        scan: &ScanNode,
        change: Change<'_>,
        returning: Option<&Projection>,
        verb: &str,
    ) -> Result<Output, SqlError> {
        self.ensure_snapshot()?;
        // With a journal (EVAL-REPLAY, PL-ROW-CALLS) the WHERE clause is
        // tested row by row, each row changed before the next is tested,
        // as PostgreSQL pipelines them: a call in it sees the changes made
        // so far, and a stop replays one row's calls, not the scan's.
        let piecewise = self.replay.is_some() && scan.filter.is_some();
        let found = match piecewise {
            true => {
                let unfiltered = ScanNode { filter: None, ..scan.clone() };
                self.evaluate(|ex| ex.run(&[]).scan(&unfiltered)).await?
            }
            false => self.evaluate(|ex| ex.run(&[]).scan(scan)).await?,
        };
        let mut n = 0u64;
        let mut returned = Vec::new();
        for (tid, row) in found {
            self.xact.check_cancel()?;
            if let (true, Some(filter)) = (piecewise, &scan.filter) {
                if !self.evaluate(|ex| passes(filter, &ex.ctx(&row))).await? {
                    continue;
                }
            }
            if let Some((_, row)) = self.change_row(&scan.rel, scan.filter.as_ref(), tid, row, change).await?
            {
                n += 1;
                if let Some(r) = returning {
                    returned.push(self.evaluate(|ex| ex.project(&r.exprs, &row)).await?);
                }
            }
        }
        let tag = crate::output::counted_tag(verb, n);
        Ok(match returning {
            Some(r) => Output::Rows { columns: Arc::clone(&r.columns), rows: returned, tag },
            None => Output::Command(tag),
        })
    }

    /// Applies `change` to the row at `tid`, following PostgreSQL's rules
    /// for concurrent changes (EPQ). Returns the row as changed (the new
    /// row for an update, the row for a delete or lock), or `None` if the
    /// row is gone, no longer matches `filter`, or is skipped (SKIP LOCKED).
    ///
    /// An UPDATE or DELETE fires the table's row triggers (TRIGGER-FIRE):
    /// with BEFORE triggers the row is locked first, the triggers fire on
    /// its newest version and may change the new row or skip it; AFTER
    /// triggers are queued once it changed.
    pub(crate) async fn change_row(
        &mut self,
        rel: &Rel,
        filter: Option<&Expr>,
        tid: Tid,
        row: Row,
        change: Change<'_>,
    ) -> Result<Option<(Tid, Row)>, SqlError> {
        let (event, set) = match change {
            Change::Update(sets, _) => {
                (events::UPDATE, Some(sets.iter().map(|(c, _)| *c).collect::<Vec<_>>()))
            }
            Change::Delete => (events::DELETE, None),
            Change::Lock(..) => {
                return Ok(self
                    .change_row_queued(rel, filter, tid, row, change)
                    .await?
                    .map(|(t, r, _)| (t, r)))
            }
        };
        if rel.entry.triggers.is_empty() {
            return Ok(self.change_row_queued(rel, filter, tid, row, change).await?.map(|(t, r, _)| (t, r)));
        }
        let mut replaced: Option<Vec<(usize, Expr)>> = None;
        let (tid, row) = if self.has_trigger(rel, TriggerTiming::Before, true, event) {
            let mode = if event == events::DELETE { RowLockMode::Update } else { RowLockMode::NoKeyUpdate };
            let lock = Change::Lock(RowLock::Wait, mode);
            let Some((tid, locked, _)) = self.change_row_queued(rel, filter, tid, row, lock).await? else {
                return Ok(None);
            };
            let width = rel.entry.columns.len();
            let new = match change {
                Change::Update(sets, _) => Some(self.apply_sets(sets, &locked).await?[..width].to_vec()),
                _ => None,
            };
            let Some(new) = self.before_row(rel, event, Some(&locked), new, set.as_deref()).await? else {
                return Ok(None);
            };
            // The triggers' own statements may not have changed the row.
            match rel.latest(&self.xact.session, tid) {
                Some((now, _)) if now == tid => {}
                _ => return Err(changed_by_trigger(event == events::DELETE)),
            }
            replaced = new.map(|n| n.into_iter().enumerate().map(|(c, v)| (c, Expr::Const(v))).collect());
            (tid, locked)
        } else {
            (tid, row)
        };
        let change = match (&replaced, change) {
            (Some(all), Change::Update(_, checks)) => Change::Update(all, checks),
            (_, change) => change,
        };
        let Some((tid, new, old)) = self.change_row_queued(rel, filter, tid, row, change).await? else {
            // Locked by this statement before its BEFORE triggers fired:
            // only their own statements can have changed it since.
            if replaced.is_some()
                || event == events::DELETE && self.has_trigger(rel, TriggerTiming::Before, true, event)
            {
                return Err(changed_by_trigger(event == events::DELETE));
            }
            return Ok(None);
        };
        let new_row = (event == events::UPDATE).then_some(&new);
        self.capture(rel, event, Some(&old), new_row);
        if self.has_trigger(rel, TriggerTiming::After, true, event) {
            self.after_row(rel, event, Some(&old), new_row, set.as_deref())?;
        }
        Ok(Some((tid, new)))
    }

    /// `sets` applied to `row`.
    async fn apply_sets(&mut self, sets: &[(usize, Expr)], row: &Row) -> Result<Vec<Value>, SqlError> {
        self.evaluate(|ex| {
            let cx = ex.ctx(row);
            let mut new: Vec<Value> = row.to_vec();
            for (c, e) in sets.iter() {
                new[*c] = e.eval(&cx)?;
            }
            Ok(new)
        })
        .await
    }

    /// [`Executor::change_row`] without triggers: where the changed row
    /// went, it as changed, and the version it replaced.
    async fn change_row_queued(
        &mut self,
        rel: &Rel,
        filter: Option<&Expr>,
        tid: Tid,
        row: Row,
        change: Change<'_>,
    ) -> Result<Option<(Tid, Row, Row)>, SqlError> {
        let mut place_in_line = None;
        let changed = self.change_row_in_line(rel, filter, tid, row, change, &mut place_in_line).await;
        if let Some((tag, mode)) = place_in_line {
            self.xact.unlock_tuple(tag, mode);
        }
        changed
    }

    /// [`Executor::change_row`]; a wait for the row's locker first takes
    /// the row's tuple lock into `place_in_line` (TUPLE-QUEUE), so that
    /// the sessions waiting for one row get it in the order they came.
    async fn change_row_in_line(
        &mut self,
        rel: &Rel,
        filter: Option<&Expr>,
        mut tid: Tid,
        mut row: Row,
        change: Change<'_>,
        place_in_line: &mut Option<(LockTag, LockMode)>,
    ) -> Result<Option<(Tid, Row, Row)>, SqlError> {
        let table = &rel.heap.table;
        self.xact.prepare_write()?;
        loop {
            let new_row = match change {
                Change::Update(sets, checks) => {
                    let mut new = self.apply_sets(sets, &row).await?;
                    if checks.iter().any(|c| c.generated.is_some()) {
                        self.compute_generated(checks, &mut new).await?;
                    }
                    check_not_null(&rel.entry, &new)?;
                    self.check_row(&rel.entry, checks, &new).await?;
                    if checks.iter().any(|c| c.view) {
                        self.check_view_options(&rel.entry, checks, &new).await?;
                    }
                    Some(Row::from(new))
                }
                _ => None,
            };
            let strength = strength(change, &rel.entry, &row, new_row.as_ref());
            let session = &mut self.xact.session;
            let outcome = match (change, &new_row) {
                (Change::Update(..), Some(new)) => table.update_as(session, tid, new.clone(), strength),
                (Change::Delete, _) => table.delete(session, tid),
                _ => table.lock_row(session, tid, strength),
            };
            let outcome = match outcome {
                Ok(outcome) => outcome,
                // MULTI-TRUNCATE: a multixact log full only because old
                // multis were not replaced yet is freed by this writer.
                Err(StorageError::Txn(e @ TxnError::MultiXactSpaceExhausted { .. })) => {
                    if self.xact.db.freeze_for_multi_space(&mut self.xact.session, &e) {
                        continue;
                    }
                    return Err(storage_error(StorageError::Txn(e)));
                }
                Err(e) => return Err(storage_error(e)),
            };
            match outcome {
                Outcome::Ok(new_tid) => {
                    if let Some(new) = new_row {
                        self.xact
                            .log_change(
                                &rel.entry,
                                Redo::Update { storage: rel.entry.storage, row: new.clone() },
                            )
                            .await?;
                        // Relaxed: a pruning heuristic (PRUNE).
                        rel.heap.changes.fetch_add(1, Relaxed);
                        self.xact.touch(&rel.heap);
                        self.index_new_version(rel, &row, &new, new_tid).await?;
                        self.ri_updated(rel, &row, new_tid, &new);
                        return Ok(Some((new_tid, new, row)));
                    }
                    if matches!(change, Change::Delete) {
                        if let Some(Value::Int(row_id)) = row.last() {
                            self.xact
                                .log_change(
                                    &rel.entry,
                                    Redo::Delete { storage: rel.entry.storage, row_id: *row_id },
                                )
                                .await?;
                        }
                        // Relaxed: a pruning heuristic (PRUNE).
                        rel.heap.changes.fetch_add(1, Relaxed);
                        self.xact.touch(&rel.heap);
                        self.ri_deleted(rel, &row);
                    }
                    return Ok(Some((tid, row.clone(), row)));
                }
                Outcome::Invisible | Outcome::SelfModified => return Ok(None),
                Outcome::BeingModified(xid) => match change {
                    Change::Lock(RowLock::NoWait, _) => {
                        return Err(SqlError::new(
                            SqlState::LOCK_NOT_AVAILABLE,
                            format!("could not obtain lock on row in relation \"{}\"", rel.entry.name),
                        ))
                    }
                    Change::Lock(RowLock::SkipLocked, _) => return Ok(None),
                    // First a place in line behind the earlier waiters,
                    // then (the row looked at again: the one before us may
                    // have taken it meanwhile) the wait for its locker.
                    // A transaction that already locks the row keeps its
                    // place: queueing for the tuple lock behind waiters
                    // that wait for it would deadlock (PostgreSQL skips
                    // the tuple lock for a multixact it is a member of).
                    _ if place_in_line.is_none() && !self.locks_row(rel, tid) => {
                        let tag = LockTag::Tuple { relation: rel.entry.oid, tid };
                        let mode = tuple_lock_mode(strength);
                        self.xact.lock_tuple(tag, mode).await?;
                        *place_in_line = Some((tag, mode));
                    }
                    _ => self.xact.wait_for_xid(xid).await?,
                },
                Outcome::Updated { .. } | Outcome::Deleted(_) => {
                    if self.xact.isolation() == Some(IsolationLevel::RepeatableRead) {
                        return Err(serialization_failure(if matches!(outcome, Outcome::Deleted(_)) {
                            "delete"
                        } else {
                            "update"
                        }));
                    }
                    if matches!(outcome, Outcome::Deleted(_)) {
                        return Ok(None);
                    }
                    // EPQ (READ COMMITTED): the newest committed version, if
                    // it still matches, is the one to change.
                    let Some((latest, newest)) = rel.latest(&self.xact.session, tid) else {
                        return Ok(None);
                    };
                    if latest == tid {
                        return Ok(None);
                    }
                    // A chain that ends in a committed delete has no row
                    // left to re-check (PostgreSQL's fetch answers
                    // TM_Deleted without evaluating the quals).
                    if rel.heap.table.deleted(&self.xact.session, latest) {
                        return Ok(None);
                    }
                    if let Some(filter) = filter {
                        if !self.evaluate(|ex| passes(filter, &ex.ctx(&newest))).await? {
                            return Ok(None);
                        }
                    }
                    tid = latest;
                    row = newest;
                }
            }
        }
    }

    /// Whether this transaction (at any level) holds a lock on the
    /// version at `tid`, beside the other holders that made it wait.
    fn locks_row(&self, rel: &Rel, tid: Tid) -> bool {
        let session = &self.xact.session;
        rel.heap
            .table
            .holders(session, tid)
            .is_some_and(|(_, members)| members.iter().any(|m| session.is_current_xid(m.xid)))
    }

    /// Adds index entries for a new version (after an update), checking
    /// unique keys that changed.
    pub(super) async fn index_new_version(
        &mut self,
        rel: &Rel,
        old: &Row,
        new: &Row,
        tid: Tid,
    ) -> Result<(), SqlError> {
        for def in &rel.entry.indexes {
            let index = rel.heap.index(&rel.entry, def);
            // A partial index's predicate may leave the new version out.
            let Some(key) = index.key_of(new)? else { continue };
            if index.unique && index.key_of(old).ok().flatten().as_ref() != Some(&key) {
                self.insert_unique(rel, def, index, key, tid).await?;
            } else if index.checks_unique(&key) {
                // UNIQUE-CHECK: the new version's entry goes in under the
                // key's mutex too, so that a check that walked the entries
                // before it cannot then find the old version dead (this
                // update committed meanwhile) and miss the row.
                let _check = index.lock_unique(&key);
                index.insert(key, tid);
            } else {
                index.insert(key, tid);
            }
        }
        Ok(())
    }

    /// BEFORE ROW INSERT triggers on a new row: the row to insert, or
    /// `None` if one skipped it.
    pub(super) async fn before_insert(&mut self, rel: &Rel, row: Row) -> Result<Option<Row>, SqlError> {
        if !self.has_trigger(rel, TriggerTiming::Before, true, events::INSERT) {
            return Ok(Some(row));
        }
        Ok(match self.before_row(rel, events::INSERT, None, Some(row.to_vec()), None).await? {
            Some(Some(new)) => Some(Row::from(new)),
            _ => None,
        })
    }

    /// Inserts a row and its index entries, its triggers fired: where it
    /// went and the row as stored (without its row id), or `None` if a
    /// BEFORE trigger skipped it.
    pub(crate) async fn insert_row(
        &mut self,
        rel: &Rel,
        row: Row,
        checks: &[TableCheck],
    ) -> Result<Option<(Tid, Row)>, SqlError> {
        let Some(row) = self.before_insert(rel, row).await? else { return Ok(None) };
        let row = match checks.iter().any(|c| c.generated.is_some()) {
            true => {
                let mut values = row.to_vec();
                self.compute_generated(checks, &mut values).await?;
                Row::from(values)
            }
            false => row,
        };
        check_not_null(&rel.entry, &row)?;
        // Constraints before the row goes in; views' CHECK OPTIONs once
        // it and its index entries are in (a duplicate key is reported
        // first, as in PostgreSQL).
        self.check_row(&rel.entry, checks, &row).await?;
        // Keys before the row goes in: an index expression that fails on
        // the row fails the insert with nothing written.
        let mut keys = Vec::with_capacity(rel.entry.indexes.len());
        for def in &rel.entry.indexes {
            let index = rel.heap.index(&rel.entry, def);
            keys.push(index.key_of(&row)?);
        }
        self.xact.prepare_write()?;
        let given = row;
        let row = with_row_id(&given, rel.heap.new_row_id());
        let tid = rel.heap.table.insert(&mut self.xact.session, row.clone()).map_err(storage_error)?;
        self.xact
            .log_change(&rel.entry, Redo::Insert { storage: rel.entry.storage, row: row.clone() })
            .await?;
        self.xact.touch(&rel.heap);
        for (def, key) in rel.entry.indexes.iter().zip(keys) {
            let Some(key) = key else { continue };
            let index = rel.heap.index(&rel.entry, def);
            if index.unique {
                self.insert_unique(rel, def, index, key, tid).await?;
            } else {
                index.insert(key, tid);
            }
        }
        if checks.iter().any(|c| c.view) {
            self.check_view_options(&rel.entry, checks, &row[..rel.entry.columns.len()]).await?;
        }
        self.ri_inserted(rel, tid, &row);
        self.capture(rel, events::INSERT, None, Some(&row));
        if self.has_trigger(rel, TriggerTiming::After, true, events::INSERT) {
            // The row without its id: just the columns, NEW as it is.
            self.after_row(rel, events::INSERT, None, Some(&given), None)?;
        }
        Ok(Some((tid, given)))
    }

    /// Adds a unique key: another live version with the key is 23505; one
    /// whose inserter or deleter is still running is waited for, then the
    /// check repeats (PostgreSQL's _bt_check_unique). UNIQUE-CHECK: the
    /// index's unique mutex is held from the lookup to the insertion.
    pub(super) async fn insert_unique(
        &mut self,
        rel: &Rel,
        def: &IndexDef,
        index: &Index,
        key: Key,
        tid: Tid,
    ) -> Result<(), SqlError> {
        if !index.checks_unique(&key) {
            index.insert(key, tid);
            return Ok(());
        }
        loop {
            let wait = {
                let _check = index.lock_unique(&key);
                let mut wait = None;
                for other in index.lookup_prefix(&key.0) {
                    if other == tid {
                        continue;
                    }
                    // The tid may have been reused for another key.
                    let Some(data) = rel.peek(other) else { continue };
                    if !index.row_has_key(&data, &key.0) {
                        continue;
                    }
                    match rel.heap.table.liveness(&self.xact.session, other) {
                        Liveness::Dead => {}
                        Liveness::Live => return Err(duplicate(rel, def, &key)),
                        Liveness::Inserting(x) | Liveness::Deleting(x) => {
                            wait = Some(x);
                            break;
                        }
                    }
                }
                if wait.is_none() {
                    index.insert(key.clone(), tid);
                }
                wait
            };
            match wait {
                None => return Ok(()),
                Some(x) => self.xact.wait_for_xid(x).await?,
            }
        }
    }
}

fn duplicate(rel: &Rel, def: &IndexDef, key: &Key) -> SqlError {
    let name = &def.name;
    let cols = crate::catalog_views::index_key_parts(&rel.entry, def, false);
    // A character(n) key shows blank-padded, as the column holds it.
    let vals: Vec<String> = key
        .0
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let text = v.to_text().unwrap_or_else(|| "null".into());
            let width = match def.columns.get(i).and_then(|&c| rel.entry.columns.get(c)).map(|c| c.ty) {
                Some(snapscale_values::SqlType::Char(n)) if !matches!(v, Value::Null) => n as usize,
                _ => 0,
            };
            let len = text.chars().count();
            if len < width {
                format!("{text}{}", " ".repeat(width - len))
            } else {
                text
            }
        })
        .collect();
    SqlError::new(
        SqlState::UNIQUE_VIOLATION,
        format!("duplicate key value violates unique constraint \"{name}\""),
    )
    .with_detail(format!("Key ({})=({}) already exists.", cols.join(", "), vals.join(", ")))
    .on_table(schema_of(&rel.entry), &rel.entry.name)
    .on_constraint(name)
}

/// The schema PostgreSQL would name for a relation: its own temporary
/// schema, or public.
pub(crate) fn schema_of(entry: &RelEntry) -> &'static str {
    if entry.temp_owner.is_some() {
        "pg_temp"
    } else {
        "public"
    }
}

pub(crate) fn check_not_null(entry: &RelEntry, row: &[Value]) -> Result<(), SqlError> {
    for (c, v) in entry.columns.iter().zip(row) {
        if c.not_null && matches!(v, Value::Null) {
            return Err(SqlError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, entry.name
                ),
            )
            .with_detail(failing_row(entry, row))
            .on_table(schema_of(entry), &entry.name)
            .on_column(&c.name));
        }
    }
    Ok(())
}

/// A constraint violation's DETAIL: the row's columns (not its hidden row
/// id) as text.
pub(crate) fn failing_row(entry: &RelEntry, row: &[Value]) -> String {
    let values: Vec<String> =
        row.iter().take(entry.columns.len()).map(|v| v.to_text().unwrap_or_else(|| "null".into())).collect();
    format!("Failing row contains ({}).", values.join(", "))
}

impl Executor<'_> {
    /// The name of the first of `checks` that `row` fails (false; NULL
    /// passes).
    pub(super) async fn first_failing_check(
        &mut self,
        checks: &[TableCheck],
        row: &[Value],
        views: bool,
    ) -> Result<Option<usize>, SqlError> {
        self.evaluate(|ex| {
            let cx = ex.ctx(row);
            for (i, c) in checks.iter().enumerate().filter(|(_, c)| c.view == views && c.generated.is_none())
            {
                // A view's check option fails on NULL too (PostgreSQL's
                // WITH CHECK OPTION wants the condition true).
                match c.expr.eval(&cx)? {
                    Value::Bool(false) => return Ok(Some(i)),
                    Value::Null if c.view => return Ok(Some(i)),
                    _ => {}
                }
            }
            Ok(None)
        })
        .await
    }

    /// Checks `row` against `checks` (the first one false is named, NULL
    /// passes, as in PostgreSQL).
    pub(crate) async fn check_row(
        &mut self,
        entry: &RelEntry,
        checks: &[TableCheck],
        row: &[Value],
    ) -> Result<(), SqlError> {
        if checks.is_empty() {
            return Ok(());
        }
        match self.first_failing_check(checks, row, false).await? {
            None => Ok(()),
            Some(i) => {
                let name = &checks[i].name;
                Err(SqlError::new(
                    SqlState::CHECK_VIOLATION,
                    format!("new row for relation \"{}\" violates check constraint \"{name}\"", entry.name),
                )
                .with_detail(failing_row(entry, row))
                .on_table(schema_of(entry), &entry.name)
                .on_constraint(name))
            }
        }
    }

    /// Computes the generated columns of a new row (`TableCheck::generated`)
    /// from its other columns.
    pub(crate) async fn compute_generated(
        &mut self,
        checks: &[TableCheck],
        row: &mut [Value],
    ) -> Result<(), SqlError> {
        let values = self
            .evaluate(|ex| {
                let cx = ex.ctx(row);
                checks
                    .iter()
                    .filter_map(|c| c.generated.map(|i| c.expr.eval(&cx).map(|v| (i, v))))
                    .collect::<Result<Vec<_>, SqlError>>()
            })
            .await?;
        for (i, v) in values {
            row[i] = v;
        }
        Ok(())
    }

    /// Checks `row` against the CHECK OPTIONs of the views a statement
    /// wrote through (in `checks`, with the table's constraints).
    pub(crate) async fn check_view_options(
        &mut self,
        entry: &RelEntry,
        checks: &[TableCheck],
        row: &[Value],
    ) -> Result<(), SqlError> {
        match self.first_failing_check(checks, row, true).await? {
            None => Ok(()),
            Some(i) => Err(SqlError::new(
                SqlState::WITH_CHECK_OPTION_VIOLATION,
                format!("new row violates check option for view \"{}\"", checks[i].name),
            )
            .with_detail(failing_row(entry, row))),
        }
    }
}

impl Executor<'_> {
    /// A joined row's SET values, each a constant for `change_row`.
    pub(super) async fn set_values(
        &mut self,
        sets: &[(usize, Expr)],
        row: &[Value],
    ) -> Result<Vec<(usize, Expr)>, SqlError> {
        self.evaluate(|ex| {
            let cx = ex.ctx(row);
            sets.iter()
                .map(|(c, e)| Ok((*c, Expr::Const(e.eval(&cx)?))))
                .collect::<Result<Vec<_>, SqlError>>()
        })
        .await
    }

    /// UPDATE or DELETE of a view through its INSTEAD OF triggers: each
    /// row of the view the statement names is given to them.
    pub(crate) async fn instead_of(
        &mut self,
        m: &crate::plan::InsteadOf<crate::plan::physical::Query>,
    ) -> Result<Output, SqlError> {
        self.ensure_snapshot()?;
        let rows = self.query(&m.query).await?;
        let event = if m.delete { events::DELETE } else { events::UPDATE };
        let width = m.view.entry.columns.len();
        let mut n = 0u64;
        let mut returned = Vec::new();
        for row in rows {
            self.xact.check_cancel()?;
            let new = match m.delete {
                true => None,
                false => Some(self.apply_sets(&m.sets, &row).await?[..width].to_vec()),
            };
            let Some(done) = self.instead_row(&m.view, event, Some(&row[..width]), new).await? else {
                continue;
            };
            n += 1;
            if let Some(r) = &m.returning {
                returned.push(self.evaluate(|ex| ex.project(&r.exprs, &done)).await?);
            }
        }
        let tag = crate::output::counted_tag(if m.delete { "DELETE" } else { "UPDATE" }, n);
        Ok(match &m.returning {
            Some(r) => Output::Rows { columns: Arc::clone(&r.columns), rows: returned, tag },
            None => Output::Command(tag),
        })
    }

    /// UPDATE … FROM / DELETE … USING: the join's rows, each target row
    /// already locked (in its newest version, re-checked: EPQ), changed
    /// once even when it joins several rows (the first, as PostgreSQL).
    pub(crate) async fn modify_join(
        &mut self,
        m: &crate::plan::ModifyJoin<crate::plan::physical::Query>,
    ) -> Result<Output, SqlError> {
        self.ensure_snapshot()?;
        let rows = self.query(&m.query).await?;
        let width = m.rel.entry.columns.len() + 1;
        let mut seen = std::collections::HashSet::new();
        let mut n = 0u64;
        let mut returned = Vec::new();
        for row in rows {
            self.xact.check_cancel()?;
            let (Some(Value::Int(tid)), Some(Value::Int(row_id))) = (row.get(width), row.get(width - 1))
            else {
                return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a joined row without its target's tid"));
            };
            if !seen.insert(*row_id) {
                continue;
            }
            let target = Row::from(&row[..width]);
            let changed = if m.delete {
                self.change_row(&m.rel, None, *tid as Tid, target, Change::Delete).await?
            } else {
                let values = self.set_values(&m.sets, &row).await?;
                self.change_row(&m.rel, None, *tid as Tid, target, Change::Update(&values, &m.checks)).await?
            };
            let Some((_, new)) = changed else { continue };
            n += 1;
            if let Some(r) = &m.returning {
                // The new target row in place of the old, the rest as joined.
                let joined: Vec<Value> = new.iter().chain(&row[width..]).cloned().collect();
                returned.push(self.evaluate(|ex| ex.project(&r.exprs, &joined)).await?);
            }
        }
        let tag = crate::output::counted_tag(if m.delete { "DELETE" } else { "UPDATE" }, n);
        Ok(match &m.returning {
            Some(r) => Output::Rows { columns: Arc::clone(&r.columns), rows: returned, tag },
            None => Output::Command(tag),
        })
    }
}

/// `row` as stored: its hidden last column, the row's id, kept by its
/// updates, added. Collected straight into the shared row, one allocation
/// of the exact size (a vector grown by the push, then copied into an
/// `Arc`, was three: a good part of an insert's own cost).
pub(super) fn with_row_id(row: &[Value], id: i64) -> Row {
    row.iter().cloned().chain(std::iter::once(Value::Int(id))).collect()
}
