//! Sequences: counters outside MVCC.
//!
//! A sequence is a relation (its definition is a catalog row like a
//! table's, created and dropped transactionally) whose value is not: a
//! `nextval` is never rolled back and never waits for another transaction,
//! as in PostgreSQL. The value lives in the sequence's heap behind a
//! mutex, and every change of what the WAL promises goes to the WAL while
//! that mutex is held, so the records' order is the order of the states
//! (SEQ-ORDER). `nextval` logs ahead: one record covers the next
//! [`LOG_AHEAD`] values, and recovery resumes after the last value logged,
//! skipping at most that many numbers after a crash, as PostgreSQL does.
//!
//! A value handed out must be durable before anything that depends on it
//! is: the record precedes the COMMIT record of the transaction that used
//! it, and a transaction with no other WAL waits for it at commit
//! (`Xact::commit`).

use std::sync::Mutex;

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};

/// How many values one WAL record covers ahead (PostgreSQL's
/// SEQ_LOG_VALS).
pub const LOG_AHEAD: i64 = 32;

/// A sequence's parameters (fixed at CREATE SEQUENCE).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceDef {
    pub ty: SqlType,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub start: i64,
    pub cycle: bool,
    /// OWNED BY: the column whose table's DROP drops the sequence (SERIAL
    /// and identity columns own theirs).
    pub owned_by: Option<OwnedBy>,
}

/// The column a sequence belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedBy {
    pub table_oid: u32,
    pub table: String,
    pub column: String,
}

/// The value a sequence is at: `last` is the last value handed out if
/// `called`, else the next one to hand out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqValue {
    pub last: i64,
    pub called: bool,
}

struct State {
    now: SeqValue,
    /// Values `nextval` may still hand out before it must log again.
    logged_ahead: i64,
    /// What the WAL says (or would say, for a temporary sequence): the
    /// state recovery resumes from, and what a checkpoint records.
    logged: SeqValue,
}

/// A sequence's live value.
pub struct Sequence {
    def: SequenceDef,
    state: Mutex<State>,
}

/// Where `nextval` and `setval` write their records.
pub trait SeqLog {
    /// Appends a record that the sequence is at `v`; returns its end LSN.
    fn log(&self, v: SeqValue) -> Result<u64, SqlError>;
}

impl Sequence {
    /// A sequence at `at`, as created (`start`, not called) or recovered.
    pub fn new(def: SequenceDef, at: Option<SeqValue>) -> Sequence {
        let at = at.unwrap_or(SeqValue { last: def.start, called: false });
        Sequence { def, state: Mutex::new(State { now: at, logged_ahead: 0, logged: at }) }
    }

    /// The state a checkpoint records: what the WAL has promised, never
    /// less than what was handed out.
    pub fn logged(&self) -> SeqValue {
        self.state.lock().expect("sequence state poisoned").logged
    }

    /// Where the sequence is now (pg_sequences' last_value).
    pub fn current(&self) -> SeqValue {
        self.state.lock().expect("sequence state poisoned").now
    }

    /// The sequence read as a relation: where it is, and how many values
    /// `nextval` may still hand out before it logs again (PostgreSQL's
    /// log_cnt).
    pub fn row(&self) -> (SeqValue, i64) {
        let s = self.state.lock().expect("sequence state poisoned");
        (s.now, s.logged_ahead)
    }

    /// Sets the state from a replayed record.
    pub fn replay(&self, v: SeqValue) {
        let mut s = self.state.lock().expect("sequence state poisoned");
        *s = State { now: v, logged_ahead: 0, logged: v };
    }

    /// The step after `v`, or `None` past the bounds without CYCLE.
    fn step(&self, v: i64) -> Option<i64> {
        let d = &self.def;
        match v.checked_add(d.increment) {
            Some(n) if n >= d.min && n <= d.max => Some(n),
            _ if d.cycle => Some(if d.increment > 0 { d.min } else { d.max }),
            _ => None,
        }
    }

    /// The next value; `log` gets a record when the values logged ahead
    /// run out (SEQ-ORDER: under the state's mutex). Returns the value and
    /// the end of the record written, if one was.
    pub fn next(&self, name: &str, log: Option<&dyn SeqLog>) -> Result<(i64, Option<u64>), SqlError> {
        let mut s = self.state.lock().expect("sequence state poisoned");
        let value = if s.now.called {
            self.step(s.now.last).ok_or_else(|| {
                let (which, bound) = if self.def.increment > 0 {
                    ("maximum", self.def.max)
                } else {
                    ("minimum", self.def.min)
                };
                SqlError::new(
                    SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                    format!("nextval: reached {which} value of sequence \"{name}\" ({bound})"),
                )
            })?
        } else {
            s.now.last
        };
        let mut end = None;
        if s.logged_ahead == 0 {
            // Promise LOG_AHEAD more values: recovery resumes after them.
            let mut ahead = value;
            let mut n = 0;
            while n < LOG_AHEAD {
                match self.step(ahead) {
                    Some(a) => ahead = a,
                    None => break,
                }
                n += 1;
            }
            let promised = SeqValue { last: ahead, called: true };
            if let Some(log) = log {
                end = Some(log.log(promised)?);
            }
            s.logged = promised;
            s.logged_ahead = n + 1;
        }
        s.logged_ahead -= 1;
        s.now = SeqValue { last: value, called: true };
        Ok((value, end))
    }

