//! Running an evaluation again after a wait, without doing its volatile
//! calls twice (EVAL-REPLAY in the crate README).
//!
//! Expressions are evaluated synchronously, but `pg_advisory_lock` may
//! have to wait, and a wait must not block a runtime worker. So a blocking
//! advisory-lock call that cannot be granted at once does not wait: it
//! stops the evaluation with a pending request. The executor, which is
//! async, waits for that lock in the lock manager (queue order, deadlock
//! detection, lock_timeout, cancel), then runs the same evaluation again.
//! Everything the first run did that must not happen twice, or that
//! could answer differently the second time, is a call of a volatile
//! function (`Func::is_volatile`): the journal keeps each such call's
//! arguments and result in order, and the second run takes the results
//! from it, the waited-for lock's included, and carries on live from there.
//!
//! Replaying is exact because an evaluation is a function of its inputs:
//! the statement's snapshot (the same for the whole statement), its
//! parameters, the subplans' cached rows and the catalog it read once, and
//! the results of its volatile calls. The one input that may change
//! between runs is a computed view of live state (pg_locks,
//! pg_stat_activity); if that changes which volatile calls are made, the
//! journal notices (each call is checked against the one it replays) and
//! the statement fails with 0A000 rather than take a lock twice or not at
//! all.
//!
//! A journal exists only for a statement that has a blocking call (the
//! binder knows): other statements make their volatile calls directly and
//! keep nothing.

use std::sync::Mutex;

use snapscale_engine::{LockMode, LockTag};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::Func;

impl Func {
    /// A function whose call does something, or may answer differently
    /// each time within a statement: what an evaluation run again after a
    /// wait must not call again (EVAL-REPLAY, [`Replay`]).
    pub fn is_volatile(self) -> bool {
        matches!(
            self,
            Func::NextVal
                | Func::PlRow(_)
                | Func::SequenceRow
                | Func::CurrVal
                | Func::SetVal
                | Func::LastVal
                | Func::ClockTimestamp
                | Func::ReloadConf
                | Func::Advisory(_)
        ) || matches!(self, Func::Scalar(s) if s.volatile)
    }
}

/// The volatile calls of one evaluation so far, and the lock it stopped
/// for.
#[derive(Debug, Default)]
pub struct Replay {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Each volatile call made, in order: the function, its arguments,
    /// its result.
    done: Vec<(Func, Vec<Value>, Value)>,
    /// How many of `done` the current run has replayed.
    next: usize,
    /// The lock the last run stopped for.
    pending: Option<Pending>,
    /// The PL/pgSQL call the last run stopped for (PL-ROW-CALLS).
    call: Option<(Func, Vec<Value>)>,
}

/// A blocking advisory-lock call that could not be granted at once.
#[derive(Debug)]
pub struct Pending {
    pub(crate) func: Func,
    pub(crate) args: Vec<Value>,
    pub(crate) tag: LockTag,
    pub(crate) mode: LockMode,
    /// A transaction-level lock (`pg_advisory_xact_lock`), else
    /// session-level.
    pub(crate) xact: bool,
}

