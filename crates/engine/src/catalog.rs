//! The catalog: relation definitions stored as MVCC rows, and the physical
//! storage they name.
//!
//! One catalog row per relation holds its whole definition (name, columns,
//! indexes, and the id of its storage). DDL changes the catalog the way DML
//! changes a table, inside the transaction: CREATE inserts a row, DROP
//! deletes it, ALTER / CREATE INDEX / TRUNCATE update it. A rolled-back
//! CREATE TABLE therefore leaves nothing anyone can see, by the same
//! visibility rules as any row (CATALOG-MVCC in the crate README).
//! TRUNCATE gives the relation new, empty storage (PostgreSQL's new
//! relfilenode), so rolling it back restores the old storage with the old
//! catalog row.
//!
//! Storage ids are never reused. A storage is freed when the transaction
//! that dropped or replaced it commits, or when the one that created it
//! aborts; a reader still holding it keeps its `Arc` alive.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use snapscale_sqlstate::SqlState;
use snapscale_storage::{Table, Tid, VacuumOptions, VacuumStats};
use snapscale_txn::{Engine, MultiXactId, Reader, Session, Xid};
use snapscale_values::{SqlError, SqlType, Value};

use crate::index::{Index, Indexes};
use crate::sequence::{SeqValue, Sequence, SequenceDef};

/// A stored row: values in column order, then the hidden row id.
pub type Row = Arc<[Value]>;

/// A column definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
    /// The DEFAULT expression as SQL text (bound again by each statement
    /// that fills the column, as PostgreSQL keeps it as an expression).
    pub default: Option<String>,
    /// The domain the column was declared with (`ty` is its base type).
    pub domain: Option<u32>,
    /// A date/time column's type modifier, PostgreSQL's: a timestamp's or
    /// time's fractional-second precision (`timestamp(2)`), an interval's
    /// qualifier and precision (`interval day to minute`). Values are held
    /// to it as they are stored.
    pub typmod: Option<i32>,
    /// GENERATED ALWAYS AS (expr) STORED: the expression as SQL text,
    /// computed from the row's other columns whenever the row is written.
    pub generated: Option<String>,
    /// GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY (its DEFAULT draws from
    /// the sequence it owns, as a serial column's does).
    pub identity: Option<Identity>,
    /// `Some` for a column added without rewriting the rows
    /// (MISSING-COLUMN): the value rows stored before it read in it, its
    /// default when it was added (NULL without one). A rewrite of the rows
    /// stores every column and clears it.
    pub missing: Option<Value>,
    /// ALTER COLUMN … SET STORAGE: PostgreSQL's attstorage letter (`p`,
    /// `e`, `m`, `x`); `None` for the type's own. Shown, not acted on: rows
    /// live in memory, uncompressed, whatever it says.
    pub storage: Option<u8>,
    /// ALTER COLUMN … SET STATISTICS: attstattarget; `None` for the
    /// default (-1).
    pub stats_target: Option<i32>,
}

impl ColumnDef {
    /// A column of `ty` with nothing else declared (no constraint, no
    /// default): a view's, or a table made from a query's.
    pub fn plain(name: String, ty: SqlType) -> ColumnDef {
        ColumnDef {
            name,
            ty,
            not_null: false,
            default: None,
            domain: None,
            typmod: None,
            generated: None,
            identity: None,
            missing: None,
            storage: None,
            stats_target: None,
        }
    }
}

/// How an identity column takes values a statement supplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    /// Refused unless the INSERT says OVERRIDING SYSTEM VALUE.
    Always,
    /// Taken; the sequence fills the column only when none is given.
    ByDefault,
}

