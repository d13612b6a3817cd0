//! Plans. The binder produces a logical plan ([`Plan`]): names resolved,
//! types checked and coerced, but no decision about how rows are found.
//! The planner ([`planner`]) turns it into a physical plan
//! ([`physical::Statement`]): access paths chosen, and a query as a tree of
//! operators ([`physical::Node`]) for the executor.

mod bounded;
pub(crate) mod cost;
pub(crate) mod implied;
mod index_any;
pub(crate) mod index_key;
mod join;
pub mod physical;
pub mod planner;
pub(crate) mod selectivity;
mod semijoin;
mod stable;
pub mod switches;

use std::sync::Arc;

use snapscale_engine::catalog::{ColumnDef, RelEntry};
use snapscale_engine::sequence::SequenceDef;
use snapscale_engine::LockMode;
use snapscale_values::SqlType;

use crate::copy::CopyOptions;
use crate::expr::{AggFunc, Expr};

pub use snapscale_engine::catalog::Rel;

/// A result column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: SqlType,
}

/// A relation a plan depends on: locked in `mode` before execution, and
/// re-checked against the catalog cache afterwards (a concurrent DDL makes
/// the plan stale, and it is bound again: PLAN-FRESH).
#[derive(Clone, Debug)]
pub struct Dep {
    pub name: String,
    pub rel: Rel,
    pub mode: LockMode,
    /// LOCK TABLE … NOWAIT: fail with 55P03 instead of waiting.
    pub nowait: bool,
}

/// A call of a PL/pgSQL function with arguments that are the same for
/// every row, run before its statement (PL-CALLS).
#[derive(Debug, Clone)]
pub struct PlCall {
    pub routine: Arc<snapscale_engine::catalog::RelEntry>,
    pub args: Vec<Expr>,
    /// Called per row where its expression stands ([`crate::expr::Func::PlRow`]),
    /// not before the statement (`args` empty).
    pub per_row: bool,
}

/// The rows of one relation that pass a filter (how to find them is the
/// planner's choice).
#[derive(Debug)]
pub struct Scan {
    pub rel: Rel,
    pub filter: Option<Expr>,
}

/// One ORDER BY key, evaluated over the rows being sorted.
#[derive(Clone, Debug, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub desc: bool,
    pub nulls_first: bool,
}

/// One aggregate call.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    /// string_agg's delimiter (evaluated per row, as PostgreSQL does).
    pub delimiter: Option<Expr>,
    /// `agg(x ORDER BY …)`: the order the group's rows are fed in. With
    /// DISTINCT the arguments not among its keys follow them, so that
    /// equal arguments are adjacent once sorted.
    pub order: Vec<SortKey>,
    /// `agg(DISTINCT …)`: of rows whose arguments (and string_agg's
    /// delimiter) are not distinct, only the first in `order` is fed.
    pub distinct: bool,
    /// `agg(x) FILTER (WHERE …)`: only the rows it holds for are fed.
    pub filter: Option<Expr>,
    pub ty: SqlType,
    /// A user-defined aggregate's call ([`AggFunc::User`]).
    pub user: Option<Box<UserAgg>>,
}

/// A call of a user-defined aggregate (CREATE AGGREGATE): its arguments
/// over the input row, and its support functions' calls bound for the
/// call's types, each over a row of its own: the transition over (state,
/// arguments…), the final function over (state, NULL for each extra
/// argument).
#[derive(Clone, Debug, PartialEq)]
pub struct UserAgg {
    /// The aggregate's name, for messages.
    pub name: String,
    pub args: Vec<Expr>,
    /// `agg(DISTINCT …)`: equal argument lists fed once.
    pub distinct: bool,
    pub trans: Expr,
    /// A STRICT transition function: rows with a NULL argument are
    /// skipped, the first row's argument is the state when there is no
    /// initial one, and a NULL state stays NULL.
    pub trans_strict: bool,
    /// INITCOND read as the state's type (`None`: NULL).
    pub init: Option<Expr>,
    pub finish: Option<Expr>,
    /// How many NULLs the final function takes after the state
    /// (FINALFUNC_EXTRA).
    pub extra: usize,
    pub finish_strict: bool,
}

/// One window function call: over the rows of its partition, in its order.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowCall {
    pub func: crate::expr::WinFunc,
    pub arg: Option<Expr>,
    /// lag and lead: the offset and the default; ntile: the bucket
    /// count; nth_value: n.
    pub more: Vec<Expr>,
    pub partition: Vec<Expr>,
    pub order: Vec<SortKey>,
    pub ty: SqlType,
    /// An explicit frame clause; `None`: the default frame (RANGE
    /// UNBOUNDED PRECEDING AND CURRENT ROW).
    pub frame: Option<Frame>,
    /// A user-defined aggregate over the window ([`AggFunc::User`]): its
    /// arguments are `more`.
    pub user: Option<Box<UserAgg>>,
}

/// A window frame: ROWS, RANGE or GROUPS between two bounds.
#[derive(Clone, PartialEq, Debug)]
pub struct Frame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
    /// RANGE with an offset: the ORDER BY value, in the type the bounds
    /// compare in.
    pub range_key: Option<Expr>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FrameUnits {
    Rows,
    Range,
    Groups,
}

