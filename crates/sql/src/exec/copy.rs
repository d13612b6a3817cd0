//! COPY: TO STDOUT as one statement, and FROM STDIN as a sub-protocol of
//! the session (the rows arrive in CopyData messages until CopyDone).

use snapscale_storage::Tid;

use super::Executor;
use crate::catalog::Row;
use crate::error::SqlError;
use crate::expr::Expr;
use crate::output::Output;
use crate::plan::Rel;
use crate::sqlstate::SqlState;
use crate::types::Value;

/// A COPY FROM STDIN in progress.
pub(crate) struct CopyIn {
    rel: Rel,
    columns: Vec<usize>,
    defaults: Vec<(usize, Expr)>,
    /// Bytes of a row not yet ended by a newline.
    pub(crate) pending: Vec<u8>,
    pub(crate) rows: u64,
    /// `\.` was seen: the rest is ignored.
    ended: bool,
    line: u64,
}

impl CopyIn {
    pub(crate) fn new(rel: Rel, columns: Vec<usize>, defaults: Vec<(usize, Expr)>) -> CopyIn {
        CopyIn { rel, columns, defaults, pending: Vec::new(), rows: 0, ended: false, line: 0 }
    }
}

impl Executor<'_> {
    /// COPY … TO STDOUT: every visible row, in the text format.
    pub(crate) fn copy_to(&mut self, rel: &Rel, columns: &[usize]) -> Result<Output, SqlError> {
        let snapshot = self.xact.statement_snapshot()?;
        let rows: Vec<(Tid, Row)> = rel.heap.table.scan(&self.xact.session.reader(&snapshot));
        let lines: Vec<Vec<u8>> = rows
            .iter()
            .map(|(_, row)| {
                crate::copy::format_row(&columns.iter().map(|&c| row[c].clone()).collect::<Vec<_>>())
            })
            .collect();
        let tag = format!("COPY {}", lines.len());
        Ok(Output::CopyOut { columns: columns.len(), lines, tag })
    }

    /// Inserts the whole lines buffered in `copy` (and, `at_end`, the last
    /// unterminated one).
    pub(crate) async fn copy_lines(&mut self, copy: &mut CopyIn, at_end: bool) -> Result<(), SqlError> {
        loop {
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
            let (line_no, rel) = (copy.line, &copy.rel);
            let text = String::from_utf8(line).map_err(|_| {
                SqlError::new(
                    SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                    "invalid byte sequence for encoding \"UTF8\"",
                )
            })?;
            let fields = crate::copy::parse_line(&text)?;
            let context = |e: SqlError| {
                let message = format!("{} (COPY {}, line {line_no})", e.message, rel.entry.name);
                SqlError { message, ..e }
            };
            if fields.len() > copy.columns.len() {
                return Err(context(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    "extra data after last expected column",
                )));
            }
            if fields.len() < copy.columns.len() {
                let missing = &rel.entry.columns[copy.columns[fields.len()]].name;
                return Err(context(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    format!("missing data for column \"{missing}\""),
                )));
            }
            let mut row = vec![Value::Null; rel.entry.columns.len()];
            for (&c, f) in copy.columns.iter().zip(fields) {
                if let Some(f) = f {
                    row[c] = Value::parse(rel.entry.columns[c].ty, &f).map_err(context)?;
                }
            }
            if !copy.defaults.is_empty() {
                let cx = self.ctx(&[]);
                for (c, e) in &copy.defaults {
                    row[*c] = e.eval(&cx).map_err(context)?;
                }
            }
            self.insert_row(rel, Row::from(row)).await.map_err(context)?;
            copy.rows += 1;
        }
    }
}
