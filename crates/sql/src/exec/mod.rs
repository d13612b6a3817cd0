//! The executor: runs plans against MVCC storage with PostgreSQL's
//! concurrent-update rules.
//!
//! A write that meets a row version changed by a running transaction
//! waits for it (through the lock manager, so deadlocks are detected) and
//! tries again. If that transaction committed an update, READ COMMITTED
//! follows the update chain to the newest version, re-checks the WHERE
//! clause on it and, if it still matches, changes that version (PostgreSQL's
//! EvalPlanQual); REPEATABLE READ fails with 40001 instead.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use snapscale_storage::{Liveness, Outcome, StorageError, Tid};
use snapscale_txn::{IsolationLevel, Session, Snapshot};

use crate::catalog::{Heap, RelEntry, Row};
use crate::conn::{txn_error, Conn, Gucs, Output};
use crate::copy;
use crate::durable::Redo;
use crate::error::SqlError;
use crate::expr::{compare, passes, AggFunc, Ctx, Expr};
use crate::index::{Index, Key};
use crate::plan::{
    Access, Delete, Grouping, Insert, InsertSource, Plan, Rel, RowLock, Scan, Select, SortKey, Update,
};
use crate::sqlstate::SqlState;
use crate::types::{SqlType, Value};

/// One group's key values and aggregate results.
type Group = (Vec<Value>, Vec<Value>);

/// A COPY FROM STDIN in progress.
pub(crate) struct CopyIn {
    rel: Rel,
    columns: Vec<usize>,
    pending: Vec<u8>,
    rows: u64,
    ended: bool,
    line: u64,
}