/// One end of a frame. An offset bound holds its offset (evaluated for
/// each row: it must be a non-negative value) and, under RANGE, the
/// bound's value (the row's ORDER BY value moved by the offset).
#[derive(Clone, PartialEq, Debug)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr, Option<Expr>),
    CurrentRow,
    Following(Expr, Option<Expr>),
    UnboundedFollowing,
}

/// GROUP BY (or aggregates without it: one group). Expressions above it
/// refer to its results as `GroupKey(i)` and `Agg(i)`.
#[derive(Debug)]
pub struct Grouping {
    pub keys: Vec<Expr>,
    pub aggs: Vec<Aggregate>,
    pub having: Option<Expr>,
}

/// What a row lock does when the row is held by another transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLock {
    /// Wait for it (bounded by lock_timeout and deadlock detection).
    Wait,
    /// NOWAIT: fail at once with 55P03.
    NoWait,
    /// SKIP LOCKED: leave the row out.
    SkipLocked,
}

/// A FROM clause item. Its row is its parts' rows side by side, in the
/// order they are written: a stored table's row is its columns then its
/// row id (ROW-ID), a subquery's its output columns. Expressions of the
/// query refer to columns of the whole FROM clause's row.
#[derive(Debug)]
pub enum From {
    /// A stored table.
    Table(Rel),
    /// A relation computed when it is read (the `pg_catalog` views).
    Computed(crate::catalog_views::View),
    /// A subquery in FROM (one that reads the items to its left is wrapped
    /// in [`From::Lateral`]).
    Derived(Box<Select>),
    /// Two items joined; `on` reads the row of both side by side, columns
    /// numbered as in the whole FROM clause.
    Join(Box<Join>),
    /// UNION / INTERSECT / EXCEPT of two queries.
    SetOp(Box<SetOp>),
    /// `VALUES (…), (…)`: rows of expressions, of the columns' types.
    Values { rows: Vec<Vec<Expr>>, columns: Vec<Column> },
    /// A set-returning function's rows (one column).
    /// `ordinality`: WITH ORDINALITY, a bigint column numbering the rows
    /// after the function's own.
    Function { func: Srf, args: Vec<Expr>, ordinality: bool },
    /// A recursive WITH item: its non-recursive term's rows, then its
    /// recursive term's over and over, each round reading the rows the
    /// round before it added (the work table `id`), until a round adds
    /// none.
    Recursive(Box<Recursive>),
    /// The rows the current round of recursive WITH item `id` reads.
    WorkTable { id: usize, columns: Vec<Column> },
    /// A LATERAL item (a subquery or a function) that reads the items to
    /// its left: `args`, over the FROM row, are its outer values
    /// (`Expr::Outer`), and it is run again for each row on its left. It
    /// is only ever the right side of an inner or left join.
    Lateral { item: Box<From>, args: Vec<Expr> },
    /// WITH ORDINALITY over an item that is no built-in function (a SQL
    /// function's body): its rows, each followed by its number (bigint).
    Numbered(Box<From>),
    /// ROWS FROM (…) and `unnest(a, b, …)`: the items' rows zipped, the
    /// n-th of each side by side (NULLs for one that has run out), then
    /// WITH ORDINALITY their number (bigint).
    Zip { items: Vec<ZipItem>, ordinality: bool },
}

/// One function of a [`From::Zip`].
#[derive(Debug)]
pub struct ZipItem {
    pub from: From,
    /// Its columns in the zipped row.
    pub width: usize,
    /// A function that reads the items to the zip's left: which of the
    /// zip's outer values (it is then a [`From::Lateral`]) are its own.
    pub args: Option<std::ops::Range<usize>>,
}

/// See [`From::Recursive`].
#[derive(Debug)]
pub struct Recursive {
    pub id: usize,
    /// UNION ALL keeps every row; UNION drops a row seen before (in any
    /// round), which is also what ends a cycle.
    pub all: bool,
    pub base: Select,
    pub step: Select,
    pub columns: Vec<Column>,
}

/// A set operation: its queries' outputs have the columns' types.
#[derive(Debug)]
pub struct SetOp {
    pub op: SetOpKind,
    /// ALL keeps duplicates (counted, for INTERSECT and EXCEPT).
    pub all: bool,
    pub left: Select,
    pub right: Select,
    pub columns: Vec<Column>,
}

/// Which set operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

/// A set-returning function in FROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Srf {
    /// `generate_series(start, stop [, step])` over integers.
    GenerateSeries,
    /// `generate_series(numeric, numeric [, numeric])`.
    NumericSeries,
    /// `generate_series(start, stop, step)` over timestamps, or with `tz`
    /// over instants (stepped on the session's wall clock).
    TimestampSeries { tz: bool },
    /// `unnest(array)`.
    Unnest,
    /// `information_schema._pg_expandarray(array)`: (element, position).
    ExpandArray,
    /// `json[b]_each[_text](value)`: (key, value) per member.
    JsonEach { jsonb: bool, text: bool },
    /// `json[b]_array_elements[_text](value)`: each element.
    JsonElements { jsonb: bool, text: bool },
    /// `json[b]_object_keys(value)`.
    JsonKeys { jsonb: bool },
    /// `jsonb_path_query(target, path [, vars [, silent]])`.
    JsonPathQuery,
    /// Rows from an array of records, a record's fields each row's
    /// columns (json[b]_populate_record[set], json[b]_to_record[set]).
    Records,
    /// A record value's one row (a NULL's: NULLs), in FROM under a column
    /// definition list of `width` columns, which its fields must count.
    RecordOf { width: usize },
    /// A function whose rows are the elements of the array a scalar
    /// function returns (`regexp_matches`, `regexp_split_to_table`,
    /// `string_to_table`); none for a NULL argument to a strict one.
    Elements(crate::expr::scalar::Scalar),
}