/// An index definition.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDef {
    pub oid: u32,
    pub name: String,
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    /// The index of a PRIMARY KEY or UNIQUE constraint (pg_constraint
    /// shows those), not one made by CREATE INDEX.
    pub constraint: bool,
    /// INCLUDE columns: stored beside the key in PostgreSQL (for
    /// index-only scans), outside the key and its uniqueness. Here they
    /// are the definition only: entries hold the key and the tid.
    pub include: Vec<usize>,
    /// UNIQUE NULLS NOT DISTINCT.
    pub nulls_not_distinct: bool,
    /// The SQL text of the key parts that are expressions, in key order:
    /// one per [`EXPRESSION`] in `columns` (PostgreSQL's indexprs, whose
    /// key parts are attribute 0 in indkey).
    pub exprs: Vec<String>,
    /// A partial index's WHERE, as SQL text: only rows it holds for have
    /// entries.
    pub predicate: Option<String>,
    /// Which entries of its table's storage are this index's (PostgreSQL's
    /// relfilenode): its oid until REINDEX gives it new ones.
    pub storage: u32,
    /// Its storage parameters as PostgreSQL's pg_class.reloptions shows
    /// them (`fillfactor=70`), checked when they were set.
    pub options: Vec<String>,
    /// The operator class named for each key part (empty: the type's
    /// default; the whole list empty when no part names one). Every
    /// class accepted sorts as the default does here (the collation is
    /// C, so the pattern classes' byte order is the default order).
    pub opclasses: Vec<String>,
    /// Each key part's declared order (bit 0: DESC, bit 1: NULLS FIRST;
    /// the whole list empty when every part is ASC NULLS LAST). The
    /// entries are kept in ascending order whatever is declared: lookups
    /// and range reads answer the same either way.
    pub orders: Vec<u8>,
}

/// [`IndexDef::orders`]: DESC.
pub const ORDER_DESC: u8 = 1;
/// [`IndexDef::orders`]: NULLS FIRST.
pub const ORDER_NULLS_FIRST: u8 = 2;

/// The key part of an [`IndexDef`] that is an expression, not a column.
pub const EXPRESSION: usize = usize::MAX;

impl IndexDef {
    /// Every column the index names as a key part or INCLUDE column, key
    /// columns first (those its expressions and predicate read are not
    /// among them).
    pub fn all_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().chain(&self.include).copied().filter(|&c| c != EXPRESSION)
    }

    /// Whether its keys are computed by the SQL layer (key expressions or
    /// a predicate), not read from columns.
    pub fn computed(&self) -> bool {
        !self.exprs.is_empty() || self.predicate.is_some()
    }
}

/// Compiles the key expressions and predicate of an index (the SQL layer,
/// which alone reads SQL, installs one with [`install_key_compiler`]).
pub trait KeyCompiler: Send + Sync {
    /// The key function of `def`, an index of `entry`, and the types of
    /// its key parts.
    fn compile(
        &self,
        entry: &RelEntry,
        def: &IndexDef,
    ) -> Result<(Arc<dyn crate::index::KeyFunction>, Vec<SqlType>), SqlError>;
}

static KEY_COMPILER: OnceLock<&'static dyn KeyCompiler> = OnceLock::new();

/// Installs the process's compiler of index expressions (the first one
/// installed stays: there is one SQL dialect per process).
pub fn install_key_compiler(compiler: &'static dyn KeyCompiler) {
    let _ = KEY_COMPILER.set(compiler);
}

/// The types of the key parts of `def`, an index of `entry` whose keys are
/// computed, as the installed compiler finds them (`None`: it cannot).
pub fn computed_key_types(entry: &RelEntry, def: &IndexDef) -> Option<Vec<SqlType>> {
    KEY_COMPILER.get()?.compile(entry, def).ok().map(|(_, types)| types)
}

/// The index over `entry` that `def` describes, empty.
fn new_index(entry: &RelEntry, def: &IndexDef) -> Index {
    let index = if def.computed() {
        let compiled = match KEY_COMPILER.get() {
            Some(c) => c.compile(entry, def),
            None => Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "index expressions are computed only where SQL is served",
            )),
        };
        Index::computed(def.columns.clone(), compiled, def.unique)
    } else {
        let types = def.columns.iter().map(|&c| entry.columns[c].ty).collect();
        Index::new(def.columns.clone(), types, def.unique)
    };
    let fill =
        entry.has_missing().then(|| (0..entry.columns.len()).map(|c| entry.missing_value(c)).collect());
    index.with_nulls_not_distinct(def.nulls_not_distinct).with_fill(fill)
}

/// What a foreign key does to the referencing rows when the row they
/// reference is deleted or its key changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FkAction {
    NoAction,
    Restrict,
    Cascade,
    SetNull,
    SetDefault,
}

