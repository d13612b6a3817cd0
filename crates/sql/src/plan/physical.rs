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

use super::{Aggregate, Column, Projection, Rel, RowLock, SortKey, Utility};
use crate::expr::Expr;
use crate::index::Index;

/// How rows are found.
#[derive(Debug)]
pub enum Access {
    /// Every visible version.
    Seq,
    /// Equality on the index's leading columns.
    IndexEq { index: Arc<Index>, probes: Vec<Expr> },
    /// A range on the index's first column.
    IndexRange { index: Arc<Index>, lower: Bound<Expr>, upper: Bound<Expr> },
}

/// The rows of one relation that pass a filter, and how to find them.
#[derive(Debug)]
pub struct ScanNode {
    pub rel: Rel,
    pub access: Access,
    /// Re-checked on every row, whatever the access path found (an index
    /// points at versions, and a tid may have been reused).
    pub filter: Option<Expr>,
}

/// An operator of a query (see the module documentation).
#[derive(Debug)]
pub enum Node {
    /// One row with no columns (a SELECT without FROM).
    Result,
    Scan(ScanNode),
    /// Locks each input row (which carries its tid) in order, following a
    /// concurrent update to the newest version under READ COMMITTED and
    /// re-checking `filter` on it, until its parent has enough rows.
    LockRows {
        input: Box<Node>,
        rel: Rel,
        filter: Option<Expr>,
        how: RowLock,
    },
    /// One row per group: the key values, then the aggregates; groups that
    /// fail `having` (over that row) are left out.
    Aggregate {
        input: Box<Node>,
        keys: Vec<Expr>,
        aggs: Vec<Aggregate>,
        having: Option<Expr>,
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
    Query(Query),
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
    },
    Update {
        scan: ScanNode,
        sets: Vec<(usize, Expr)>,
        returning: Option<Projection>,
    },
    Delete {
        scan: ScanNode,
        returning: Option<Projection>,
    },
    Utility(Utility),
}

impl Node {
    /// True if this node or one below it reads a table (and so takes the
    /// statement's snapshot when it runs).
    pub fn scans(&self) -> bool {
        match self {
            Node::Result => false,
            Node::Scan(_) | Node::LockRows { .. } => true,
            Node::Aggregate { input, .. }
            | Node::Sort { input, .. }
            | Node::Project { input, .. }
            | Node::Limit { input, .. } => input.scans(),
        }
    }

    /// True if this node or one below it locks rows (FOR UPDATE/SHARE).
    fn locks_rows(&self) -> bool {
        match self {
            Node::Result | Node::Scan(_) => false,
            Node::LockRows { .. } => true,
            Node::Aggregate { input, .. }
            | Node::Sort { input, .. }
            | Node::Project { input, .. }
            | Node::Limit { input, .. } => input.locks_rows(),
        }
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
            Statement::Utility(u) => match u {
                Utility::CreateTable(c) if c.sequence.is_some() => Some("CREATE SEQUENCE"),
                Utility::CreateTable(_) => Some("CREATE TABLE"),
                Utility::DropTable { sequences: true, .. } => Some("DROP SEQUENCE"),
                Utility::DropTable { .. } => Some("DROP TABLE"),
                Utility::AddIndex { tag, .. } => Some(tag),
                Utility::Truncate(_) => Some("TRUNCATE TABLE"),
                // A standby takes the modes that do not conflict with
                // replay's reads (PostgreSQL: up to ROW EXCLUSIVE).
                Utility::LockTable { mode } if *mode > snapscale_lock::LockMode::RowExclusive => {
                    Some("LOCK TABLE")
                }
                Utility::LockTable { .. } => None,
                Utility::Vacuum { .. } => Some("VACUUM"),
                Utility::CopyFrom { .. } => Some("COPY FROM"),
                Utility::Analyze | Utility::Checkpoint | Utility::CopyTo { .. } => None,
            },
        }
    }

    /// The result columns, if the statement returns rows.
    pub fn columns(&self) -> Option<Arc<[Column]>> {
        match self {
            Statement::Query(q) => Some(Arc::clone(&q.columns)),
            Statement::Insert { returning, .. }
            | Statement::Update { returning, .. }
            | Statement::Delete { returning, .. } => returning.as_ref().map(|r| Arc::clone(&r.columns)),
            Statement::Utility(_) => None,
        }
    }
}