/// A set-returning function called in a select list: each input row
/// becomes as many rows as the longest call returns (PostgreSQL's
/// ProjectSet); expressions refer to its values as `Expr::SetFunc(i)`.
#[derive(Clone, Debug, PartialEq)]
pub struct SrfCall {
    pub func: Srf,
    pub args: Vec<Expr>,
    pub ty: SqlType,
}

/// A join of two FROM items.
#[derive(Debug)]
pub struct Join {
    pub left: From,
    pub right: From,
    pub kind: JoinKind,
    /// Column numbers of the whole FROM clause's row (like every expression
    /// of the query); `None` for a cross join.
    pub on: Option<Expr>,
}

/// Which rows a join keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// Pairs that satisfy the condition.
    Inner,
    /// Also each left row without a partner, with NULLs on the right.
    Left,
    /// Also each right row without a partner, with NULLs on the left.
    Right,
    /// Both.
    Full,
    /// Each left row that has a partner, once, without the right's
    /// columns (EXISTS and IN pulled up from WHERE, plan/semijoin.rs).
    Semi,
    /// Each left row that has no partner, without the right's columns
    /// (NOT EXISTS).
    Anti,
}

impl JoinKind {
    /// True if the join's rows are its left rows alone.
    pub fn left_only(self) -> bool {
        matches!(self, JoinKind::Semi | JoinKind::Anti)
    }
}

impl From {
    /// The width of this item's row.
    pub fn width(&self) -> usize {
        match self {
            From::Table(rel) => rel.entry.columns.len() + 1,
            From::Computed(view) => view.columns().len(),
            From::Derived(select) => select.outputs.len(),
            From::Join(j) if j.kind.left_only() => j.left.width(),
            From::Join(j) => j.left.width() + j.right.width(),
            From::SetOp(s) => s.columns.len(),
            From::Values { columns, .. } => columns.len(),
            From::Function { ordinality, .. } => 1 + usize::from(*ordinality),
            From::Recursive(r) => r.columns.len(),
            From::WorkTable { columns, .. } => columns.len(),
            From::Lateral { item, .. } => item.width(),
            From::Numbered(item) => item.width() + 1,
            From::Zip { items, ordinality } => {
                items.iter().map(|i| i.width).sum::<usize>() + usize::from(*ordinality)
            }
        }
    }
}

/// FOR [KEY] SHARE / FOR [NO KEY] UPDATE: which of the FROM clause's
/// stored tables have their rows locked (by their offset in the FROM row),
/// in which mode, and how (each table its own, as PostgreSQL's clauses).
#[derive(Debug)]
pub struct Locking {
    /// The offset of each locked table's columns in the FROM row.
    pub tables: Vec<usize>,
    /// The mode each of `tables` is locked in, and what it does with a
    /// row held in a conflicting one.
    pub modes: Vec<(snapscale_engine::RowLockMode, RowLock)>,
}

impl Locking {
    /// The mode and wait policy of the table at `offset`.
    pub fn of(&self, offset: usize) -> (snapscale_engine::RowLockMode, RowLock) {
        let i = self.tables.iter().position(|&o| o == offset).expect("a locked table");
        self.modes[i]
    }
}

/// A SELECT.
#[derive(Debug)]
pub struct Select {
    /// `None`: no FROM clause, one empty input row.
    pub from: Option<From>,
    /// WHERE, over the FROM row.
    pub filter: Option<Expr>,
    pub grouping: Option<Grouping>,
    /// Window function calls, computed over the (grouped) rows; above them
    /// expressions refer to each as `Expr::Window(i)`.
    pub windows: Vec<WindowCall>,
    /// Set-returning function calls of the select list, computed after the
    /// windows.
    pub srfs: Vec<SrfCall>,
    pub outputs: Vec<Expr>,
    pub columns: Arc<[Column]>,
    pub order: Vec<SortKey>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    /// FOR [KEY] SHARE / FOR [NO KEY] UPDATE.
    pub lock: Option<Locking>,
    /// DISTINCT ON: of the rows in ORDER BY order, the first of each run
    /// with equal values of these (over the FROM row); empty without it.
    pub distinct_on: Vec<Expr>,
}

/// Where inserted rows come from.
#[derive(Debug)]
pub enum InsertSource {
    /// Rows of expressions, already coerced to the target columns.
    Values(Vec<Vec<Expr>>),
    /// A query whose columns are cast to the target columns' types.
    Query(Box<Select>),
}