impl FkAction {
    /// pg_constraint's confupdtype / confdeltype letter.
    pub fn letter(self) -> char {
        match self {
            FkAction::NoAction => 'a',
            FkAction::Restrict => 'r',
            FkAction::Cascade => 'c',
            FkAction::SetNull => 'n',
            FkAction::SetDefault => 'd',
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Option<FkAction> {
        [FkAction::NoAction, FkAction::Restrict, FkAction::Cascade, FkAction::SetNull, FkAction::SetDefault]
            .get(usize::from(c))
            .copied()
    }
}

/// A FOREIGN KEY constraint, kept in the referencing table's row; the
/// referenced table's row lists the tables that reference it
/// (`RelEntry::referenced_by`), so that both tables' plans are made again
/// when one is added or dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignKeyDef {
    /// Its oid (pg_constraint's), given when it is made.
    pub oid: u32,
    pub name: String,
    /// The referencing columns.
    pub columns: Vec<usize>,
    /// The referenced table's oid and columns (a unique key of it).
    pub parent: u32,
    pub parent_columns: Vec<usize>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    /// MATCH FULL (else MATCH SIMPLE: a NULL in any column exempts a row).
    pub match_full: bool,
    /// The rows present when it was added were checked (NOT VALID until
    /// VALIDATE CONSTRAINT).
    pub validated: bool,
    /// DEFERRABLE: SET CONSTRAINTS may put its checks off to COMMIT.
    pub deferrable: bool,
    /// INITIALLY DEFERRED: they are put off unless SET CONSTRAINTS says
    /// IMMEDIATE.
    pub initially_deferred: bool,
    /// ON DELETE SET NULL / SET DEFAULT (columns): the referencing
    /// columns the action sets, each once; empty: all of `columns`.
    pub delete_set_columns: Vec<usize>,
}

impl ForeignKeyDef {
    /// Encoded for the WAL and the checkpoint (`redo::codec`).
    pub fn action_codes(&self) -> (u8, u8) {
        (self.on_delete.code(), self.on_update.code())
    }

    pub fn action_of(code: u8) -> Option<FkAction> {
        FkAction::from_code(code)
    }
}

/// Whether `a` and `b` name the same columns, in any order (a unique key
/// matched by a foreign key or an ON CONFLICT target).
pub fn same_columns(a: &[usize], b: &[usize]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    a.dedup();
    b.sort_unstable();
    b.dedup();
    a == b
}

/// WITH [LOCAL | CASCADED] CHECK OPTION of an updatable view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOption {
    Local,
    Cascaded,
}

/// A view: the query it stands for, kept as text and bound again by each
/// statement that reads it (so it sees the definitions of the relations
/// it reads as they are then). `*` in it was expanded when the view was
/// made, as PostgreSQL expands it: a column added to a table later is not
/// a column of the view.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewDef {
    /// The query, as sqlparser writes it.
    pub query: String,
    pub check_option: Option<CheckOption>,
    /// The relations the query reads, by oid: dropping one needs CASCADE,
    /// which drops the view.
    pub depends_on: Vec<u32>,
    /// `Some` for a materialized view (a table whose rows REFRESH computes
    /// from `query`): whether it holds them (WITH NO DATA leaves it
    /// unpopulated until a REFRESH).
    pub materialized: Option<bool>,
}

