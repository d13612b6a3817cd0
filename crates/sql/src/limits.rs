//! Defaults of the limits a statement runs under that more than one layer
//! needs (the settings, the session, the transaction's configuration); a
//! leaf module, so that none of them has to import another for a number.

/// temp_file_limit's default, in bytes. PostgreSQL's is -1 (no limit: its
/// spill files go to disk); what snapscale holds instead is memory every
/// session shares, so one statement gets at most 1GB of it unless its
/// session lifts the limit.
pub const DEFAULT_TEMP_FILE_LIMIT: u64 = 1 << 30;