/// A table's CHECK constraint bound over its row (column i of the table
/// is `Expr::Column(i)`); a row fails it when it is false (NULL passes).
#[derive(Debug, Clone)]
pub struct TableCheck {
    /// The constraint's name, or the view's.
    pub name: String,
    pub expr: Expr,
    /// A view's WITH CHECK OPTION (44000), not a CHECK constraint.
    pub view: bool,
    /// `Some(column)`: not a check but a generated column's expression,
    /// which computes that column of the new row.
    pub generated: Option<usize>,
}

/// A change of a table's triggers.
#[derive(Debug)]
pub enum TriggerChange {
    /// A new trigger (its oid is given as it runs), or one that replaces
    /// the trigger of its name.
    Create(Box<snapscale_engine::triggers::TriggerDef>),
    Drop(String),
    Rename {
        old: String,
        new: String,
    },
}

/// An INSERT.
#[derive(Debug)]
pub struct Insert {
    pub rel: Rel,
    /// Target column positions, in source order.
    pub targets: Vec<usize>,
    /// Columns outside `targets` filled by their DEFAULT, per row.
    pub defaults: Vec<(usize, Expr)>,
    pub source: InsertSource,
    pub returning: Option<Projection>,
    /// The table's CHECK constraints.
    pub checks: Vec<TableCheck>,
    /// ON CONFLICT.
    pub on_conflict: Option<OnConflict>,
    pub foreign_keys: Arc<ForeignKeys>,
}

/// The foreign keys a statement's writes must keep (exec/ri.rs): for each
/// table it may change (its target, and the tables its cascades reach),
/// the keys the table holds and the keys that reference it.
#[derive(Debug, Default)]
pub struct ForeignKeys {
    pub tables: Vec<FkTable>,
}

impl ForeignKeys {
    /// The table with oid `oid`, by position.
    pub fn table(&self, oid: u32) -> Option<usize> {
        self.tables.iter().position(|t| t.rel.entry.oid == oid)
    }
}

/// One table's part in [`ForeignKeys`].
#[derive(Debug)]
pub struct FkTable {
    pub rel: Rel,
    /// Its foreign keys, each with the table it references.
    pub outgoing: Vec<(snapscale_engine::catalog::ForeignKeyDef, Rel)>,
    /// The foreign keys of other tables (or its own) that reference it.
    pub incoming: Vec<Incoming>,
    /// Its CHECK constraints, for the rows a cascade changes.
    pub checks: Vec<TableCheck>,
}

/// A foreign key referencing a table, from `child`.
#[derive(Debug)]
pub struct Incoming {
    pub child: Rel,
    pub fk: snapscale_engine::catalog::ForeignKeyDef,
    /// ON … SET DEFAULT: each referencing column's default, bound.
    pub defaults: Vec<Expr>,
}

/// INSERT … ON CONFLICT: which unique indexes decide that a row
/// conflicts, and what is done instead of inserting it.
#[derive(Debug)]
pub struct OnConflict {
    /// Positions in the table's index list.
    pub arbiters: Vec<usize>,
    pub action: ConflictAction,
}

#[derive(Debug)]
pub enum ConflictAction {
    Nothing,
    /// DO UPDATE SET … WHERE …: over the existing row (with its row id)
    /// followed by the row proposed for insertion (`excluded`).
    Update {
        sets: Vec<(usize, Expr)>,
        filter: Option<Expr>,
    },
}

/// An UPDATE: `sets` are evaluated against the old row.
#[derive(Debug)]
pub struct Update {
    pub scan: Scan,
    /// WHERE CURRENT OF this cursor.
    pub current_of: Option<String>,
    pub sets: Vec<(usize, Expr)>,
    pub returning: Option<Projection>,
    /// The table's CHECK constraints, checked on each new version.
    pub checks: Vec<TableCheck>,
    pub foreign_keys: Arc<ForeignKeys>,
}

/// A DELETE.
#[derive(Debug)]
pub struct Delete {
    pub scan: Scan,
    /// WHERE CURRENT OF this cursor.
    pub current_of: Option<String>,
    pub returning: Option<Projection>,
    pub foreign_keys: Arc<ForeignKeys>,
}

/// Output expressions with their columns (RETURNING).
#[derive(Debug)]
pub struct Projection {
    pub exprs: Vec<Expr>,
    pub columns: Arc<[Column]>,
}

/// An index to create.
#[derive(Clone, Debug)]
pub struct NewIndex {
    pub name: String,
    pub columns: Vec<usize>,
    /// INCLUDE columns (outside the key).
    pub include: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    pub nulls_not_distinct: bool,
    /// Made for a PRIMARY KEY or UNIQUE constraint (not CREATE INDEX).
    pub constraint: bool,
    /// The key expressions' text, one per `EXPRESSION` in `columns`.
    pub exprs: Vec<String>,
    /// A partial index's WHERE, as text.
    pub predicate: Option<String>,
    /// Its storage parameters (RELOPTIONS), checked.
    pub options: Vec<String>,
    /// Each key part's operator class, if one was named (IndexDef's).
    pub opclasses: Vec<String>,
    /// Each key part's declared order, if one is not ASC NULLS LAST
    /// (IndexDef's).
    pub orders: Vec<u8>,
}