/// One catalog row: a relation's whole definition.
#[derive(Clone, Debug, PartialEq)]
pub struct RelEntry {
    pub oid: u32,
    /// Its name within its namespace (REL-KEY: the SQL layer names it to
    /// the engine by a key that may qualify it).
    pub name: String,
    /// The oid of the schema that holds it ([`PUBLIC_NAMESPACE`] unless
    /// made in another; a temporary table's is its backend's, whatever
    /// this says: `temp_owner` decides). A schema's own row holds 0.
    pub namespace: u32,
    /// A schema (CREATE SCHEMA): no columns, no rows; the relations and
    /// types whose `namespace` is its oid are in it.
    pub is_schema: bool,
    /// `Some(backend)` for a temporary table, visible to that backend only.
    pub temp_owner: Option<u64>,
    /// Which [`Heap`] holds the rows.
    pub storage: u64,
    pub columns: Vec<ColumnDef>,
    pub indexes: Vec<IndexDef>,
    /// `Some` for a sequence (no columns, no rows: its value is in its
    /// heap's [`Sequence`]).
    pub sequence: Option<SequenceDef>,
    /// `Some` for a user-defined type (no columns, no rows).
    pub user_type: Option<crate::user_types::TypeDef>,
    /// A table's CHECK constraints, in the order they were added.
    pub checks: Vec<crate::user_types::CheckDef>,
    /// Its FOREIGN KEY constraints (it references other tables).
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The tables whose foreign keys reference it, by oid.
    pub referenced_by: Vec<u32>,
    /// `Some` for a view (no rows: its columns are its query's).
    pub view: Option<ViewDef>,
    /// A function's or procedure's definition (ROUTINE-ROWS).
    pub routine: Option<crate::routines::RoutineDef>,
    /// A table's triggers, in name order (TRIGGER-ROWS: the order they
    /// fire in).
    pub triggers: Vec<crate::triggers::TriggerDef>,
    /// Its storage parameters (RELOPTIONS): `name=value` as PostgreSQL's
    /// pg_class.reloptions shows them, in the order they were set, checked
    /// when they were set; a TOAST table's are kept here too, as
    /// `toast.name=value` (there is no TOAST table to hold them).
    pub options: Vec<String>,
    /// COMMENT ON the relation (or type) and its parts (pg_description),
    /// each part by name: a rename carries its comment, a drop loses it
    /// ([`RelEntry::prune_comments`]).
    pub comments: Vec<Comment>,
}

/// What a [`Comment`] describes: the relation itself, or a part of it by
/// name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Described {
    Relation,
    Column(String),
    Constraint(String),
    Index(String),
    /// A trigger of the table, by name (COMMENT ON TRIGGER).
    Trigger(String),
}

/// One COMMENT ON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub on: Described,
    pub text: String,
}

impl RelEntry {
    /// A row named `name` in `namespace` with nothing defined yet (a
    /// schema's or a type's starts so: no columns, indexes or constraints).
    pub fn empty(oid: u32, name: &str, namespace: u32, storage: u64) -> RelEntry {
        RelEntry {
            oid,
            name: name.to_owned(),
            namespace,
            is_schema: false,
            temp_owner: None,
            storage,
            columns: Vec::new(),
            indexes: Vec::new(),
            sequence: None,
            user_type: None,
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            view: None,
            routine: None,
            triggers: Vec::new(),
            options: Vec::new(),
            comments: Vec::new(),
        }
    }

    /// This row with its enum labels' cells shared through `enums`
    /// (ENUM-CELL: recovery and replay decode them afresh).
    pub fn share_labels(&mut self, enums: &crate::user_types::EnumRegistry) {
        if let Some(def) = &mut self.user_type {
            enums.intern_def(def);
        }
    }

    /// A shared catalog row with its labels' cells shared (the same row
    /// when it defines no enum).
    pub fn with_shared_labels(self: Arc<Self>, enums: &crate::user_types::EnumRegistry) -> Arc<RelEntry> {
        if !matches!(self.user_type, Some(crate::user_types::TypeDef::Enum(_))) {
            return self;
        }
        let mut e = (*self).clone();
        e.share_labels(enums);
        Arc::new(e)
    }

    /// A relation (table, view or sequence), not a type, a routine or a
    /// schema.
    pub fn is_relation(&self) -> bool {
        self.user_type.is_none() && !self.is_schema && self.routine.is_none()
    }

    /// A schema row with a built-in schema's oid: it marks that schema
    /// dropped (DROP SCHEMA public), until CREATE SCHEMA deletes it.
    pub fn hides_builtin(&self) -> bool {
        self.is_schema && self.oid < FIRST_OID
    }

    /// True for a view (not a materialized one, which is read as a table).
    pub fn is_view(&self) -> bool {
        self.view.as_ref().is_some_and(|v| v.materialized.is_none())
    }

    /// True for a materialized view.
    pub fn is_matview(&self) -> bool {
        self.view.as_ref().is_some_and(|v| v.materialized.is_some())
    }

