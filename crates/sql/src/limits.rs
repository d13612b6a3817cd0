//! The limits a statement's work runs under, and their defaults, which
//! more than one module needs (the settings, the session, the binder, the
//! executor): kept apart so that none of them has to import another for
//! them.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use crate::stack::DEFAULT_MAX_STACK_DEPTH;

/// The most entries a target list (a select list, VALUES, RETURNING) may
/// have: PostgreSQL's MaxTupleAttributeNumber. The protocol counts a row's
/// columns in 16 bits, so a wider row could not be described at all.
pub(crate) const MAX_TARGET_LIST: usize = 1664;

/// The most columns a table may have (PostgreSQL's MaxHeapAttributeNumber).
pub(crate) const MAX_TABLE_COLUMNS: usize = 1600;

/// 54011 for a target list of `n` entries, PostgreSQL's words.
pub(crate) fn check_target_list(n: usize) -> Result<(), SqlError> {
    if n > MAX_TARGET_LIST {
        return Err(SqlError::new(
            SqlState::TOO_MANY_COLUMNS,
            format!("target lists can have at most {MAX_TARGET_LIST} entries"),
        ));
    }
    Ok(())
}

/// temp_file_limit's default, in bytes. PostgreSQL's is -1 (no limit: its
/// spill files go to disk); what snapscale holds instead is memory every
/// session shares, so one statement gets at most 1GB of it unless its
/// session lifts the limit.
pub const DEFAULT_TEMP_FILE_LIMIT: u64 = 1 << 30;

/// The limits a statement's execution reads, copied from the session's
/// settings before each statement (SET may change them between
/// statements). The transaction manager's own settings are its
/// `XactConfig`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StatementLimits {
    pub(crate) max_stack_depth: usize,
    pub(crate) max_message_size: usize,
    pub(crate) temp_file_limit: Option<u64>,
    /// default_statistics_target: ANALYZE's sample and lists.
    pub(crate) statistics_target: i32,
}

impl Default for StatementLimits {
    fn default() -> Self {
        StatementLimits {
            max_stack_depth: DEFAULT_MAX_STACK_DEPTH,
            max_message_size: 64 << 20,
            temp_file_limit: Some(DEFAULT_TEMP_FILE_LIMIT),
            statistics_target: snapscale_engine::analyze::DEFAULT_TARGET,
        }
    }
}