    /// `setval(v, called)`: 22003 outside the bounds. Always logged.
    pub fn set(
        &self,
        name: &str,
        v: i64,
        called: bool,
        log: Option<&dyn SeqLog>,
    ) -> Result<Option<u64>, SqlError> {
        if v < self.def.min || v > self.def.max {
            return Err(SqlError::new(
                SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                format!(
                    "setval: value {v} is out of bounds for sequence \"{name}\" ({}..{})",
                    self.def.min, self.def.max
                ),
            ));
        }
        let mut s = self.state.lock().expect("sequence state poisoned");
        let at = SeqValue { last: v, called };
        let end = log.map(|l| l.log(at)).transpose()?;
        *s = State { now: at, logged_ahead: 0, logged: at };
        Ok(end)
    }
}

/// The bounds of a sequence's type (PostgreSQL's defaults for MINVALUE and
/// MAXVALUE when ascending: 1 .. the type's maximum).
pub fn type_bounds(ty: SqlType) -> (i64, i64) {
    match ty {
        SqlType::Int2 => (i16::MIN.into(), i16::MAX.into()),
        SqlType::Int4 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

/// A session's view of the sequences: currval's values, lastval's, and the
/// end of the sequence WAL its transaction wrote (what a commit with no
/// other WAL must wait for).
#[derive(Debug, Default)]
pub struct SessionSequences {
    /// storage → the last value nextval (or setval with called) gave.
    pub current: std::collections::HashMap<u64, i64>,
    pub last: Option<i64>,
    unflushed: Option<u64>,
}

impl SessionSequences {
    /// DISCARD SEQUENCES / ALL.
    pub fn clear(&mut self) {
        self.current.clear();
        self.last = None;
    }

    /// The WAL end a commit must wait for, once.
    pub fn take_unflushed(&mut self) -> Option<u64> {
        self.unflushed.take()
    }

    /// Notes sequence WAL written up to `end`.
    pub fn wrote(&mut self, end: Option<u64>) {
        if let Some(end) = end {
            self.unflushed = Some(self.unflushed.map_or(end, |u| u.max(end)));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    struct Recorder(RefCell<Vec<SeqValue>>);

    impl SeqLog for Recorder {
        fn log(&self, v: SeqValue) -> Result<u64, SqlError> {
            self.0.borrow_mut().push(v);
            Ok(self.0.borrow().len() as u64)
        }
    }

    fn def(increment: i64, min: i64, max: i64, start: i64, cycle: bool) -> SequenceDef {
        SequenceDef { ty: SqlType::Int8, increment, min, max, start, cycle, owned_by: None }
    }

    #[test]
    fn nextval_logs_ahead_and_recovery_never_repeats_a_value() {
        let log = Recorder(RefCell::new(Vec::new()));
        let s = Sequence::new(def(1, 1, i64::MAX, 1, false), None);
        let mut handed = Vec::new();
        for _ in 0..40 {
            handed.push(s.next("s", Some(&log)).unwrap().0);
        }
        assert_eq!(handed, (1..=40).collect::<Vec<_>>());
        // One record per LOG_AHEAD + 1 values, each covering what follows.
        let records = log.0.borrow().clone();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0], SeqValue { last: 33, called: true });
        // A crash now: recovery resumes from the last record.
        let r = Sequence::new(def(1, 1, i64::MAX, 1, false), Some(*records.last().unwrap()));
        let next = r.next("s", None).unwrap().0;
        assert!(next > 40, "{next} was handed out before the crash");
    }

    #[test]
    fn bounds_cycle_and_setval() {
        let s = Sequence::new(def(-2, -5, 0, 0, false), None);
        let got: Vec<i64> = (0..3).map(|_| s.next("s", None).unwrap().0).collect();
        assert_eq!(got, [0, -2, -4]);
        let e = s.next("s", None).unwrap_err();
        assert_eq!(e.code, SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED);
        let c = Sequence::new(def(1, 1, 3, 2, true), None);
        let got: Vec<i64> = (0..4).map(|_| c.next("c", None).unwrap().0).collect();
        assert_eq!(got, [2, 3, 1, 2]);
        assert_eq!(c.set("c", 9, true, None).unwrap_err().code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
        c.set("c", 3, false, None).unwrap();
        assert_eq!(c.next("c", None).unwrap().0, 3);
        c.set("c", 2, true, None).unwrap();
        assert_eq!(c.next("c", None).unwrap().0, 3);
    }
}
