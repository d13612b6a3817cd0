//! Physical plans: what the executor runs.
//!
//! A query is a tree of operators. Each produces its rows from its input's:
//!
//! ```text
//!   Limit                 OFFSET / LIMIT; tells its input how many rows it wants
//!     Project             the output expressions
//!       Sort              ORDER BY, over the input rows (before projection)
//!         Aggregate       GROUP BY and aggregates, HAVING
//!           Scan          a relation's rows, by an access path, filtered
//!
//!   Limit
//!     Project
//!       LockRows          FOR UPDATE / FOR SHARE: locks each row, in order,
//!         Sort            until Limit has what it wants (PostgreSQL's
//!           Scan          LockRows sits under Limit in the same way)
//! ```
//!
//! Above an Aggregate, a row is the group's key values followed by its
//! aggregate values, and expressions refer to them as columns.

use std::ops::Bound;
use std::sync::Arc;

use snapscale_engine::index::Index;

use super::{
    Aggregate, Column, JoinKind, Projection, Rel, RowLock, SetOpKind, SortKey, Srf, SrfCall, Utility,
    WindowCall,
};
use crate::catalog_views::View;
use crate::expr::Expr;

/// How rows are found.
#[derive(Clone, Debug)]
pub enum Access {
    /// Every visible version.
    Seq,
    /// Equality on the index's leading columns.
    IndexEq { index: Arc<Index>, probes: Vec<Expr> },
    /// A range on the index's first column.
    IndexRange { index: Arc<Index>, lower: Bound<Expr>, upper: Bound<Expr> },
    /// Several lookups of one index, their rows unioned with each version
    /// found once, in tid order as a sequential scan gives them:
    /// `k IN (…)`, `k = ANY (array)`, and an OR of equalities and ranges of
    /// the index's first key part (plan/index_any.rs). PostgreSQL answers
    /// the first two with an Index Scan whose index condition is a
    /// ScalarArrayOpExpr (`k = ANY ('{…}')`), the OR with a Bitmap Heap
    /// Scan over a BitmapOr of Bitmap Index Scans, one per arm.
    IndexAny { index: Arc<Index>, arms: Vec<IndexArm> },
    /// WHERE CURRENT OF the cursor: the row it is on, as the statement's
    /// snapshot sees it now (the executor is given its tid).
    CurrentOf(Arc<str>),
}

/// One lookup of an [`Access::IndexAny`], on the index's first key part;
/// its values are evaluated once per scan (they read no row).
#[derive(Clone, Debug)]
pub enum IndexArm {
    /// The entries equal to the value (none for NULL).
    Eq(Expr),
    /// The entries equal to any element of the array value (`= ANY`);
    /// NULL elements, and a NULL array, find nothing.
    EachOf(Expr),
    /// The entries within the bounds (NULL bounds find nothing).
    Range { lower: Bound<Expr>, upper: Bound<Expr> },
}

/// The rows of one relation that pass a filter, and how to find them.
#[derive(Clone, Debug)]
pub struct ScanNode {
    pub rel: Rel,
    pub access: Access,
    /// Re-checked on every row, whatever the access path found (an index
    /// points at versions, and a tid may have been reused).
    pub filter: Option<Expr>,
    /// Each row carries its tid as one more column (a join under FOR
    /// UPDATE: LockRows finds the versions to lock by it).
    pub with_tid: bool,
}

/// A table whose rows LockRows locks: where its row and its tid are in
/// the input row. A single-table query's rows are versions with their tids,
/// and its target is the whole row, with the table's filter re-checked on
/// a newer version; a join's targets are parts of its rows, and the join's
/// conditions are re-checked on the row with the newer version in place.
#[derive(Debug)]
pub struct LockTarget {
    pub rel: Rel,
    /// The row-lock mode (FOR KEY SHARE … FOR UPDATE).
    pub strength: snapscale_engine::RowLockMode,
    /// What to do with a row held in a conflicting mode.
    pub how: RowLock,
    /// Where the table's row starts; `None`: the input rows are versions.
    pub offset: Option<usize>,
    /// Re-checked on a newer version of the table's row.
    pub filter: Option<Expr>,
}

