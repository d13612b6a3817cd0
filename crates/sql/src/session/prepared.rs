//! Prepared statements: parsed once, bound and planned once, and bound
//! again only when a relation they use has changed (PLAN-FRESH).

use std::sync::{Arc, Mutex};

use snapscale_engine::user_types::TypeDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, UserType};
use sqlparser::ast::Statement as AstStatement;

use super::control::{is_control, show_column};
use super::{aborted_block, Block, Conn, Gucs};
use crate::bind::{bind_parsed, BoundStatement, Resolver};
use crate::parse::{Ast, Parsed};
use crate::plan::physical::{Query, Statement};
use crate::plan::{planner, Column, Dep};
use crate::stack::StackDepth;

/// A prepared statement. Binding and planning happen at prepare time; a
/// plan whose relations changed is bound and planned again at execution.
pub struct Prepared {
    pub(crate) kind: Kind,
    declared: Vec<Option<SqlType>>,
    params: Vec<SqlType>,
    columns: Option<Arc<[Column]>>,
    planned: Mutex<Option<Arc<Planned>>>,
    /// The statement's text, for pg_stat_activity (set by `prepare_sql`).
    pub(crate) text: Option<Arc<str>>,
    /// Its result columns were described to the client (a protocol-level
    /// or PREPAREd statement), so a re-plan must not change them; a
    /// simple Query's statement is bound afresh after its locks, as
    /// PostgreSQL analyses it after taking them.
    pub(crate) fixed_result: bool,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("params", &self.params).field("columns", &self.columns).finish()
    }
}

#[derive(Debug)]
pub(crate) enum Kind {
    /// BEGIN/COMMIT/SAVEPOINT/SET/SHOW ...: executed by the session itself.
    Control(Ast),
    /// A statement with a plan.
    Plan(Parsed),
    /// An empty query string.
    Empty,
    /// PREPARE name AS statement: the statement prepared, for the
    /// protocol layer to keep under `name` (it holds the named statements).
    PrepareNamed { name: String, statement: Arc<Prepared> },
    /// EXECUTE name (arguments): the arguments' text (`None`: NULL), for
    /// the protocol layer to run the named statement with.
    ExecuteNamed { name: String, args: Vec<Option<String>> },
    /// FETCH or MOVE (session/cursors.rs).
    Fetch(crate::portals::FetchStatement),
}

/// A statement bound and planned, with what it depends on.
#[derive(Debug)]
pub(crate) struct Planned {
    pub(crate) statement: Statement,
    /// The subqueries its expressions use.
    pub(crate) subplans: Vec<Query>,
    pub(crate) params: Vec<SqlType>,
    pub(crate) deps: Vec<Dep>,
    /// Its expressions may wait for a lock (EVAL-REPLAY).
    pub(crate) waits: bool,
    /// Its PL/pgSQL calls, run before it (PL-CALLS).
    pub(crate) pl_calls: Vec<crate::plan::PlCall>,
    /// EXPLAIN of the statement: what it shows, and how.
    pub(crate) explain: Option<crate::explain::Explained>,
}

impl Planned {
    /// Its result columns (EXPLAIN's, for an EXPLAIN).
    pub(crate) fn columns(&self) -> Option<Arc<[Column]>> {
        match &self.explain {
            Some(x) => Some(x.columns()),
            None => self.statement.columns(),
        }
    }
}

impl Prepared {
    /// Parameter types (declared, or inferred).
    pub fn param_types(&self) -> &[SqlType] {
        &self.params
    }

    /// Result columns, if the statement returns rows.
    pub fn columns(&self) -> Option<&Arc<[Column]>> {
        self.columns.as_ref()
    }

    /// True for the empty query.
    pub fn is_empty(&self) -> bool {
        matches!(self.kind, Kind::Empty)
    }

    fn current(&self) -> Option<Arc<Planned>> {
        self.planned.lock().expect("prepared statement lock poisoned").clone()
    }

    fn replace(&self, planned: Arc<Planned>) {
        *self.planned.lock().expect("prepared statement lock poisoned") = Some(planned);
    }
}

impl<G: Gucs> Conn<G> {
    /// Prepares one statement; `declared` are the parameter types the
    /// client sent (`None`: infer). The empty string is the empty query.
    pub fn prepare_sql(
        &mut self,
        sql: &str,
        declared: &[Option<SqlType>],
    ) -> Result<Arc<Prepared>, SqlError> {
        let mut parsed = self.parse(sql)?;
        if parsed.len() > 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        match parsed.pop() {
            None => Ok(Arc::new(Prepared {
                kind: Kind::Empty,
                declared: Vec::new(),
                params: Vec::new(),
                columns: None,
                planned: Mutex::new(None),
                text: None,
                fixed_result: true,
            })),
            Some(p) => {
                let mut prepared = self.prepare(p, declared)?;
                if let Some(p) = Arc::get_mut(&mut prepared) {
                    p.text = Some(Arc::from(sql));
                }
                Ok(prepared)
            }
        }
    }