    /// The comment on `on`, if any.
    pub fn comment(&self, on: &Described) -> Option<&str> {
        self.comments.iter().find(|c| c.on == *on).map(|c| c.text.as_str())
    }

    /// Sets (or, with `None`, removes) the comment on `on`.
    pub fn set_comment(&mut self, on: Described, text: Option<String>) {
        self.comments.retain(|c| c.on != on);
        if let Some(text) = text {
            self.comments.push(Comment { on, text });
        }
    }

    /// A part renamed: its comment follows it.
    pub fn rename_commented(&mut self, old: &Described, new: Described) {
        for c in self.comments.iter_mut().filter(|c| c.on == *old) {
            c.on = new.clone();
        }
    }

    /// Drops the comments of parts that are gone.
    pub fn prune_comments(&mut self) {
        let comments = std::mem::take(&mut self.comments);
        self.comments = comments
            .into_iter()
            .filter(|c| match &c.on {
                Described::Relation => true,
                Described::Column(n) => self.columns.iter().any(|col| col.name == *n),
                Described::Index(n) => self.indexes.iter().any(|i| i.name == *n),
                Described::Trigger(n) => self.triggers.iter().any(|t| t.name == *n),
                Described::Constraint(n) => {
                    self.checks.iter().any(|k| k.name == *n)
                        || self.foreign_keys.iter().any(|f| f.name == *n)
                        || self.indexes.iter().any(|i| i.constraint && i.name == *n)
                        || matches!(&self.user_type, Some(crate::user_types::TypeDef::Domain(d)) if d.checks.iter().any(|k| k.name == *n))
                }
            })
            .collect();
    }

    /// The value of storage parameter `name` (`toast.name` for a TOAST
    /// table's), if it is set.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().find_map(|o| o.strip_prefix(name)?.strip_prefix('='))
    }

    /// The position of column `name`.
    /// `row` as this definition reads it (MISSING-COLUMN): one stored
    /// before columns were added gets their missing values, before its
    /// row id; any other is itself.
    pub fn complete(&self, row: Row) -> Row {
        if !crate::missing::is_short(&row, self.columns.len()) {
            return row;
        }
        Row::from(crate::missing::pad(&row, self.columns.len(), |c| self.missing_value(c)))
    }

    /// What a stored row lacking column `c` reads in it.
    fn missing_value(&self, c: usize) -> Value {
        self.columns.get(c).and_then(|c| c.missing.clone()).unwrap_or(Value::Null)
    }

    /// Whether rows may be stored without some of its columns
    /// (MISSING-COLUMN).
    pub fn has_missing(&self) -> bool {
        self.columns.iter().any(|c| c.missing.is_some())
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// A relation's rows and its indexes' entries.
pub struct Heap {
    pub table: Table<Row>,
    indexes: Indexes,
    /// Updates and deletes since the last prune (opportunistic pruning).
    pub changes: AtomicU64,
    /// One pruner at a time.
    pub pruning: Mutex<()>,
    /// The next row id (the hidden last column that identifies a row
    /// across its versions in the WAL: ROW-ID).
    pub next_row_id: AtomicI64,
    /// A sequence's value, installed with its definition.
    pub sequence: OnceLock<Sequence>,
    /// Its vacuum passes (pg_stat_user_tables).
    pub vacuums: VacuumRecord,
    /// Its planner statistics and analyze counters (STATS-SLOT).
    pub stats: crate::stats::StatsSlot,
}

/// How often and when a heap was vacuumed, by VACUUM and by autovacuum
/// (PostgreSQL's vacuum_count, last_vacuum, autovacuum_count,
/// last_autovacuum). Statistics: written and read Relaxed.
/// A resolved relation: its catalog row (and where it lives in the
/// catalog) and its storage.
#[derive(Clone)]
pub struct Rel {
    pub entry: Arc<RelEntry>,
    pub heap: Arc<Heap>,
    pub catalog_tid: Tid,
}

/// A relation's rows as its definition reads them (MISSING-COLUMN: rows
/// stored before columns were added are widened). Readers of a table's
/// rows go through these, not through `heap.table`.
impl Rel {
    /// Every version `reader` sees, with its tid.
    pub fn scan(&self, reader: &Reader<'_>) -> Vec<(Tid, Row)> {
        let mut rows = self.heap.table.scan(reader);
        if self.entry.has_missing() {
            for (_, row) in &mut rows {
                *row = self.entry.complete(std::mem::replace(row, Row::from([])));
            }
        }
        rows
    }

    /// The version at `tid`, if `reader` sees it.
    pub fn fetch(&self, reader: &Reader<'_>, tid: Tid) -> Option<Row> {
        self.heap.table.fetch(reader, tid).map(|r| self.entry.complete(r))
    }

    /// The version at `tid`, whatever its visibility.
    pub fn peek(&self, tid: Tid) -> Option<Row> {
        self.heap.table.peek(tid).map(|r| self.entry.complete(r))
    }

    /// Every version present, whatever its visibility.
    pub fn all_versions(&self) -> Vec<(Tid, Row)> {
        let mut rows = self.heap.table.all_versions();
        if self.entry.has_missing() {
            for (_, row) in &mut rows {
                *row = self.entry.complete(std::mem::replace(row, Row::from([])));
            }
        }
        rows
    }

    /// The version of the row at `tid` that `reader` sees, following its
    /// update chain (the storage's `visible_along`: WHERE CURRENT OF).
    pub fn visible_along(&self, reader: &Reader<'_>, tid: Tid) -> Option<(Tid, Row)> {
        self.heap.table.visible_along(reader, tid).map(|(t, r)| (t, self.entry.complete(r)))
    }

    /// The newest committed version of the row at `tid` (the storage's
    /// `latest`).
    pub fn latest(&self, session: &Session, tid: Tid) -> Option<(Tid, Row)> {
        self.heap.table.latest(session, tid).map(|(t, r)| (t, self.entry.complete(r)))
    }
}

impl std::fmt::Debug for Rel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rel({})", self.entry.name)
    }
}

