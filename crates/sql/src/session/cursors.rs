//! SQL's cursor statements in a session: DECLARE, FETCH and MOVE (CLOSE
//! is a control statement); the cursors themselves are
//! [`crate::portals`]'.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::prepared::Planned;
use super::{aborted_block, Block, Conn, Gucs};
use crate::output::{counted_tag, Output};
use crate::plan::physical::Statement;
use crate::portals::{backward_capable, FetchStatement};
use crate::statement::DeclareCursor;

impl<G: Gucs> Conn<G> {
    /// DECLARE name … CURSOR … FOR query: the query runs now, under this
    /// statement's snapshot, and its rows become the cursor's
    /// (PORTAL-ROWS).
    pub(super) async fn declare(
        &mut self,
        declare: &DeclareCursor,
        planned: &Planned,
        params: &[Value],
    ) -> Result<Output, SqlError> {
        let Statement::Query(query) = &planned.statement else {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "SELECT ... INTO is not allowed here"));
        };
        let options = declare.options;
        if query.root.locks_rows() {
            if options.scroll == Some(true) {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "DECLARE SCROLL CURSOR ... FOR UPDATE is not supported",
                )
                .with_detail("Scrollable cursors must be READ ONLY."));
            }
            if options.hold {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "DECLARE CURSOR WITH HOLD ... FOR UPDATE is not supported",
                )
                .with_detail("Holdable cursors must be READ ONLY."));
            }
        }
        // As LOCK TABLE: a cursor its own transaction would close at once
        // is a mistake (a multi-statement message is one block).
        if !options.hold && self.block == Block::Implicit && !self.multi_statement {
            return Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "DECLARE CURSOR can only be used in transaction blocks",
            ));
        }
        if self.portals.contains(&declare.name) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{}\" already exists", declare.name),
            ));
        }
        let scroll = options.scroll.unwrap_or_else(|| backward_capable(&query.root));
        let slot = crate::exec::TidSlot::default();
        let out = self.run_planned(planned, params, Some(Arc::clone(&slot))).await?;
        let Output::Rows { columns, rows, .. } = out else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a cursor's query returned no rows"));
        };
        let captured = slot.lock().expect("cursor tids poisoned").take();
        let target = crate::portals::CursorTarget::of(query, captured, rows.len());
        let statement = Arc::clone(&self.query_text);
        let depth = self.xact.depth();
        self.portals.open(&declare.name, columns, rows, scroll, options, depth, statement)?;
        self.portals.set_target(&declare.name, target);
        Ok(Output::Command("DECLARE CURSOR".into()))
    }

    /// FETCH or MOVE.
    pub(super) fn fetch(&mut self, fetch: &FetchStatement) -> Result<Output, SqlError> {
        if self.block == Block::Failed {
            return Err(aborted_block());
        }
        self.ensure_transaction()?;
        let portal = self.portals.portal(&fetch.name)?;
        if portal.binary && !fetch.is_move {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "FETCH from a BINARY cursor is not supported: declare the cursor without BINARY",
            ));
        }
        let (rows, n) = portal.fetch(fetch.direction, !fetch.is_move)?;
        Ok(match fetch.is_move {
            true => Output::Command(counted_tag("MOVE", n)),
            false => {
                Output::Rows { columns: Arc::clone(&portal.columns), rows, tag: counted_tag("FETCH", n) }
            }
        })
    }
}
