//! What a statement produced, for the protocol to send.

use std::sync::Arc;

use snapscale_engine::catalog::Row;

use crate::plan::Column;

/// What a statement produced.
#[derive(Debug)]
pub enum Output {
    /// Rows (SELECT, SHOW, ... RETURNING) and the command tag.
    Rows { columns: Arc<[Column]>, rows: Vec<Row>, tag: String },
    /// A command tag only.
    Command(String),
    /// Nothing to answer: a statement that is part of another (an element
    /// of CREATE SCHEMA), whose tag comes at the end.
    Silent,
    /// COPY FROM STDIN started: feed `Conn::copy_data`, then
    /// `Conn::copy_done` or `Conn::copy_fail`.
    CopyIn { columns: usize, binary: bool },
    /// COPY TO STDOUT: these chunks of data, then the tag.
    CopyOut { columns: usize, lines: Vec<Vec<u8>>, tag: String, binary: bool },
    /// DEALLOCATE name (`None`: ALL): the protocol layer, which holds the
    /// prepared statements, removes them (26000 for an unknown name) and
    /// answers DEALLOCATE or DEALLOCATE ALL.
    Deallocate(Option<String>),
    /// PREPARE: the protocol layer keeps `statement` under `name` (42P05
    /// if the name is taken) and answers PREPARE.
    Prepared { name: String, statement: std::sync::Arc<crate::Prepared> },
    /// EXECUTE: the protocol layer runs its statement `name` with these
    /// arguments (text; `None` is NULL) and answers as that statement.
    ExecuteNamed { name: String, args: Vec<Option<String>> },
    /// DISCARD ALL ran in the session (settings reset, temporary tables
    /// dropped); the protocol layer closes every prepared statement and
    /// portal and answers DISCARD ALL.
    DiscardAll,
}

/// A command tag with a row count (`SELECT 1`, `UPDATE 3`): one statement
/// each, so written without the formatting machinery.
pub(crate) fn counted_tag(verb: &str, n: impl itoa::Integer) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    let mut tag = String::with_capacity(verb.len() + 1 + digits.len());
    tag.push_str(verb);
    tag.push(' ');
    tag.push_str(digits);
    tag
}
