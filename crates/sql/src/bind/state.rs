//! What the binder collects as it walks a statement, in two parts that
//! live for different spans:
//!
//! * [`StatementState`]: for the whole statement, whatever query it is
//!   in: the parameters' types as they are inferred, the relations the
//!   plan depends on (PLAN-FRESH), the subqueries, the recursive WITH
//!   items' work tables, whether an expression may wait for a lock
//!   (EVAL-REPLAY), and the locking clauses' strengths the pre-parser read.
//! * [`QueryState`]: for the one SELECT being bound (PostgreSQL's
//!   per-query-level parse state): the aggregates, window calls and
//!   set-returning calls found in its expressions (each `None` where the
//!   clause being bound does not allow them), its WINDOW clause, and which
//!   outputs have no type of their own yet. A SELECT nested in another
//!   saves its outer query's state and puts it back when it is done; a
//!   subquery's enclosing queries' aggregate lists stay reachable for the
//!   aggregates that belong to them (outer_agg.rs).

use snapscale_engine::RowLockMode;
use snapscale_values::SqlType;
use sqlparser::ast;

use crate::plan::{Aggregate, Dep, Select, SrfCall, WindowCall};

/// See the module documentation.
#[derive(Default)]
pub(super) struct StatementState {
    /// `$n`'s type, once known (`None`: to be inferred from its context).
    pub(super) params: Vec<Option<SqlType>>,
    /// The relations the plan uses, in the lock mode each needs.
    pub(super) deps: Vec<Dep>,
    /// Subqueries bound so far (`SubLink::plan` numbers them).
    pub(super) subqueries: Vec<Select>,
    /// Work tables of recursive WITH items bound so far (their ids).
    pub(super) work_tables: usize,
    /// The data-modifying WITH items bound so far, each with the work
    /// table its RETURNING rows fill (with.rs).
    pub(super) modifying: Vec<(usize, crate::plan::Plan)>,
    /// The WITH about to be read is the top-level query's, where a
    /// data-modifying item may stand; taken by the first query bound.
    pub(super) top_with: bool,
    /// A function that may wait was bound (`BoundStatement::waits`).
    pub(super) waits: bool,
    /// The strengths of the statement's locking clauses, in the order they
    /// are written, when sqlparser could not read them all (`Ast`'s
    /// `lock_strengths`); taken by the query whose clauses they are.
    pub(super) lock_strengths: Option<Vec<RowLockMode>>,
    /// What the pre-parser read (`Ast::pre`), each taken by the part of
    /// the statement it belongs to.
    pub(super) pre: crate::statement::PreParsed,
    /// While CREATE VIEW binds its query: what each `*` stood for
    /// (view.rs).
    pub(super) wildcards: Option<super::view::Wildcards>,
    /// The views being bound, innermost last (a view that reaches itself
    /// is refused).
    pub(super) expanding: Vec<u32>,
    /// The relations the statement names itself (not those a view it
    /// reads names), by oid: a view's dependencies.
    pub(super) named_relations: Vec<u32>,
    /// INSERT or UPDATE through views WITH CHECK OPTION: the conditions
    /// the new row must meet (view_dml.rs).
    pub(super) view_checks: super::view_dml::ViewChecks,
    /// TRUNCATE … CASCADE: the tables it reached through foreign keys.
    pub(super) truncate_cascades: Vec<String>,
    /// The user-defined functions called in expressions so far: each
    /// one's oid and the subquery that is its body (routine_call.rs).
    pub(super) routine_plans: Vec<((u32, Vec<snapscale_values::SqlType>), usize)>,
    /// The PL/pgSQL calls to run before the statement (PL-CALLS).
    pub(super) pl_calls: Vec<crate::plan::PlCall>,
}

/// See the module documentation.
#[derive(Default)]
pub(super) struct QueryState {
    /// Aggregates found while binding the current SELECT's expressions;
    /// `None` where aggregates are not allowed.
    pub(super) aggs: Option<Vec<Aggregate>>,
    /// Window calls found while binding the current SELECT's select list
    /// and ORDER BY; `None` where they are not allowed.
    pub(super) windows: Option<Vec<WindowCall>>,
    /// Set-returning calls found while binding the current SELECT's select
    /// list; `None` where they are not allowed.
    pub(super) srfs: Option<Vec<SrfCall>>,
    /// The WINDOW clause of the SELECT being bound.
    pub(super) named_windows: Vec<ast::NamedWindowDefinition>,
    /// The outputs of the last select list bound that had no type of their
    /// own (quoted literals, NULL), by position.
    pub(super) untyped: Vec<usize>,
    /// Binding the select list of a top-level SELECT without FROM, whose
    /// expressions are evaluated once (PL-CALLS).
    pub(super) once: bool,
    /// The aggregate lists of the queries enclosing the subquery being
    /// bound, innermost last, each under the address of the scope its
    /// subquery was bound in (`None` where the clause holding the subquery
    /// allows no aggregates): where an outer-level aggregate goes
    /// (outer_agg.rs).
    pub(super) enclosing: Vec<(usize, Option<Vec<Aggregate>>)>,
    /// The outer-level aggregates placed so far: the enclosing scope's
    /// address, the slot, and where the call is in the query string (for
    /// "cannot be nested" errors found later).
    pub(super) placed: Vec<(usize, usize, Option<usize>)>,
}