/// CREATE TABLE.
#[derive(Debug)]
pub struct CreateTable {
    pub name: String,
    /// GLOBAL TEMPORARY: a temporary table, with PostgreSQL's warning.
    pub global: bool,
    pub temp: bool,
    pub if_not_exists: bool,
    pub columns: Vec<ColumnDef>,
    pub indexes: Vec<NewIndex>,
    /// `Some`: CREATE SEQUENCE (no columns, no indexes).
    pub sequence: Option<SequenceDef>,
    /// The sequences of SERIAL and identity columns, made with the table
    /// and owned by its columns.
    pub serials: Vec<Serial>,
    /// Its CHECK constraints, named.
    pub checks: Vec<snapscale_engine::user_types::CheckDef>,
    /// Its FOREIGN KEY constraints (a parent oid of 0: the table itself),
    /// whose referenced tables' rows list it when it is made.
    pub foreign_keys: Vec<snapscale_engine::catalog::ForeignKeyDef>,
    /// `Some`: CREATE VIEW (columns, no indexes, no constraints).
    pub view: Option<snapscale_engine::catalog::ViewDef>,
    /// Its storage parameters (RELOPTIONS), checked.
    pub options: Vec<String>,
}

/// The kinds of relation a statement names, as its messages word them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    Table,
    Sequence,
    View,
    MatView,
}

impl RelKind {
    pub fn of(entry: &RelEntry) -> RelKind {
        if entry.sequence.is_some() {
            RelKind::Sequence
        } else if entry.is_view() {
            RelKind::View
        } else if entry.is_matview() {
            RelKind::MatView
        } else {
            RelKind::Table
        }
    }

    /// "table", "sequence", "view", "materialized view".
    pub fn word(self) -> &'static str {
        match self {
            RelKind::Table => "table",
            RelKind::Sequence => "sequence",
            RelKind::View => "view",
            RelKind::MatView => "materialized view",
        }
    }
}

/// ALTER TABLE: the table's definition once every action is applied, and
/// the work getting there takes.
#[derive(Debug)]
pub struct AlterTable {
    /// ALTER TABLE, or ALTER INDEX renaming a relation (PostgreSQL allows
    /// it, and answers with its own tag).
    pub tag: &'static str,
    pub rel: Rel,
    /// The new definition (indexes to add are in `indexes`, not here).
    pub new: RelEntry,
    /// `Some` when the rows must be rewritten (a column added, dropped or
    /// converted): each new column's value, evaluated over an old row.
    pub rewrite: Option<Vec<Expr>>,
    /// Columns added without a rewrite (MISSING-COLUMN): each one's
    /// position and the expression its missing value is computed from,
    /// once.
    pub missing: Vec<(usize, Expr)>,
    /// CHECK constraints every row must pass (added or validated now),
    /// bound over the new row.
    pub validate: Vec<TableCheck>,
    /// Columns in which a NULL fails (SET NOT NULL, a NOT NULL column
    /// added), positions in the new row.
    pub not_null: Vec<usize>,
    /// PRIMARY KEY and UNIQUE constraints to add, positions in the new row.
    pub indexes: Vec<NewIndex>,
    /// RENAME TO.
    pub rename: Option<String>,
    /// SERIAL columns added: the column's position and its sequence, made
    /// when the statement runs, which numbers the existing rows.
    pub serials: Vec<(usize, Serial)>,
    /// Foreign keys added (not NOT VALID) or validated: every row's key
    /// must be present in the referenced table.
    pub validate_fks: Vec<String>,
    /// NOTICEs of actions skipped (IF [NOT] EXISTS).
    pub notices: Vec<(snapscale_sqlstate::SqlState, String)>,
    /// WARNINGs (a statistics target lowered to the most allowed).
    pub warnings: Vec<(snapscale_sqlstate::SqlState, String)>,
    /// Identity columns' sequences altered (SET options, RESTART): the
    /// sequence, its new parameters, RESTART's value.
    pub alter_sequences: Vec<(Rel, snapscale_engine::sequence::SequenceDef, Option<i64>)>,
    /// Identity columns' sequences dropped (DROP IDENTITY).
    pub drop_sequences: Vec<Rel>,
    /// Columns renamed (old, new): the views that read them are rewritten
    /// to follow.
    pub renamed_columns: Vec<(String, String)>,
}

impl CreateTable {
    /// A table `name` with nothing in it yet (its columns, constraints
    /// and options are set by the caller).
    pub fn named(name: String, temp: bool) -> CreateTable {
        CreateTable {
            name,
            global: false,
            temp,
            if_not_exists: false,
            columns: Vec::new(),
            indexes: Vec::new(),
            sequence: None,
            serials: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            view: None,
            options: Vec::new(),
        }
    }

    /// CREATE SEQUENCE `name` as `def` defines it.
    pub fn sequence(name: String, temp: bool, def: SequenceDef) -> CreateTable {
        CreateTable { sequence: Some(def), ..CreateTable::named(name, temp) }
    }
}

/// A SERIAL or identity column's sequence.
#[derive(Debug)]
pub struct Serial {
    pub column: String,
    pub sequence: String,
    pub def: SequenceDef,
    /// The column is new: its sequence numbers the existing rows (an
    /// identity added to a column keeps the values it has).
    pub numbers_rows: bool,
}