fn storage_error(e: StorageError) -> SqlError {
    match e {
        StorageError::Txn(e) => txn_error(e),
        StorageError::NoTransaction => {
            SqlError::new(SqlState::NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress")
        }
    }
}

fn serialization_failure(what: &str) -> SqlError {
    SqlError::new(
        SqlState::SERIALIZATION_FAILURE,
        format!("could not serialize access due to concurrent {what}"),
    )
}

/// What to do with a row found by a scan.
enum Change<'a> {
    Update(&'a [(usize, Expr)]),
    Delete,
    Lock(RowLock),
}

impl<G: Gucs> Conn<G> {
    fn ctx<'a>(&self, row: &'a [Value], params: &'a [Value]) -> Ctx<'a> {
        Ctx { row, params, aggs: &[], keys: &[], now: self.now, stack: self.stack_root() }
    }

    /// A recursion root for expression evaluation (`max_stack_depth`).
    fn stack_root(&self) -> crate::stack::StackDepth {
        crate::stack::StackDepth::here(self.gucs().max_stack_depth())
    }

    /// Runs a bound plan.
    pub(crate) async fn run(&mut self, plan: &Plan, params: &[Value]) -> Result<Output, SqlError> {
        match plan {
            Plan::Select(s) => {
                let rows = self.select(s, params).await?;
                let tag = format!("SELECT {}", rows.len());
                Ok(Output::Rows { columns: Arc::clone(&s.columns), rows, tag })
            }
            Plan::Insert(i) => self.insert(i, params).await,
            Plan::Update(u) => self.update(u, params).await,
            Plan::Delete(d) => self.delete(d, params).await,
            Plan::CreateTable(c) => self.create_table(c).await,
            Plan::DropTable(targets) => self.drop_tables(targets).await,
            Plan::AddIndex { rel, index, if_not_exists, tag } => {
                self.add_index(rel, index, *if_not_exists).await?;
                Ok(Output::Command((*tag).into()))
            }
            Plan::Truncate(rels) => self.truncate(rels),
            Plan::Vacuum { rels, analyze } => self.vacuum(rels, *analyze).await,
            Plan::Analyze => Ok(Output::Command("ANALYZE".into())),
            Plan::CopyFrom { rel, columns } => {
                self.statement_snapshot()?;
                self.copy = Some(CopyIn {
                    rel: rel.clone(),
                    columns: columns.clone(),
                    pending: Vec::new(),
                    rows: 0,
                    ended: false,
                    line: 0,
                });
                Ok(Output::CopyIn { columns: columns.len() })
            }
            Plan::CopyTo { rel, columns } => {
                let snapshot = self.statement_snapshot()?;
                let cid = self.cid();
                let rows = rel.heap.table.scan(&self.session, &snapshot, cid);
                let lines: Vec<Vec<u8>> = rows
                    .iter()
                    .map(|(_, row)| {
                        copy::format_row(&columns.iter().map(|&c| row[c].clone()).collect::<Vec<_>>())
                    })
                    .collect();
                let tag = format!("COPY {}", lines.len());
                Ok(Output::CopyOut { columns: columns.len(), lines, tag })
            }
        }
    }

    pub(crate) fn statement_snapshot(&mut self) -> Result<Arc<Snapshot>, SqlError> {
        self.session.statement_snapshot().map_err(txn_error)
    }

    pub(crate) fn cid(&self) -> u32 {
        self.session.command_id().unwrap_or(0)
    }

    /// Rows of `scan` visible to the statement snapshot that pass its filter.
    fn candidates(&mut self, scan: &Scan, params: &[Value]) -> Result<Vec<(Tid, Row)>, SqlError> {
        let snapshot = self.statement_snapshot()?;
        let cid = self.cid();
        let table = &scan.rel.heap.table;
        let found: Vec<(Tid, Row)> = match &scan.access {
            Access::Seq => table.scan(&self.session, &snapshot, cid),
            Access::IndexEq { index, probes } => {
                let cx = self.ctx(&[], params);
                let mut key = Vec::with_capacity(probes.len());
                for (i, p) in probes.iter().enumerate() {
                    let v = p.eval(&cx)?;
                    if matches!(v, Value::Null) {
                        return Ok(Vec::new());
                    }
                    key.push(index.normalize_probe(i, v));
                }
                let mut tids = index.lookup_prefix(&key);
                tids.sort_unstable();
                tids.dedup();
                tids.into_iter()
                    .filter_map(|t| table.fetch(&self.session, t, &snapshot, cid).map(|r| (t, r)))
                    .collect()
            }
            Access::IndexRange { index, lower, upper } => {
                let cx = self.ctx(&[], params);
                let bound = |b: &Bound<Expr>| -> Result<Option<Bound<Value>>, SqlError> {
                    Ok(Some(match b {
                        Bound::Unbounded => Bound::Unbounded,
                        Bound::Included(e) | Bound::Excluded(e) => {
                            let v = e.eval(&cx)?;
                            if matches!(v, Value::Null) {
                                return Ok(None);
                            }
                            let v = index.normalize_probe(0, v);
                            if matches!(b, Bound::Included(_)) {
                                Bound::Included(v)
                            } else {
                                Bound::Excluded(v)
                            }
                        }
                    }))
                };
                let (Some(lo), Some(hi)) = (bound(lower)?, bound(upper)?) else { return Ok(Vec::new()) };
                let mut tids = index.lookup_range(lo, hi);
                tids.sort_unstable();
                tids.dedup();
                tids.into_iter()
                    .filter_map(|t| table.fetch(&self.session, t, &snapshot, cid).map(|r| (t, r)))
                    .collect()
            }
        };
        let Some(filter) = &scan.filter else { return Ok(found) };
        let mut out = Vec::with_capacity(found.len());
        for (tid, row) in found {
            // Index paths re-check the whole filter: a tid may have been
            // reused for another row (see crate::index).
            if passes(filter, &self.ctx(&row, params))? {
                out.push((tid, row));
            }
        }
        Ok(out)
    }

    // ------------------------------------------------------------- SELECT

    pub(crate) async fn select(&mut self, s: &Select, params: &[Value]) -> Result<Vec<Vec<Value>>, SqlError> {
        let (offset, limit) = self.offset_limit(s, params)?;
        let mut input: Vec<Row> = match &s.scan {
            Some(scan) => {
                let found = self.candidates(scan, params)?;
                match s.lock {
                    None => found.into_iter().map(|(_, r)| r).collect(),
                    Some(how) => return self.select_locked(s, scan, how, found, offset, limit, params).await,
                }
            }
            None => vec![Arc::from(Vec::new())],
        };
        self.check_cancel()?;
        // (output values, sort key values)
        let mut out: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
        match &s.grouping {
            None => {
                for row in input.drain(..) {
                    let cx = self.ctx(&row, params);
                    let values = s.outputs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                    let keys = s.order.iter().map(|k| k.expr.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                    out.push((values, keys));
                }
            }
            Some(g) => {
                for (keys, aggs) in self.group(g, &input, params)? {
                    let cx = Ctx { aggs: &aggs, keys: &keys, ..self.ctx(&[], params) };
                    if let Some(h) = &g.having {
                        if !passes(h, &cx)? {
                            continue;
                        }
                    }
                    let values = s.outputs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                    let sort = s.order.iter().map(|k| k.expr.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                    out.push((values, sort));
                }
            }
        }
        sort_by_keys(&mut out, &s.order, |(_, keys)| keys)?;
        Ok(out.into_iter().skip(offset).take(limit).map(|(v, _)| v).collect())
    }

    /// SELECT … FOR UPDATE/SHARE. As in PostgreSQL, rows are locked in
    /// ORDER BY order below LIMIT and OFFSET: exactly the rows the query
    /// returns (and those OFFSET skips) are locked, a row whose newest
    /// version no longer matches does not count, and SKIP LOCKED moves on
    /// to the next row (`SELECT … LIMIT 1 FOR UPDATE SKIP LOCKED` takes
    /// one free job, not all of them).
    #[allow(clippy::too_many_arguments)]
    async fn select_locked(
        &mut self,
        s: &Select,
        scan: &Scan,
        how: RowLock,
        found: Vec<(Tid, Row)>,
        offset: usize,
        limit: usize,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut keyed = Vec::with_capacity(found.len());
        for (tid, row) in found {
            let cx = self.ctx(&row, params);
            let keys = s.order.iter().map(|k| k.expr.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
            keyed.push((keys, tid, row));
        }
        sort_by_keys(&mut keyed, &s.order, |(keys, _, _)| keys)?;
        let wanted = offset.saturating_add(limit);
        let mut out = Vec::new();
        let mut locked = 0;
        for (_, tid, row) in keyed {
            if locked >= wanted {
                break;
            }
            self.check_cancel()?;
            let Some((_, row)) = self.change_row(scan, tid, row, Change::Lock(how), params).await? else {
                continue;
            };
            locked += 1;
            if locked > offset {
                let cx = self.ctx(&row, params);
                out.push(s.outputs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?);
            }
        }
        Ok(out)
    }

    /// OFFSET and LIMIT of `s` (0 and unbounded when absent or NULL).
    fn offset_limit(&self, s: &Select, params: &[Value]) -> Result<(usize, usize), SqlError> {
        let cx = self.ctx(&[], params);
        let count = |e: &Option<Expr>, code: SqlState, what: &str| -> Result<Option<usize>, SqlError> {
            match e.as_ref().map(|e| e.eval(&cx)).transpose()? {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Int(n)) if n < 0 => {
                    Err(SqlError::new(code, format!("{what} must not be negative")))
                }
                Some(Value::Int(n)) => Ok(Some(n as usize)),
                Some(_) => Ok(None),
            }
        };
        let offset =
            count(&s.offset, SqlState::INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE, "OFFSET")?.unwrap_or(0);
        let limit =
            count(&s.limit, SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE, "LIMIT")?.unwrap_or(usize::MAX);
        Ok((offset, limit))
    }

    /// Groups `rows` and computes each group's aggregates.
    fn group(&self, g: &Grouping, rows: &[Row], params: &[Value]) -> Result<Vec<Group>, SqlError> {
        let mut groups: BTreeMap<Key, Vec<Acc>> = BTreeMap::new();
        if g.keys.is_empty() {
            groups.insert(Key(Vec::new()), g.aggs.iter().map(|_| Acc::default()).collect());
        }
        for row in rows {
            let cx = self.ctx(row, params);
            let key = Key(g.keys.iter().map(|k| k.eval(&cx)).collect::<Result<_, _>>()?);
            let accs = groups.entry(key).or_insert_with(|| g.aggs.iter().map(|_| Acc::default()).collect());
            for (acc, agg) in accs.iter_mut().zip(&g.aggs) {
                let v = match &agg.arg {
                    Some(e) => e.eval(&cx)?,
                    None => Value::Bool(true),
                };
                acc.add(agg.func, v)?;
            }
        }
        groups
            .into_iter()
            .map(|(k, accs)| {
                let aggs = accs
                    .into_iter()
                    .zip(&g.aggs)
                    .map(|(a, agg)| a.finish(agg.func, agg.ty))
                    .collect::<Result<_, _>>()?;
                Ok((k.0, aggs))
            })
            .collect()
    }

    // ---------------------------------------------------------------- DML

    async fn insert(&mut self, i: &Insert, params: &[Value]) -> Result<Output, SqlError> {
        let sources: Vec<Vec<Value>> = match &i.source {
            InsertSource::Values(rows) => {
                let cx = self.ctx(&[], params);
                rows.iter().map(|r| r.iter().map(|e| e.eval(&cx)).collect()).collect::<Result<_, _>>()?
            }
            InsertSource::Query(q) => Box::pin(self.select(q, params)).await?,
        };
        let mut returned = Vec::new();
        let n = sources.len();
        for values in sources {
            let mut row = vec![Value::Null; i.rel.entry.columns.len()];
            for (&t, v) in i.targets.iter().zip(values) {
                row[t] = v;
            }
            let row: Row = Arc::from(row);
            self.insert_row(&i.rel, row.clone()).await?;
            if let Some(r) = &i.returning {
                let cx = self.ctx(&row, params);
                returned.push(r.exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?);
            }
        }
        let tag = format!("INSERT 0 {n}");
        Ok(match &i.returning {
            Some(r) => Output::Rows { columns: Arc::clone(&r.columns), rows: returned, tag },
            None => Output::Command(tag),
        })
    }

    async fn update(&mut self, u: &Update, params: &[Value]) -> Result<Output, SqlError> {
        self.modify(&u.scan, Change::Update(&u.sets), u.returning.as_ref(), params, "UPDATE").await
    }

    async fn delete(&mut self, d: &Delete, params: &[Value]) -> Result<Output, SqlError> {
        self.modify(&d.scan, Change::Delete, d.returning.as_ref(), params, "DELETE").await
    }

    async fn modify(
        &mut self,
        scan: &Scan,
        change: Change<'_>,
        returning: Option<&crate::plan::Projection>,
        params: &[Value],
        verb: &str,
    ) -> Result<Output, SqlError> {
        let found = self.candidates(scan, params)?;
        let mut n = 0u64;
        let mut returned = Vec::new();
        for (tid, row) in found {
            self.check_cancel()?;
            let change = match &change {
                Change::Update(sets) => Change::Update(sets),
                Change::Delete => Change::Delete,
                Change::Lock(how) => Change::Lock(*how),
            };
            if let Some((_, row)) = self.change_row(scan, tid, row, change, params).await? {
                n += 1;
                if let Some(r) = returning {
                    let cx = self.ctx(&row, params);
                    returned.push(r.exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?);
                }
            }
        }
        let tag = format!("{verb} {n}");
        Ok(match returning {
            Some(r) => Output::Rows { columns: Arc::clone(&r.columns), rows: returned, tag },
            None => Output::Command(tag),
        })
    }

    /// Applies `change` to the row at `tid`, following PostgreSQL's rules
    /// for concurrent changes (see the module documentation). Returns the
    /// row as changed (the new row for an update, the row for a delete or
    /// lock), or `None` if the row is gone or no longer matches.
    async fn change_row(
        &mut self,
        scan: &Scan,
        mut tid: Tid,
        mut row: Row,
        change: Change<'_>,
        params: &[Value],
    ) -> Result<Option<(Tid, Row)>, SqlError> {
        let rel = &scan.rel;
        let table = &rel.heap.table;
        self.prepare_write()?;
        loop {
            let new_row = match &change {
                Change::Update(sets) => {
                    let cx = self.ctx(&row, params);
                    let mut new: Vec<Value> = row.to_vec();
                    for (c, e) in sets.iter() {
                        new[*c] = e.eval(&cx)?;
                    }
                    check_not_null(&rel.entry, &new)?;
                    Some(Row::from(new))
                }
                _ => None,
            };
            let outcome = match (&change, &new_row) {
                (Change::Update(_), Some(new)) => table.update(&mut self.session, tid, new.clone()),
                (Change::Delete, _) => table.delete(&mut self.session, tid),
                _ => table.lock_row(&mut self.session, tid),
            }
            .map_err(storage_error)?;
            match outcome {
                Outcome::Ok(new_tid) => {
                    if let Some(new) = new_row {
                        self.redo(&rel.entry, Redo::Update { storage: rel.entry.storage, row: new.clone() });
                        // Relaxed: a pruning heuristic.
                        rel.heap.changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        self.touch(&rel.heap);
                        self.index_new_version(rel, &row, &new, new_tid).await?;
                        return Ok(Some((new_tid, new)));
                    }
                    if matches!(change, Change::Delete) {
                        if let Some(Value::Int(row_id)) = row.last() {
                            self.redo(
                                &rel.entry,
                                Redo::Delete { storage: rel.entry.storage, row_id: *row_id },
                            );
                        }
                        // Relaxed: a pruning heuristic.
                        rel.heap.changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        self.touch(&rel.heap);
                    }
                    return Ok(Some((tid, row)));
                }
                Outcome::Invisible | Outcome::SelfModified => return Ok(None),
                Outcome::BeingModified(xid) => match change {
                    Change::Lock(RowLock::NoWait) => {
                        return Err(SqlError::new(
                            SqlState::LOCK_NOT_AVAILABLE,
                            format!("could not obtain lock on row in relation \"{}\"", rel.entry.name),
                        ))
                    }
                    Change::Lock(RowLock::SkipLocked) => return Ok(None),
                    _ => self.wait_for_xid(xid).await?,
                },
                Outcome::Updated { .. } | Outcome::Deleted(_) => {
                    if self.session.isolation() == Some(IsolationLevel::RepeatableRead) {
                        return Err(serialization_failure(if matches!(outcome, Outcome::Deleted(_)) {
                            "delete"
                        } else {
                            "update"
                        }));
                    }
                    if matches!(outcome, Outcome::Deleted(_)) {
                        return Ok(None);
                    }
                    // READ COMMITTED: the newest committed version, if it
                    // still matches, is the one to change.
                    let Some((latest, newest)) = table.latest(&self.session, tid) else { return Ok(None) };
                    if latest == tid {
                        return Ok(None);
                    }
                    if let Some(filter) = &scan.filter {
                        if !passes(filter, &self.ctx(&newest, params))? {
                            return Ok(None);
                        }
                    }
                    tid = latest;
                    row = newest;
                }
            }
        }
    }

    /// Adds index entries for a new version (after an update), checking
    /// unique keys that changed.
    async fn index_new_version(&mut self, rel: &Rel, old: &Row, new: &Row, tid: Tid) -> Result<(), SqlError> {
        for def in &rel.entry.indexes {
            let index = rel.heap.index(&rel.entry, def);
            let key = index.key_of(new);
            if index.unique && key != index.key_of(old) {
                self.insert_unique(rel, &index, &def.name, key, tid).await?;
            } else {
                index.insert(key, tid);
            }
        }
        Ok(())
    }

    /// Inserts a row and its index entries.
    pub(crate) async fn insert_row(&mut self, rel: &Rel, row: Row) -> Result<Tid, SqlError> {
        check_not_null(&rel.entry, &row)?;
        self.prepare_write()?;
        // The hidden last column: the row's id, kept by its updates.
        let mut stored = row.to_vec();
        stored.push(Value::Int(rel.heap.new_row_id()));
        let row = Row::from(stored);
        let tid = rel.heap.table.insert(&mut self.session, row.clone()).map_err(storage_error)?;
        self.redo(&rel.entry, Redo::Insert { storage: rel.entry.storage, row: row.clone() });
        self.touch(&rel.heap);
        for def in &rel.entry.indexes {
            let index = rel.heap.index(&rel.entry, def);
            let key = index.key_of(&row);
            if index.unique {
                self.insert_unique(rel, &index, &def.name, key, tid).await?;
            } else {
                index.insert(key, tid);
            }
        }
        Ok(tid)
    }

    /// Adds a unique key: another live version with the key is 23505; one
    /// whose inserter or deleter is still running is waited for, then the
    /// check repeats (PostgreSQL's _bt_check_unique).
    async fn insert_unique(
        &mut self,
        rel: &Rel,
        index: &Index,
        name: &str,
        key: Key,
        tid: Tid,
    ) -> Result<(), SqlError> {
        if key.has_null() {
            index.insert(key, tid);
            return Ok(());
        }
        loop {
            let wait = {
                let _check = index.lock_unique();
                let mut wait = None;
                for other in index.lookup_prefix(&key.0) {
                    if other == tid {
                        continue;
                    }
                    // The tid may have been reused for another key.
                    let Some(data) = rel.heap.table.peek(other) else { continue };
                    if index.key_of(&data) != key {
                        continue;
                    }
                    match rel.heap.table.liveness(&self.session, other) {
                        Liveness::Dead => {}
                        Liveness::Live => return Err(duplicate(rel, index, name, &key)),
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
                Some(x) => self.wait_for_xid(x).await?,
            }
        }
    }

    // --------------------------------------------------------------- COPY

    /// COPY FROM STDIN data.
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<(), SqlError> {
        let Some(copy) = self.copy.as_mut() else {
            return Err(SqlError::new(SqlState::PROTOCOL_VIOLATION, "unexpected COPY data"));
        };
        copy.pending.extend_from_slice(data);
        let mut result = self.copy_lines(false).await;
        // What is left is one unfinished row: bounded like a message, so a
        // client cannot grow it without end.
        let limit = self.gucs().max_message_size();
        if let (Ok(()), Some(copy)) = (&result, &self.copy) {
            if copy.pending.len() > limit {
                result = Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "COPY row is too long")
                    .with_detail(format!("A row of COPY data exceeds max_message_size ({} bytes).", limit)));
            }
        }
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// End of COPY FROM STDIN data.
    pub async fn copy_done(&mut self) -> Result<Output, SqlError> {
        let result = self.copy_lines(true).await;
        let result = match result {
            Ok(()) => {
                let copy = self.copy.take().expect("a COPY is in progress");
                self.end_statement().map(|()| Output::Command(format!("COPY {}", copy.rows)))
            }
            Err(e) => Err(e),
        };
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// The client gave up the COPY.
    pub fn copy_fail(&mut self, message: &str) -> SqlError {
        self.fail();
        SqlError::new(SqlState::QUERY_CANCELED, format!("COPY from stdin failed: {message}"))
    }

    /// True while a COPY FROM STDIN is in progress.
    pub fn copying(&self) -> bool {
        self.copy.is_some()
    }

    async fn copy_lines(&mut self, at_end: bool) -> Result<(), SqlError> {
        loop {
            let copy = self
                .copy
                .as_mut()
                .ok_or_else(|| SqlError::new(SqlState::PROTOCOL_VIOLATION, "unexpected COPY data"))?;
            if copy.ended {
                copy.pending.clear();
                return Ok(());
            }
            let line: Vec<u8> = match copy.pending.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    let mut line: Vec<u8> = copy.pending.drain(..=end).collect();
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    line
                }
                None if at_end && !copy.pending.is_empty() => std::mem::take(&mut copy.pending),
                None => return Ok(()),
            };
            copy.line += 1;
            if line == b"\\." {
                copy.ended = true;
                continue;
            }
            let line_no = copy.line;
            let rel = copy.rel.clone();
            let columns = copy.columns.clone();
            let text = String::from_utf8(line).map_err(|_| {
                SqlError::new(
                    SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                    "invalid byte sequence for encoding \"UTF8\"",
                )
            })?;
            let fields = copy::parse_line(&text)?;
            let context = |e: SqlError| {
                let message = format!("{} (COPY {}, line {line_no})", e.message, rel.entry.name);
                SqlError { message, ..e }
            };
            if fields.len() > columns.len() {
                return Err(context(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    "extra data after last expected column",
                )));
            }
            if fields.len() < columns.len() {
                let missing = &rel.entry.columns[columns[fields.len()]].name;
                return Err(context(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    format!("missing data for column \"{missing}\""),
                )));
            }
            let mut row = vec![Value::Null; rel.entry.columns.len()];
            for (&c, f) in columns.iter().zip(fields) {
                if let Some(f) = f {
                    row[c] = Value::parse(rel.entry.columns[c].ty, &f).map_err(context)?;
                }
            }
            self.insert_row(&rel, Row::from(row)).await.map_err(context)?;
            self.copy.as_mut().expect("still copying").rows += 1;
        }
    }

    // ------------------------------------------------------------- VACUUM

    async fn vacuum(&mut self, rels: &[Rel], _analyze: bool) -> Result<Output, SqlError> {
        if self.block == crate::conn::Block::Open {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "VACUUM cannot run inside a transaction block",
            ));
        }
        let rels: Vec<Rel> = if rels.is_empty() {
            let mut all = Vec::new();
            for (_, entry) in self.catalog_entries()? {
                if entry.temp_owner.is_some_and(|o| o != self.id) {
                    continue;
                }
                if let Some(heap) = self.db.storage(entry.storage) {
                    all.push((entry, heap));
                }
            }
            all.into_iter().map(|(entry, heap)| Rel { entry, heap, catalog_tid: 0 }).collect()
        } else {
            rels.to_vec()
        };
        for rel in &rels {
            self.check_cancel()?;
            vacuum_heap(&mut self.session, &rel.heap);
        }
        Ok(Output::Command("VACUUM".into()))
    }
}

