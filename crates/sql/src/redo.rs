//! What the write-ahead log and checkpoints hold, and how the database is
//! rebuilt from them.
//!
//! Redo is logical and per committed transaction. A transaction's changes
//! are buffered per (sub)transaction level while it runs; a rolled-back
//! level's changes are dropped with it. At commit the session appends all
//! of them, followed by the commit record, as one contiguous batch, and
//! (synchronous_commit = on) waits until the batch is durable before the
//! commit becomes visible. Recovery therefore replays whole transactions:
//! changes are applied when their commit record is read, and changes with
//! no commit record after them (a torn tail) are dropped.
//!
//! Rows are identified by a row id, a hidden trailing column that an
//! update keeps, so redo does not depend on in-memory tids. Each record
//! carries the row's full new value, so replaying it is idempotent.
//!
//! Record payloads (little-endian; strings are u32 length + UTF-8):
//!
//! ```text
//!   1 INSERT   u64 storage, row                 row = u16 n, n values
//!   2 UPDATE   u64 storage, row                 (the row id is its last value)
//!   3 DELETE   u64 storage, i64 row id
//!   4 CATALOG  relation entry                   (create, or replace: ALTER, CREATE INDEX, TRUNCATE)
//!   5 DROP     u32 oid
//!   6 COMMIT   u64 xid, u32 n, n u64 subxids
//!   7 ABORT    u64 xid
//!   8 CSN      u64 xid, u64 csn                 (csn mode: right after the commit)
//!
//!   value      u8 tag: 0 NULL, 1 bool (u8), 2 integer (i64), 3 float (f64 bits),
//!              4 text (string), 5 date (i32), 6 timestamp (i64)
//!   entry      u32 oid, string name, u64 storage, u16 columns {string name,
//!              type, u8 not null}, u16 indexes {u32 oid, string name,
//!              u16 n, n u16 column, u8 unique, u8 primary}
//!   type       u8 tag, u32 length (varchar/char; u32::MAX = none)
//! ```
//!
//! Temporary tables are never logged (as in PostgreSQL).

use std::collections::{BTreeMap, HashMap};

use crate::catalog::{ColumnDef, IndexDef, RelEntry};
use crate::error::SqlError;
use crate::sqlstate::SqlState;
use crate::types::{SqlType, Value};

pub(crate) const INSERT: u8 = 1;
pub(crate) const UPDATE: u8 = 2;
pub(crate) const DELETE: u8 = 3;
pub(crate) const CATALOG: u8 = 4;
pub(crate) const DROP: u8 = 5;
pub(crate) const COMMIT: u8 = 6;
pub(crate) const ABORT: u8 = 7;
/// The CSN a commit received. Written after the commit, because a CSN is
/// assigned at the moment the commit becomes visible, which must follow
/// the durable commit record; recovery does not need it (it rebuilds
/// state, not CSNs), a standby will.
pub(crate) const CSN: u8 = 8;

/// One buffered change.
#[derive(Clone, Debug)]
pub(crate) enum Redo {
    Insert { storage: u64, row: crate::catalog::Row },
    Update { storage: u64, row: crate::catalog::Row },
    Delete { storage: u64, row_id: i64 },
    Catalog(std::sync::Arc<RelEntry>),
    Drop(u32),
}

#[derive(Default)]
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.u8(0),
            Value::Bool(b) => {
                self.u8(1);
                self.u8(u8::from(*b));
            }
            Value::Int(i) => {
                self.u8(2);
                self.u64(*i as u64);
            }
            Value::Float(f) => {
                self.u8(3);
                self.u64(f.to_bits());
            }
            Value::Text(s) => {
                self.u8(4);
                self.str(s);
            }
            Value::Date(d) => {
                self.u8(5);
                self.u32(*d as u32);
            }
            Value::Timestamp(t) => {
                self.u8(6);
                self.u64(*t as u64);
            }
        }
    }
    pub(crate) fn row(&mut self, row: &[Value]) {
        self.u16(row.len() as u16);
        for v in row {
            self.value(v);
        }
    }
    fn ty(&mut self, t: SqlType) {
        let (tag, len) = match t {
            SqlType::Int2 => (0, u32::MAX),
            SqlType::Int4 => (1, u32::MAX),
            SqlType::Int8 => (2, u32::MAX),
            SqlType::Float8 => (3, u32::MAX),
            SqlType::Bool => (4, u32::MAX),
            SqlType::Text => (5, u32::MAX),
            SqlType::Varchar(n) => (6, n.unwrap_or(u32::MAX)),
            SqlType::Char(n) => (7, n),
            SqlType::Date => (8, u32::MAX),
            SqlType::Timestamp => (9, u32::MAX),
        };
        self.u8(tag);
        self.u32(len);
    }
    pub(crate) fn entry(&mut self, e: &RelEntry) {
        self.u32(e.oid);
        self.str(&e.name);
        self.u64(e.storage);
        self.u16(e.columns.len() as u16);
        for c in &e.columns {
            self.str(&c.name);
            self.ty(c.ty);
            self.u8(u8::from(c.not_null));
        }
        self.u16(e.indexes.len() as u16);
        for i in &e.indexes {
            self.u32(i.oid);
            self.str(&i.name);
            self.u16(i.columns.len() as u16);
            for &c in &i.columns {
                self.u16(c as u16);
            }
            self.u8(u8::from(i.unique));
            self.u8(u8::from(i.primary));
        }
    }
}