#[derive(Debug, Default)]
pub struct VacuumRecord {
    pub count: AtomicU64,
    pub auto_count: AtomicU64,
    /// Microseconds since 2000-01-01, or 0 for never.
    pub last: AtomicI64,
    pub last_auto: AtomicI64,
}

impl Heap {
    /// Empty storage whose first frozen xid is `frozen_xid` (at most the
    /// oldest xid that may still write into it: FREEZE-TRUNCATE), and whose
    /// versions will name no multixact below `min_multi` (MULTI-TRUNCATE).
    fn new(frozen_xid: Xid, min_multi: MultiXactId) -> Heap {
        Heap {
            table: Table::with_min_multi(frozen_xid, min_multi),
            indexes: Indexes::default(),
            changes: AtomicU64::new(0),
            pruning: Mutex::new(()),
            next_row_id: AtomicI64::new(1),
            sequence: OnceLock::new(),
            vacuums: VacuumRecord::default(),
            stats: crate::stats::StatsSlot::default(),
        }
    }

    /// Counts a vacuum pass, by autovacuum if `auto`.
    pub fn record_vacuum(&self, auto: bool) {
        let now = snapscale_values::now_micros();
        let r = &self.vacuums;
        // Relaxed (all four): statistics, nothing is published through them.
        if auto {
            r.auto_count.fetch_add(1, Relaxed);
            r.last_auto.store(now, Relaxed);
        } else {
            r.count.fetch_add(1, Relaxed);
            r.last.store(now, Relaxed);
        }
    }

    /// Makes this storage hold the value of the sequence `entry` defines
    /// (at `at`, or its start); a storage that already holds one keeps it.
    pub fn install_sequence(&self, entry: &RelEntry, at: Option<SeqValue>) {
        if let Some(def) = &entry.sequence {
            let _ = self.sequence.set(Sequence::new(def.clone(), at));
        }
    }

    /// A new row id.
    pub fn new_row_id(&self) -> i64 {
        // Relaxed: only uniqueness matters; no data is published through it.
        self.next_row_id.fetch_add(1, Relaxed)
    }

