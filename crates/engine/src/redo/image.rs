//! The checkpoint image: every permanent relation's definition and
//! committed rows as of one snapshot, with what replay needs to continue
//! from it.
//!
//! Payload (the storage crate wraps it with its redo LSN and a CRC):
//!
//! ```text
//!   "IMG2"
//!   u64 cut              the insert LSN when the snapshot was taken: a
//!                        COMMIT record below it is in the image, one at or
//!                        after it is not (CHECKPOINT-CUT)
//!   u64 next xid         the next xid at the cut
//!   u32 n, n x (u64 xid, u64 parent)
//!                        every xid running at the cut, with its parent
//!                        (0 for a top-level xid): what a standby starting
//!                        here must treat as running, and whose changes
//!                        between the redo point and the cut it replays
//!   u32 next oid, u64 next storage id
//!   u32 n, n x entry
//!   u32 m, m x (u64 storage id, u64 rows, rows x row)
//!   [u32 k, k x (u64 storage id, i64 value, u8 called)]
//!                        the sequences' logged values (absent in images
//!                        written before sequences existed)
//! ```

use std::collections::{BTreeMap, HashMap};

use snapscale_txn::Xid;
use snapscale_values::{SqlError, Value};

use super::codec::{corrupt, Reader, Writer};
use super::Redo;
use crate::catalog::RelEntry;
use crate::sequence::SeqValue;

const MAGIC: &[u8; 4] = b"IMG2";

/// Where replay continues from a checkpoint (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckpointHeader {
    pub cut: u64,
    pub next_xid: Xid,
    /// (xid, parent or `Xid::INVALID`).
    pub running: Vec<(Xid, Xid)>,
}

/// The database as recovery rebuilds it before loading it into tables.
#[derive(Debug, Default)]
pub struct Image {
    pub catalog: BTreeMap<u32, RelEntry>,
    /// storage → row id → row (the row id included as its last value).
    pub storages: HashMap<u64, BTreeMap<i64, Vec<Value>>>,
    pub next_oid: u32,
    pub next_storage: u64,
    /// storage → a sequence's value, as last logged.
    pub sequences: HashMap<u64, SeqValue>,
}

fn row_id(row: &[Value]) -> Result<i64, SqlError> {
    match row.last() {
        Some(Value::Int(id)) => Ok(*id),
        _ => Err(corrupt()),
    }
}

/// Writes an image's payload as it is produced, in the layout above: the
/// catalog entries, then each storage's rows as they are read, then the
/// sequences. A checkpoint of a live database streams its tables through
/// this, so that it holds one copy of the database (the encoded bytes),
/// not a second one decoded as rows besides: the decoded copy was millions
/// of small allocations that the allocator kept after the checkpoint,
/// and the server's resident set grew with every checkpoint.
pub struct ImageWriter {
    w: Writer,
    /// Where the storage count goes, and the count so far.
    storages_at: usize,
    storages: u32,
    rows: usize,
}

impl ImageWriter {
    pub fn new<'a>(
        header: &CheckpointHeader,
        next_oid: u32,
        next_storage: u64,
        entries: impl ExactSizeIterator<Item = &'a RelEntry>,
    ) -> Self {
        let mut w = Writer::default();
        w.0.extend_from_slice(MAGIC);
        w.u64(header.cut);
        w.u64(header.next_xid.0);
        w.u32(header.running.len() as u32);
        for (xid, parent) in &header.running {
            w.u64(xid.0);
            w.u64(parent.0);
        }
        w.u32(next_oid);
        w.u64(next_storage);
        w.u32(entries.len() as u32);
        for e in entries {
            w.entry(e);
        }
        let storages_at = w.0.len();
        w.u32(0);
        ImageWriter { w, storages_at, storages: 0, rows: 0 }
    }

    /// One storage and its rows (each with its row id last).
    pub fn storage<'r>(&mut self, id: u64, rows: impl IntoIterator<Item = &'r [Value]>) {
        self.storages += 1;
        self.w.u64(id);
        let count_at = self.w.0.len();
        self.w.u64(0);
        let mut count = 0u64;
        for row in rows {
            self.w.row(row);
            count += 1;
        }
        self.w.0[count_at..count_at + 8].copy_from_slice(&count.to_le_bytes());
        self.rows += count as usize;
    }

    /// The payload, and how many rows it holds.
    pub fn finish(mut self, sequences: impl ExactSizeIterator<Item = (u64, SeqValue)>) -> (Vec<u8>, usize) {
        let at = self.storages_at;
        self.w.0[at..at + 4].copy_from_slice(&self.storages.to_le_bytes());
        self.w.u32(sequences.len() as u32);
        for (id, v) in sequences {
            self.w.u64(id);
            self.w.i64(v.last);
            self.w.u8(u8::from(v.called));
        }
        (self.w.0, self.rows)
    }
}

