//! Which statements do a bounded amount of work.
//!
//! A connection worker runs its connections' statements on its own thread
//! (the server's `workers.rs`): a point lookup costs less than a hand-off
//! to another thread would. A statement whose work grows with the data (a
//! scan, a join of scans, a series, a recursive query, DDL that rewrites a
//! table) would hold up every other connection of that worker for as long
//! as it computes, so the executor hands the worker's other connections to
//! another thread before running it (`exec::run`). This module decides
//! which is which, from the plan alone, erring towards "unbounded": a
//! misjudged short statement pays a thread hand-off (tens of µs), a
//! misjudged long one stalls its neighbours.
//!
//! Bounded: rows found by equality on every column of a unique index (at
//! most one live row per probe), a few VALUES rows, and what is computed
//! from them (filters, projections, sorts, aggregates of those rows).

use super::physical::{Access, Node, Query, ScanNode, Source, Statement};

/// VALUES lists longer than this count as unbounded (a bulk INSERT).
const MANY_VALUES: usize = 64;

impl Statement {
    /// True if the statement, with its subqueries `subplans`, does a
    /// bounded amount of work whatever the tables hold.
    pub fn is_bounded(&self, subplans: &[Query]) -> bool {
        let this = match self {
            Statement::Query(q) => q.root.is_bounded(),
            Statement::Insert { source: Source::Values(rows), .. } => rows.len() <= MANY_VALUES,
            Statement::Insert { source: Source::Query(q), .. } => q.root.is_bounded(),
            Statement::Update { scan, .. } | Statement::Delete { scan, .. } => scan.is_point(),
            // DDL, VACUUM, COPY: their work follows the tables' size.
            Statement::Utility(_)
            | Statement::CopyQuery { .. }
            | Statement::CreateTableAs(_)
            | Statement::ModifyJoin(_)
            | Statement::InsteadOf(_)
            | Statement::Merge(_)
            | Statement::With(_) => false,
        };
        this && subplans.iter().all(|q| q.root.is_bounded())
    }
}

impl ScanNode {
    /// At most one live row per probe: equality on all of a unique
    /// index's columns.
    fn is_point(&self) -> bool {
        match &self.access {
            Access::IndexEq { index, probes } => index.unique && probes.len() == index.columns.len(),
            // A few values of a one-column unique index: a row each.
            Access::IndexAny { index, arms } => {
                index.unique
                    && index.columns.len() == 1
                    && arms.len() <= MANY_VALUES
                    && arms.iter().all(|a| matches!(a, super::physical::IndexArm::Eq(_)))
            }
            Access::Seq | Access::IndexRange { .. } => false,
            Access::CurrentOf(_) => true,
        }
    }
}

impl Node {
    fn is_bounded(&self) -> bool {
        match self {
            Node::Result => true,
            Node::Values(rows) => rows.len() <= MANY_VALUES,
            Node::Scan(scan) => scan.is_point(),
            Node::IndexJoin { left, index, probes, .. } => {
                left.is_bounded() && index.unique && probes.len() == index.columns.len()
            }
            Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::Limit { input, .. }
            | Node::Sort { input, .. }
            | Node::Unique { input, .. }
            | Node::Aggregate { input, .. }
            | Node::Window { input, .. }
            | Node::LockRows { input, .. } => input.is_bounded(),
            Node::Numbered(input) => input.is_bounded(),
            Node::Zip { items, .. } => items.iter().all(|(n, _, _)| n.is_bounded()),
            Node::SetOp { left, right, .. } => left.is_bounded() && right.is_bounded(),
            Node::NestLoop { join } | Node::Lateral { join, .. } | Node::HashJoin { join, .. } => {
                join.left.is_bounded() && join.right.is_bounded()
            }
            // A series or an array of any length, the catalog's views, a
            // recursion: unbounded.
            Node::ProjectSet { .. }
            | Node::Function { .. }
            | Node::Computed { .. }
            | Node::RecursiveUnion { .. }
            | Node::WorkTable(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bind::tests::bound;
    use crate::plan::planner::plan;
    use crate::stack::StackDepth;

    /// `t` has a primary key on `a` and no index on `b`.
    fn bounded(sql: &str) -> bool {
        let b = bound(sql);
        let (statement, subplans) = plan(
            b.plan,
            b.subqueries,
            StackDepth::here(1 << 20),
            crate::plan::switches::PlannerSettings::default(),
        )
        .unwrap();
        statement.is_bounded(&subplans)
    }

    #[test]
    fn point_statements_are_bounded() {
        for sql in [
            "SELECT 1",
            "SELECT b FROM t WHERE a = $1",
            "SELECT b FROM t WHERE a = 1 AND b = 'x' ORDER BY b LIMIT 1",
            "SELECT count(*) FROM t WHERE a = 7",
            "SELECT b FROM t WHERE a = 3 FOR UPDATE",
            "UPDATE t SET b = 'y' WHERE a = 4",
            "DELETE FROM t WHERE a = 5",
            "INSERT INTO t VALUES (1, 'x'), (2, 'y')",
            "INSERT INTO t SELECT a + 1, b FROM t WHERE a = 1",
        ] {
            assert!(bounded(sql), "{sql}");
        }
    }

    #[test]
    fn statements_that_grow_with_the_data_are_not() {
        for sql in [
            "SELECT b FROM t",
            "SELECT b FROM t WHERE b = 'x'",
            "SELECT b FROM t WHERE a > 5",
            "SELECT count(*) FROM t x, t y",
            "SELECT * FROM generate_series(1, 10)",
            "SELECT generate_series(1, 10)",
            "SELECT (SELECT count(*) FROM t)",
            "SELECT b FROM t WHERE a = (SELECT max(a) FROM t)",
            "UPDATE t SET b = 'y'",
            "DELETE FROM t WHERE b = 'x'",
            "INSERT INTO t SELECT a + 100, b FROM t",
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r LIMIT 3",
            "CREATE TABLE u (x int)",
        ] {
            assert!(!bounded(sql), "{sql}");
        }
        let many = (0..100).map(|i| format!("({i}, 'x')")).collect::<Vec<_>>().join(", ");
        assert!(!bounded(&format!("INSERT INTO t VALUES {many}")));
    }
}