    /// The entries of index `def`, built from the current versions if this
    /// storage has none yet (INDEX-VERSIONS: an index holds every version).
    pub fn index(&self, entry: &RelEntry, def: &IndexDef) -> &Arc<Index> {
        self.indexes.get_or_add(def.storage, || {
            let ix = new_index(entry, def);
            for (tid, row) in self.table.all_versions() {
                // A version whose key cannot be computed was never live
                // for the index's builder (CREATE INDEX computes every live
                // row's key first), and one its predicate leaves out has
                // no entry.
                if let Ok(Some(key)) = ix.key_of(&row) {
                    ix.insert(key, tid);
                }
            }
            ix
        })
    }

    /// Every physical index of this storage (vacuum removes entries from
    /// all of them, including those of rolled-back index builds).
    pub fn all_indexes(&self) -> Vec<Arc<Index>> {
        self.indexes.all().cloned().collect()
    }

    /// One vacuum pass over the heap (storage's `vacuum_with`): removes
    /// what no snapshot can see, with its index entries before the tids
    /// can be reused (INDEX-VERSIONS), and freezes as `options` say.
    pub fn vacuum(&self, session: &mut Session, options: VacuumOptions) -> VacuumStats {
        let indexes = self.all_indexes();
        self.table.vacuum_with(session, options, |dead| {
            for ix in &indexes {
                // The key is computed as when the entry was made (index
                // expressions are immutable); a version without one has
                // no entry.
                ix.remove_all(dead.iter().filter_map(|(tid, row)| Some((ix.key_of(row).ok()??, *tid))));
            }
        })
    }
}

/// The first oid handed out (PostgreSQL's FirstNormalObjectId).
pub const FIRST_OID: u32 = 16384;

/// The namespaces every database has, with PostgreSQL's oids.
pub const PG_CATALOG_NAMESPACE: u32 = 11;
pub const PG_TOAST_NAMESPACE: u32 = 99;
pub const PUBLIC_NAMESPACE: u32 = 2200;
pub const INFORMATION_SCHEMA_NAMESPACE: u32 = 13000;

/// The built-in namespaces by name.
pub const BUILTIN_NAMESPACES: [(&str, u32); 4] = [
    ("pg_catalog", PG_CATALOG_NAMESPACE),
    ("pg_toast", PG_TOAST_NAMESPACE),
    ("public", PUBLIC_NAMESPACE),
    ("information_schema", INFORMATION_SCHEMA_NAMESPACE),
];

/// The catalog table, the storages it names, and the id counters.
pub struct Catalog {
    /// The transaction engine: new storage's first frozen xid is its horizon.
    engine: Arc<Engine>,
    /// One row per relation (CATALOG-MVCC).
    pub table: Table<Arc<RelEntry>>,
    /// Serialises "is this name free?" with the insert that takes it
    /// (NAME-UNIQUE).
    pub names: Mutex<()>,
    storages: RwLock<HashMap<u64, Arc<Heap>>>,
    /// Storage dropped from `storages` that a reader may still hold: its
    /// frozen xid counts until the last reader lets go (FREEZE-TRUNCATE).
    dropped: Mutex<Vec<Weak<Heap>>>,
    next_oid: AtomicU32,
    next_storage: AtomicU64,
}

impl Catalog {
    pub fn new(engine: Arc<Engine>) -> Catalog {
        Catalog {
            table: Table::with_min_multi(
                engine.compute_horizons().oldest_considered_running,
                engine.next_multi(),
            ),
            engine,
            names: Mutex::new(()),
            storages: RwLock::new(HashMap::new()),
            dropped: Mutex::new(Vec::new()),
            next_oid: AtomicU32::new(FIRST_OID),
            next_storage: AtomicU64::new(1),
        }
    }

    /// A new object id.
    pub fn new_oid(&self) -> u32 {
        // Relaxed: only uniqueness matters.
        self.next_oid.fetch_add(1, Relaxed)
    }

    /// `n` consecutive object ids; the first.
    pub fn new_oids(&self, n: u32) -> u32 {
        // Relaxed: only uniqueness matters.
        self.next_oid.fetch_add(n, Relaxed)
    }

    /// The next ids to hand out (a checkpoint records them).
    pub fn next_ids(&self) -> (u32, u64) {
        // Relaxed: any value at least as large as every id already handed
        // out will do, and ids taken meanwhile are larger still.
        (self.next_oid.load(Relaxed), self.next_storage.load(Relaxed))
    }

