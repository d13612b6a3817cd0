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

use snapscale_engine::catalog::Row;
use snapscale_engine::triggers::{events, TriggerDef, TriggerTiming};
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
}

/// What runs trigger functions for the executor.
pub(crate) trait TriggerHost: Send {
    /// Whether `call`'s trigger's WHEN condition holds for its rows.
    fn when(&mut self, xact: &mut Xact, call: &TriggerCall<'_>) -> Result<bool, SqlError>;

    /// Calls the trigger's function: for a BEFORE ROW trigger, the row to
    /// go on with (`None`: skip it); otherwise what it returned is
    /// ignored.
    fn fire<'a>(&'a mut self, xact: &'a mut Xact, call: TriggerCall<'a>) -> Fired<'a, Option<Vec<Value>>>;
}

/// A queued AFTER ROW event.
pub(crate) struct AfterRow {
    rel: Rel,
    trigger: usize,
    event: u8,
    old: Option<Row>,
    new: Option<Row>,
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
) -> bool {
    t.timing == timing
        && t.row == row
        && t.events & event != 0
        && t.fires()
        && (event != events::UPDATE
            || t.columns.is_empty()
            || set.is_none_or(|set| {
                t.columns.iter().any(|c| rel.entry.column(c).is_some_and(|k| set.contains(&k)))
            }))
}

/// Whether `rel` has a trigger for `event` at `timing` and `row` level.
pub(crate) fn has(rel: &Rel, timing: TriggerTiming, row: bool, event: u8) -> bool {
    !rel.entry.triggers.is_empty()
        && rel
            .entry
            .triggers
            .iter()
            .any(|t| t.timing == timing && t.row == row && t.events & event != 0 && t.fires())
}

impl Executor<'_> {
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
        let held = self.xact.hold_statement_snapshot()?;
        let fired = host.fire(self.xact, call).await;
        self.xact.restore_statement_snapshot(held)?;
        fired
    }

    /// BEFORE ROW triggers of `event` on `rel`: the row to store (without
    /// its row id), or `None` if one of them skipped it.
    pub(super) async fn before_row(
        &mut self,
        rel: &Rel,
        event: u8,
        old: Option<&[Value]>,
        mut new: Option<Vec<Value>>,
        set: Option<&[usize]>,
    ) -> Result<Option<Option<Vec<Value>>>, SqlError> {
        let width = rel.entry.columns.len();
        for trigger in &rel.entry.triggers {
            if !applies(trigger, TriggerTiming::Before, true, event, set, rel) {
                continue;
            }
            let call =
                TriggerCall { rel, trigger, event, old: old.map(|o| &o[..width]), new: new.as_deref() };
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
        for (k, trigger) in rel.entry.triggers.iter().enumerate() {
            if !applies(trigger, TriggerTiming::After, true, event, set, rel) {
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
            };
            if host.when(self.xact, &call)? {
                self.after.push(AfterRow {
                    rel: rel.clone(),
                    trigger: k,
                    event,
                    old: old.cloned(),
                    new: new.cloned(),
                });
            }
        }
        Ok(())
    }

    /// Fires the queued AFTER ROW triggers, in the order their rows
    /// changed.
    pub(super) async fn fire_after_rows(&mut self) -> Result<(), SqlError> {
        while !self.after.is_empty() {
            let queued = std::mem::take(&mut self.after);
            for a in &queued {
                let width = a.rel.entry.columns.len();
                let call = TriggerCall {
                    rel: &a.rel,
                    trigger: &a.rel.entry.triggers[a.trigger],
                    event: a.event,
                    old: a.old.as_ref().map(|o| &o[..width]),
                    new: a.new.as_ref().map(|n| &n[..width]),
                };
                let held = self.xact.hold_statement_snapshot()?;
                let host = self.triggers.as_deref_mut().expect("queued with a host");
                let fired = host.fire(self.xact, call).await;
                self.xact.restore_statement_snapshot(held)?;
                fired?;
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
    ) -> Result<(), SqlError> {
        if !has(rel, timing, false, event) {
            return Ok(());
        }
        for trigger in &rel.entry.triggers {
            if applies(trigger, timing, false, event, None, rel) {
                self.call_trigger(TriggerCall { rel, trigger, event, old: None, new: None }).await?;
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
