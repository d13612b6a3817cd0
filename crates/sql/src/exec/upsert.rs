//! INSERT … ON CONFLICT: PostgreSQL's speculative insertion, done here as
//! one step under the arbiter indexes' unique-check mutexes (UNIQUE-CHECK
//! in the crate README). The mutexes are held from the search for a
//! conflicting row to the insertion of the new row and its arbiter
//! entries, so of two upserts of one key only one inserts: the other finds
//! its row (waiting for its transaction if it still runs) and does nothing
//! or updates it, never raising 23505. PostgreSQL inserts first and
//! withdraws its row on a conflict; the mutex makes the withdrawal
//! unnecessary.
//!
//! DO UPDATE locks the conflicting row FOR UPDATE first, whether or not
//! the statement's snapshot sees it (under READ COMMITTED a row committed
//! after the snapshot is still the one to update), then applies the SET
//! list over it and `excluded`. A row changed or deleted meanwhile sends
//! the search round again; under REPEATABLE READ a conflicting row the
//! transaction's snapshot does not see is 40001, as in PostgreSQL.

use std::collections::HashSet;

use snapscale_engine::catalog::Row;
use snapscale_engine::errors::storage_error;
use snapscale_engine::index::Key;
use snapscale_engine::redo::Redo;
use snapscale_engine::{IsolationLevel, Liveness, RowLockMode, Tid, Xid};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::modify::{check_not_null, Change};
use super::{serialization_failure, Executor};
use crate::expr::{passes, Expr};
use crate::plan::{ConflictAction, OnConflict, Rel, RowLock, TableCheck};
use snapscale_engine::triggers::{events, TriggerTiming};

/// What the search for a conflicting row found.
enum Probe {
    /// No conflict: the row is in, with its arbiter entries.
    Inserted(Tid, Row),
    /// This live version holds one of the keys.
    Conflict(Tid),
    /// A transaction still running inserted or deleted a version with one
    /// of the keys: wait for it, then search again.
    Wait(Xid),
}

