//! The advisory lock functions: `pg_advisory_lock`, `pg_try_advisory_lock`,
//! `pg_advisory_unlock`, their `_shared` and `_xact_` variants, and
//! `pg_advisory_unlock_all`, over the session's [`SessionLocks`].
//!
//! A key is one bigint, or two integers (a different lock from any bigint
//! key's); the functions are strict, so a NULL key takes no lock and
//! returns NULL. A blocking call that cannot be granted at once stops the
//! evaluation for the executor to wait and run it again (EVAL-REPLAY).
//!
//! [`SessionLocks`]: snapscale_engine::advisory::SessionLocks

use snapscale_engine::{LockMode, LockTag};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::{Ctx, Func, Pending};

/// One of the advisory lock functions: what it does, in which mode, held
/// by whom.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Advisory {
    pub op: AdvisoryOp,
    /// ShareLock (`_shared`), else ExclusiveLock.
    pub shared: bool,
    /// Held by the transaction (`_xact_`), else by the session.
    pub xact: bool,
}

/// What an advisory lock function does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AdvisoryOp {
    /// `pg_advisory_lock`: waits until granted; returns void.
    Lock,
    /// `pg_try_advisory_lock`: true if granted at once, false otherwise.
    TryLock,
    /// `pg_advisory_unlock`: true if a session-level hold was dropped.
    Unlock,
    /// `pg_advisory_unlock_all`: drops every session-level hold.
    UnlockAll,
}

impl Advisory {
    /// Whether a call may wait (and so needs a [`Replay`] journal).
    pub fn waits(self) -> bool {
        self.op == AdvisoryOp::Lock
    }
}

/// void's one value.
fn void() -> Value {
    Value::Text(String::new())
}

pub(super) fn call(a: Advisory, args: &[Value], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let locks = cx.session.and_then(|s| s.advisory.as_deref()).ok_or_else(|| {
        SqlError::new(SqlState::INTERNAL_ERROR, "advisory locks need a session attached to a lock manager")
    })?;
    if a.op == AdvisoryOp::UnlockAll {
        locks.unlock_all();
        return Ok(void());
    }
    let tag = match args {
        [Value::Int(key)] => LockTag::advisory_bigint(*key),
        // The binder coerced both to integer, so they fit.
        [Value::Int(k1), Value::Int(k2)] => LockTag::advisory_pair(*k1 as i32, *k2 as i32),
        _ if args.iter().any(|v| matches!(v, Value::Null)) => return Ok(Value::Null),
        _ => return Err(SqlError::new(SqlState::INTERNAL_ERROR, "an advisory lock key of the wrong type")),
    };
    let mode = if a.shared { LockMode::Share } else { LockMode::Exclusive };
    Ok(match a.op {
        AdvisoryOp::TryLock => Value::Bool(locks.try_take(tag, mode, a.xact)?),
        AdvisoryOp::Unlock => Value::Bool(locks.unlock(tag, mode)),
        AdvisoryOp::Lock if locks.try_take(tag, mode, a.xact)? => void(),
        AdvisoryOp::Lock => {
            let replay = cx.replay.ok_or_else(|| {
                SqlError::new(
                    SqlState::INTERNAL_ERROR,
                    "EVAL-REPLAY: a blocking advisory lock outside a journal",
                )
            })?;
            let pending = Pending { func: Func::Advisory(a), args: args.to_vec(), tag, mode, xact: a.xact };
            return Err(replay.stop_for(pending));
        }
        AdvisoryOp::UnlockAll => unreachable!("handled above"),
    })
}
