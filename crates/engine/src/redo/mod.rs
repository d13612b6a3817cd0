//! What the write-ahead log holds, and the checkpoint image.
//!
//! Redo is logical and tagged by xid. A transaction's change records go
//! to the WAL while it runs (through a bounded per-backend buffer, see
//! `xact_wal.rs`), each naming the (sub)transaction xid that made it; a
//! subtransaction's first record is preceded by an ASSIGNMENT naming its
//! top-level xid. COMMIT and ABORT records close them. Recovery and
//! standby replay apply a change only if a COMMIT record names its xid:
//! changes of transactions that aborted, or that a crash cut short, are
//! never applied (WAL-TAGGED in the crate README).
//!
//! Rows are identified by a row id, a hidden trailing column that an
//! update keeps, so redo does not depend on in-memory tids. Each record
//! carries the row's full new value, so replaying it into an image is
//! idempotent.
//!
//! Record payloads (little-endian; strings are u32 length + UTF-8):
//!
//! ```text
//!   1 INSERT        u64 xid, u64 storage, row               row = u16 n, n values
//!   2 UPDATE        u64 xid, u64 storage, row               (the row id is its last value)
//!   3 DELETE        u64 xid, u64 storage, i64 row id
//!   4 CATALOG       u64 xid, relation entry                 (create, or replace: ALTER,
//!                                                            CREATE INDEX, TRUNCATE)
//!   5 DROP          u64 xid, u32 oid
//!   6 COMMIT        u64 xid, i64 time, u32 n, n u64 subxids (the committed subtransactions)
//!   7 ABORT         u32 n, n u64 xids                       (a tree, or a rolled-back subtree)
//!   9 ASSIGNMENT    u64 top xid, u64 subxid                 (before the subxid's first record)
//!  10 RUNNING_XACTS u64 next xid, u64 oldest running xid, i64 time
//!  11 SEQUENCE      u64 storage, i64 value, u8 called    (not transactional: replayed
//!                                                           whatever happens to the xid
//!                                                           that wrote it, SEQ-ORDER)
//!
//!   value      u8 tag: 0 NULL, 1 bool (u8), 2 integer (i64), 3 float (f64 bits),
//!              4 text (string), 5 date (i32), 6 timestamp (i64),
//!              7 interval (i32 days, i64 microseconds),
//!              8 timestamp with time zone (i64, UTC), … (codec.rs),
//!              22 enum label (label)
//!   label      u32 label oid, u32 type oid, order key (u64, u32 n, n bytes),
//!              string name (self-contained: recovery shares the cells again)
//!   entry      u32 oid, string name, u64 storage, u16 columns {string name,
//!              type, u8 flags (1 not null, 2 has default, 4 domain, 8 typmod,
//!              16 generated, 32 identity, 64 always, 128 more flags),
//!              [u8 more flags (1 missing value, 2 storage, 4 stats target)],
//!              [string default], [u32 domain oid], [i32 typmod],
//!              [string generation], [value missing], [u8 storage],
//!              [i32 stats target]},
//!              u16 indexes {u32 oid, string name,
//!              u16 n, n u16 column, u8 unique, u8 primary},
//!              [sequence: type, i64 increment, min, max, start, u8 cycle,
//!              u8 owned (1: u32 table oid, string table, string column)],
//!              [user type: u8 kind, 1 enum: u32 n, n {label, u32 float4
//!              sort order}; 2 domain: base type, u8 flags (1 parent,
//!              2 not null, 4 default), [u32 parent], [string default],
//!              u16 n, n {string name, string check}; 3 composite: its
//!              attributes are the entry's columns]
//!              (the columns count's top bit says a sequence follows, the
//!              next bit a user type)
//!   type       u8 tag (0 int2 … 9 timestamp, 10 interval, 11 timestamptz, …),
//!              u32 length (varchar/char; u32::MAX = none); 31 enum and
//!              32 its array, 33 composite: u32 oid, string name
//!   time       microseconds since 2000-01-01 UTC
//! ```
//!
//! Kind 8 (a CSN record of an earlier format) is no longer written: a
//! standby numbers commits in its own replay order.
//!
//! Temporary tables are never logged (as in PostgreSQL).

mod codec;
mod image;

use std::sync::Arc;

use snapscale_storage::log::Log;
use snapscale_txn::Xid;
use snapscale_values::SqlError;

use crate::catalog::{RelEntry, Row};
use crate::sequence::SeqValue;

pub use codec::{corrupt, Reader, Writer};
pub use image::{CheckpointHeader, Image, ImageWriter};

pub const INSERT: u8 = 1;
pub const UPDATE: u8 = 2;
pub const DELETE: u8 = 3;
pub const CATALOG: u8 = 4;
pub const DROP: u8 = 5;
pub const COMMIT: u8 = 6;
pub const ABORT: u8 = 7;
pub const ASSIGNMENT: u8 = 9;
pub const RUNNING_XACTS: u8 = 10;
pub const SEQUENCE: u8 = 11;

