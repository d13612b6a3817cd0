//! Errors a lock request can end with.

use std::fmt;

use snapscale_sqlstate::SqlState;

use crate::mode::LockMode;
use crate::tag::LockTag;

/// Why a lock request failed. Every variant leaves the requester holding
/// nothing it did not hold before the request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockError {
    /// The requester's wait closed a cycle in the wait-for graph; it was
    /// chosen as the victim and its wait was removed.
    Deadlock {
        /// PostgreSQL-style detail: one line per session in the cycle.
        detail: String,
    },
    /// The wait lasted longer than `LockConfig::lock_timeout`.
    LockTimeout,
    /// A session slot outside `0..max_sessions` was passed in.
    SessionOutOfRange {
        /// The slot passed in.
        session: u32,
        /// The configured number of slots.
        max_sessions: u32,
    },
}

impl LockError {
    /// The SQLSTATE a server reports for this error.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            // The transaction is rolled back; a retry may succeed.
            LockError::Deadlock { .. } => SqlState::DEADLOCK_DETECTED,
            // As PostgreSQL reports lock_timeout.
            LockError::LockTimeout => SqlState::LOCK_NOT_AVAILABLE,
            // A caller bug, not a condition a client can fix.
            LockError::SessionOutOfRange { .. } => SqlState::INTERNAL_ERROR,
        }
    }

    /// The PostgreSQL `DETAIL` line, if the error has one.
    pub fn detail(&self) -> Option<&str> {
        match self {
            LockError::Deadlock { detail } => Some(detail),
            _ => None,
        }
    }
}

impl fmt::Display for LockError {
    /// The primary message, worded as PostgreSQL words it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Deadlock { .. } => f.write_str("deadlock detected"),
            LockError::LockTimeout => f.write_str("canceling statement due to lock timeout"),
            LockError::SessionOutOfRange { session, max_sessions } => {
                write!(f, "session slot {session} out of range (max_sessions = {max_sessions})")
            }
        }
    }
}

impl std::error::Error for LockError {}

/// PostgreSQL's DeadLockReport detail for a cycle of waits, one (waiter,
/// lock, mode) per step: one line per step, each blocked by the next
/// step's waiter.
pub(crate) fn deadlock_detail(cycle: &[(u32, LockTag, LockMode)]) -> String {
    let lines: Vec<String> = cycle
        .iter()
        .enumerate()
        .map(|(i, &(waiter, tag, mode))| {
            let blocker = cycle[(i + 1) % cycle.len()].0;
            format!("Process {waiter} waits for {mode} on {tag}; blocked by process {blocker}.")
        })
        .collect();
    lines.join("\n")
}