/// Prunes a heap: removes versions no snapshot can see and their index
/// entries, before their tids can be reused.
pub(crate) fn vacuum_heap(session: &mut Session, heap: &Heap) -> usize {
    let indexes = heap.all_indexes();
    heap.table.vacuum_with(session, |dead| {
        for ix in &indexes {
            for (tid, row) in dead {
                ix.remove(&ix.key_of(row), *tid);
            }
        }
    })
}

/// Sorts `items` by ORDER BY keys (`keys_of` finds an item's key values):
/// NULLs last ascending and first descending unless NULLS FIRST/LAST says
/// otherwise; a comparison error (incomparable values) is returned.
fn sort_by_keys<T>(
    items: &mut [T],
    order: &[SortKey],
    keys_of: impl Fn(&T) -> &Vec<Value>,
) -> Result<(), SqlError> {
    if order.is_empty() {
        return Ok(());
    }
    let mut err = None;
    items.sort_by(|a, b| {
        let (a, b) = (keys_of(a), keys_of(b));
        for (i, k) in order.iter().enumerate() {
            let (x, y) = (&a[i], &b[i]);
            let o = match (matches!(x, Value::Null), matches!(y, Value::Null)) {
                (true, true) => Ordering::Equal,
                (true, false) if k.nulls_first => Ordering::Less,
                (true, false) => Ordering::Greater,
                (false, true) if k.nulls_first => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    let o = compare(x, y, true).unwrap_or_else(|e| {
                        err = Some(e);
                        Ordering::Equal
                    });
                    if k.desc {
                        o.reverse()
                    } else {
                        o
                    }
                }
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn duplicate(rel: &Rel, index: &Index, name: &str, key: &Key) -> SqlError {
    let cols: Vec<&str> = index.columns.iter().map(|&c| rel.entry.columns[c].name.as_str()).collect();
    let vals: Vec<String> = key.0.iter().map(|v| v.to_text().unwrap_or_else(|| "null".into())).collect();
    SqlError::new(
        SqlState::UNIQUE_VIOLATION,
        format!("duplicate key value violates unique constraint \"{name}\""),
    )
    .with_detail(format!("Key ({})=({}) already exists.", cols.join(", "), vals.join(", ")))
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
            ));
        }
    }
    Ok(())
}