impl Image {
    /// Serialises the image with its header (the checkpoint payload).
    pub fn encode(&self, header: &CheckpointHeader) -> Vec<u8> {
        let mut w = ImageWriter::new(header, self.next_oid, self.next_storage, self.catalog.values());
        for (id, rows) in &self.storages {
            w.storage(*id, rows.values().map(Vec::as_slice));
        }
        w.finish(self.sequences.iter().map(|(id, v)| (*id, *v))).0
    }

    pub fn decode(b: &[u8]) -> Result<(CheckpointHeader, Image), SqlError> {
        if b.get(..4) != Some(MAGIC.as_slice()) {
            return Err(SqlError::new(
                snapscale_sqlstate::SqlState::DATA_CORRUPTED,
                "the checkpoint was written by an older, incompatible version of snapscale",
            ));
        }
        let mut r = Reader::new(&b[4..]);
        let cut = r.u64()?;
        let next_xid = Xid(r.u64()?);
        let n = r.u32()? as usize;
        if n > r.remaining() / 16 {
            return Err(corrupt());
        }
        let running = (0..n).map(|_| Ok((Xid(r.u64()?), Xid(r.u64()?)))).collect::<Result<_, SqlError>>()?;
        let header = CheckpointHeader { cut, next_xid, running };
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
        if !r.done() {
            for _ in 0..r.u32()? {
                let id = r.u64()?;
                let last = r.i64()?;
                let called = r.u8()? != 0;
                image.sequences.insert(id, SeqValue { last, called });
            }
        }
        if !r.done() {
            return Err(corrupt());
        }
        Ok((header, image))
    }

    fn note_entry(&mut self, e: &RelEntry) {
        self.next_oid = self.next_oid.max(e.oid + 1);
        for i in &e.indexes {
            self.next_oid = self.next_oid.max(i.oid + 1);
        }
        self.next_storage = self.next_storage.max(e.storage + 1);
    }