    /// Raises the id counters to at least these (recovery).
    pub fn resume_ids(&self, next_oid: u32, next_storage: u64) {
        // Relaxed: recovery runs before any session exists.
        self.next_oid.fetch_max(next_oid, Relaxed);
        self.next_storage.fetch_max(next_storage, Relaxed);
    }

    /// Creates empty storage and returns its id.
    pub fn create_storage(&self) -> u64 {
        // Relaxed: only uniqueness matters.
        let id = self.next_storage.fetch_add(1, Relaxed);
        self.storages.write().expect("storage map poisoned").insert(id, Arc::new(self.new_heap()));
        id
    }

    /// New storage: its first frozen xid is the horizon now, at most the
    /// xid of every transaction that may still write into it. It is in
    /// `storages` before anyone can write into it, so every frozen-xid
    /// computation that could pass its rows' xids sees it. Its oldest
    /// multi is the next one now: any multi naming its rows comes later.
    fn new_heap(&self) -> Heap {
        Heap::new(self.engine.compute_horizons().oldest_considered_running, self.engine.next_multi())
    }

    /// Creates empty storage with a recovered id.
    pub fn create_storage_with_id(&self, id: u64) -> Arc<Heap> {
        let heap = Arc::new(self.new_heap());
        self.storages.write().expect("storage map poisoned").insert(id, Arc::clone(&heap));
        heap
    }

    /// The storage `id`, if it still exists.
    pub fn storage(&self, id: u64) -> Option<Arc<Heap>> {
        self.storages.read().expect("storage map poisoned").get(&id).cloned()
    }

    /// Every storage (a standby's pruning visits them all).
    pub fn storages(&self) -> Vec<Arc<Heap>> {
        self.storages.read().expect("storage map poisoned").values().cloned().collect()
    }

    /// Every sequence's logged value, whether or not its creation has
    /// committed (a checkpoint's image: see SEQ-ORDER).
    pub fn sequence_values(&self) -> Vec<(u64, SeqValue)> {
        let storages = self.storages.read().expect("storage map poisoned");
        storages.iter().filter_map(|(id, h)| h.sequence.get().map(|s| (*id, s.logged()))).collect()
    }

    /// Frees storage `id` (its last reader frees the memory; until then it
    /// is kept among the dropped, whose frozen xids still count).
    pub fn drop_storage(&self, id: u64) {
        let heap = self.storages.write().expect("storage map poisoned").remove(&id);
        if let Some(heap) = heap {
            let mut dropped = self.dropped.lock().expect("dropped storage poisoned");
            dropped.retain(|w| w.strong_count() > 0);
            dropped.push(Arc::downgrade(&heap));
        }
    }

    /// Every storage a reader may still reach: the catalog's, and dropped
    /// storage someone still holds (vacuum freezes them all, and the
    /// database's frozen xid is their minimum).
    pub fn reachable_storages(&self) -> Vec<(Option<u64>, Arc<Heap>)> {
        // The dropped list first: storage dropped meanwhile moves from the
        // map to the list, and is then found in the map (FREEZE-TRUNCATE
        // needs every reachable heap, not each exactly once).
        let mut out: Vec<(Option<u64>, Arc<Heap>)> = {
            let mut dropped = self.dropped.lock().expect("dropped storage poisoned");
            dropped.retain(|w| w.strong_count() > 0);
            dropped.iter().filter_map(Weak::upgrade).map(|h| (None, h)).collect()
        };
        let storages = self.storages.read().expect("storage map poisoned");
        out.extend(storages.iter().map(|(id, h)| (Some(*id), Arc::clone(h))));
        out
    }

    /// Row-version slots allocated over all storages, and versions present.
    pub fn version_counts(&self) -> (usize, usize) {
        let storages = self.storages.read().expect("storage map poisoned");
        storages.values().fold((0, 0), |(slots, present), h| {
            (slots + h.table.allocated_slots(), present + h.table.versions_present())
        })
    }

    /// Number of storages.
    pub fn storage_count(&self) -> usize {
        self.storages.read().expect("storage map poisoned").len()
    }
}