/// An operator of a query (see the module documentation).
#[derive(Debug)]
pub enum Node {
    /// One row with no columns (a SELECT without FROM).
    Result,
    Scan(ScanNode),
    /// A computed relation's rows (the `pg_catalog` views) that pass
    /// `filter`.
    Computed {
        view: View,
        filter: Option<Expr>,
    },
    /// UNION / INTERSECT / EXCEPT of two inputs.
    SetOp {
        op: SetOpKind,
        all: bool,
        left: Box<Node>,
        right: Box<Node>,
    },
    /// Rows of expressions (VALUES).
    Values(Vec<Vec<Expr>>),
    /// A recursive WITH item (`plan::From::Recursive`).
    RecursiveUnion {
        id: usize,
        all: bool,
        base: Box<Node>,
        step: Box<Node>,
    },
    /// The current round's rows of recursive WITH item `id`.
    WorkTable(usize),
    /// A set-returning function's rows.
    Function {
        func: Srf,
        args: Vec<Expr>,
        /// WITH ORDINALITY: each row's number after its columns.
        ordinality: bool,
    },
    /// WITH ORDINALITY over a function's rows computed by a plan: each
    /// input row followed by its number, from 1.
    Numbered(Box<Node>),
    /// ROWS FROM's functions zipped (`plan::From::Zip`): each with its
    /// width, and the range of the outer values that are its own when it
    /// reads the items to the zip's left.
    Zip {
        items: Vec<(Node, usize, Option<std::ops::Range<usize>>)>,
        ordinality: bool,
    },
    /// The input rows that pass `cond`.
    Filter {
        input: Box<Node>,
        cond: Expr,
    },
    /// A join that compares every left row with every right row.
    NestLoop {
        join: JoinNode,
    },
    /// A join that looks each left row's partners up in an index of the
    /// right table: equality of the index's leading columns with `probes`,
    /// evaluated over the left row.
    IndexJoin {
        left: Box<Node>,
        right: ScanNode,
        index: Arc<Index>,
        probes: Vec<Expr>,
        kind: JoinKind,
        /// Over the joined row.
        cond: Option<Expr>,
    },
    /// A join whose right side reads the left row (LATERAL): for each left
    /// row, `args` over it are the right side's outer values, and the
    /// right side is run again.
    Lateral {
        join: JoinNode,
        args: Vec<Expr>,
    },
    /// A join on equal keys: the right rows in a table by `right_keys`,
    /// probed with each left row's `left_keys`.
    HashJoin {
        join: JoinNode,
        left_keys: Vec<Expr>,
        right_keys: Vec<Expr>,
    },
    /// Locks each input row's versions in order, following a concurrent
    /// update to the newest version under READ COMMITTED and re-checking
    /// on it, until its parent has enough rows.
    LockRows {
        input: Box<Node>,
        targets: Vec<LockTarget>,
        /// For a join: its conditions, over the row, re-checked when a
        /// locked part changed.
        recheck: Option<Expr>,
    },
    /// One row per group: the key values, then the aggregates; groups that
    /// fail `having` (over that row) are left out.
    Aggregate {
        input: Box<Node>,
        keys: Vec<Expr>,
        aggs: Vec<Aggregate>,
        having: Option<Expr>,
    },
    /// Each input row as many times as its longest set-returning call has
    /// rows, with a column per call (NULL once a shorter call runs out).
    ProjectSet {
        input: Box<Node>,
        calls: Vec<SrfCall>,
    },
    /// Appends one column per window call to each input row, in the input's
    /// order.
    Window {
        input: Box<Node>,
        calls: Vec<WindowCall>,
    },
    Sort {
        input: Box<Node>,
        keys: Vec<SortKey>,
    },
    Project {
        input: Box<Node>,
        exprs: Vec<Expr>,
    },
    Limit {
        input: Box<Node>,
        offset: Option<Expr>,
        limit: Option<Expr>,
    },
    /// DISTINCT ON: the first of each run of input rows with equal `keys`
    /// (NULLs equal), the input being sorted by them first.
    Unique {
        input: Box<Node>,
        keys: Vec<Expr>,
    },
}

