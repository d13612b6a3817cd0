//! MERGE (bind/merge.rs says what is bound): the unmatched source rows
//! are read first, then each matched pair, its target row locked and
//! re-checked, takes its first WHEN MATCHED clause whose condition holds;
//! then each unmatched row its first WHEN NOT MATCHED clause.

use std::collections::HashSet;

use snapscale_engine::catalog::Row;
use snapscale_engine::Tid;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::modify::Change;
use super::Executor;
use crate::output::Output;
use crate::plan::physical::Query;
use crate::plan::{MatchedAction, Merge};

impl Executor<'_> {
    pub(crate) async fn merge(&mut self, m: &Merge<Query>) -> Result<Output, SqlError> {
        self.ensure_snapshot()?;
        // Before any matched row changes: a row an UPDATE moves out of the
        // join is not then taken for an unmatched one.
        let unmatched = self.query(&m.unmatched).await?;
        let rows = self.query(&m.join).await?;
        let width = m.rel.entry.columns.len() + 1;
        // The target rows this MERGE changed, by row id: a second change
        // is PostgreSQL's 21000.
        let mut changed = HashSet::new();
        let mut n = 0u64;
        for row in rows {
            self.xact.check_cancel()?;
            let (Some(Value::Int(tid)), Some(Value::Int(row_id))) = (row.get(width), row.get(width - 1))
            else {
                return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a joined row without its target's tid"));
            };
            let clauses = &m.matched;
            let chosen = self
                .evaluate(|ex| {
                    let cx = ex.ctx(&row);
                    for (k, c) in clauses.iter().enumerate() {
                        let holds = match &c.cond {
                            None => true,
                            Some(e) => matches!(e.eval(&cx)?, Value::Bool(true)),
                        };
                        if holds {
                            return Ok(Some(k));
                        }
                    }
                    Ok(None)
                })
                .await?;
            let Some(k) = chosen else { continue };
            if matches!(m.matched[k].action, MatchedAction::Nothing) {
                continue;
            }
            if !changed.insert(*row_id) {
                return Err(SqlError::new(
                    SqlState::CARDINALITY_VIOLATION,
                    "MERGE command cannot affect row a second time",
                )
                .with_hint("Ensure that not more than one source row matches any one target row."));
            }
            let target = Row::from(&row[..width]);
            let done = match &m.matched[k].action {
                MatchedAction::Update(sets) => {
                    let values = self.set_values(sets, &row).await?;
                    self.change_row(&m.rel, None, *tid as Tid, target, Change::Update(&values, &m.checks))
                        .await
                        .map_err(merge_wording)?
                }
                MatchedAction::Delete => self
                    .change_row(&m.rel, None, *tid as Tid, target, Change::Delete)
                    .await
                    .map_err(merge_wording)?,
                MatchedAction::Nothing => None,
            };
            if done.is_some() {
                n += 1;
            }
        }
        for values in unmatched {
            self.xact.check_cancel()?;
            let chosen = m.not_matched.iter().find(|c| match c.cond {
                None => true,
                Some(at) => matches!(values.get(at), Some(Value::Bool(true))),
            });
            let Some((targets, outputs, defaults)) = chosen.and_then(|c| c.insert.as_ref()) else { continue };
            let row = self.new_row(&m.rel, targets, outputs.iter().map(|&o| &values[o]), defaults).await?;
            if self.insert_row(&m.rel, row, &m.checks).await?.is_some() {
                n += 1;
            }
        }
        Ok(Output::Command(crate::output::counted_tag("MERGE", n)))
    }
}

/// MERGE words a row its BEFORE triggers' statements changed as
/// PostgreSQL's MERGE does: one message for its UPDATE and DELETE actions.
fn merge_wording(e: SqlError) -> SqlError {
    if e.code != SqlState::TRIGGERED_DATA_CHANGE_VIOLATION {
        return e;
    }
    let message = "tuple to be updated or deleted was already modified by an operation triggered by the current command";
    SqlError::from(snapscale_values::ErrorData { message: message.into(), ..e.into_data() })
}
