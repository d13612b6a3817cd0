//! What the session functions read (`current_user`, `current_setting()`,
//! `currval`, the advisory lock functions): the session as the evaluator
//! sees it. The SQL session makes one after every change of its settings
//! and hands it to its transaction manager, which gives it to each
//! statement's evaluation.

use std::sync::Arc;

use snapscale_values::{SqlError, Style};

/// What the session functions read: the session's user and database, its
/// process id, and its settings as of the last SET (a SET re-makes it).
pub struct SessionView {
    pub user: String,
    pub database: String,
    pub pid: i32,
    /// TimeZone, DateStyle and IntervalStyle: how date and time text is
    /// read and shown.
    pub style: Style,
    /// search_path as the schemas' names, in order, `$user` replaced
    /// (REL-KEY: where names without a schema are looked for).
    pub search_path: std::sync::Arc<[String]>,
    /// SHOW name: the value, or the setting's SQLSTATE (42704 unknown).
    pub show: ShowSetting,
    /// `set_config(name, value, is_local)`: sets it for the rest of the
    /// statement (SHOW sees it at once) and asks the session to keep it
    /// once the statement succeeds; the value as SHOW prints it.
    pub set: SetSetting,
    /// Every setting, its value and its context (pg_settings).
    pub settings: Vec<(&'static str, String, &'static str)>,
    /// currval / lastval, and the sequence WAL a commit must wait for:
    /// kept across the views a session makes.
    pub sequences: Arc<std::sync::Mutex<crate::sequence::SessionSequences>>,
    /// The session's advisory locks; `None` where no lock manager is
    /// attached.
    pub advisory: Option<Arc<crate::advisory::SessionLocks>>,
    /// How many trigger functions deep the session is now
    /// (`pg_trigger_depth()`): raised around each trigger's call, kept
    /// across the views a session makes.
    pub trigger_depth: Arc<std::sync::atomic::AtomicU32>,
    /// The running transaction's isolation (`current_setting(
    /// 'transaction_isolation')`): 1 read committed, 2 repeatable read, 0
    /// before the first; set as each transaction begins, kept across the
    /// views a session makes.
    pub isolation: Arc<std::sync::atomic::AtomicU8>,
    /// session_replication_role is replica: the triggers that fire are
    /// those enabled REPLICA or ALWAYS.
    pub replica: bool,
}

/// A session's SHOW, as the evaluator calls it.
pub type ShowSetting = Box<dyn Fn(&str) -> Result<String, SqlError> + Send + Sync>;

/// A session's `set_config()`, as the evaluator calls it: name, value
/// (`None`: back to the value at connection, as RESET), is_local.
pub type SetSetting = Box<dyn Fn(&str, Option<&str>, bool) -> Result<String, SqlError> + Send + Sync>;

impl std::fmt::Debug for SessionView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionView").field("user", &self.user).field("database", &self.database).finish()
    }
}

/// One of the session's open cursors as pg_cursors shows it: the SQL
/// layer keeps the cursors and copies this much here when they change, for
/// the statements that read the view.
#[derive(Clone, Debug)]
pub struct OpenCursor {
    pub name: String,
    /// The query string that declared it.
    pub statement: Arc<str>,
    pub holdable: bool,
    pub binary: bool,
    pub scrollable: bool,
    /// When it was declared (microseconds since PostgreSQL's epoch).
    pub created: i64,
}