/// Statements the planner passes through as they are: DDL, maintenance,
/// COPY.
#[derive(Debug)]
pub enum Utility {
    CreateTable(CreateTable),
    /// CREATE [OR REPLACE] VIEW: the view (`create.view`), and the view it
    /// replaces, with the same leading columns.
    CreateView {
        create: CreateTable,
        replace: Option<Rel>,
        /// "will be a temporary view": it reads a temporary relation.
        notice: Option<String>,
    },
    /// Relations to drop; `None` entries are missing names under IF EXISTS.
    /// `kind`: what the statement drops (DROP TABLE, SEQUENCE or VIEW);
    /// views CASCADE reached are among the targets.
    DropTable {
        targets: Vec<(String, Option<Rel>)>,
        kind: RelKind,
        /// Tables whose foreign keys reference a dropped table (CASCADE
        /// drops those keys), and tables a dropped one references (they
        /// stop listing it).
        detach: Vec<Rel>,
        /// CASCADE's NOTICE and its DETAIL.
        cascaded: Option<(String, Option<String>)>,
    },
    /// ALTER TABLE ADD PRIMARY KEY / UNIQUE, CREATE INDEX.
    AlterTable(Box<AlterTable>),
    AddIndex {
        rel: Rel,
        index: NewIndex,
        if_not_exists: bool,
        /// CREATE INDEX CONCURRENTLY: not inside a transaction block.
        concurrently: bool,
        tag: &'static str,
    },
    /// DROP INDEX: each table with the names of the indexes to drop from
    /// it; the NOTICEs of IF EXISTS; CONCURRENTLY (not inside a
    /// transaction block).
    DropIndex {
        drops: Vec<(Rel, Vec<String>)>,
        notices: Vec<String>,
        concurrently: bool,
    },
    /// REINDEX: each table's indexes to rebuild (into new storage, as
    /// PostgreSQL's new relfilenode), and NOTICEs for tables with none.
    Reindex {
        targets: Vec<(Rel, Vec<String>)>,
        notices: Vec<String>,
        concurrently: bool,
    },
    /// SET CONSTRAINTS {ALL | names} {DEFERRED | IMMEDIATE}: the foreign
    /// keys named (`None`: all), handled by the session (RI-DEFER).
    SetConstraints {
        oids: Option<Vec<u32>>,
        deferred: bool,
    },
    /// ALTER SEQUENCE: `rel`'s new parameters, and the value RESTART sets
    /// (else it stays where it is).
    AlterSequence {
        rel: Rel,
        def: snapscale_engine::sequence::SequenceDef,
        restart: Option<i64>,
    },
    /// ALTER … SET / RESET (storage parameters): `rel`'s new list, or its
    /// index `index`'s.
    SetOptions {
        rel: Rel,
        index: Option<String>,
        options: Vec<String>,
        tag: &'static str,
    },
    /// CREATE / DROP / ALTER TRIGGER: a change of `rel`'s triggers
    /// (TRIGGER-ROWS).
    Trigger {
        rel: Rel,
        change: TriggerChange,
        tag: &'static str,
    },
    /// COMMENT ON a relation or a part of it (`None`: the comment goes).
    Comment {
        rel: Rel,
        on: snapscale_engine::catalog::Described,
        text: Option<String>,
    },
    /// ALTER TABLE … ALTER CONSTRAINT: foreign key `oid` of `rel` made
    /// (NOT) DEFERRABLE, INITIALLY DEFERRED or IMMEDIATE.
    AlterConstraint {
        rel: Rel,
        oid: u32,
        deferrable: bool,
        initially_deferred: bool,
    },
    /// ALTER INDEX old RENAME TO new, of an index of `rel`.
    RenameIndex {
        rel: Rel,
        old: String,
        new: String,
    },
    /// The tables, and the names of those CASCADE added (their NOTICEs).
    Truncate(Vec<Rel>, Vec<String>),
    /// A statement with nothing to do (ALTER TABLE IF EXISTS of a missing
    /// table): its notice (with its SQLSTATE) and its tag.
    Skip {
        code: snapscale_sqlstate::SqlState,
        notice: String,
        tag: &'static str,
    },
    /// LOCK TABLE: the locks are the statement's dependencies, taken (in
    /// `mode`) before it runs; nothing is left to do but answer.
    LockTable {
        mode: LockMode,
    },
    /// VACUUM: the relations (all if empty), and whether ANALYZE and
    /// FREEZE were asked.
    Vacuum {
        rels: Vec<Rel>,
        analyze: bool,
        freeze: bool,
    },
    /// ANALYZE: the relations (every table if empty), each with the
    /// columns it analyzes (none named: all); VERBOSE.
    Analyze {
        targets: Vec<(Rel, Vec<usize>)>,
        verbose: bool,
    },
    /// CHECKPOINT: one now.
    Checkpoint,
    CopyFrom {
        rel: Rel,
        columns: Vec<usize>,
        /// The columns not copied that have a DEFAULT, bound.
        defaults: Vec<(usize, Expr)>,
        /// Per copied column, an enum type's labels to read it with.
        enums: Vec<Option<std::sync::Arc<crate::expr::user_types::EnumLabels>>>,
        /// The copied columns' domain constraints, over the whole row.
        checks: Vec<Expr>,
        /// The table's CHECK constraints.
        table_checks: Vec<TableCheck>,
        foreign_keys: Arc<ForeignKeys>,
        options: CopyOptions,
    },
    CopyTo {
        rel: Rel,
        columns: Vec<usize>,
        options: CopyOptions,
    },
    /// CREATE TYPE.
    CreateType {
        name: String,
        spec: TypeSpec,
    },
    /// ALTER TYPE (or ALTER DOMAIN, `domain`) of the type with this oid.
    AlterType {
        oid: u32,
        op: AlterTypeOp,
        domain: bool,
    },
    /// DROP TYPE / DROP DOMAIN: the types by name and oid (`None`:
    /// missing, IF EXISTS).
    DropType {
        targets: Vec<(String, Option<u32>)>,
        domain: bool,
    },
    /// CREATE [OR REPLACE] FUNCTION: the routine's key (REL-KEY) and
    /// definition, its body already bound once (ROUTINE-ROWS).
    /// ALTER FUNCTION / PROCEDURE / ROUTINE … action: routine `oid`'s new
    /// attributes, or (RENAME TO) its new name.
    AlterRoutine {
        oid: u32,
        def: Box<snapscale_engine::routines::RoutineDef>,
        tag: &'static str,
        rename: Option<String>,
    },
    /// COMMENT ON FUNCTION / PROCEDURE / ROUTINE / AGGREGATE: routine
    /// `oid`'s comment (`None`: it goes).
    CommentRoutine {
        oid: u32,
        text: Option<String>,
    },
    CreateRoutine {
        key: String,
        def: Box<snapscale_engine::routines::RoutineDef>,
        replace: bool,
    },
    /// DROP FUNCTION: each routine by its signature as PostgreSQL names it
    /// in a notice, and its oid (`None`: missing, IF EXISTS).
    DropRoutines {
        targets: Vec<(String, Option<u32>)>,
        tag: &'static str,
        /// CASCADE: the aggregates that call them go too.
        cascade: bool,
    },
    /// ALTER AGGREGATE … SET SCHEMA: routine `oid` into `namespace`.
    MoveRoutine {
        oid: u32,
        namespace: u32,
        tag: &'static str,
    },
    /// CALL: the procedure and its arguments (constants, parameters), run
    /// by the session (PL-CALLS).
    Call {
        routine: Arc<snapscale_engine::catalog::RelEntry>,
        args: Vec<Expr>,
    },
    /// CREATE SCHEMA [IF NOT EXISTS] name.
    CreateSchema {
        name: String,
        if_not_exists: bool,
    },
    /// DROP SCHEMA: each schema by name and oid (`None`: missing, IF
    /// EXISTS), and what CASCADE drops with them: their relations (and
    /// what depends on those, as DROP TABLE … CASCADE finds it) and
    /// their types.
    DropSchema {
        schemas: Vec<(String, Option<u32>)>,
        relations: Box<Utility>,
        types: Vec<(String, Option<u32>)>,
        /// Its functions, as DROP FUNCTION takes them.
        routines: Vec<(String, Option<u32>)>,
        cascaded: Option<(String, Option<String>)>,
    },
    /// ALTER SCHEMA name RENAME TO new (`new` `None`: OWNER TO, which
    /// changes nothing while there is one role).
    AlterSchema {
        oid: u32,
        new: Option<String>,
    },
    /// ALTER … SET SCHEMA: the relation or type with oid `oid` (and the
    /// sequences its columns own) moves to `namespace`.
    SetSchema {
        oid: u32,
        namespace: u32,
        tag: &'static str,
    },
}

