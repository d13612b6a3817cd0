//! The byte codec of WAL records and checkpoint images: little-endian
//! integers, strings as a u32 length and UTF-8, rows, types and relation
//! entries (formats in `mod.rs`).

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use crate::catalog::{
    CheckOption, ColumnDef, Comment, Described, ForeignKeyDef, Identity, IndexDef, RelEntry, ViewDef,
    EXPRESSION,
};
use crate::routines::{
    AggSupport, AggregateDef, ArgMode, RoutineArg, RoutineDef, RoutineKind, RowType, Volatility,
};
use crate::sequence::{OwnedBy, SequenceDef};
use crate::triggers::{TriggerDef, TriggerTiming};
use crate::user_types::{CheckDef, DomainDef, EnumDef, EnumDefLabel, TypeDef};

#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.u64(v as u64);
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A list of strings: its length, then each.
    pub fn strings(&mut self, list: &[String]) {
        self.u16(list.len() as u16);
        for s in list {
            self.str(s);
        }
    }
    pub fn str(&mut self, s: &str) {
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
            Value::TimestampTz(t) => {
                self.u8(8);
                self.u64(*t as u64);
            }
            // Tag 7 (no months) stays readable; intervals are written
            // under 17 with their months.
            Value::Interval(i) => {
                self.u8(17);
                self.u32(i.months as u32);
                self.u32(i.days as u32);
                self.u64(i.micros as u64);
            }
            // Tag 9 is a one-dimensional array from 1 (or the empty
            // array); any other shape is written under 23 with its
            // dimensions first.
            Value::Array(array) => {
                if array.ndims() <= 1 && array.default_bounds() {
                    self.u8(9);
                } else {
                    self.u8(23);
                    self.u8(array.ndims() as u8);
                    for d in array.dims() {
                        self.u32(d.lower as u32);
                        self.u32(d.len as u32);
                    }
                }
                self.u32(array.len() as u32);
                for v in array.iter() {
                    self.value(v);
                }
            }
            // Records are never stored: a query's values only.
            Value::Record(fields) => {
                self.u8(11);
                self.u32(fields.len() as u32);
                for v in fields.iter() {
                    self.value(v);
                }
            }
            Value::Reg(oid, name) => {
                self.u8(10);
                self.u32(*oid);
                self.str(name);
            }
            Value::Uuid(u) => {
                self.u8(12);
                self.0.extend_from_slice(u);
            }
            Value::Bytes(b) => {
                self.u8(13);
                self.u32(b.len() as u32);
                self.0.extend_from_slice(b);
            }
            Value::Numeric(n) => {
                self.u8(14);
                n.encode(&mut self.0);
            }
            Value::Float4(f) => {
                self.u8(18);
                self.u32(f.to_bits());
            }
            Value::Json(text) => {
                self.u8(15);
                self.str(text);
            }
            Value::Jsonb(j) => {
                self.u8(16);
                j.encode(&mut self.0);
            }
            Value::JsonPath(p) => {
                self.u8(19);
                p.encode(&mut self.0);
            }
            Value::Time(t) => {
                self.u8(20);
                self.u64(*t as u64);
            }
            Value::TimeTz(t) => {
                self.u8(21);
                self.u64(t.micros as u64);
                self.u32(t.zone as u32);
            }
            // Self-contained: recovery meets values before or after their
            // type's definition (`EnumRegistry` shares them again).
            Value::Enum(l) => {
                self.u8(22);
                self.enum_label(l, &l.name());
            }
        }
    }
    fn enum_label(&mut self, l: &snapscale_values::EnumLabel, name: &str) {
        self.u32(l.oid);
        self.u32(l.type_oid);
        l.key.encode(&mut self.0);
        self.str(name);
    }
    fn type_def(&mut self, t: &TypeDef) {
        match t {
            TypeDef::Enum(e) => {
                self.u8(1);
                self.u32(e.labels.len() as u32);
                for l in &e.labels {
                    self.enum_label(&l.cell, &l.name);
                    self.u32(l.sort_order.to_bits());
                }
            }
            // Its attributes are the entry's columns.
            TypeDef::Composite => self.u8(3),
            TypeDef::Domain(d) => {
                self.u8(2);
                self.ty(d.base);
                // Bit 3: each check is followed by whether it is validated
                // (older records have none, and every check validated).
                let flags = u8::from(d.parent.is_some())
                    | (u8::from(d.not_null) << 1)
                    | (u8::from(d.default.is_some()) << 2)
                    | 8;
                self.u8(flags);
                if let Some(p) = d.parent {
                    self.u32(p);
                }
                if let Some(x) = &d.default {
                    self.str(x);
                }
                self.u16(d.checks.len() as u16);
                for c in &d.checks {
                    self.str(&c.name);
                    self.str(&c.expr);
                    self.u8(u8::from(c.validated));
                }
            }
        }
    }
    pub fn row(&mut self, row: &[Value]) {
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
            SqlType::Interval => (10, u32::MAX),
            SqlType::TimestampTz => (11, u32::MAX),
            SqlType::Oid => (12, u32::MAX),
            SqlType::Name => (13, u32::MAX),
            SqlType::Char1 => (14, u32::MAX),
            // An array's element type is the type with its code.
            SqlType::Array(snapscale_values::Elem::Enum(u)) => {
                self.u8(32);
                self.u32(u.oid());
                self.str(u.name());
                return;
            }
            SqlType::Array(snapscale_values::Elem::Composite(u)) => {
                self.u8(35);
                self.u32(u.oid());
                self.str(u.name());
                return;
            }
            SqlType::Array(e) => (15, e.ty().oid()),
            SqlType::Int2Vector => (16, u32::MAX),
            SqlType::OidVector => (17, u32::MAX),
            SqlType::Reg(r) => (18, SqlType::Reg(r).oid()),
            SqlType::Record(snapscale_values::Rec::ExpandArray(e)) => (19, e.ty().oid()),
            SqlType::Record(snapscale_values::Rec::KeyValue(e)) => (26, e.ty().oid()),
            SqlType::Record(snapscale_values::Rec::Anonymous) => (34, u32::MAX),
            // No column has this type (`SqlType::storable`).
            SqlType::Void => (20, u32::MAX),
            SqlType::Trigger => (36, u32::MAX),
            SqlType::Refcursor => (38, u32::MAX),
            SqlType::Poly(p) => (37, p.oid()),
            SqlType::Uuid => (21, u32::MAX),
            SqlType::Bytea => (22, u32::MAX),
            // The type modifier, -1 (none) as u32::MAX.
            SqlType::Numeric(typmod) => (23, typmod as u32),
            SqlType::Json => (24, u32::MAX),
            SqlType::Float4 => (27, u32::MAX),
            SqlType::JsonPath => (28, u32::MAX),
            SqlType::Time => (29, u32::MAX),
            SqlType::TimeTz => (30, u32::MAX),
            SqlType::Jsonb => (25, u32::MAX),
            SqlType::Composite(u) => {
                self.u8(33);
                self.u32(u.oid());
                self.str(u.name());
                return;
            }
            SqlType::Enum(u) => {
                self.u8(31);
                self.u32(u.oid());
                self.str(u.name());
                return;
            }
        };
        self.u8(tag);
        self.u32(len);
    }
    pub fn entry(&mut self, e: &RelEntry) {
        self.u32(e.oid);
        self.str(&e.name);
        self.u64(e.storage);
        // The top bit: a sequence's definition follows the indexes (data
        // written before sequences existed never has it); the next: a
        // user type's definition follows that; the third: CHECK
        // constraints follow them; the fourth: foreign keys; the fifth: a
        // view's definition (so a relation has at most 2047 columns here;
        // PostgreSQL's limit is 1600).
        let flags = if e.sequence.is_some() { 0x8000 } else { 0 }
            | if e.user_type.is_some() { 0x4000 } else { 0 }
            | if e.checks.is_empty() { 0 } else { 0x2000 }
            | if e.foreign_keys.is_empty() && e.referenced_by.is_empty() { 0 } else { 0x1000 }
            | if e.view.is_some() { 0x0800 } else { 0 };
        self.u16(e.columns.len() as u16 | flags);
        for c in &e.columns {
            self.str(&c.name);
            self.ty(c.ty);
            // Bit 0: NOT NULL; bit 1: a default's text follows (data
            // written before defaults existed has only bit 0); bit 2: a
            // domain's oid follows; bit 3: a type modifier follows; bit 4:
            // a generation expression's text follows; bit 5: an identity
            // column, bit 6: GENERATED ALWAYS; bit 7: a second flags byte
            // follows, whose bit 0 says the value rows stored before the
            // column was added read in it follows (MISSING-COLUMN), bit 1
            // a storage letter, bit 2 a statistics target.
            self.u8(u8::from(c.not_null)
                | (u8::from(c.default.is_some()) << 1)
                | (u8::from(c.domain.is_some()) << 2)
                | (u8::from(c.typmod.is_some()) << 3)
                | (u8::from(c.generated.is_some()) << 4)
                | (u8::from(c.identity.is_some()) << 5)
                | (u8::from(c.identity == Some(Identity::Always)) << 6)
                | (u8::from(c.missing.is_some() || c.storage.is_some() || c.stats_target.is_some()) << 7));
            let more = u8::from(c.missing.is_some())
                | (u8::from(c.storage.is_some()) << 1)
                | (u8::from(c.stats_target.is_some()) << 2);
            if more != 0 {
                self.u8(more);
            }
            if let Some(d) = &c.default {
                self.str(d);
            }
            if let Some(d) = c.domain {
                self.u32(d);
            }
            if let Some(t) = c.typmod {
                self.u32(t as u32);
            }
            if let Some(g) = &c.generated {
                self.str(g);
            }
            if let Some(v) = &c.missing {
                self.value(v);
            }
            if let Some(s) = c.storage {
                self.u8(s);
            }
            if let Some(t) = c.stats_target {
                self.u32(t as u32);
            }
        }
        // The top bit: the relation's storage parameters follow its view;
        // the next: its comments follow them; the third: its namespace
        // follows them (else it is public); the fourth: the row is a
        // schema's; the fifth: a routine's definition follows the
        // namespace; the sixth: triggers follow that (no table has 1 024
        // indexes).
        let namespaced = e.namespace != crate::catalog::PUBLIC_NAMESPACE;
        self.u16(
            e.indexes.len() as u16
                | if e.options.is_empty() { 0 } else { 0x8000 }
                | if e.comments.is_empty() { 0 } else { 0x4000 }
                | if namespaced { 0x2000 } else { 0 }
                | if e.is_schema { 0x1000 } else { 0 }
                | if e.routine.is_some() { 0x0800 } else { 0 }
                | if e.triggers.is_empty() { 0 } else { 0x0400 },
        );
        for i in &e.indexes {
            self.u32(i.oid);
            self.str(&i.name);
            self.u16(i.columns.len() as u16);
            for &c in &i.columns {
                // An expression's key part is u16::MAX (no table has so
                // many columns).
                self.u16(if c == EXPRESSION { u16::MAX } else { c as u16 });
            }
            // Bit 0: unique; bit 1: a constraint's index (data written
            // before the bit existed has it clear); bit 2: NULLS NOT
            // DISTINCT; bit 3: INCLUDE columns follow; bit 4: key
            // expressions follow; bit 5: a predicate follows; bit 6: its
            // storage follows (else it is its oid); bit 7: storage
            // parameters follow.
            let include = !i.include.is_empty();
            let exprs = !i.exprs.is_empty();
            let storage = i.storage != i.oid;
            self.u8(u8::from(i.unique)
                | (u8::from(i.constraint) << 1)
                | (u8::from(i.nulls_not_distinct) << 2)
                | (u8::from(include) << 3)
                | (u8::from(exprs) << 4)
                | (u8::from(i.predicate.is_some()) << 5)
                | (u8::from(storage) << 6)
                | (u8::from(!i.options.is_empty()) << 7));
            // Bit 0: PRIMARY KEY; bit 1: operator classes follow; bit 2:
            // the parts' orders follow.
            self.u8(u8::from(i.primary)
                | (u8::from(!i.opclasses.is_empty()) << 1)
                | (u8::from(!i.orders.is_empty()) << 2));
            if include {
                self.u16(i.include.len() as u16);
                for &c in &i.include {
                    self.u16(c as u16);
                }
            }
            if exprs {
                self.u16(i.exprs.len() as u16);
                for e in &i.exprs {
                    self.str(e);
                }
            }
            if let Some(p) = &i.predicate {
                self.str(p);
            }
            if storage {
                self.u32(i.storage);
            }
            if !i.options.is_empty() {
                self.strings(&i.options);
            }
            if !i.opclasses.is_empty() {
                self.strings(&i.opclasses);
            }
            if !i.orders.is_empty() {
                self.u16(i.orders.len() as u16);
                for &o in &i.orders {
                    self.u8(o);
                }
            }
        }
        if let Some(s) = &e.sequence {
            self.ty(s.ty);
            self.i64(s.increment);
            self.i64(s.min);
            self.i64(s.max);
            self.i64(s.start);
            self.u8(u8::from(s.cycle));
            match &s.owned_by {
                Some(o) => {
                    self.u8(1);
                    self.u32(o.table_oid);
                    self.str(&o.table);
                    self.str(&o.column);
                }
                None => self.u8(0),
            }
        }
        if let Some(t) = &e.user_type {
            self.type_def(t);
        }
        if !e.checks.is_empty() {
            self.u16(e.checks.len() as u16);
            for c in &e.checks {
                self.check(c);
            }
        }
        if !e.foreign_keys.is_empty() || !e.referenced_by.is_empty() {
            self.u16(e.foreign_keys.len() as u16);
            for fk in &e.foreign_keys {
                self.foreign_key(fk);
            }
            self.u16(e.referenced_by.len() as u16);
            for &oid in &e.referenced_by {
                self.u32(oid);
            }
        }
        if let Some(v) = &e.view {
            self.str(&v.query);
            // A view's CHECK OPTION (0, 1, 2), or a materialized view's
            // state (3: populated, 4: not).
            self.u8(match (v.materialized, v.check_option) {
                (Some(true), _) => 3,
                (Some(false), _) => 4,
                (None, None) => 0,
                (None, Some(CheckOption::Local)) => 1,
                (None, Some(CheckOption::Cascaded)) => 2,
            });
            self.u16(v.depends_on.len() as u16);
            for &oid in &v.depends_on {
                self.u32(oid);
            }
        }
        if !e.options.is_empty() {
            self.strings(&e.options);
        }
        if !e.comments.is_empty() {
            self.u16(e.comments.len() as u16);
            for c in &e.comments {
                // The part's kind (0: the relation), its name, the text.
                let (kind, name) = match &c.on {
                    Described::Relation => (0, None),
                    Described::Column(n) => (1, Some(n)),
                    Described::Constraint(n) => (2, Some(n)),
                    Described::Index(n) => (3, Some(n)),
                    Described::Trigger(n) => (4, Some(n)),
                };
                self.u8(kind);
                if let Some(n) = name {
                    self.str(n);
                }
                self.str(&c.text);
            }
        }
        if namespaced {
            self.u32(e.namespace);
        }
        if let Some(r) = &e.routine {
            self.routine(r);
        }
        if !e.triggers.is_empty() {
            self.u16(e.triggers.len() as u16);
            for t in &e.triggers {
                self.trigger(t);
            }
        }
    }

    fn trigger(&mut self, t: &TriggerDef) {
        self.u32(t.oid);
        self.str(&t.name);
        self.u32(t.function);
        self.u8(match t.timing {
            TriggerTiming::Before => b'B',
            TriggerTiming::After => b'A',
            TriggerTiming::InsteadOf => b'I',
        });
        self.u8(t.events);
        // Bit 0: FOR EACH ROW; bit 1: a WHEN condition follows the
        // arguments; bit 2: a constraint trigger; bit 3: DEFERRABLE; bit
        // 4: INITIALLY DEFERRED; bit 5: an old transition table's name
        // follows; bit 6: a new one's.
        self.u8(u8::from(t.row)
            | (u8::from(t.when.is_some()) << 1)
            | (u8::from(t.constraint) << 2)
            | (u8::from(t.deferrable) << 3)
            | (u8::from(t.initially_deferred) << 4)
            | (u8::from(t.old_table.is_some()) << 5)
            | (u8::from(t.new_table.is_some()) << 6));
        self.u8(t.enabled);
        self.strings(&t.columns);
        self.strings(&t.args);
        for text in [&t.when, &t.old_table, &t.new_table].into_iter().flatten() {
            self.str(text);
        }
    }

    fn routine(&mut self, r: &RoutineDef) {
        self.u8(match r.kind {
            RoutineKind::Function => b'f',
            RoutineKind::Procedure => b'p',
            RoutineKind::Aggregate => b'a',
        });
        self.str(&r.language);
        self.u16(r.args.len() as u16);
        for a in &r.args {
            self.str(&a.name);
            self.ty(a.ty);
            self.u8(a.mode.code() as u8);
            match &a.default {
                Some(d) => {
                    self.u8(1);
                    self.str(d);
                }
                None => self.u8(0),
            }
        }
        self.ty(r.returns);
        self.u16(r.table_columns.len() as u16);
        for (name, ty) in &r.table_columns {
            self.str(name);
            self.ty(*ty);
        }
        self.str(&r.body);
        self.u8(r.volatility.code() as u8);
        // Bit 0: returns a set; bit 1: STRICT; bit 2: SECURITY DEFINER;
        // bit 3: LEAKPROOF; bit 4: a row type follows the cost and rows;
        // bit 5: a BEGIN ATOMIC body.
        self.u8(u8::from(r.returns_set)
            | (u8::from(r.strict) << 1)
            | (u8::from(r.security_definer) << 2)
            | (u8::from(r.leakproof) << 3)
            | (u8::from(r.row_type.is_some()) << 4)
            | (u8::from(r.atomic) << 5));
        self.u8(r.parallel);
        self.u32(r.cost.to_bits());
        self.u32(r.rows.to_bits());
        if let Some(t) = &r.row_type {
            self.str(&t.name);
            self.u16(t.columns.len() as u16);
            for (name, ty) in &t.columns {
                self.str(name);
                self.ty(*ty);
            }
        }
        // An aggregate's definition follows (its kind says so).
        if let (RoutineKind::Aggregate, Some(a)) = (r.kind, &r.aggregate) {
            self.aggregate(a);
        }
    }

    fn aggregate(&mut self, a: &AggregateDef) {
        self.u8(a.kind);
        self.u16(a.direct_args);
        self.support(Some(&a.transfn));
        for f in
            [&a.finalfn, &a.combinefn, &a.serialfn, &a.deserialfn, &a.mtransfn, &a.minvtransfn, &a.mfinalfn]
        {
            self.support(f.as_ref());
        }
        self.u8(u8::from(a.final_extra) | (u8::from(a.mfinal_extra) << 1));
        self.u8(a.final_modify);
        self.u8(a.mfinal_modify);
        self.ty(a.state);
        self.u32(a.state_space as u32);
        match a.mstate {
            Some(t) => {
                self.u8(1);
                self.ty(t);
            }
            None => self.u8(0),
        }
        self.u32(a.mstate_space as u32);
        for text in [&a.init, &a.minit] {
            match text {
                Some(t) => {
                    self.u8(1);
                    self.str(t);
                }
                None => self.u8(0),
            }
        }
    }

    /// An aggregate's support function: present or not, then its name and
    /// oid.
    fn support(&mut self, f: Option<&AggSupport>) {
        match f {
            Some(f) => {
                self.u8(1);
                self.str(&f.name);
                self.u32(f.oid);
            }
            None => self.u8(0),
        }
    }

    fn foreign_key(&mut self, fk: &ForeignKeyDef) {
        self.u32(fk.oid);
        self.str(&fk.name);
        for cols in [&fk.columns, &fk.parent_columns] {
            self.u16(cols.len() as u16);
            for &c in cols {
                self.u16(c as u16);
            }
        }
        self.u32(fk.parent);
        let (on_delete, on_update) = fk.action_codes();
        self.u8(on_delete);
        self.u8(on_update);
        // Bit 0: MATCH FULL; bit 1: validated; bit 2: DEFERRABLE; bit 3:
        // INITIALLY DEFERRED (older records have neither); bit 4: ON
        // DELETE SET's column list follows.
        self.u8(u8::from(fk.match_full)
            | (u8::from(fk.validated) << 1)
            | (u8::from(fk.deferrable) << 2)
            | (u8::from(fk.initially_deferred) << 3)
            | (u8::from(!fk.delete_set_columns.is_empty()) << 4));
        if !fk.delete_set_columns.is_empty() {
            self.u16(fk.delete_set_columns.len() as u16);
            for &c in &fk.delete_set_columns {
                self.u16(c as u16);
            }
        }
    }

    fn check(&mut self, c: &CheckDef) {
        self.str(&c.name);
        self.str(&c.expr);
        self.u8(u8::from(c.validated));
    }
}

pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

pub fn corrupt() -> SqlError {
    SqlError::new(SqlState::DATA_CORRUPTED, "a write-ahead log record or checkpoint is malformed")
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], SqlError> {
        let s = self.b.get(self.at..self.at + n).ok_or_else(corrupt)?;
        self.at += n;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, SqlError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, SqlError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    pub fn u32(&mut self) -> Result<u32, SqlError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn i64(&mut self) -> Result<i64, SqlError> {
        Ok(self.u64()? as i64)
    }
    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.b.len() - self.at
    }
    /// True once every byte was read (a record with trailing bytes is malformed).
    pub fn done(&self) -> bool {
        self.at == self.b.len()
    }
    pub fn u64(&mut self) -> Result<u64, SqlError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// A list of column positions: its length, then each.
    fn columns(&mut self) -> Result<Vec<usize>, SqlError> {
        (0..self.u16()?).map(|_| self.u16().map(usize::from)).collect()
    }

    pub fn strings(&mut self) -> Result<Vec<String>, SqlError> {
        (0..self.u16()?).map(|_| self.str()).collect()
    }
    pub fn str(&mut self) -> Result<String, SqlError> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| corrupt())
    }
    /// A count, then that many values.
    fn values(&mut self) -> Result<Vec<Value>, SqlError> {
        let n = self.u32()? as usize;
        // Every value takes at least a byte: a corrupt count cannot make
        // this allocate more than what is left.
        if n > self.b.len() - self.at {
            return Err(corrupt());
        }
        (0..n).map(|_| self.value()).collect()
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
            8 => Value::TimestampTz(self.u64()? as i64),
            7 => Value::Interval(snapscale_values::Interval {
                months: 0,
                days: self.u32()? as i32,
                micros: self.u64()? as i64,
            }),
            17 => Value::Interval(snapscale_values::Interval {
                months: self.u32()? as i32,
                days: self.u32()? as i32,
                micros: self.u64()? as i64,
            }),
            9 => Value::array(self.values()?),
            23 => {
                let ndims = self.u8()?;
                let mut dims = Vec::with_capacity(usize::from(ndims).min(snapscale_values::MAX_DIMS));
                for _ in 0..ndims {
                    let lower = self.u32()? as i32;
                    let len = self.u32()? as i32;
                    dims.push(snapscale_values::Dim { lower, len });
                }
                let items = self.values()?;
                if dims.iter().try_fold(1usize, |n, d| n.checked_mul(usize::try_from(d.len).ok()?))
                    != Some(items.len())
                {
                    return Err(corrupt());
                }
                let array = snapscale_values::Array::from_parts(dims, items).map_err(|_| corrupt())?;
                Value::Array(std::sync::Arc::new(array))
            }
            10 => Value::Reg(self.u32()?, self.str()?.into()),
            11 => {
                let n = self.u32()? as usize;
                if n > self.b.len() - self.at {
                    return Err(corrupt());
                }
                Value::Record((0..n).map(|_| self.value()).collect::<Result<Vec<_>, _>>()?.into())
            }
            12 => Value::Uuid(self.take(16)?.try_into().expect("16 bytes")),
            13 => {
                let n = self.u32()? as usize;
                Value::Bytes(self.take(n)?.into())
            }
            14 => {
                let (n, used) =
                    snapscale_values::numeric::Numeric::decode(&self.b[self.at..]).map_err(|_| corrupt())?;
                self.at += used;
                Value::Numeric(n)
            }
            15 => Value::Json(self.str()?.into()),
            18 => Value::Float4(f32::from_bits(self.u32()?)),
            20 => Value::Time(self.u64()? as i64),
            21 => Value::TimeTz(snapscale_values::TimeTz {
                micros: self.u64()? as i64,
                zone: self.u32()? as i32,
            }),
            19 => {
                let (p, used) =
                    snapscale_values::json::JsonPath::decode(&self.b[self.at..]).map_err(|_| corrupt())?;
                self.at += used;
                Value::JsonPath(p.into())
            }
            16 => {
                let (j, used) =
                    snapscale_values::json::Jsonb::decode(&self.b[self.at..]).map_err(|_| corrupt())?;
                self.at += used;
                Value::Jsonb(j)
            }
            22 => Value::Enum(self.enum_label()?.0),
            _ => return Err(corrupt()),
        })
    }
    fn enum_label(&mut self) -> Result<(std::sync::Arc<snapscale_values::EnumLabel>, String), SqlError> {
        let oid = self.u32()?;
        let type_oid = self.u32()?;
        let (key, used) = snapscale_values::OrderKey::decode(&self.b[self.at..]).ok_or_else(corrupt)?;
        self.at += used;
        let name = self.str()?;
        Ok((snapscale_values::EnumLabel::new(oid, type_oid, key, name.as_str().into()), name))
    }
    fn type_def(&mut self) -> Result<TypeDef, SqlError> {
        Ok(match self.u8()? {
            1 => {
                let n = self.u32()? as usize;
                if n > self.remaining() {
                    return Err(corrupt());
                }
                let mut labels = Vec::with_capacity(n);
                for _ in 0..n {
                    let (cell, name) = self.enum_label()?;
                    let sort_order = f32::from_bits(self.u32()?);
                    labels.push(EnumDefLabel { cell, name: name.into(), sort_order, added_in: None });
                }
                TypeDef::Enum(EnumDef { labels })
            }
            2 => {
                let base = self.ty()?;
                let flags = self.u8()?;
                if flags > 15 {
                    return Err(corrupt());
                }
                let parent = if flags & 1 != 0 { Some(self.u32()?) } else { None };
                let default = if flags & 4 != 0 { Some(self.str()?) } else { None };
                let checks = (0..self.u16()?)
                    .map(|_| {
                        let (name, expr) = (self.str()?, self.str()?);
                        let validated = flags & 8 == 0 || self.u8()? != 0;
                        Ok(CheckDef { name, expr, validated })
                    })
                    .collect::<Result<_, SqlError>>()?;
                TypeDef::Domain(DomainDef { base, parent, not_null: flags & 2 != 0, default, checks })
            }
            3 => TypeDef::Composite,
            _ => return Err(corrupt()),
        })
    }
    pub fn row(&mut self) -> Result<Vec<Value>, SqlError> {
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
            10 => SqlType::Interval,
            11 => SqlType::TimestampTz,
            12 => SqlType::Oid,
            13 => SqlType::Name,
            14 => SqlType::Char1,
            15 => SqlType::from_oid(len)
                .and_then(snapscale_values::Elem::of)
                .map(SqlType::Array)
                .ok_or_else(corrupt)?,
            16 => SqlType::Int2Vector,
            17 => SqlType::OidVector,
            18 => SqlType::from_oid(len).filter(|t| matches!(t, SqlType::Reg(_))).ok_or_else(corrupt)?,
            19 => SqlType::Record(snapscale_values::Rec::ExpandArray(
                SqlType::from_oid(len).and_then(snapscale_values::Elem::of).ok_or_else(corrupt)?,
            )),
            20 => SqlType::Void,
            36 => SqlType::Trigger,
            38 => SqlType::Refcursor,
            37 => SqlType::Poly(
                snapscale_values::Poly::ALL.into_iter().find(|p| p.oid() == len).ok_or_else(corrupt)?,
            ),
            26 => SqlType::Record(snapscale_values::Rec::KeyValue(
                SqlType::from_oid(len).and_then(snapscale_values::Elem::of).ok_or_else(corrupt)?,
            )),
            21 => SqlType::Uuid,
            22 => SqlType::Bytea,
            23 => SqlType::Numeric(len as i32),
            24 => SqlType::Json,
            27 => SqlType::Float4,
            28 => SqlType::JsonPath,
            29 => SqlType::Time,
            30 => SqlType::TimeTz,
            25 => SqlType::Jsonb,
            31 => SqlType::Enum(snapscale_values::UserType::new(len, &self.str()?)),
            34 => SqlType::Record(snapscale_values::Rec::Anonymous),
            33 => SqlType::Composite(snapscale_values::UserType::new(len, &self.str()?)),
            32 => SqlType::Array(snapscale_values::Elem::Enum(snapscale_values::UserType::new(
                len,
                &self.str()?,
            ))),
            35 => SqlType::Array(snapscale_values::Elem::Composite(snapscale_values::UserType::new(
                len,
                &self.str()?,
            ))),
            _ => return Err(corrupt()),
        })
    }
    pub fn entry(&mut self) -> Result<RelEntry, SqlError> {
        let oid = self.u32()?;
        let name = self.str()?;
        let storage = self.u64()?;
        let mut columns = Vec::new();
        let n = self.u16()?;
        let is_sequence = n & 0x8000 != 0;
        let is_type = n & 0x4000 != 0;
        let has_checks = n & 0x2000 != 0;
        let has_keys = n & 0x1000 != 0;
        let is_view = n & 0x0800 != 0;
        for _ in 0..n & 0x07ff {
            let name = self.str()?;
            let ty = self.ty()?;
            let flags = self.u8()?;
            let more = if flags & 128 != 0 { self.u8()? } else { 0 };
            if more > 7 {
                return Err(corrupt());
            }
            let default = if flags & 2 != 0 { Some(self.str()?) } else { None };
            let domain = if flags & 4 != 0 { Some(self.u32()?) } else { None };
            let typmod = if flags & 8 != 0 { Some(self.u32()? as i32) } else { None };
            let generated = if flags & 16 != 0 { Some(self.str()?) } else { None };
            let missing = if more & 1 != 0 { Some(self.value()?) } else { None };
            let storage = if more & 2 != 0 { Some(self.u8()?) } else { None };
            let stats_target = if more & 4 != 0 { Some(self.u32()? as i32) } else { None };
            columns.push(ColumnDef {
                name,
                ty,
                not_null: flags & 1 != 0,
                default,
                domain,
                typmod,
                generated,
                identity: match (flags & 32 != 0, flags & 64 != 0) {
                    (false, _) => None,
                    (true, true) => Some(Identity::Always),
                    (true, false) => Some(Identity::ByDefault),
                },
                missing,
                storage,
                stats_target,
            });
        }
        let mut indexes = Vec::new();
        let index_count = self.u16()?;
        for _ in 0..index_count & 0x03ff {
            let oid = self.u32()?;
            let name = self.str()?;
            let cols = (0..self.u16()?)
                .map(|_| self.u16().map(|c| if c == u16::MAX { EXPRESSION } else { usize::from(c) }))
                .collect::<Result<_, _>>()?;
            let flags = self.u8()?;
            let second = self.u8()?;
            if second > 7 {
                return Err(corrupt());
            }
            let primary = second & 1 != 0;
            let include = match flags & 8 != 0 {
                true => (0..self.u16()?).map(|_| self.u16().map(usize::from)).collect::<Result<_, _>>()?,
                false => Vec::new(),
            };
            let exprs = match flags & 16 != 0 {
                true => (0..self.u16()?).map(|_| self.str()).collect::<Result<_, _>>()?,
                false => Vec::new(),
            };
            let predicate = if flags & 32 != 0 { Some(self.str()?) } else { None };
            let storage = if flags & 64 != 0 { self.u32()? } else { oid };
            let options = if flags & 128 != 0 { self.strings()? } else { Vec::new() };
            let opclasses = if second & 2 != 0 { self.strings()? } else { Vec::new() };
            let orders = match second & 4 != 0 {
                true => (0..self.u16()?).map(|_| self.u8()).collect::<Result<_, _>>()?,
                false => Vec::new(),
            };
            // A primary key is a constraint whatever the bit says (data
            // written before the bit existed).
            indexes.push(IndexDef {
                oid,
                name,
                columns: cols,
                unique: flags & 1 != 0,
                primary,
                constraint: flags & 2 != 0 || primary,
                include,
                nulls_not_distinct: flags & 4 != 0,
                exprs,
                predicate,
                storage,
                options,
                opclasses,
                orders,
            });
        }
        let sequence = if is_sequence {
            Some(SequenceDef {
                ty: self.ty()?,
                increment: self.i64()?,
                min: self.i64()?,
                max: self.i64()?,
                start: self.i64()?,
                cycle: self.u8()? != 0,
                owned_by: match self.u8()? {
                    0 => None,
                    1 => Some(OwnedBy { table_oid: self.u32()?, table: self.str()?, column: self.str()? }),
                    _ => return Err(corrupt()),
                },
            })
        } else {
            None
        };
        let user_type = if is_type { Some(self.type_def()?) } else { None };
        let mut checks = Vec::new();
        if has_checks {
            for _ in 0..self.u16()? {
                checks.push(self.check()?);
            }
        }
        let (mut foreign_keys, mut referenced_by) = (Vec::new(), Vec::new());
        if has_keys {
            for _ in 0..self.u16()? {
                foreign_keys.push(self.foreign_key()?);
            }
            for _ in 0..self.u16()? {
                referenced_by.push(self.u32()?);
            }
        }
        let view = if is_view {
            let query = self.str()?;
            let (check_option, materialized) = match self.u8()? {
                0 => (None, None),
                1 => (Some(CheckOption::Local), None),
                2 => (Some(CheckOption::Cascaded), None),
                3 => (None, Some(true)),
                4 => (None, Some(false)),
                _ => return Err(corrupt()),
            };
            let depends_on = (0..self.u16()?).map(|_| self.u32()).collect::<Result<_, _>>()?;
            Some(ViewDef { query, check_option, depends_on, materialized })
        } else {
            None
        };
        let options = if index_count & 0x8000 != 0 { self.strings()? } else { Vec::new() };
        let mut comments = Vec::new();
        if index_count & 0x4000 != 0 {
            for _ in 0..self.u16()? {
                let on = match self.u8()? {
                    0 => Described::Relation,
                    1 => Described::Column(self.str()?),
                    2 => Described::Constraint(self.str()?),
                    3 => Described::Index(self.str()?),
                    4 => Described::Trigger(self.str()?),
                    _ => return Err(corrupt()),
                };
                comments.push(Comment { on, text: self.str()? });
            }
        }
        let namespace =
            if index_count & 0x2000 != 0 { self.u32()? } else { crate::catalog::PUBLIC_NAMESPACE };
        let routine = if index_count & 0x0800 != 0 { Some(self.routine()?) } else { None };
        let mut triggers = Vec::new();
        if index_count & 0x0400 != 0 {
            for _ in 0..self.u16()? {
                triggers.push(self.trigger()?);
            }
        }
        Ok(RelEntry {
            namespace,
            is_schema: index_count & 0x1000 != 0,
            options,
            comments,
            oid,
            name,
            temp_owner: None,
            storage,
            columns,
            indexes,
            sequence,
            user_type,
            checks,
            foreign_keys,
            referenced_by,
            view,
            routine,
            triggers,
        })
    }

    fn trigger(&mut self) -> Result<TriggerDef, SqlError> {
        let oid = self.u32()?;
        let name = self.str()?;
        let function = self.u32()?;
        let timing = match self.u8()? {
            b'B' => TriggerTiming::Before,
            b'A' => TriggerTiming::After,
            b'I' => TriggerTiming::InsteadOf,
            _ => return Err(corrupt()),
        };
        let events = self.u8()?;
        let flags = self.u8()?;
        let enabled = self.u8()?;
        let columns = self.strings()?;
        let args = self.strings()?;
        let mut text = |bit: u8| -> Result<Option<String>, SqlError> {
            if flags & bit != 0 {
                self.str().map(Some)
            } else {
                Ok(None)
            }
        };
        let when = text(2)?;
        let old_table = text(32)?;
        let new_table = text(64)?;
        Ok(TriggerDef {
            oid,
            name,
            function,
            timing,
            events,
            row: flags & 1 != 0,
            columns,
            when,
            args,
            enabled,
            constraint: flags & 4 != 0,
            deferrable: flags & 8 != 0,
            initially_deferred: flags & 16 != 0,
            old_table,
            new_table,
        })
    }

    fn routine(&mut self) -> Result<RoutineDef, SqlError> {
        // A replayed or recovered routine is one the process now has.
        crate::routines::note_defined();
        let kind = match self.u8()? {
            b'f' => RoutineKind::Function,
            b'p' => RoutineKind::Procedure,
            b'a' => RoutineKind::Aggregate,
            _ => return Err(corrupt()),
        };
        let language = self.str()?;
        let n = self.u16()? as usize;
        if n > self.remaining() {
            return Err(corrupt());
        }
        let mut args = Vec::with_capacity(n);
        for _ in 0..n {
            let name = self.str()?;
            let ty = self.ty()?;
            let mode = ArgMode::of_code(self.u8()?).ok_or_else(corrupt)?;
            let default = match self.u8()? {
                0 => None,
                1 => Some(self.str()?),
                _ => return Err(corrupt()),
            };
            args.push(RoutineArg { name, ty, mode, default });
        }
        let returns = self.ty()?;
        let n = self.u16()? as usize;
        if n > self.remaining() {
            return Err(corrupt());
        }
        let mut table_columns = Vec::with_capacity(n);
        for _ in 0..n {
            table_columns.push((self.str()?, self.ty()?));
        }
        let body = self.str()?;
        let volatility = match self.u8()? {
            b'i' => Volatility::Immutable,
            b's' => Volatility::Stable,
            b'v' => Volatility::Volatile,
            _ => return Err(corrupt()),
        };
        let flags = self.u8()?;
        if flags > 63 {
            return Err(corrupt());
        }
        let parallel = self.u8()?;
        let cost = f32::from_bits(self.u32()?);
        let rows = f32::from_bits(self.u32()?);
        let row_type = if flags & 16 != 0 {
            let name = self.str()?;
            let n = self.u16()? as usize;
            if n > self.remaining() {
                return Err(corrupt());
            }
            let mut columns = Vec::with_capacity(n);
            for _ in 0..n {
                columns.push((self.str()?, self.ty()?));
            }
            Some(RowType { name, columns })
        } else {
            None
        };
        let aggregate = match kind {
            RoutineKind::Aggregate => Some(Box::new(self.aggregate()?)),
            _ => None,
        };
        Ok(RoutineDef {
            kind,
            language,
            args,
            returns,
            returns_set: flags & 1 != 0,
            table_columns,
            body,
            volatility,
            strict: flags & 2 != 0,
            security_definer: flags & 4 != 0,
            leakproof: flags & 8 != 0,
            atomic: flags & 32 != 0,
            parallel,
            cost,
            rows,
            row_type,
            aggregate,
        })
    }

    fn aggregate(&mut self) -> Result<AggregateDef, SqlError> {
        let kind = self.u8()?;
        let direct_args = self.u16()?;
        let transfn = self.support()?.ok_or_else(corrupt)?;
        let finalfn = self.support()?;
        let combinefn = self.support()?;
        let serialfn = self.support()?;
        let deserialfn = self.support()?;
        let mtransfn = self.support()?;
        let minvtransfn = self.support()?;
        let mfinalfn = self.support()?;
        let extra = self.u8()?;
        if extra > 3 {
            return Err(corrupt());
        }
        let final_modify = self.u8()?;
        let mfinal_modify = self.u8()?;
        let state = self.ty()?;
        let state_space = self.u32()? as i32;
        let mstate = match self.u8()? {
            0 => None,
            1 => Some(self.ty()?),
            _ => return Err(corrupt()),
        };
        let mstate_space = self.u32()? as i32;
        let mut text = || -> Result<Option<String>, SqlError> {
            match self.u8()? {
                0 => Ok(None),
                1 => Ok(Some(self.str()?)),
                _ => Err(corrupt()),
            }
        };
        let init = text()?;
        let minit = text()?;
        Ok(AggregateDef {
            kind,
            direct_args,
            transfn,
            finalfn,
            combinefn,
            serialfn,
            deserialfn,
            mtransfn,
            minvtransfn,
            mfinalfn,
            final_extra: extra & 1 != 0,
            mfinal_extra: extra & 2 != 0,
            final_modify,
            mfinal_modify,
            state,
            state_space,
            mstate,
            mstate_space,
            init,
            minit,
        })
    }

    fn support(&mut self) -> Result<Option<AggSupport>, SqlError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(AggSupport { name: self.str()?, oid: self.u32()? })),
            _ => Err(corrupt()),
        }
    }

    fn foreign_key(&mut self) -> Result<ForeignKeyDef, SqlError> {
        let oid = self.u32()?;
        let name = self.str()?;
        let columns = self.columns()?;
        let parent_columns = self.columns()?;
        let parent = self.u32()?;
        let on_delete = ForeignKeyDef::action_of(self.u8()?).ok_or_else(corrupt)?;
        let on_update = ForeignKeyDef::action_of(self.u8()?).ok_or_else(corrupt)?;
        let flags = self.u8()?;
        if flags > 31 {
            return Err(corrupt());
        }
        let delete_set_columns = if flags & 16 != 0 { self.columns()? } else { Vec::new() };
        Ok(ForeignKeyDef {
            delete_set_columns,
            oid,
            name,
            columns,
            parent,
            parent_columns,
            on_delete,
            on_update,
            match_full: flags & 1 != 0,
            validated: flags & 2 != 0,
            deferrable: flags & 4 != 0,
            initially_deferred: flags & 8 != 0,
        })
    }

    fn check(&mut self) -> Result<CheckDef, SqlError> {
        let name = self.str()?;
        let expr = self.str()?;
        let validated = match self.u8()? {
            0 => false,
            1 => true,
            _ => return Err(corrupt()),
        };
        Ok(CheckDef { name, expr, validated })
    }
}
