//! Triggers fired (TRIGGER-FIRE in the crate README): where a statement's
//! row changes call a table's triggers, and in what order.
//!
//! The executor does not run trigger functions itself: PL/pgSQL runs SQL
//! through the executor, so the executor reaches it through
//! [`TriggerHost`], which the session (or PL/pgSQL, for the statements a
//! function runs) lends each statement together with the transaction.
//!
//! Per statement, as in PostgreSQL:
//!
//! * BEFORE STATEMENT triggers fire before its first row is read;
//! * per row, BEFORE ROW triggers fire in name order, each given the NEW
//!   row the previous one returned; one returning NULL skips the row. An
//!   UPDATE's or DELETE's row is locked first (its newest version, EPQ), so
//!   a trigger fires once per row and sees what will be changed;
//! * AFTER ROW triggers are queued with the row's OLD and NEW (their WHEN
//!   evaluated then) and fire once the statement's own changes and its
//!   foreign-key work are done, in the order the rows changed; then AFTER
//!   STATEMENT triggers.
//!
//! A trigger's function runs its statements in the same transaction: each
//! bumps the command counter, so the statement that fired it sees their
//! changes only through its own later reads. While it runs, the firing
//! statement's snapshot stays registered (it must keep holding back the
//! horizon), and is its statement snapshot again afterwards.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use snapscale_engine::catalog::Row;
use snapscale_engine::triggers::{events, TransitionTable, TriggerDef, TriggerTiming};
use snapscale_engine::xact::Xact;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::Executor;
use crate::plan::Rel;

/// A future a [`TriggerHost`] returns.
pub(crate) type Fired<'a, T> = Pin<Box<dyn Future<Output = Result<T, SqlError>> + Send + 'a>>;

/// One call of a trigger.
pub(crate) struct TriggerCall<'a> {
    pub rel: &'a Rel,
    pub trigger: &'a TriggerDef,
    /// The event ([`events`] bit).
    pub event: u8,
    /// The row's columns (no row id) before and after, where the event
    /// has them.
    pub old: Option<&'a [Value]>,
    pub new: Option<&'a [Value]>,
    /// The queued rows `old` and `new` were cut from (AFTER ROW): a
    /// trigger function shares one that is just the columns as its OLD or
    /// NEW instead of copying its values.
    pub queued: (Option<&'a Row>, Option<&'a Row>),
}

/// What runs trigger functions for the executor, and the PL/pgSQL calls
/// its expressions make per row (PL-ROW-CALLS).
pub(crate) trait TriggerHost: Send {
    /// Calls PL/pgSQL function `routine` with `args`.
    fn call<'a>(
        &'a mut self,
        xact: &'a mut Xact,
        routine: &'a std::sync::Arc<snapscale_engine::catalog::RelEntry>,
        args: Vec<Value>,
    ) -> Fired<'a, Value>;

    /// Whether `call`'s trigger's WHEN condition holds for its rows.
    fn when(&mut self, xact: &mut Xact, call: &TriggerCall<'_>) -> Result<bool, SqlError>;

    /// Calls the trigger's function: for a BEFORE ROW trigger, the row to
    /// go on with (`None`: skip it); otherwise what it returned is
    /// ignored.
    fn fire<'a>(&'a mut self, xact: &'a mut Xact, call: TriggerCall<'a>) -> Fired<'a, Option<Vec<Value>>>;
}

/// A queued AFTER ROW event.
pub(crate) struct AfterRow {
    /// Its table: an index into [`AfterQueue::rels`].
    rel: usize,
    trigger: usize,
    event: u8,
    old: Option<Row>,
    new: Option<Row>,
}

/// The AFTER ROW calls a statement queued, in order: in chunks, so that a
/// statement changing many rows never copies the queue to grow it.
#[derive(Default)]
pub(crate) struct AfterQueue {
    chunks: Vec<Vec<AfterRow>>,
    /// The tables of the queued events, each once for a run of events on
    /// it (a statement's rows are of one table: not a clone per row).
    rels: Vec<Rel>,
}