impl Executor<'_> {
    /// Inserts `row` unless it conflicts; else does `on`'s action. The row
    /// inserted or updated, or `None` if nothing was (DO NOTHING, or DO
    /// UPDATE's WHERE false). `touched`: the rows this statement inserted
    /// or updated so far.
    pub(super) async fn upsert(
        &mut self,
        rel: &Rel,
        row: Row,
        checks: &[TableCheck],
        on: &OnConflict,
        touched: &mut HashSet<Tid>,
    ) -> Result<Option<Row>, SqlError> {
        // The proposed row is checked first, as PostgreSQL checks it before
        // its speculative insertion.
        check_not_null(&rel.entry, &row)?;
        self.check_row(&rel.entry, checks, &row).await?;
        self.xact.prepare_write()?;
        loop {
            self.xact.check_cancel()?;
            match self.probe_and_insert(rel, &row, &on.arbiters)? {
                Probe::Wait(x) => self.xact.wait_for_xid(x).await?,
                Probe::Inserted(tid, stored) => {
                    self.xact
                        .log_change(
                            &rel.entry,
                            Redo::Insert { storage: rel.entry.storage, row: stored.clone() },
                        )
                        .await?;
                    self.xact.touch(&rel.heap);
                    for (k, def) in rel.entry.indexes.iter().enumerate() {
                        if on.arbiters.contains(&k) {
                            continue;
                        }
                        let index = rel.heap.index(&rel.entry, def);
                        let Some(key) = index.key_of(&stored)? else { continue };
                        if index.unique {
                            self.insert_unique(rel, def, index, key, tid).await?;
                        } else {
                            index.insert(key, tid);
                        }
                    }
                    touched.insert(tid);
                    self.ri_inserted(rel, tid, &stored);
                    self.capture(rel, events::INSERT, None, Some(&stored));
                    if self.has_trigger(rel, TriggerTiming::After, true, events::INSERT) {
                        self.after_row(rel, events::INSERT, None, Some(&stored), None)?;
                    }
                    return Ok(Some(stored));
                }
                Probe::Conflict(tid) => match &on.action {
                    ConflictAction::Nothing => {
                        if !touched.contains(&tid) {
                            self.conflict_visible(rel, tid)?;
                        }
                        return Ok(None);
                    }
                    ConflictAction::Update { sets, filter } => {
                        if touched.contains(&tid) {
                            return Err(SqlError::new(
                                SqlState::CARDINALITY_VIOLATION,
                                "ON CONFLICT DO UPDATE command cannot affect row a second time",
                            )
                            .with_hint(
                                "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
                            ));
                        }
                        let Some(existing) = rel.peek(tid) else { continue };
                        let lock = Change::Lock(RowLock::Wait, RowLockMode::Update);
                        let Some((locked_tid, locked)) =
                            self.change_row(rel, None, tid, existing, lock).await?
                        else {
                            continue;
                        };
                        if locked_tid != tid {
                            // Updated meanwhile: its newest version may no
                            // longer hold the key. Search again (the lock
                            // stays ours).
                            continue;
                        }
                        self.conflict_visible(rel, tid)?;
                        let values = self
                            .evaluate(|ex| {
                                let both: Vec<Value> = locked.iter().chain(row.iter()).cloned().collect();
                                let cx = ex.ctx(&both);
                                if let Some(f) = filter {
                                    if !passes(f, &cx)? {
                                        return Ok(None);
                                    }
                                }
                                let values = sets
                                    .iter()
                                    .map(|(c, e)| Ok((*c, Expr::Const(e.eval(&cx)?))))
                                    .collect::<Result<Vec<_>, SqlError>>()?;
                                Ok(Some(values))
                            })
                            .await?;
                        let Some(values) = values else { return Ok(None) };
                        match self.change_row(rel, None, tid, locked, Change::Update(&values, checks)).await?
                        {
                            Some((new_tid, new)) => {
                                touched.insert(new_tid);
                                return Ok(Some(new));
                            }
                            None => continue,
                        }
                    }
                },
            }
        }
    }

    /// Searches the arbiter indexes for a version holding one of `row`'s
    /// keys and, finding none, inserts the row and its arbiter entries
    /// before letting go of their unique-check mutexes (UNIQUE-CHECK).
    fn probe_and_insert(&mut self, rel: &Rel, row: &Row, arbiters: &[usize]) -> Result<Probe, SqlError> {
        let indexes: Vec<_> =
            arbiters.iter().map(|&k| rel.heap.index(&rel.entry, &rel.entry.indexes[k])).collect();
        // An arbiter whose predicate leaves the row out cannot conflict
        // (PostgreSQL infers only those whose predicate the statement's
        // WHERE implies, which the row then satisfies).
        let mut keys: Vec<Key> = Vec::with_capacity(indexes.len());
        let mut keyed = Vec::with_capacity(indexes.len());
        for ix in &indexes {
            if let Some(key) = ix.key_of(row)? {
                keys.push(key);
                keyed.push(std::sync::Arc::clone(ix));
            }
        }
        let indexes = keyed;
        // Taken in index order by every upsert, one key per index, so two
        // upserts cannot wait for each other's mutexes.
        let _guards: Vec<_> = indexes
            .iter()
            .zip(&keys)
            .filter(|(ix, k)| ix.checks_unique(k))
            .map(|(ix, k)| ix.lock_unique(k))
            .collect();
        for (ix, key) in indexes.iter().zip(&keys) {
            if !ix.checks_unique(key) {
                continue;
            }
            for other in ix.lookup_prefix(&key.0) {
                // The tid may have been reused for another key.
                let Some(data) = rel.peek(other) else { continue };
                if !ix.row_has_key(&data, &key.0) {
                    continue;
                }
                match rel.heap.table.liveness(&self.xact.session, other) {
                    Liveness::Dead => {}
                    Liveness::Live => return Ok(Probe::Conflict(other)),
                    Liveness::Inserting(x) | Liveness::Deleting(x) => return Ok(Probe::Wait(x)),
                }
            }
        }
        let stored = super::modify::with_row_id(row, rel.heap.new_row_id());
        let tid = rel.heap.table.insert(&mut self.xact.session, stored.clone()).map_err(storage_error)?;
        for (ix, key) in indexes.iter().zip(keys) {
            ix.insert(key, tid);
        }
        Ok(Probe::Inserted(tid, stored))
    }

    /// Under REPEATABLE READ, a conflicting row the transaction's snapshot
    /// does not see is a serialization failure (PostgreSQL's
    /// ExecCheckTupleVisible); READ COMMITTED takes it as it is.
    fn conflict_visible(&mut self, rel: &Rel, tid: Tid) -> Result<(), SqlError> {
        if self.xact.isolation() != Some(IsolationLevel::RepeatableRead) {
            return Ok(());
        }
        let snapshot = self.xact.statement_snapshot()?;
        if rel.heap.table.fetch(&self.xact.session.reader(&snapshot), tid).is_none() {
            return Err(serialization_failure("update"));
        }
        Ok(())
    }
}