/// Encodes one change as (kind, payload).
pub(crate) fn encode(r: &Redo) -> (u8, Vec<u8>) {
    let mut w = Writer::default();
    let kind = match r {
        Redo::Insert { storage, row } | Redo::Update { storage, row } => {
            w.u64(*storage);
            w.row(row);
            if matches!(r, Redo::Insert { .. }) {
                INSERT
            } else {
                UPDATE
            }
        }
        Redo::Delete { storage, row_id } => {
            w.u64(*storage);
            w.u64(*row_id as u64);
            DELETE
        }
        Redo::Catalog(e) => {
            w.entry(e);
            CATALOG
        }
        Redo::Drop(oid) => {
            w.u32(*oid);
            DROP
        }
    };
    (kind, w.0)
}

pub(crate) fn encode_commit(xid: u64, subxids: &[u64]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(xid);
    w.u32(subxids.len() as u32);
    for &s in subxids {
        w.u64(s);
    }
    w.0
}

pub(crate) fn encode_csn(xid: u64, csn: u64) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(xid);
    w.u64(csn);
    w.0
}

pub(crate) fn encode_abort(xid: u64) -> Vec<u8> {
    xid.to_le_bytes().to_vec()
}

pub(crate) struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

fn corrupt() -> SqlError {
    SqlError::new(SqlState::DATA_CORRUPTED, "a write-ahead log record or checkpoint is malformed")
}

impl<'a> Reader<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], SqlError> {
        let s = self.b.get(self.at..self.at + n).ok_or_else(corrupt)?;
        self.at += n;
        Ok(s)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, SqlError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, SqlError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, SqlError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, SqlError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn str(&mut self) -> Result<String, SqlError> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| corrupt())
    }
    fn value(&mut self) -> Result<Value, SqlError> {
        Ok(match self.u8()? {
            0 => Value::Null,
            1 => Value::Bool(self.u8()? != 0),
            2 => Value::Int(self.u64()? as i64),
            3 => Value::Float(f64::from_bits(self.u64()?)),
            4 => Value::Text(self.str()?),
            5 => Value::Date(self.u32()? as i32),
            6 => Value::Timestamp(self.u64()? as i64),
            _ => return Err(corrupt()),
        })
    }
    pub(crate) fn row(&mut self) -> Result<Vec<Value>, SqlError> {
        let n = self.u16()?;
        (0..n).map(|_| self.value()).collect()
    }
    fn ty(&mut self) -> Result<SqlType, SqlError> {
        let tag = self.u8()?;
        let len = self.u32()?;
        Ok(match tag {
            0 => SqlType::Int2,
            1 => SqlType::Int4,
            2 => SqlType::Int8,
            3 => SqlType::Float8,
            4 => SqlType::Bool,
            5 => SqlType::Text,
            6 => SqlType::Varchar((len != u32::MAX).then_some(len)),
            7 => SqlType::Char(len),
            8 => SqlType::Date,
            9 => SqlType::Timestamp,
            _ => return Err(corrupt()),
        })
    }
    pub(crate) fn entry(&mut self) -> Result<RelEntry, SqlError> {
        let oid = self.u32()?;
        let name = self.str()?;
        let storage = self.u64()?;
        let mut columns = Vec::new();
        for _ in 0..self.u16()? {
            columns.push(ColumnDef { name: self.str()?, ty: self.ty()?, not_null: self.u8()? != 0 });
        }
        let mut indexes = Vec::new();
        for _ in 0..self.u16()? {
            let oid = self.u32()?;
            let name = self.str()?;
            let cols = (0..self.u16()?).map(|_| self.u16().map(usize::from)).collect::<Result<_, _>>()?;
            indexes.push(IndexDef {
                oid,
                name,
                columns: cols,
                unique: self.u8()? != 0,
                primary: self.u8()? != 0,
            });
        }
        Ok(RelEntry { oid, name, temp_owner: None, storage, columns, indexes })
    }
}

/// The database as recovery rebuilds it before loading it into tables.
#[derive(Debug, Default)]
pub(crate) struct Image {
    pub(crate) catalog: BTreeMap<u32, RelEntry>,
    /// storage → row id → row (the row id included as its last value).
    pub(crate) storages: HashMap<u64, BTreeMap<i64, Vec<Value>>>,
    pub(crate) next_oid: u32,
    pub(crate) next_storage: u64,
}

fn row_id(row: &[Value]) -> Result<i64, SqlError> {
    match row.last() {
        Some(Value::Int(id)) => Ok(*id),
        _ => Err(corrupt()),
    }
}