/// The two inputs of a join and what it keeps. A joined row is the left
/// row then the right row; a left row without a partner in a left or full
/// join gets NULLs for the right's `right_width` columns, and the reverse.
#[derive(Debug)]
pub struct JoinNode {
    pub left: Box<Node>,
    pub right: Box<Node>,
    pub kind: JoinKind,
    /// Over the joined row.
    pub cond: Option<Expr>,
    pub left_width: usize,
    pub right_width: usize,
}

/// A query: its operators and its result columns.
#[derive(Debug)]
pub struct Query {
    pub root: Node,
    pub columns: Arc<[Column]>,
}

/// Where inserted rows come from.
#[derive(Debug)]
pub enum Source {
    Values(Vec<Vec<Expr>>),
    Query(Box<Query>),
}

/// A planned statement.
#[derive(Debug)]
pub enum Statement {
    Query(Query),
    Insert {
        rel: Rel,
        targets: Vec<usize>,
        defaults: Vec<(usize, Expr)>,
        source: Source,
        returning: Option<Projection>,
        checks: Vec<super::TableCheck>,
        on_conflict: Option<super::OnConflict>,
        foreign_keys: Arc<super::ForeignKeys>,
    },
    Update {
        scan: ScanNode,
        sets: Vec<(usize, Expr)>,
        returning: Option<Projection>,
        checks: Vec<super::TableCheck>,
        foreign_keys: Arc<super::ForeignKeys>,
    },
    Delete {
        scan: ScanNode,
        returning: Option<Projection>,
        foreign_keys: Arc<super::ForeignKeys>,
    },
    Utility(Utility),
    /// `COPY (query) TO STDOUT`.
    CreateTableAs(Box<super::CreateTableAs<Query>>),
    ModifyJoin(Box<super::ModifyJoin<Query>>),
    InsteadOf(Box<super::InsteadOf<Query>>),
    Merge(Box<super::Merge<Query>>),
    CopyQuery {
        query: Query,
        options: crate::copy::CopyOptions,
    },
    /// A statement after its data-modifying WITH items.
    With(Box<super::WithModifying<Statement>>),
}

impl Node {
    /// The operator's name.
    #[cfg(test)]
    pub fn name(&self) -> &'static str {
        match self {
            Node::Result => "Result",
            Node::Scan(_) => "Scan",
            Node::Computed { .. } => "Computed",
            Node::SetOp { .. } => "SetOp",
            Node::Values(_) => "Values",
            Node::RecursiveUnion { .. } => "RecursiveUnion",
            Node::WorkTable(_) => "WorkTable",
            Node::Function { .. } => "Function",
            Node::Numbered(_) => "Numbered",
            Node::Zip { .. } => "Zip",
            Node::Filter { .. } => "Filter",
            Node::NestLoop { .. } => "NestLoop",
            Node::IndexJoin { .. } => "IndexJoin",
            Node::HashJoin { .. } => "HashJoin",
            Node::Lateral { .. } => "Lateral",
            Node::LockRows { .. } => "LockRows",
            Node::Aggregate { .. } => "Aggregate",
            Node::Window { .. } => "Window",
            Node::ProjectSet { .. } => "ProjectSet",
            Node::Sort { .. } => "Sort",
            Node::Project { .. } => "Project",
            Node::Limit { .. } => "Limit",
            Node::Unique { .. } => "Unique",
        }
    }

    /// The operators directly below this one.
    pub fn inputs(&self) -> smallvec::SmallVec<[&Node; 2]> {
        use smallvec::smallvec;
        match self {
            Node::Result
            | Node::Scan(_)
            | Node::Computed { .. }
            | Node::Values(_)
            | Node::WorkTable(_)
            | Node::Function { .. } => smallvec![],
            Node::SetOp { left, right, .. } => smallvec![&**left, &**right],
            Node::RecursiveUnion { base, step, .. } => smallvec![&**base, &**step],
            Node::NestLoop { join } | Node::HashJoin { join, .. } | Node::Lateral { join, .. } => {
                smallvec![&*join.left, &*join.right]
            }
            Node::IndexJoin { left, .. } => smallvec![&**left],
            Node::Numbered(input) => smallvec![&**input],
            Node::Zip { items, .. } => items.iter().map(|(n, _, _)| n).collect(),
            Node::Filter { input, .. }
            | Node::LockRows { input, .. }
            | Node::Aggregate { input, .. }
            | Node::Window { input, .. }
            | Node::ProjectSet { input, .. }
            | Node::Sort { input, .. }
            | Node::Project { input, .. }
            | Node::Limit { input, .. }
            | Node::Unique { input, .. } => smallvec![&**input],
        }
    }

    /// True if this node or one below it locks rows (FOR UPDATE/SHARE).
    pub fn locks_rows(&self) -> bool {
        matches!(self, Node::LockRows { .. }) || self.inputs().into_iter().any(Node::locks_rows)
    }
}