/// What CREATE TYPE defines.
#[derive(Debug)]
pub enum TypeSpec {
    /// An enum type's labels.
    Enum(Vec<String>),
    Domain(snapscale_engine::user_types::DomainDef),
    /// A composite type's attributes.
    Composite(Vec<snapscale_engine::catalog::ColumnDef>),
}

/// What ALTER TYPE does.
#[derive(Debug)]
pub enum AlterTypeOp {
    /// ADD VALUE [IF NOT EXISTS] label [BEFORE | AFTER neighbour]
    /// (`true`: before).
    AddValue {
        label: String,
        if_not_exists: bool,
        neighbour: Option<(String, bool)>,
    },
    RenameValue {
        from: String,
        to: String,
    },
    Rename(String),
    /// COMMENT ON TYPE / DOMAIN, or on a domain's constraint or a
    /// composite type's attribute (`None`: the comment goes).
    Comment {
        on: snapscale_engine::catalog::Described,
        text: Option<String>,
    },
    /// ALTER DOMAIN SET DEFAULT expr (its text) / DROP DEFAULT.
    SetDefault(Option<String>),
    /// ALTER DOMAIN SET / DROP NOT NULL.
    SetNotNull(bool),
    /// ALTER DOMAIN ADD CONSTRAINT name CHECK (expr) [NOT VALID]: `check`
    /// is the expression bound over the value (column 0).
    AddCheck {
        name: String,
        expr: String,
        check: crate::expr::Expr,
        not_valid: bool,
    },
    /// ALTER DOMAIN DROP CONSTRAINT [IF EXISTS] name.
    DropConstraint {
        name: String,
        if_exists: bool,
    },
    /// ALTER DOMAIN VALIDATE CONSTRAINT name, its expression bound.
    ValidateConstraint {
        name: String,
        check: crate::expr::Expr,
    },
    /// ALTER DOMAIN RENAME CONSTRAINT from TO to.
    RenameConstraint {
        from: String,
        to: String,
    },
}