/// One aggregate's running state.
#[derive(Default)]
struct Acc {
    count: i64,
    int_sum: i128,
    float_sum: f64,
    extreme: Option<Value>,
}

impl Acc {
    fn add(&mut self, func: AggFunc, v: Value) -> Result<(), SqlError> {
        if matches!(v, Value::Null) {
            return Ok(());
        }
        self.count += 1;
        match func {
            AggFunc::CountStar | AggFunc::Count => {}
            AggFunc::Sum | AggFunc::Avg => match v {
                Value::Int(i) => {
                    self.int_sum += i128::from(i);
                    self.float_sum += i as f64;
                }
                Value::Float(f) => self.float_sum += f,
                _ => {}
            },
            AggFunc::Min | AggFunc::Max => {
                let replace = match &self.extreme {
                    None => true,
                    Some(cur) => {
                        let o = compare(&v, cur, true)?;
                        if func == AggFunc::Min {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        }
                    }
                };
                if replace {
                    self.extreme = Some(v);
                }
            }
        }
        Ok(())
    }

    fn finish(self, func: AggFunc, ty: SqlType) -> Result<Value, SqlError> {
        Ok(match func {
            AggFunc::CountStar | AggFunc::Count => Value::Int(self.count),
            _ if self.count == 0 => Value::Null,
            AggFunc::Sum if ty == SqlType::Int8 => {
                Value::Int(i64::try_from(self.int_sum).map_err(|_| SqlError::out_of_range("bigint"))?)
            }
            AggFunc::Sum => Value::Float(self.float_sum),
            AggFunc::Avg => Value::Float(self.float_sum / self.count as f64),
            AggFunc::Min | AggFunc::Max => self.extreme.unwrap_or(Value::Null),
        })
    }
}