/// One change to a permanent relation.
#[derive(Clone, Debug)]
pub enum Redo {
    Insert { storage: u64, row: Row },
    Update { storage: u64, row: Row },
    Delete { storage: u64, row_id: i64 },
    Catalog(Arc<RelEntry>),
    Drop(u32),
}

/// A decoded record.
#[derive(Clone, Debug)]
pub enum Record {
    /// A change made by `xid` (a top-level or subtransaction xid).
    Change { xid: Xid, change: Redo },
    /// `sub` is a subtransaction of `top`.
    Assignment { top: Xid, sub: Xid },
    /// `xid` committed with its live subtransactions `subxids`, at `time`.
    Commit { xid: Xid, subxids: Vec<Xid>, time: i64 },
    /// These xids aborted (a whole tree, or a rolled-back subtree).
    Abort { xids: Vec<Xid> },
    /// Every xid below `oldest_running` has finished; `next_xid` is the
    /// next one the primary will hand out (PostgreSQL's xl_running_xacts).
    RunningXacts { next_xid: Xid, oldest_running: Xid },
    /// The sequence in `storage` is at `value` (see `crate::sequence`).
    Sequence { storage: u64, value: SeqValue },
}

/// Encodes a change made by `xid`, appending (kind, payload) to `out`.
pub fn encode_change(xid: Xid, r: &Redo, out: &mut Writer) -> u8 {
    out.u64(xid.0);
    match r {
        Redo::Insert { storage, row } | Redo::Update { storage, row } => {
            out.u64(*storage);
            out.row(row);
            if matches!(r, Redo::Insert { .. }) {
                INSERT
            } else {
                UPDATE
            }
        }
        Redo::Delete { storage, row_id } => {
            out.u64(*storage);
            out.i64(*row_id);
            DELETE
        }
        Redo::Catalog(e) => {
            out.entry(e);
            CATALOG
        }
        Redo::Drop(oid) => {
            out.u32(*oid);
            DROP
        }
    }
}

pub fn encode_commit(xid: Xid, subxids: &[Xid], time: i64) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(xid.0);
    w.i64(time);
    w.u32(subxids.len() as u32);
    for s in subxids {
        w.u64(s.0);
    }
    w.0
}

pub fn encode_abort(xids: &[Xid]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(xids.len() as u32);
    for x in xids {
        w.u64(x.0);
    }
    w.0
}

pub fn encode_assignment(top: Xid, sub: Xid) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(top.0);
    w.u64(sub.0);
    w.0
}

pub fn encode_sequence(storage: u64, value: SeqValue) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(storage);
    w.i64(value.last);
    w.u8(u8::from(value.called));
    w.0
}

pub fn encode_running_xacts(next_xid: Xid, oldest_running: Xid, time: i64) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(next_xid.0);
    w.u64(oldest_running.0);
    w.i64(time);
    w.0
}

fn xids(r: &mut Reader<'_>) -> Result<Vec<Xid>, SqlError> {
    let n = r.u32()? as usize;
    // Each xid takes 8 bytes: a count beyond the payload is malformed, and
    // is refused before anything is allocated for it.
    if n > r.remaining() / 8 {
        return Err(corrupt());
    }
    (0..n).map(|_| r.u64().map(Xid)).collect()
}

/// Decodes one record; `None` for kinds that carry nothing to replay (the
/// retired CSN record).
pub fn decode(kind: u8, payload: &[u8]) -> Result<Option<Record>, SqlError> {
    let mut r = Reader::new(payload);
    let record = match kind {
        INSERT | UPDATE | DELETE | CATALOG | DROP => {
            let xid = Xid(r.u64()?);
            let change = match kind {
                INSERT => Redo::Insert { storage: r.u64()?, row: Row::from(r.row()?) },
                UPDATE => Redo::Update { storage: r.u64()?, row: Row::from(r.row()?) },
                DELETE => Redo::Delete { storage: r.u64()?, row_id: r.i64()? },
                CATALOG => Redo::Catalog(Arc::new(r.entry()?)),
                _ => Redo::Drop(r.u32()?),
            };
            Record::Change { xid, change }
        }
        COMMIT => {
            let xid = Xid(r.u64()?);
            let time = r.i64()?;
            Record::Commit { xid, subxids: xids(&mut r)?, time }
        }
        ABORT => Record::Abort { xids: xids(&mut r)? },
        ASSIGNMENT => Record::Assignment { top: Xid(r.u64()?), sub: Xid(r.u64()?) },
        RUNNING_XACTS => {
            {
                let (next_xid, oldest_running) = (Xid(r.u64()?), Xid(r.u64()?));
                r.i64()?; // the time is for people reading the WAL, not for replay
                Record::RunningXacts { next_xid, oldest_running }
            }
        }
        SEQUENCE => {
            let storage = r.u64()?;
            let last = r.i64()?;
            let called = match r.u8()? {
                0 => false,
                1 => true,
                _ => return Err(corrupt()),
            };
            Record::Sequence { storage, value: SeqValue { last, called } }
        }
        8 => return Ok(None),
        _ => return Err(corrupt()),
    };
    if !r.done() {
        return Err(corrupt());
    }
    Ok(Some(record))
}