/// How many calls a chunk of the queue holds at most (each chunk twice
/// the one before, from 8: a one-row statement allocates little).
const AFTER_CHUNK: usize = 4096;

impl AfterQueue {
    /// Where `rel` is in [`rels`](Self::rels): the last one, if it is.
    fn rel(&mut self, rel: &Rel) -> usize {
        match self.rels.last() {
            Some(last) if Arc::ptr_eq(&last.entry, &rel.entry) && Arc::ptr_eq(&last.heap, &rel.heap) => {}
            _ => self.rels.push(rel.clone()),
        }
        self.rels.len() - 1
    }

    fn push(&mut self, a: AfterRow) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < last.capacity() => last.push(a),
            _ => {
                let size = (8usize << self.chunks.len().min(9)).min(AFTER_CHUNK);
                let mut chunk = Vec::with_capacity(size);
                chunk.push(a);
                self.chunks.push(chunk);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// The rows a statement changed in a table whose AFTER triggers have
/// transition tables for the event (TRIGGER-FIRE).
pub(crate) struct Captured {
    oid: u32,
    event: u8,
    old: Vec<Row>,
    new: Vec<Row>,
}

/// Whether `rel` has AFTER triggers with transition tables for `event`.
fn captures(rel: &Rel, event: u8, replica: bool) -> bool {
    rel.entry.triggers.iter().any(|t| {
        t.timing == TriggerTiming::After
            && t.events & event != 0
            && t.fires_as(replica)
            && (t.old_table.is_some() || t.new_table.is_some())
    })
}

/// Whether `t` fires for `event` at `timing` and `row` level, given the
/// columns an UPDATE sets.
fn applies(
    t: &TriggerDef,
    timing: TriggerTiming,
    row: bool,
    event: u8,
    set: Option<&[usize]>,
    rel: &Rel,
    replica: bool,
) -> bool {
    t.timing == timing
        && t.row == row
        && t.events & event != 0
        && t.fires_as(replica)
        && (event != events::UPDATE
            || t.columns.is_empty()
            || set.is_none_or(|set| {
                t.columns.iter().any(|c| rel.entry.column(c).is_some_and(|k| set.contains(&k)))
            }))
}

/// Whether `rel` has a trigger for `event` at `timing` and `row` level
/// that fires in a session of replication role `replica` (or not).
fn has_as(rel: &Rel, timing: TriggerTiming, row: bool, event: u8, replica: bool) -> bool {
    !rel.entry.triggers.is_empty()
        && rel
            .entry
            .triggers
            .iter()
            .any(|t| t.timing == timing && t.row == row && t.events & event != 0 && t.fires_as(replica))
}

impl Executor<'_> {
    /// Whether the session's session_replication_role is replica.
    fn replica(&self) -> bool {
        self.xact.session_view.as_ref().is_some_and(|v| v.replica)
    }

    /// Whether `rel` has a trigger for `event` at `timing` and `row` level
    /// that fires in this session.
    pub(super) fn has_trigger(&self, rel: &Rel, timing: TriggerTiming, row: bool, event: u8) -> bool {
        !rel.entry.triggers.is_empty() && has_as(rel, timing, row, event, self.replica())
    }

    /// Keeps a changed row for its table's transition tables, if it has
    /// any for `event`.
    pub(super) fn capture(&mut self, rel: &Rel, event: u8, old: Option<&Row>, new: Option<&Row>) {
        if rel.entry.triggers.is_empty() || !captures(rel, event, self.replica()) {
            return;
        }
        let width = rel.entry.columns.len();
        let at = match self.captured.iter().position(|c| c.oid == rel.entry.oid && c.event == event) {
            Some(at) => at,
            None => {
                let empty = Captured { oid: rel.entry.oid, event, old: Vec::new(), new: Vec::new() };
                self.captured.push(empty);
                self.captured.len() - 1
            }
        };
        let c = &mut self.captured[at];
        if let Some(o) = old {
            c.old.push(Row::from(&o[..width]));
        }
        if let Some(n) = new {
            c.new.push(Row::from(&n[..width]));
        }
    }

    /// The transition tables trigger `t` of `rel` reads, as its statement
    /// captured them.
    fn transition_tables(&self, rel: &Rel, t: &TriggerDef, event: u8) -> Vec<TransitionTable> {
        let mut out = Vec::new();
        if t.old_table.is_none() && t.new_table.is_none() {
            return out;
        }
        let columns: Vec<_> = rel.entry.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
        let captured = self.captured.iter().find(|c| c.oid == rel.entry.oid && c.event == event);
        for (name, rows) in
            [(&t.old_table, captured.map(|c| &c.old)), (&t.new_table, captured.map(|c| &c.new))]
        {
            if let Some(name) = name {
                let rows = std::sync::Arc::new(rows.cloned().unwrap_or_default());
                out.push(TransitionTable { name: name.clone(), columns: columns.clone(), rows });
            }
        }
        out
    }

    /// Fires `call`'s trigger through the host with its transition tables
    /// in place and the statement's snapshot kept.
    async fn fire_now(&mut self, call: TriggerCall<'_>) -> Result<Option<Vec<Value>>, SqlError> {
        let tables = self.transition_tables(call.rel, call.trigger, call.event);
        let pushed = tables.len();
        self.xact.transition_tables.extend(tables);
        let held = self.xact.hold_statement_snapshot()?;
        let host = self.triggers.as_deref_mut().expect("checked by the caller");
        self.xact.in_use.push(call.rel.entry.oid);
        let fired = host.fire(self.xact, call).await;
        self.xact.in_use.pop();
        let restored = self.xact.restore_statement_snapshot(held);
        let keep = self.xact.transition_tables.len() - pushed;
        self.xact.transition_tables.truncate(keep);
        restored?;
        fired
    }

    /// Runs `call` with the statement's snapshot kept (TRIGGER-FIRE).
    async fn call_trigger(&mut self, call: TriggerCall<'_>) -> Result<Option<Vec<Value>>, SqlError> {
        let Some(host) = self.triggers.as_deref_mut() else {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("trigger \"{}\" cannot fire here", call.trigger.name),
            ));
        };
        if !host.when(self.xact, &call)? {
            return Ok(call.new.map(<[Value]>::to_vec));
        }
        self.fire_now(call).await
    }

    /// BEFORE ROW triggers of `event` on `rel`: the row to store (without
    /// its row id), or `None` if one of them skipped it.
    pub(super) async fn before_row(
        &mut self,
        rel: &Rel,
        event: u8,
        old: Option<&[Value]>,
        new: Option<Vec<Value>>,
        set: Option<&[usize]>,
    ) -> Result<Option<Option<Vec<Value>>>, SqlError> {
        self.row_triggers(rel, TriggerTiming::Before, event, old, new, set).await
    }

    /// A view's INSTEAD OF triggers of `event` for one row: `None` if one
    /// of them did nothing (returned NULL), else the row they gave (NEW's
    /// last value; OLD for a DELETE).
    pub(super) async fn instead_row(
        &mut self,
        view: &Rel,
        event: u8,
        old: Option<&[Value]>,
        new: Option<Vec<Value>>,
    ) -> Result<Option<Vec<Value>>, SqlError> {
        let fired = self.row_triggers(view, TriggerTiming::InsteadOf, event, old, new, None).await?;
        Ok(match (fired, old) {
            (None, _) => None,
            (Some(Some(row)), _) => Some(row),
            (Some(None), Some(old)) => Some(old.to_vec()),
            (Some(None), None) => None,
        })
    }

    /// The row triggers of `event` at `timing` in name order, each given
    /// the NEW row the one before returned.
    async fn row_triggers(
        &mut self,
        rel: &Rel,
        timing: TriggerTiming,
        event: u8,
        old: Option<&[Value]>,
        mut new: Option<Vec<Value>>,
        set: Option<&[usize]>,
    ) -> Result<Option<Option<Vec<Value>>>, SqlError> {
        let width = rel.entry.columns.len();
        let replica = self.replica();
        for trigger in &rel.entry.triggers {
            if !applies(trigger, timing, true, event, set, rel, replica) {
                continue;
            }
            let call = TriggerCall {
                rel,
                trigger,
                event,
                old: old.map(|o| &o[..width]),
                new: new.as_deref(),
                queued: (None, None),
            };
            let returned = self.call_trigger(call).await?;
            match returned {
                None => return Ok(None),
                Some(row) if event == events::DELETE => drop(row),
                Some(row) => new = Some(row),
            }
        }
        Ok(Some(new))
    }

    /// Queues the AFTER ROW triggers of `event` for a changed row whose
    /// WHEN holds.
    pub(super) fn after_row(
        &mut self,
        rel: &Rel,
        event: u8,
        old: Option<&Row>,
        new: Option<&Row>,
        set: Option<&[usize]>,
    ) -> Result<(), SqlError> {
        let width = rel.entry.columns.len();
        let replica = self.replica();
        for (k, trigger) in rel.entry.triggers.iter().enumerate() {
            if !applies(trigger, TriggerTiming::After, true, event, set, rel, replica) {
                continue;
            }
            let Some(host) = self.triggers.as_deref_mut() else {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("trigger \"{}\" cannot fire here", trigger.name),
                ));
            };
            let call = TriggerCall {
                rel,
                trigger,
                event,
                old: old.map(|o| &o[..width]),
                new: new.map(|n| &n[..width]),
                queued: (None, None),
            };
            if host.when(self.xact, &call)? {
                let rel = self.after.rel(rel);
                self.after.push(AfterRow { rel, trigger: k, event, old: old.cloned(), new: new.cloned() });
            }
        }
        Ok(())
    }

    /// Fires the queued AFTER ROW triggers, in the order their rows
    /// changed.
    pub(super) async fn fire_after_rows(&mut self) -> Result<(), SqlError> {
        while !self.after.is_empty() {
            let queued = std::mem::take(&mut self.after);
            for a in queued.chunks.iter().flatten() {
                let rel = &queued.rels[a.rel];
                let width = rel.entry.columns.len();
                let call = TriggerCall {
                    rel,
                    trigger: &rel.entry.triggers[a.trigger],
                    event: a.event,
                    old: a.old.as_ref().map(|o| &o[..width]),
                    new: a.new.as_ref().map(|n| &n[..width]),
                    queued: (a.old.as_ref(), a.new.as_ref()),
                };
                self.fire_now(call).await?;
            }
        }
        Ok(())
    }

    /// Fires `rel`'s statement-level triggers of `event` at `timing`.
    pub(super) async fn statement_triggers(
        &mut self,
        rel: &Rel,
        timing: TriggerTiming,
        event: u8,
        set: Option<&[usize]>,
    ) -> Result<(), SqlError> {
        if !self.has_trigger(rel, timing, false, event) {
            return Ok(());
        }
        let replica = self.replica();
        for trigger in &rel.entry.triggers {
            if applies(trigger, timing, false, event, set, rel, replica) {
                let call = TriggerCall { rel, trigger, event, old: None, new: None, queued: (None, None) };
                self.call_trigger(call).await?;
            }
        }
        Ok(())
    }
}

/// PostgreSQL's 27000 for a row a BEFORE trigger's own statements changed
/// under the statement that fired it.
pub(super) fn changed_by_trigger(delete: bool) -> SqlError {
    let what = if delete { "deleted" } else { "updated" };
    SqlError::new(
        SqlState::TRIGGERED_DATA_CHANGE_VIOLATION,
        format!("tuple to be {what} was already modified by an operation triggered by the current command"),
    )
    .with_hint(
        "Consider using an AFTER trigger instead of a BEFORE trigger to propagate changes to other rows.",
    )
}
