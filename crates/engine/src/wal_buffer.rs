//! One backend's WAL records not yet appended: the changes of its running
//! transaction, each tagged with the (sub)transaction xid that made it.
//!
//! Records go to the WAL as the transaction runs, not at its commit: the
//! buffer is appended whenever it holds more than [`SPILL_BYTES`], and at
//! the end of the transaction with its COMMIT record. Memory per backend
//! stays bounded whatever the transaction's size (`pgbench -i` loads
//! millions of rows in one transaction), a standby sees a large
//! transaction's changes while it runs, and a small transaction still
//! reaches the log in one append with its commit record.
//!
//! A rolled-back subtransaction's records still in the buffer are
//! dropped; those already appended stay, and the ABORT record that the
//! rollback appends tells replay to ignore them (WAL-TAGGED).

use snapscale_storage::log::{Log, LogError, Lsn, HEADER};
use snapscale_txn::Xid;

use crate::redo::{self, Redo, Writer};

/// Buffered bytes that trigger an append.
pub const SPILL_BYTES: usize = 256 << 10;

/// One buffered record: its kind, the xid whose changes it carries (a
/// rollback of that xid drops it), and its payload's range in `bytes`.
#[derive(Clone, Copy, Debug)]
struct Pending {
    kind: u8,
    xid: Xid,
    start: usize,
    end: usize,
}

/// See the module documentation.
#[derive(Debug, Default)]
pub struct WalBuffer {
    bytes: Vec<u8>,
    records: Vec<Pending>,
    /// Some record of the current transaction tree is in the WAL already
    /// (the database knows where its first one is: TREE-START).
    pub appended: bool,
    /// The tree logged a change (not only xid assignments): its commit must
    /// be durable before it is acknowledged.
    pub changed: bool,
}

impl WalBuffer {
    /// Buffers one record: `encode` writes its payload and names its kind.
    fn push(&mut self, xid: Xid, encode: impl FnOnce(&mut Writer) -> u8) {
        let start = self.bytes.len();
        let mut w = Writer(std::mem::take(&mut self.bytes));
        let kind = encode(&mut w);
        self.bytes = w.0;
        self.records.push(Pending { kind, xid, start, end: self.bytes.len() });
    }

    /// Buffers a change made by `xid`.
    pub fn change(&mut self, xid: Xid, change: &Redo) {
        self.changed = true;
        self.push(xid, |w| redo::encode_change(xid, change, w));
    }

    /// Buffers the record that makes `sub` a subtransaction of `top`.
    pub fn assignment(&mut self, top: Xid, sub: Xid) {
        self.push(sub, |w| {
            w.0.extend_from_slice(&redo::encode_assignment(top, sub));
            redo::ASSIGNMENT
        });
    }

    /// Whether the buffer should be appended now.
    pub fn full(&self) -> bool {
        self.bytes.len() >= SPILL_BYTES
    }

    /// Drops the buffered records of rolled-back xids.
    pub fn forget(&mut self, xids: &[Xid]) {
        if xids.is_empty() || !self.records.iter().any(|r| xids.contains(&r.xid)) {
            return;
        }
        let mut bytes = Vec::with_capacity(self.bytes.len());
        let mut records = Vec::with_capacity(self.records.len());
        for r in &self.records {
            if xids.contains(&r.xid) {
                continue;
            }
            let start = bytes.len();
            bytes.extend_from_slice(&self.bytes[r.start..r.end]);
            records.push(Pending { start, end: bytes.len(), ..*r });
        }
        self.bytes = bytes;
        self.records = records;
    }

    /// Appends the buffered records followed by `extra`, as one contiguous
    /// batch, and empties the buffer. Returns the batch's first LSN and the
    /// LSN after it.
    pub fn append(&mut self, log: &Log, extra: &[(u8, &[u8])]) -> Result<(Lsn, Lsn), LogError> {
        let mut batch: Vec<(u8, &[u8])> =
            self.records.iter().map(|r| (r.kind, &self.bytes[r.start..r.end])).collect();
        batch.extend_from_slice(extra);
        let size: usize = batch.iter().map(|(_, p)| HEADER + p.len()).sum();
        let end = log.append(&batch)?;
        self.clear();
        Ok((end - size as u64, end))
    }

    /// Forgets everything (the transaction ended).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
        if self.bytes.capacity() > 4 * SPILL_BYTES {
            self.bytes = Vec::new();
        }
    }

    /// Resets the per-transaction flags (a new transaction begins).
    pub fn reset(&mut self) {
        self.clear();
        self.appended = false;
        self.changed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Row;
    use snapscale_values::Value;

    #[test]
    fn rolled_back_records_are_dropped_and_the_rest_keep_their_order() {
        let mut b = WalBuffer::default();
        let row = |i| Redo::Insert { storage: 1, row: Row::from(vec![Value::Int(i), Value::Int(i)]) };
        b.change(Xid(10), &row(1));
        b.assignment(Xid(10), Xid(11));
        b.change(Xid(11), &row(2));
        b.change(Xid(10), &row(3));
        b.forget(&[Xid(11)]);
        let kinds: Vec<(u8, Xid)> = b.records.iter().map(|r| (r.kind, r.xid)).collect();
        assert_eq!(kinds, [(redo::INSERT, Xid(10)), (redo::INSERT, Xid(10))]);
        for r in &b.records {
            match redo::decode(r.kind, &b.bytes[r.start..r.end]).unwrap().unwrap() {
                redo::Record::Change { xid, .. } => assert_eq!(xid, Xid(10)),
                other => panic!("{other:?}"),
            }
        }
        assert!(b.changed && !b.full());
    }
}