    /// The parameter type a Parse message declares by the oid of a
    /// user-defined type: an enum's, as `$1::mood` names it. `None` for
    /// any other oid (a domain's: its values are not checked as
    /// parameters; an array of enums').
    pub fn declared_user_type(&mut self, oid: u32) -> Result<Option<SqlType>, SqlError> {
        if self.block == Block::Failed {
            return Err(aborted_block());
        }
        // The catalog is read in a transaction; on error the caller fails it.
        self.ensure_transaction()?;
        Ok(match self.xact.user_type_by_oid(oid)? {
            Some((_, e)) if matches!(e.user_type, Some(TypeDef::Enum(_))) => {
                Some(SqlType::Enum(UserType::new(e.oid, &e.name)))
            }
            _ => None,
        })
    }

    /// Prepares a parsed statement.
    pub fn prepare(
        &mut self,
        parsed: Parsed,
        declared: &[Option<SqlType>],
    ) -> Result<Arc<Prepared>, SqlError> {
        if let Parsed::Sql(s) = &parsed {
            if let AstStatement::Execute {
                name: Some(name), parameters, immediate: false, into, using, ..
            } = &**s
            {
                if into.is_empty() && using.is_empty() {
                    let args = parameters.iter().map(execute_argument).collect::<Result<_, _>>()?;
                    let name = name.to_string().to_ascii_lowercase();
                    return Ok(Arc::new(Prepared::utility(Kind::ExecuteNamed { name, args })));
                }
            }
        }
        let parsed = match parsed {
            Parsed::Sql(ast) => match ast.into_prepare() {
                Ok((name, types, inner)) => {
                    let declared = types
                        .iter()
                        .map(|t| crate::bind::data_type(t).map(Some))
                        .collect::<Result<Vec<_>, _>>()?;
                    let statement = self.prepare(Parsed::Sql(inner), &declared)?;
                    if matches!(statement.kind, Kind::PrepareNamed { .. } | Kind::ExecuteNamed { .. }) {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "PREPARE cannot prepare PREPARE or EXECUTE",
                        ));
                    }
                    let name = crate::bind::ident(&name);
                    return Ok(Arc::new(Prepared::utility(Kind::PrepareNamed { name, statement })));
                }
                Err(ast) => Parsed::Sql(ast),
            },
            other => other,
        };
        if let Parsed::Sql(s) = &parsed {
            if is_control(s) {
                let Parsed::Sql(s) = parsed else { unreachable!("checked above") };
                let columns = match &*s {
                    AstStatement::ShowVariable { variable } => {
                        Some(Arc::from(vec![Column { name: show_column(variable), ty: SqlType::Text }]))
                    }
                    _ => None,
                };
                return Ok(Arc::new(Prepared {
                    kind: Kind::Control(s),
                    declared: declared.to_vec(),
                    params: declared.iter().map(|t| t.unwrap_or(SqlType::Text)).collect(),
                    columns,
                    planned: Mutex::new(None),
                    text: None,
                    fixed_result: true,
                }));
            }
        }
        if self.block == Block::Failed {
            return Err(aborted_block());
        }
        // FETCH reads a cursor's rows; its columns are the cursor's, if it
        // is open now (PostgreSQL describes it so too).
        if let Parsed::Fetch(fetch) = parsed {
            let columns = match fetch.is_move {
                false => self.portals.get(&fetch.name).map(|p| Arc::clone(&p.columns)),
                true => None,
            };
            return Ok(Arc::new(Prepared {
                columns,
                params: Vec::new(),
                kind: Kind::Fetch(fetch),
                declared: Vec::new(),
                planned: Mutex::new(None),
                text: None,
                fixed_result: true,
            }));
        }
        // DO runs its code when executed (Conn::run_do): nothing to plan.
        if matches!(parsed, Parsed::Do { .. }) {
            return Ok(Arc::new(Prepared {
                columns: None,
                params: Vec::new(),
                kind: Kind::Plan(parsed),
                declared: Vec::new(),
                planned: Mutex::new(None),
                text: None,
                fixed_result: true,
            }));
        }
        // Binding reads the catalog, which needs a transaction; on error
        // the caller fails it (`Conn::fail`).
        self.ensure_transaction()?;
        let planned = self.plan(&parsed, declared)?;
        // DECLARE CURSOR answers no rows: its query's go to the cursor.
        let declares = matches!(&parsed, Parsed::Sql(ast) if ast.pre.declare.is_some());
        Ok(Arc::new(Prepared {
            columns: if declares { None } else { planned.columns() },
            params: planned.params.clone(),
            kind: Kind::Plan(parsed),
            declared: declared.to_vec(),
            planned: Mutex::new(Some(Arc::new(planned))),
            text: None,
            fixed_result: true,
        }))
    }

    /// Binds and plans.
    fn plan(&mut self, parsed: &Parsed, declared: &[Option<SqlType>]) -> Result<Planned, SqlError> {
        let depth = self.gucs.max_stack_depth();
        let started = std::time::Instant::now();
        let (parsed, mut explain) = crate::explain::Explained::of(parsed);
        let BoundStatement { plan, params, deps, subqueries, waits, pl_calls } =
            bind_parsed(&mut self.xact, parsed, declared, depth)?;
        let (statement, subplans) =
            planner::plan(plan, subqueries, StackDepth::here(depth), self.gucs.planner())?;
        if let Some(x) = &mut explain {
            x.planning = started.elapsed();
        }
        Ok(Planned { statement, subplans, params, deps, waits, pl_calls, explain })
    }

    /// PLAN-FRESH: locks the plan's relations, then accepts invalidations,
    /// and binds again if a relation changed, until the plan is current.
    pub(crate) async fn ready(&mut self, p: &Prepared, parsed: &Parsed) -> Result<Arc<Planned>, SqlError> {
        loop {
            let planned = match p.current() {
                Some(planned) => planned,
                None => {
                    let planned = Arc::new(self.plan(parsed, &p.declared)?);
                    p.replace(Arc::clone(&planned));
                    planned
                }
            };
            for dep in &planned.deps {
                if !dep.nowait {
                    self.xact.lock_relation(dep.rel.entry.oid, dep.mode).await?;
                } else if !self.xact.try_lock_relation(dep.rel.entry.oid, dep.mode)? {
                    return Err(SqlError::new(
                        SqlState::LOCK_NOT_AVAILABLE,
                        format!("could not obtain lock on relation \"{}\"", dep.name),
                    ));
                }
            }
            self.xact.accept_invalidations();
            let mut stale = false;
            for dep in &planned.deps {
                match self.xact.resolve(&dep.name)? {
                    Some(now) if Arc::ptr_eq(&now.entry, &dep.rel.entry) => {}
                    _ => stale = true,
                }
            }
            if !stale {
                return Ok(planned);
            }
            let fresh = self.plan(parsed, &p.declared)?;
            let declares = matches!(parsed, Parsed::Sql(ast) if ast.pre.declare.is_some());
            let columns_changed = !declares && fresh.columns() != p.columns;
            if p.fixed_result && (fresh.params != p.params || columns_changed) {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cached plan must not change result type",
                ));
            }
            p.replace(Arc::new(fresh));
        }
    }
}