impl Statement {
    /// The command name PostgreSQL's read-only check names, if this
    /// statement writes (a standby refuses it with 25006).
    pub fn writes(&self) -> Option<&'static str> {
        match self {
            Statement::Query(q) if q.root.locks_rows() => Some("SELECT FOR UPDATE"),
            Statement::Query(_) => None,
            Statement::Insert { .. } => Some("INSERT"),
            Statement::Update { .. } => Some("UPDATE"),
            Statement::Delete { .. } => Some("DELETE"),
            Statement::CopyQuery { .. } => None,
            Statement::CreateTableAs(c) if c.refresh.is_some() => Some("REFRESH MATERIALIZED VIEW"),
            Statement::CreateTableAs(c) if c.create.view.is_some() => Some("CREATE MATERIALIZED VIEW"),
            Statement::CreateTableAs(_) => Some("CREATE TABLE AS"),
            Statement::ModifyJoin(m) if m.delete => Some("DELETE"),
            Statement::ModifyJoin(_) => Some("UPDATE"),
            Statement::InsteadOf(m) if m.delete => Some("DELETE"),
            Statement::InsteadOf(_) => Some("UPDATE"),
            Statement::Merge(_) => Some("MERGE"),
            Statement::With(w) => w.items.iter().find_map(|(_, s)| s.writes()).or_else(|| w.main.writes()),
            Statement::Utility(u) => match u {
                Utility::CreateTable(c) if c.sequence.is_some() => Some("CREATE SEQUENCE"),
                Utility::CreateTable(_) => Some("CREATE TABLE"),
                Utility::CreateView { .. } => Some("CREATE VIEW"),
                Utility::DropTable { kind: crate::plan::RelKind::Sequence, .. } => Some("DROP SEQUENCE"),
                Utility::DropTable { kind: crate::plan::RelKind::View, .. } => Some("DROP VIEW"),
                Utility::DropTable { kind: crate::plan::RelKind::MatView, .. } => {
                    Some("DROP MATERIALIZED VIEW")
                }
                Utility::DropTable { .. } => Some("DROP TABLE"),
                Utility::AddIndex { tag, .. } => Some(tag),
                Utility::DropIndex { .. } => Some("DROP INDEX"),
                Utility::RenameIndex { .. } => Some("ALTER INDEX"),
                Utility::SetOptions { tag, .. } => Some(tag),
                Utility::AlterConstraint { .. } => Some("ALTER TABLE"),
                Utility::Comment { .. } | Utility::CommentRoutine { .. } => Some("COMMENT"),
                Utility::Trigger { tag, .. } => Some(tag),
                Utility::AlterSequence { .. } => Some("ALTER SEQUENCE"),
                Utility::SetConstraints { .. } => None,
                Utility::Reindex { .. } => Some("REINDEX"),
                Utility::AlterTable(a) => Some(a.tag),
                Utility::Truncate(..) => Some("TRUNCATE TABLE"),
                // A standby takes the modes that do not conflict with
                // replay's reads (PostgreSQL: up to ROW EXCLUSIVE).
                Utility::LockTable { mode } if *mode > snapscale_engine::LockMode::RowExclusive => {
                    Some("LOCK TABLE")
                }
                Utility::LockTable { .. } => None,
                Utility::Vacuum { .. } => Some("VACUUM"),
                Utility::CopyFrom { .. } => Some("COPY FROM"),
                Utility::CreateType { spec: crate::plan::TypeSpec::Domain(_), .. } => Some("CREATE DOMAIN"),
                Utility::CreateType { .. } => Some("CREATE TYPE"),
                Utility::AlterType { domain: true, .. } => Some("ALTER DOMAIN"),
                Utility::AlterType { .. } => Some("ALTER TYPE"),
                Utility::DropType { domain: true, .. } => Some("DROP DOMAIN"),
                Utility::DropType { .. } => Some("DROP TYPE"),
                Utility::CreateRoutine { def, .. }
                    if def.kind == snapscale_engine::routines::RoutineKind::Procedure =>
                {
                    Some("CREATE PROCEDURE")
                }
                Utility::CreateRoutine { def, .. }
                    if def.kind == snapscale_engine::routines::RoutineKind::Aggregate =>
                {
                    Some("CREATE AGGREGATE")
                }
                Utility::CreateRoutine { .. } => Some("CREATE FUNCTION"),
                Utility::AlterRoutine { tag, .. } => Some(tag),
                Utility::DropRoutines { tag, .. } => Some(tag),
                Utility::MoveRoutine { tag, .. } => Some(tag),
                // Its statements are refused one by one where they write.
                Utility::Call { .. } => None,
                Utility::CreateSchema { .. } => Some("CREATE SCHEMA"),
                Utility::DropSchema { .. } => Some("DROP SCHEMA"),
                Utility::AlterSchema { .. } => Some("ALTER SCHEMA"),
                Utility::SetSchema { tag, .. } => Some(tag),
                Utility::Analyze { .. }
                | Utility::Checkpoint
                | Utility::CopyTo { .. }
                | Utility::Skip { .. } => None,
            },
        }
    }

    /// The foreign keys its writes must keep, if it writes rows.
    pub fn foreign_keys(&self) -> Option<&Arc<super::ForeignKeys>> {
        match self {
            Statement::Insert { foreign_keys, .. }
            | Statement::Update { foreign_keys, .. }
            | Statement::Delete { foreign_keys, .. } => Some(foreign_keys),
            Statement::ModifyJoin(m) => Some(&m.foreign_keys),
            Statement::Merge(m) => Some(&m.foreign_keys),
            _ => None,
        }
    }

    /// The result columns, if the statement returns rows.
    pub fn columns(&self) -> Option<Arc<[Column]>> {
        match self {
            Statement::Query(q) => Some(Arc::clone(&q.columns)),
            Statement::Insert { returning, .. }
            | Statement::Update { returning, .. }
            | Statement::Delete { returning, .. } => returning.as_ref().map(|r| Arc::clone(&r.columns)),
            Statement::ModifyJoin(m) => m.returning.as_ref().map(|r| Arc::clone(&r.columns)),
            Statement::InsteadOf(m) => m.returning.as_ref().map(|r| Arc::clone(&r.columns)),
            Statement::With(w) => w.main.columns(),
            Statement::Utility(_)
            | Statement::CopyQuery { .. }
            | Statement::CreateTableAs(_)
            | Statement::Merge(_) => None,
        }
    }
}