impl Replay {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("replay journal poisoned")
    }

    /// A volatile call: its recorded result if this evaluation made it
    /// before the wait, else `run`'s, recorded. The mutex is not held
    /// while `run` runs (it may stop for a lock, which records here).
    pub(crate) fn call(
        &self,
        func: Func,
        args: &[Value],
        run: impl FnOnce() -> Result<Value, SqlError>,
    ) -> Result<Value, SqlError> {
        {
            let mut s = self.state();
            if s.next < s.done.len() {
                let (f, a, result) = &s.done[s.next];
                if *f != func || a.as_slice() != args {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "waiting for an advisory lock in a statement whose volatile calls changed \
                         while it waited is not supported",
                    ));
                }
                let result = result.clone();
                s.next += 1;
                return Ok(result);
            }
        }
        let result = run()?;
        let mut s = self.state();
        s.done.push((func, args.to_vec(), result.clone()));
        s.next = s.done.len();
        Ok(result)
    }

    /// Stops the evaluation for a lock: the error it returns ends the run,
    /// and the executor finds the request with [`Replay::take_pending`].
    pub(crate) fn stop_for(&self, pending: Pending) -> SqlError {
        let mut s = self.state();
        if s.pending.is_some() {
            // A stop swallowed by some evaluation path and followed by
            // another: the first wait would be lost.
            return SqlError::new(
                SqlState::INTERNAL_ERROR,
                "EVAL-REPLAY: two advisory lock waits in one run",
            );
        }
        s.pending = Some(pending);
        SqlError::new(SqlState::INTERNAL_ERROR, "EVAL-REPLAY: an advisory lock wait escaped its evaluation")
    }

    /// Stops the evaluation for a call of a PL/pgSQL function, which runs
    /// statements and so only the executor can make (PL-ROW-CALLS).
    pub(crate) fn stop_for_call(&self, func: Func, args: Vec<Value>) -> SqlError {
        let mut s = self.state();
        if s.call.is_some() || s.pending.is_some() {
            return SqlError::new(SqlState::INTERNAL_ERROR, "EVAL-REPLAY: two stops in one run");
        }
        s.call = Some((func, args));
        SqlError::new(SqlState::INTERNAL_ERROR, "EVAL-REPLAY: a function call escaped its evaluation")
    }

    /// The call the last run stopped for, if it stopped for one.
    pub(crate) fn take_call(&self) -> Option<(Func, Vec<Value>)> {
        self.state().call.take()
    }

    /// The stopped call was made: its result is the next one the journal
    /// gives.
    pub(crate) fn called(&self, func: Func, args: Vec<Value>, result: Value) {
        self.state().done.push((func, args, result));
    }

    /// The lock the last run stopped for, if it stopped for one.
    pub(crate) fn take_pending(&self) -> Option<Pending> {
        self.state().pending.take()
    }

    /// The stopped call's lock was granted: its result (void) is the next
    /// one the journal gives.
    pub(crate) fn granted(&self, pending: Pending) {
        let mut s = self.state();
        s.done.push((pending.func, pending.args, Value::Text(String::new())));
    }

    /// Before a run: replay from the first call.
    pub(crate) fn rewind(&self) {
        self.state().next = 0;
    }

    /// After a run that finished: its calls are done for good, and the
    /// next evaluation starts a journal of its own.
    pub(crate) fn finish(&self) -> Result<(), SqlError> {
        let mut s = self.state();
        s.done.clear();
        s.next = 0;
        if s.call.take().is_some() {
            return Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                "EVAL-REPLAY: a function call was swallowed by its evaluation",
            ));
        }
        match s.pending.take() {
            None => Ok(()),
            Some(p) => Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                format!("EVAL-REPLAY: the wait for {} was swallowed by its evaluation", p.tag),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_replays_the_first_runs_calls_then_goes_live() {
        let replay = Replay::default();
        let mut live = 0;
        let mut run = |n: i64| {
            replay.call(Func::NextVal, &[Value::Int(n)], || {
                live += 1;
                Ok(Value::Int(100 + n))
            })
        };
        assert_eq!(run(1).unwrap(), Value::Int(101));
        let err = replay.stop_for(Pending {
            func: Func::ClockTimestamp,
            args: vec![],
            tag: LockTag::advisory_bigint(1),
            mode: LockMode::Exclusive,
            xact: false,
        });
        assert_eq!(err.code, SqlState::INTERNAL_ERROR);
        let pending = replay.take_pending().unwrap();
        replay.granted(pending);
        replay.rewind();
        let mut run = |n: i64| {
            replay.call(Func::NextVal, &[Value::Int(n)], || {
                live += 1;
                Ok(Value::Int(200 + n))
            })
        };
        assert_eq!(run(1).unwrap(), Value::Int(101), "replayed, not run again");
        let lock = replay.call(Func::ClockTimestamp, &[], || unreachable!("the granted lock is replayed"));
        assert_eq!(lock.unwrap(), Value::Text(String::new()));
        let mut run = |n: i64| {
            replay.call(Func::NextVal, &[Value::Int(n)], || {
                live += 1;
                Ok(Value::Int(300 + n))
            })
        };
        assert_eq!(run(2).unwrap(), Value::Int(302), "past the journal: live");
        assert_eq!(live, 2);
        replay.finish().unwrap();
        replay.rewind();
        assert_eq!(
            replay.call(Func::NextVal, &[Value::Int(1)], || Ok(Value::Int(7))).unwrap(),
            Value::Int(7)
        );
    }

    #[test]
    fn a_replay_that_diverges_is_refused() {
        let replay = Replay::default();
        replay.call(Func::NextVal, &[Value::Int(1)], || Ok(Value::Int(1))).unwrap();
        replay.rewind();
        let err = replay.call(Func::NextVal, &[Value::Int(2)], || Ok(Value::Int(2))).unwrap_err();
        assert_eq!(err.code, SqlState::FEATURE_NOT_SUPPORTED);
    }

    #[test]
    fn a_swallowed_stop_is_an_error_not_a_lost_lock() {
        let replay = Replay::default();
        let pending = || Pending {
            func: Func::ClockTimestamp,
            args: vec![],
            tag: LockTag::advisory_bigint(1),
            mode: LockMode::Share,
            xact: true,
        };
        let _ = replay.stop_for(pending());
        assert!(replay.stop_for(pending()).message.contains("two advisory lock waits"));
        assert_eq!(replay.finish().unwrap_err().code, SqlState::INTERNAL_ERROR);
    }
}