impl Record {
    /// The largest xid the record names (recovery continues after it).
    pub fn max_xid(&self) -> Xid {
        match self {
            Record::Change { xid, .. } => *xid,
            Record::Assignment { top, sub } => (*top).max(*sub),
            Record::Commit { xid, subxids, .. } => subxids.iter().copied().fold(*xid, Xid::max),
            Record::Abort { xids } => xids.iter().copied().max().unwrap_or(Xid::INVALID),
            Record::RunningXacts { next_xid, .. } => Xid(next_xid.0.saturating_sub(1)),
            Record::Sequence { .. } => Xid::INVALID,
        }
    }
}

/// The WAL as a sequence's log: `nextval` and `setval` append a SEQUENCE
/// record when the values they logged ahead run out, and the commit of
/// the transaction that used them waits for it (SEQ-ORDER).
pub struct SequenceWal<'a> {
    pub log: &'a Log,
    pub storage: u64,
}

impl crate::sequence::SeqLog for SequenceWal<'_> {
    fn log(&self, v: SeqValue) -> Result<u64, SqlError> {
        let record = encode_sequence(self.storage, v);
        let end = self.log.append(&[(SEQUENCE, &record)]).map_err(crate::errors::log_error)?;
        self.log.flush_soon(end);
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapscale_values::Value;

    fn round_trip(xid: Xid, r: Redo) -> Record {
        let mut w = Writer::default();
        let kind = encode_change(xid, &r, &mut w);
        decode(kind, &w.0).unwrap().unwrap()
    }

    #[test]
    fn records_round_trip() {
        // Arrays: one dimension from 1 (the older tag) and any other shape.
        let md = snapscale_values::parse_array(
            snapscale_values::SqlType::Int4,
            "[0:1][2:3]={{1,2},{NULL,4}}",
            snapscale_values::Zone::UTC,
        )
        .unwrap();
        let flat = Value::array(vec![Value::Int(5), Value::Null]);
        let row: Row =
            Row::from(vec![Value::Int(1), Value::Text("é".into()), Value::Null, Value::Int(7), md, flat]);
        match round_trip(Xid(42), Redo::Update { storage: 3, row: row.clone() }) {
            Record::Change { xid, change: Redo::Update { storage, row: back } } => {
                assert_eq!((xid, storage), (Xid(42), 3));
                assert_eq!(back, row);
            }
            other => panic!("{other:?}"),
        }
        match round_trip(Xid(9), Redo::Delete { storage: 4, row_id: -5 }) {
            Record::Change { xid: Xid(9), change: Redo::Delete { storage: 4, row_id: -5 } } => {}
            other => panic!("{other:?}"),
        }
        match decode(COMMIT, &encode_commit(Xid(10), &[Xid(11), Xid(13)], 77)).unwrap().unwrap() {
            Record::Commit { xid: Xid(10), subxids, time: 77 } => assert_eq!(subxids, [Xid(11), Xid(13)]),
            other => panic!("{other:?}"),
        }
        match decode(ABORT, &encode_abort(&[Xid(5)])).unwrap().unwrap() {
            Record::Abort { xids } => assert_eq!(xids, [Xid(5)]),
            other => panic!("{other:?}"),
        }
        let rx = decode(RUNNING_XACTS, &encode_running_xacts(Xid(100), Xid(90), 1)).unwrap().unwrap();
        assert_eq!(rx.max_xid(), Xid(99));
        assert!(decode(8, &[1, 2, 3]).unwrap().is_none(), "retired kinds are skipped");
        let at = SeqValue { last: -3, called: true };
        match decode(SEQUENCE, &encode_sequence(12, at)).unwrap().unwrap() {
            Record::Sequence { storage: 12, value } => assert_eq!(value, at),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_records_are_refused() {
        assert!(decode(COMMIT, &[1, 2, 3]).is_err());
        assert!(decode(99, &[]).is_err());
        // A count claiming more xids than the payload holds.
        let mut w = Writer::default();
        w.u32(u32::MAX);
        assert!(decode(ABORT, &w.0).is_err());
        // Trailing bytes.
        let mut p = encode_assignment(Xid(3), Xid(4));
        p.push(0);
        assert!(decode(ASSIGNMENT, &p).is_err());
    }
}
