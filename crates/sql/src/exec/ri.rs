//! Foreign keys enforced (PostgreSQL's RI triggers, in Rust): the rows a
//! statement inserts, updates and deletes queue work here as they change
//! (`Executor::change_row`, `insert_row`), and the work runs when the
//! statement's own changes are done, as PostgreSQL's AFTER triggers do:
//!
//! * a new or changed referencing key must be present: the referenced row
//!   is found through a unique index of its table and locked FOR KEY
//!   SHARE, so a concurrent delete of it (or a change of its key) waits
//!   for this transaction, while a change of its other columns does not;
//! * a referenced row deleted or re-keyed: the rows referencing its old
//!   key (through an index of the referencing table when one starts with
//!   the key's columns, else by a scan, as PostgreSQL does) make it an
//!   error (NO ACTION, RESTRICT), or are deleted, re-keyed, set to NULL or
//!   to their defaults, whose own changes queue more work.
//!
//! Rows inserted or deleted by transactions still running are waited for
//! and the search repeated. A cycle of cascades ends: a row already
//! deleted is not deleted again.

use std::collections::VecDeque;
use std::sync::Arc;

use snapscale_engine::catalog::{FkAction, ForeignKeyDef, Row};
use snapscale_engine::{Liveness, RowLockMode, Tid};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::modify::{schema_of, Change};
use super::Executor;
use crate::expr::Expr;
use crate::plan::{ForeignKeys, Rel, RowLock};

/// A statement's queue of foreign-key work.
pub(crate) struct Ri {
    fks: Arc<ForeignKeys>,
    queue: VecDeque<Work>,
}

enum Work {
    /// Table `table`'s row `row` (at `tid`) holds the key of its foreign
    /// key `fk`. `put_off`: the check was deferred, and the row may have
    /// changed or gone since (RI-DEFER).
    Check { table: usize, fk: usize, tid: Tid, row: Row, put_off: bool },
    /// Table `table`'s row `old` was deleted (`new` is `None`) or changed
    /// into `new`, under the foreign key `incoming` that references it.
    Parent { table: usize, incoming: usize, old: Row, new: Option<Row> },
}

impl Ri {
    pub(crate) fn new(fks: Arc<ForeignKeys>) -> Option<Ri> {
        (!fks.tables.is_empty()).then(|| Ri { fks, queue: VecDeque::new() })
    }

    /// The foreign key a piece of work is for, and whether its check may
    /// be put off (a referencing key's presence, or NO ACTION on the
    /// referenced side: PostgreSQL defers no other referential action).
    fn deferrable(&self, work: &Work) -> (&ForeignKeyDef, bool) {
        match work {
            Work::Check { table, fk, .. } => (&self.fks.tables[*table].outgoing[*fk].0, true),
            Work::Parent { table, incoming, new, .. } => {
                let fk = &self.fks.tables[*table].incoming[*incoming].fk;
                let action = if new.is_some() { fk.on_update } else { fk.on_delete };
                (fk, action == FkAction::NoAction)
            }
        }
    }
}

/// Which deferrable foreign keys are deferred now: SET CONSTRAINTS ALL
/// and SET CONSTRAINTS name (by oid; the latest word wins) over each
/// key's INITIALLY DEFERRED.
#[derive(Clone, Debug, Default)]
pub(crate) struct Deferral {
    pub all: Option<bool>,
    pub named: Vec<(u32, bool)>,
}

impl Deferral {
    pub(crate) fn deferred(&self, fk: &ForeignKeyDef) -> bool {
        fk.deferrable
            && self
                .named
                .iter()
                .rev()
                .find(|(oid, _)| *oid == fk.oid)
                .map(|(_, d)| *d)
                .or(self.all)
                .unwrap_or(fk.initially_deferred)
    }
}

/// Foreign-key work put off to COMMIT or SET CONSTRAINTS … IMMEDIATE.
pub(crate) struct Pending {
    fks: Arc<ForeignKeys>,
    work: Work,
}

impl Pending {
    /// Whether its foreign key is deferred under `deferral`.
    pub(crate) fn deferred_under(&self, deferral: &Deferral) -> bool {
        let ri = Ri { fks: Arc::clone(&self.fks), queue: VecDeque::new() };
        deferral.deferred(ri.deferrable(&self.work).0)
    }
}

fn key(row: &[Value], columns: &[usize]) -> Vec<Value> {
    columns.iter().map(|&c| row[c].clone()).collect()
}