    /// Applies one committed change.
    pub fn apply(&mut self, change: &Redo) -> Result<(), SqlError> {
        match change {
            Redo::Insert { storage, row } | Redo::Update { storage, row } => {
                self.storages.entry(*storage).or_default().insert(row_id(row)?, row.to_vec());
            }
            Redo::Delete { storage, row_id } => {
                if let Some(rows) = self.storages.get_mut(storage) {
                    rows.remove(row_id);
                }
            }
            Redo::Catalog(e) => {
                self.note_entry(e);
                // A new storage id (CREATE, TRUNCATE) starts empty; the
                // one it replaced is gone.
                if let Some(old) = self.catalog.get(&e.oid) {
                    if old.storage != e.storage {
                        self.storages.remove(&old.storage);
                    }
                }
                self.storages.entry(e.storage).or_default();
                self.catalog.insert(e.oid, (**e).clone());
            }
            Redo::Drop(oid) => {
                if let Some(old) = self.catalog.remove(oid) {
                    self.storages.remove(&old.storage);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::catalog::{ColumnDef, IndexDef, Row};
    use crate::user_types::TypeDef;
    use snapscale_values::SqlType;

    #[test]
    fn images_apply_changes_and_round_trip() {
        let entry = RelEntry {
            options: vec!["autovacuum_enabled=false".into(), "toast.vacuum_truncate=off".into()],
            comments: vec![
                crate::catalog::Comment { on: crate::catalog::Described::Relation, text: "a table".into() },
                crate::catalog::Comment {
                    on: crate::catalog::Described::Column("b".into()),
                    text: "é".into(),
                },
                crate::catalog::Comment {
                    on: crate::catalog::Described::Constraint("t_c_fkey".into()),
                    text: "k".into(),
                },
                crate::catalog::Comment {
                    on: crate::catalog::Described::Index("t_pkey".into()),
                    text: "".into(),
                },
                crate::catalog::Comment {
                    on: crate::catalog::Described::Trigger("t_trig".into()),
                    text: "on insert".into(),
                },
            ],
            oid: 16384,
            name: "t".into(),
            temp_owner: None,
            namespace: 16999,
            is_schema: false,
            storage: 3,
            columns: vec![
                ColumnDef {
                    name: "a".into(),
                    ty: SqlType::Int4,
                    not_null: true,
                    default: None,
                    domain: None,
                    typmod: None,
                    generated: None,
                    identity: Some(crate::catalog::Identity::Always),
                    missing: None,
                    storage: None,
                    stats_target: None,
                },
                ColumnDef {
                    name: "b".into(),
                    ty: SqlType::Varchar(Some(5)),
                    not_null: false,
                    default: Some("'x' || 'y'".into()),
                    domain: Some(16390),
                    typmod: Some(3),
                    generated: Some("a * 2".into()),
                    identity: None,
                    missing: Some(Value::Text("added".into())),
                    storage: Some(b'm'),
                    stats_target: Some(150),
                },
                ColumnDef {
                    name: "c".into(),
                    ty: SqlType::Char(2),
                    not_null: false,
                    default: None,
                    domain: None,
                    typmod: None,
                    generated: None,
                    identity: None,
                    missing: None,
                    storage: None,
                    stats_target: None,
                },
            ],
            indexes: vec![
                IndexDef {
                    oid: 16385,
                    name: "t_pkey".into(),
                    columns: vec![0],
                    unique: true,
                    primary: true,
                    constraint: true,
                    include: Vec::new(),
                    nulls_not_distinct: false,
                    exprs: Vec::new(),
                    predicate: None,
                    storage: 16385,
                    options: vec!["fillfactor=70".into()],
                    opclasses: Vec::new(),
                    orders: Vec::new(),
                },
                IndexDef {
                    oid: 16386,
                    name: "t_b_c_idx".into(),
                    columns: vec![1, crate::catalog::EXPRESSION],
                    unique: true,
                    primary: false,
                    constraint: false,
                    include: vec![2, 0],
                    nulls_not_distinct: true,
                    exprs: vec!["lower(b)".into()],
                    predicate: Some("c > 0".into()),
                    storage: 16399,
                    options: Vec::new(),
                    opclasses: vec![String::new(), "text_pattern_ops".into()],
                    orders: vec![0, 3],
                },
            ],
            sequence: None,
            checks: vec![
                crate::user_types::CheckDef {
                    name: "t_a_check".into(),
                    expr: "a > 0".into(),
                    validated: true,
                },
                crate::user_types::CheckDef {
                    name: "later".into(),
                    expr: "b <> 'z'".into(),
                    validated: false,
                },
            ],
            foreign_keys: vec![crate::catalog::ForeignKeyDef {
                oid: 16391,
                name: "t_c_fkey".into(),
                columns: vec![2, 0],
                parent: 16390,
                parent_columns: vec![1, 0],
                on_delete: crate::catalog::FkAction::Cascade,
                on_update: crate::catalog::FkAction::SetDefault,
                match_full: true,
                validated: false,
                deferrable: true,
                initially_deferred: true,
                delete_set_columns: vec![2],
            }],
            referenced_by: vec![16384, 16400],
            user_type: None,
            view: None,
            routine: None,
            // Both with every optional part, and without.
            triggers: vec![
                crate::triggers::TriggerDef {
                    oid: 16500,
                    name: "full".into(),
                    function: 16501,
                    timing: crate::triggers::TriggerTiming::After,
                    events: crate::triggers::events::UPDATE | crate::triggers::events::DELETE,
                    row: true,
                    columns: vec!["b".into()],
                    when: Some("old.* IS DISTINCT FROM new.*".into()),
                    args: vec!["x".into(), "".into()],
                    enabled: b'D',
                    constraint: true,
                    deferrable: true,
                    initially_deferred: true,
                    old_table: Some("o".into()),
                    new_table: Some("n".into()),
                },
                crate::triggers::TriggerDef {
                    oid: 16502,
                    name: "plain".into(),
                    function: 16501,
                    timing: crate::triggers::TriggerTiming::InsteadOf,
                    events: crate::triggers::events::INSERT,
                    row: false,
                    columns: Vec::new(),
                    when: None,
                    args: Vec::new(),
                    enabled: b'O',
                    constraint: false,
                    deferrable: false,
                    initially_deferred: false,
                    old_table: None,
                    new_table: None,
                },
            ],
        };
        let mut image = Image::default();
        image.sequences.insert(9, SeqValue { last: 40, called: true });
        image.apply(&Redo::Catalog(Arc::new(entry.clone()))).unwrap();
        let row: Vec<Value> = vec![Value::Int(1), Value::Text("é".into()), Value::Null, Value::Int(7)];
        image.apply(&Redo::Insert { storage: 3, row: Row::from(row.clone()) }).unwrap();
        let row2 = vec![Value::Int(2), Value::Float(0.5), Value::Date(-1), Value::Int(8)];
        image.apply(&Redo::Insert { storage: 3, row: Row::from(row2) }).unwrap();
        image.apply(&Redo::Delete { storage: 3, row_id: 8 }).unwrap();
        assert_eq!(image.catalog[&16384], entry);
        assert_eq!(image.storages[&3].values().cloned().collect::<Vec<_>>(), vec![row]);
        assert_eq!((image.next_oid, image.next_storage), (16387, 4));
        let header = CheckpointHeader {
            cut: 99,
            next_xid: Xid(12),
            running: vec![(Xid(10), Xid(0)), (Xid(11), Xid(10))],
        };
        let (h, back) = Image::decode(&image.encode(&header)).unwrap();
        assert_eq!(h, header);
        assert_eq!(back.catalog, image.catalog);
        assert_eq!(back.storages, image.storages);
        assert_eq!(back.sequences, image.sequences);
        // A view's definition round-trips in its entry.
        let view = RelEntry {
            oid: 16500,
            name: "v".into(),
            storage: 30,
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            indexes: Vec::new(),
            checks: Vec::new(),
            view: Some(crate::catalog::ViewDef {
                query: "SELECT t.a FROM t WHERE t.a > 1".into(),
                check_option: Some(crate::catalog::CheckOption::Cascaded),
                depends_on: vec![16384, 16390],
                materialized: None,
            }),
            ..entry.clone()
        };
        image.apply(&Redo::Catalog(Arc::new(view.clone()))).unwrap();
        let (_, back) = Image::decode(&image.encode(&header)).unwrap();
        assert_eq!(back.catalog[&16500], view);
        image.apply(&Redo::Drop(16500)).unwrap();
        // A routine's definition round-trips in its entry, in a schema.
        use crate::routines::{ArgMode, RoutineArg, RoutineDef, RoutineKind, Volatility};
        let routine = RelEntry {
            namespace: 16600,
            routine: Some(RoutineDef {
                kind: RoutineKind::Function,
                language: "sql".into(),
                args: vec![
                    RoutineArg { name: "a".into(), ty: SqlType::Int4, mode: ArgMode::In, default: None },
                    RoutineArg {
                        name: String::new(),
                        ty: SqlType::Text,
                        mode: ArgMode::InOut,
                        default: Some("'x'::text".into()),
                    },
                ],
                returns: SqlType::Record(snapscale_values::Rec::Anonymous),
                returns_set: true,
                table_columns: vec![("n".into(), SqlType::Int8)],
                body: "SELECT $1, $2".into(),
                volatility: Volatility::Stable,
                strict: true,
                security_definer: false,
                leakproof: true,
                atomic: true,
                parallel: b'u',
                cost: 100.0,
                rows: 1000.0,
                row_type: Some(crate::routines::RowType {
                    name: "t".into(),
                    columns: vec![("a".into(), SqlType::Int4), ("b".into(), SqlType::Text)],
                }),
                aggregate: None,
            }),
            ..RelEntry::empty(16501, "f", 16600, 31)
        };
        image.apply(&Redo::Catalog(Arc::new(routine.clone()))).unwrap();
        let (_, back) = Image::decode(&image.encode(&header)).unwrap();
        assert_eq!(back.catalog[&16501], routine);
        image.apply(&Redo::Drop(16501)).unwrap();
        // An aggregate's definition round-trips with its routine row.
        use crate::routines::{AggSupport, AggregateDef};
        let support = |name: &str, oid: u32| AggSupport { name: name.into(), oid };
        let aggregate = RelEntry {
            routine: Some(RoutineDef {
                kind: RoutineKind::Aggregate,
                language: "internal".into(),
                args: vec![RoutineArg {
                    name: String::new(),
                    ty: SqlType::Poly(snapscale_values::Poly::AnyElement),
                    mode: ArgMode::In,
                    default: None,
                }],
                returns: SqlType::Poly(snapscale_values::Poly::AnyArray),
                returns_set: false,
                table_columns: Vec::new(),
                body: "aggregate_dummy".into(),
                volatility: Volatility::Immutable,
                strict: false,
                security_definer: false,
                leakproof: false,
                atomic: false,
                parallel: b's',
                cost: 1.0,
                rows: 0.0,
                row_type: None,
                aggregate: Some(Box::new(AggregateDef {
                    kind: b'n',
                    direct_args: 0,
                    transfn: support("tfp", 16502),
                    finalfn: Some(support("ffp", 16503)),
                    combinefn: None,
                    serialfn: None,
                    deserialfn: None,
                    mtransfn: Some(support("float8pl", 0)),
                    minvtransfn: Some(support("float8mi", 0)),
                    mfinalfn: None,
                    final_extra: true,
                    mfinal_extra: false,
                    final_modify: b'r',
                    mfinal_modify: b'w',
                    state: SqlType::Poly(snapscale_values::Poly::AnyArray),
                    state_space: 10_000,
                    mstate: Some(SqlType::Float8),
                    mstate_space: 0,
                    init: Some("{}".into()),
                    minit: None,
                })),
            }),
            ..RelEntry::empty(16504, "agg", 16600, 32)
        };
        image.apply(&Redo::Catalog(Arc::new(aggregate.clone()))).unwrap();
        let (_, back) = Image::decode(&image.encode(&header)).unwrap();
        assert_eq!(back.catalog[&16504], aggregate);
        image.apply(&Redo::Drop(16504)).unwrap();
        // A sequence's definition round-trips in its entry.
        let seq = RelEntry {
            options: Vec::new(),
            comments: Vec::new(),
            oid: 16390,
            name: "s".into(),
            temp_owner: None,
            namespace: crate::catalog::PUBLIC_NAMESPACE,
            is_schema: false,
            storage: 9,
            columns: Vec::new(),
            indexes: Vec::new(),
            sequence: Some(crate::sequence::SequenceDef {
                ty: SqlType::Int4,
                increment: -2,
                min: -100,
                max: 7,
                start: 5,
                cycle: true,
                owned_by: Some(crate::sequence::OwnedBy {
                    table_oid: 16384,
                    table: "t".into(),
                    column: "a".into(),
                }),
            }),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            view: None,
            routine: None,
            triggers: Vec::new(),
            user_type: None,
        };
        image.apply(&Redo::Catalog(Arc::new(seq.clone()))).unwrap();
        let (_, back) = Image::decode(&image.encode(&header)).unwrap();
        assert_eq!(back.catalog[&16390], seq);
        image.apply(&Redo::Drop(16390)).unwrap();
        // User types round-trip, an enum's labels with their order keys,
        // and values of them in rows.
        let mut oids = 16400..;
        let mut def =
            crate::user_types::EnumDef::new(16395, &["a".into(), "b".into()], || oids.next().unwrap());
        def.add(16395, "between", Some(("b", true)), 16410, 3).unwrap();
        def.labels[0].name = "renamed".into();
        // Not logged: a transaction's own marks.
        def.labels[1].added_in = None;
        let value = Value::Enum(Arc::clone(&def.labels[1].cell));
        let domain = crate::user_types::DomainDef {
            base: SqlType::Numeric(-1),
            parent: Some(16395),
            not_null: true,
            default: Some("1".into()),
            checks: vec![crate::user_types::CheckDef {
                name: "pos".into(),
                expr: "VALUE > 0".into(),
                validated: false,
            }],
        };
        for (oid, t) in [(16395, TypeDef::Enum(def)), (16396, TypeDef::Domain(domain))] {
            let ty = RelEntry {
                options: Vec::new(),
                comments: Vec::new(),
                oid,
                name: format!("t{oid}"),
                temp_owner: None,
                namespace: crate::catalog::PUBLIC_NAMESPACE,
                is_schema: false,
                storage: 20 + u64::from(oid),
                columns: Vec::new(),
                indexes: Vec::new(),
                sequence: None,
                checks: Vec::new(),
                foreign_keys: Vec::new(),
                referenced_by: Vec::new(),
                view: None,
                routine: None,
                triggers: Vec::new(),
                user_type: Some(t),
            };
            image.apply(&Redo::Catalog(Arc::new(ty.clone()))).unwrap();
            let (_, back) = Image::decode(&image.encode(&header)).unwrap();
            assert_eq!(back.catalog[&oid], ty);
        }
        image
            .apply(&Redo::Insert { storage: 3, row: Row::from(vec![value.clone(), Value::Int(9)]) })
            .unwrap();
        let (_, back) = Image::decode(&image.encode(&header)).unwrap();
        let Value::Enum(label) = &back.storages[&3][&9][0] else { panic!("an enum value") };
        assert_eq!((label.oid, &*label.name()), (16410, "between"));
        image.apply(&Redo::Drop(16395)).unwrap();
        image.apply(&Redo::Drop(16396)).unwrap();
        // TRUNCATE: the entry names new storage; the old rows are gone.
        let mut truncated = entry.clone();
        truncated.storage = 4;
        image.apply(&Redo::Catalog(Arc::new(truncated))).unwrap();
        assert!(!image.storages.contains_key(&3) && image.storages[&4].is_empty());
        image.apply(&Redo::Drop(16384)).unwrap();
        assert!(image.catalog.is_empty() && image.storages.is_empty());
        assert!(Image::decode(&[1, 2, 3]).is_err());
        assert!(Image::decode(b"IMG2\x01").is_err());
    }
}