impl Image {
    /// Serialises the image (checkpoint payload).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.next_oid);
        w.u64(self.next_storage);
        w.u32(self.catalog.len() as u32);
        for e in self.catalog.values() {
            w.entry(e);
        }
        w.u32(self.storages.len() as u32);
        for (id, rows) in &self.storages {
            w.u64(*id);
            w.u64(rows.len() as u64);
            for row in rows.values() {
                w.row(row);
            }
        }
        w.0
    }

    pub(crate) fn decode(b: &[u8]) -> Result<Image, SqlError> {
        let mut r = Reader::new(b);
        let mut image = Image { next_oid: r.u32()?, next_storage: r.u64()?, ..Image::default() };
        for _ in 0..r.u32()? {
            let e = r.entry()?;
            image.catalog.insert(e.oid, e);
        }
        for _ in 0..r.u32()? {
            let id = r.u64()?;
            let mut rows = BTreeMap::new();
            for _ in 0..r.u64()? {
                let row = r.row()?;
                rows.insert(row_id(&row)?, row);
            }
            image.storages.insert(id, rows);
        }
        Ok(image)
    }

    fn note_entry(&mut self, e: &RelEntry) {
        self.next_oid = self.next_oid.max(e.oid + 1);
        for i in &e.indexes {
            self.next_oid = self.next_oid.max(i.oid + 1);
        }
        self.next_storage = self.next_storage.max(e.storage + 1);
    }

    /// Applies one committed change.
    pub(crate) fn apply(&mut self, kind: u8, payload: &[u8]) -> Result<(), SqlError> {
        let mut r = Reader::new(payload);
        match kind {
            INSERT | UPDATE => {
                let storage = r.u64()?;
                let row = r.row()?;
                self.storages.entry(storage).or_default().insert(row_id(&row)?, row);
            }
            DELETE => {
                let storage = r.u64()?;
                let id = r.u64()? as i64;
                if let Some(rows) = self.storages.get_mut(&storage) {
                    rows.remove(&id);
                }
            }
            CATALOG => {
                let e = r.entry()?;
                self.note_entry(&e);
                // A new storage id (CREATE, TRUNCATE) starts empty; the
                // one it replaced is gone.
                if let Some(old) = self.catalog.get(&e.oid) {
                    if old.storage != e.storage {
                        self.storages.remove(&old.storage);
                    }
                }
                self.storages.entry(e.storage).or_default();
                self.catalog.insert(e.oid, e);
            }
            DROP => {
                let oid = r.u32()?;
                if let Some(old) = self.catalog.remove(&oid) {
                    self.storages.remove(&old.storage);
                }
            }
            _ => return Err(corrupt()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn records_and_images_round_trip() {
        let entry = RelEntry {
            oid: 16384,
            name: "t".into(),
            temp_owner: None,
            storage: 3,
            columns: vec![
                ColumnDef { name: "a".into(), ty: SqlType::Int4, not_null: true },
                ColumnDef { name: "b".into(), ty: SqlType::Varchar(Some(5)), not_null: false },
                ColumnDef { name: "c".into(), ty: SqlType::Char(2), not_null: false },
            ],
            indexes: vec![IndexDef {
                oid: 16385,
                name: "t_pkey".into(),
                columns: vec![0],
                unique: true,
                primary: true,
            }],
        };
        let mut image = Image::default();
        let (k, p) = encode(&Redo::Catalog(Arc::new(entry.clone())));
        image.apply(k, &p).unwrap();
        let row: Vec<Value> = vec![Value::Int(1), Value::Text("é".into()), Value::Null, Value::Int(7)];
        let (k, p) = encode(&Redo::Insert { storage: 3, row: row.clone().into() });
        image.apply(k, &p).unwrap();
        let row2 = vec![Value::Int(2), Value::Float(0.5), Value::Date(-1), Value::Int(8)];
        let (k, p) = encode(&Redo::Insert { storage: 3, row: row2.into() });
        image.apply(k, &p).unwrap();
        let (k, p) = encode(&Redo::Delete { storage: 3, row_id: 8 });
        image.apply(k, &p).unwrap();
        assert_eq!(image.catalog[&16384], entry);
        assert_eq!(image.storages[&3].values().cloned().collect::<Vec<_>>(), vec![row]);
        assert_eq!((image.next_oid, image.next_storage), (16386, 4));
        let back = Image::decode(&image.encode()).unwrap();
        assert_eq!(back.catalog, image.catalog);
        assert_eq!(back.storages, image.storages);
        // TRUNCATE: the entry names new storage; the old rows are gone.
        let mut truncated = entry.clone();
        truncated.storage = 4;
        let (k, p) = encode(&Redo::Catalog(Arc::new(truncated)));
        image.apply(k, &p).unwrap();
        assert!(!image.storages.contains_key(&3) && image.storages[&4].is_empty());
        let (k, p) = encode(&Redo::Drop(16384));
        image.apply(k, &p).unwrap();
        assert!(image.catalog.is_empty() && image.storages.is_empty());
        assert!(Image::decode(&[1, 2, 3]).is_err());
    }
}