impl Prepared {
    /// A statement the protocol layer finishes (PREPARE, EXECUTE).
    fn utility(kind: Kind) -> Prepared {
        Prepared {
            kind,
            declared: Vec::new(),
            params: Vec::new(),
            columns: None,
            planned: Mutex::new(None),
            text: None,
            fixed_result: true,
        }
    }
}

/// One argument of EXECUTE as text: constants only (what clients send);
/// an expression answers 0A000.
fn execute_argument(e: &sqlparser::ast::Expr) -> Result<Option<String>, SqlError> {
    use sqlparser::ast::{Expr, UnaryOperator, Value as V};
    Ok(match e {
        Expr::Value(v) => match &v.value {
            V::Null => None,
            V::SingleQuotedString(s) | V::Number(s, _) => Some(s.clone()),
            V::Boolean(b) => Some(b.to_string()),
            other => Some(other.to_string()),
        },
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => match &**expr {
            Expr::Value(v) if matches!(v.value, V::Number(..)) => Some(format!("-{}", v.value)),
            _ => return Err(not_constant(e)),
        },
        Expr::TypedString(ts) => match &ts.value.value {
            V::SingleQuotedString(s) => Some(s.clone()),
            other => Some(other.to_string()),
        },
        _ => return Err(not_constant(e)),
    })
}

fn not_constant(e: &sqlparser::ast::Expr) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("EXECUTE argument {e} is not supported yet: pass constants"),
    )
}