/// A bound statement, before planning.
#[derive(Debug)]
pub enum Plan {
    Select(Box<Select>),
    Insert(Insert),
    Update(Update),
    Delete(Delete),
    Utility(Utility),
    /// `COPY (query) TO STDOUT`.
    CopyQuery(Box<Select>, CopyOptions),
    /// CREATE TABLE … AS / SELECT … INTO: the table, the query filling it.
    CreateTableAs(Box<CreateTableAs>),
    /// UPDATE … FROM, DELETE … USING.
    ModifyJoin(Box<ModifyJoin>),
    /// UPDATE or DELETE of a view with INSTEAD OF triggers.
    InsteadOf(Box<InsteadOf>),
    Merge(Box<Merge>),
    /// A statement after data-modifying WITH items: each item runs first,
    /// its RETURNING rows filling work table `id`, which the statement's
    /// references to the item read (bind/with.rs).
    With(Box<WithModifying>),
}

/// A statement with its data-modifying WITH items.
#[derive(Debug)]
pub struct WithModifying<S = Plan> {
    pub items: Vec<(usize, S)>,
    pub main: S,
}

/// UPDATE … FROM / DELETE … USING (bind/dml_join.rs).
#[derive(Debug)]
pub struct ModifyJoin<Q = Select> {
    pub rel: Rel,
    /// The join, locking the target's rows; bound, its outputs are the
    /// SET values and then RETURNING's items, which the planner moves
    /// into `sets` and `returning`, over the rows of the LockRows node it
    /// leaves here (the target's row, its tid, the other items' rows).
    pub query: Q,
    pub set_columns: Vec<usize>,
    pub sets: Vec<(usize, Expr)>,
    pub returning: Option<Projection>,
    pub checks: Vec<TableCheck>,
    pub delete: bool,
    pub foreign_keys: Arc<ForeignKeys>,
}

/// UPDATE or DELETE of a view through its INSTEAD OF triggers
/// (bind/instead_of.rs): the view's rows the WHERE clause keeps, each OLD
/// to the triggers, and with `sets` applied over it NEW (UPDATE).
#[derive(Debug)]
pub struct InsteadOf<Q = Select> {
    pub view: Rel,
    pub delete: bool,
    pub query: Q,
    pub sets: Vec<(usize, Expr)>,
    pub returning: Option<Projection>,
}

/// MERGE (bind/merge.rs): WHEN MATCHED clauses over the target's rows
/// joined with the source's, locked; WHEN NOT MATCHED clauses over the
/// source rows no target row matches.
#[derive(Debug)]
pub struct Merge<Q = Select> {
    pub rel: Rel,
    /// The locked join, as ModifyJoin's query; bound, its outputs are each
    /// WHEN MATCHED clause's condition (if it has one) and SET values in
    /// turn, which the planner moves into `matched`.
    pub join: Q,
    pub matched: Vec<MatchedClause>,
    /// The unmatched source rows; its outputs are each WHEN NOT MATCHED
    /// clause's condition (if any) and values, which `not_matched` points
    /// into.
    pub unmatched: Q,
    pub not_matched: Vec<NotMatchedClause>,
    pub checks: Vec<TableCheck>,
    pub foreign_keys: Arc<ForeignKeys>,
}

/// A WHEN MATCHED clause: its condition and action over the joined row.
#[derive(Debug)]
pub struct MatchedClause {
    pub cond: Option<Expr>,
    pub action: MatchedAction,
}

#[derive(Debug)]
pub enum MatchedAction {
    /// The target's columns and their new values.
    Update(Vec<(usize, Expr)>),
    Delete,
    Nothing,
}

/// A WHEN NOT MATCHED clause: the output holding its condition, and for
/// INSERT the target columns, the outputs holding their values, and the
/// defaults of the others (DO NOTHING: `None`).
#[derive(Debug)]
pub struct NotMatchedClause {
    pub cond: Option<usize>,
    #[allow(clippy::type_complexity)]
    pub insert: Option<(Vec<usize>, Vec<usize>, Vec<(usize, Expr)>)>,
}

/// CREATE TABLE … AS query [WITH [NO] DATA], SELECT … INTO.
#[derive(Debug)]
pub struct CreateTableAs<Q = Select> {
    /// The table, its columns the query's.
    pub create: CreateTable,
    pub query: Q,
    /// WITH NO DATA: the table only.
    pub data: bool,
    /// SELECT … INTO (its tag is always SELECT n).
    pub select_into: bool,
    /// REFRESH MATERIALIZED VIEW of this one: its rows are replaced by
    /// the query's (`create` is unused).
    pub refresh: Option<Rel>,
}

/// 42704 for a constraint a domain does not have.
pub(crate) fn no_domain_constraint(constraint: &str, domain: &str) -> snapscale_values::SqlError {
    snapscale_values::SqlError::new(
        snapscale_sqlstate::SqlState::UNDEFINED_OBJECT,
        format!("constraint \"{constraint}\" of domain \"{domain}\" does not exist"),
    )
}