fn text(key: &[Value]) -> String {
    key.iter().map(|v| v.to_text().unwrap_or_else(|| "null".into())).collect::<Vec<_>>().join(", ")
}

fn names(rel: &Rel, columns: &[usize]) -> String {
    columns.iter().map(|&c| rel.entry.columns[c].name.as_str()).collect::<Vec<_>>().join(", ")
}

impl Executor<'_> {
    /// A row inserted into `rel` at `tid`.
    pub(super) fn ri_inserted(&mut self, rel: &Rel, tid: Tid, new: &Row) {
        self.ri_queue(rel, None, Some((tid, new)));
    }

    /// A row of `rel` updated from `old` into `new` (at `tid`).
    pub(super) fn ri_updated(&mut self, rel: &Rel, old: &Row, tid: Tid, new: &Row) {
        self.ri_queue(rel, Some(old), Some((tid, new)));
    }

    /// A row of `rel` deleted.
    pub(super) fn ri_deleted(&mut self, rel: &Rel, old: &Row) {
        self.ri_queue(rel, Some(old), None);
    }

    fn ri_queue(&mut self, rel: &Rel, old: Option<&Row>, new: Option<(Tid, &Row)>) {
        let Some(ri) = &mut self.ri else { return };
        let Some(t) = ri.fks.table(rel.entry.oid) else { return };
        let table = &ri.fks.tables[t];
        if let Some((tid, new)) = new {
            for (k, (fk, _)) in table.outgoing.iter().enumerate() {
                if old.is_some_and(|old| key(old, &fk.columns) == key(new, &fk.columns)) {
                    continue;
                }
                ri.queue.push_back(Work::Check { table: t, fk: k, tid, row: new.clone(), put_off: false });
            }
        }
        let new = new.map(|(_, n)| n);
        if let Some(old) = old {
            for (k, inc) in table.incoming.iter().enumerate() {
                if new.is_some_and(|new| key(old, &inc.fk.parent_columns) == key(new, &inc.fk.parent_columns))
                {
                    continue;
                }
                ri.queue.push_back(Work::Parent {
                    table: t,
                    incoming: k,
                    old: old.clone(),
                    new: new.cloned(),
                });
            }
        }
    }

    /// Runs the queued work (and what it queues) to the end, but for the
    /// checks of deferred foreign keys, which go to `self.put_off`.
    pub(crate) async fn ri_finish(&mut self) -> Result<(), SqlError> {
        loop {
            let Some(ri) = &mut self.ri else { return Ok(()) };
            let fks = Arc::clone(&ri.fks);
            let Some(mut work) = ri.queue.pop_front() else { return Ok(()) };
            if let Some(deferral) = &self.deferral {
                let (fk, may) = ri.deferrable(&work);
                if may && deferral.deferred(fk) {
                    if let Work::Check { put_off, .. } = &mut work {
                        *put_off = true;
                    }
                    self.put_off.push(Pending { fks, work });
                    continue;
                }
            }
            self.xact.check_cancel()?;
            // Each piece of work is a command of its own (PostgreSQL's
            // CommandCounterIncrement between triggers): what the ones
            // before it changed is there for it to change again.
            self.xact.end_statement()?;
            match work {
                Work::Check { table, fk, tid, row, put_off } => {
                    let t = &fks.tables[table];
                    let (def, parent) = &t.outgoing[fk];
                    // RI-DEFER: a row checked late is checked as it is now
                    // (its latest version, if it is still there and still
                    // holds the key; else there is nothing to check).
                    let row = match put_off {
                        false => Some(row),
                        true => t
                            .rel
                            .latest(&self.xact.session, tid)
                            .filter(|(at, _)| {
                                matches!(t.rel.heap.table.liveness(&self.xact.session, *at), Liveness::Live)
                            })
                            .map(|(_, now)| now)
                            .filter(|now| key(now, &def.columns) == key(&row, &def.columns)),
                    };
                    if let Some(row) = row {
                        self.ri_check(&t.rel, def, parent, &row).await?;
                    }
                }
                Work::Parent { table, incoming, old, new } => {
                    self.ri_parent(&fks, table, incoming, &old, new.as_ref()).await?;
                }
            }
        }
    }

    /// Runs work put off earlier (COMMIT, SET CONSTRAINTS … IMMEDIATE),
    /// each piece as a statement's foreign-key work, none put off again.
    pub(crate) async fn ri_run_pending(&mut self, pending: Vec<Pending>) -> Result<(), SqlError> {
        let deferral = self.deferral.take();
        let mut result = Ok(());
        for Pending { fks, work } in pending {
            // A check put off whose foreign key was dropped since (DROP
            // TABLE … CASCADE of the table it references) is no more.
            if let Work::Check { table, fk, .. } = &work {
                let t = &fks.tables[*table];
                let oid = t.outgoing[*fk].0.oid;
                let kept = self.xact.relation_by_oid(t.rel.entry.oid)?;
                if !kept.is_some_and(|rel| rel.entry.foreign_keys.iter().any(|f| f.oid == oid)) {
                    continue;
                }
            }
            self.ri = Some(Ri { fks, queue: VecDeque::from([work]) });
            result = self.ri_finish().await;
            if result.is_err() {
                break;
            }
        }
        self.deferral = deferral;
        result
    }

    /// `row` of `child` holds the key of `fk`: the referenced row must be
    /// there; it is locked FOR KEY SHARE.
    pub(super) async fn ri_check(
        &mut self,
        child: &Rel,
        fk: &ForeignKeyDef,
        parent: &Rel,
        row: &Row,
    ) -> Result<(), SqlError> {
        let k = key(row, &fk.columns);
        let nulls = k.iter().filter(|v| matches!(v, Value::Null)).count();
        if nulls == k.len() {
            return Ok(());
        }
        let violation = |detail: String| {
            SqlError::new(
                SqlState::FOREIGN_KEY_VIOLATION,
                format!(
                    "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                    child.entry.name, fk.name
                ),
            )
            .with_detail(detail)
            .on_table(schema_of(&child.entry), &child.entry.name)
            .on_constraint(&fk.name)
        };
        if nulls > 0 {
            if fk.match_full {
                return Err(violation(
                    "MATCH FULL does not allow mixing of null and nonnull key values.".into(),
                ));
            }
            return Ok(());
        }
        loop {
            match self.ri_find(parent, &fk.parent_columns, &k, true)? {
                Found::Wait(x) => self.xact.wait_for_xid(x).await?,
                Found::Rows(rows) if rows.is_empty() => {
                    return Err(violation(format!(
                        "Key ({})=({}) is not present in table \"{}\".",
                        names(child, &fk.columns),
                        text(&k),
                        parent.entry.name
                    )))
                }
                Found::Rows(rows) => {
                    let (tid, version) = rows.into_iter().next().expect("not empty");
                    let lock = Change::Lock(RowLock::Wait, RowLockMode::KeyShare);
                    if self.change_row(parent, None, tid, version, lock).await?.is_some() {
                        return Ok(());
                    }
                    // This transaction's own row (made or changed by this
                    // very statement) needs no lock; another's that went
                    // away sends the search round again.
                    if matches!(parent.heap.table.liveness(&self.xact.session, tid), Liveness::Live) {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The row `old` of table `table` was deleted or changed into `new`;
    /// the rows of the foreign key `incoming` that referenced its key.
    async fn ri_parent(
        &mut self,
        fks: &ForeignKeys,
        table: usize,
        incoming: usize,
        old: &Row,
        new: Option<&Row>,
    ) -> Result<(), SqlError> {
        let t = &fks.tables[table];
        let inc = &t.incoming[incoming];
        let (fk, child) = (&inc.fk, &inc.child);
        let old_key = key(old, &fk.parent_columns);
        if old_key.iter().any(|v| matches!(v, Value::Null)) {
            return Ok(());
        }
        let action = if new.is_some() { fk.on_update } else { fk.on_delete };
        // NO ACTION: another row holding the key now (this statement put
        // one back) keeps the references valid.
        if action == FkAction::NoAction {
            if let Found::Rows(rows) = self.ri_find(&t.rel, &fk.parent_columns, &old_key, false)? {
                if !rows.is_empty() {
                    return Ok(());
                }
            }
        }
        loop {
            let rows = match self.ri_find(child, &fk.columns, &old_key, false)? {
                Found::Wait(x) => {
                    self.xact.wait_for_xid(x).await?;
                    continue;
                }
                Found::Rows(rows) => rows,
            };
            for (tid, row) in rows {
                match action {
                    FkAction::NoAction | FkAction::Restrict => {
                        return Err(SqlError::new(
                            SqlState::FOREIGN_KEY_VIOLATION,
                            format!(
                                "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                                t.rel.entry.name, fk.name, child.entry.name
                            ),
                        )
                        .with_detail(format!(
                            "Key ({})=({}) is still referenced from table \"{}\".",
                            names(&t.rel, &fk.parent_columns),
                            text(&old_key),
                            child.entry.name
                        ))
                        .on_table(schema_of(&child.entry), &child.entry.name)
                        .on_constraint(&fk.name));
                    }
                    FkAction::Cascade if new.is_none() => {
                        self.change_row(child, None, tid, row, Change::Delete).await?;
                    }
                    _ => {
                        let values: Vec<Value> = match (action, new) {
                            (FkAction::Cascade, Some(new)) => key(new, &fk.parent_columns),
                            (FkAction::SetNull, _) => vec![Value::Null; fk.columns.len()],
                            _ => {
                                let defaults = &inc.defaults;
                                self.evaluate(|ex| {
                                    let cx = ex.ctx(&[]);
                                    defaults.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()
                                })
                                .await?
                            }
                        };
                        // ON DELETE SET … (columns) sets only those.
                        let only = |c: &usize| {
                            new.is_some()
                                || fk.delete_set_columns.is_empty()
                                || fk.delete_set_columns.contains(c)
                        };
                        let sets: Vec<(usize, Expr)> = fk
                            .columns
                            .iter()
                            .copied()
                            .zip(values.into_iter().map(Expr::Const))
                            .filter(|(c, _)| only(c))
                            .collect();
                        let checks = fks.table(child.entry.oid).map_or(&[][..], |c| &fks.tables[c].checks);
                        self.change_row(child, None, tid, row, Change::Update(&sets, checks)).await?;
                    }
                }
            }
            return Ok(());
        }
    }

    /// The live versions of `rel` whose `columns` hold `key` (through an
    /// index whose leading columns are those, else by a scan), or a
    /// transaction to wait for first. `to_lock`: the versions are to be
    /// locked FOR KEY SHARE, and one a running transaction is changing is
    /// as good as a live one (the lock waits if the change conflicts: a
    /// change of other columns does not), so only a version still being
    /// inserted, with none besides it, is waited for here.
    fn ri_find(
        &mut self,
        rel: &Rel,
        columns: &[usize],
        key: &[Value],
        to_lock: bool,
    ) -> Result<Found, SqlError> {
        let table = &rel.heap.table;
        let index = rel.entry.indexes.iter().find(|i| {
            !i.computed()
                && i.columns.len() >= columns.len()
                && snapscale_engine::catalog::same_columns(&i.columns[..columns.len()], columns)
        });
        let candidates: Vec<Tid> = match index {
            Some(def) => {
                let ix = rel.heap.index(&rel.entry, def);
                // The key in the index's column order.
                let probe: Vec<Value> = def.columns[..columns.len()]
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let at = columns.iter().position(|x| x == c).expect("same columns");
                        ix.normalize_probe(i, key[at].clone())
                    })
                    .collect();
                ix.lookup_prefix(&probe)
            }
            None => table.all_versions().into_iter().map(|(tid, _)| tid).collect(),
        };
        let mut out = Vec::new();
        let mut inserting = None;
        for tid in candidates {
            let Some(data) = rel.peek(tid) else { continue };
            let same =
                columns.iter().zip(key).all(|(&c, k)| data[c].compare(k) == Some(std::cmp::Ordering::Equal));
            if !same {
                continue;
            }
            match table.liveness(&self.xact.session, tid) {
                Liveness::Dead => {}
                Liveness::Live => out.push((tid, data)),
                Liveness::Deleting(_) if to_lock => out.push((tid, data)),
                Liveness::Inserting(x) if to_lock => inserting = inserting.or(Some(x)),
                // A referencing row another transaction is still inserting
                // is not there for a referenced row's change, as it is not
                // in the snapshot of PostgreSQL's RI query: an immediate
                // check of it has locked the referenced row already (so
                // this change waited for it), a deferred one finds the
                // referenced row gone at COMMIT.
                Liveness::Inserting(_) => {}
                Liveness::Deleting(x) => return Ok(Found::Wait(x)),
            }
        }
        match inserting {
            Some(x) if out.is_empty() => Ok(Found::Wait(x)),
            _ => Ok(Found::Rows(out)),
        }
    }
}

enum Found {
    Rows(Vec<(Tid, Row)>),
    Wait(snapscale_engine::Xid),
}
