//! EXPLAIN: the plan a statement runs, shown as PostgreSQL shows its
//! plans (its node names, text layout and JSON structure), and with
//! ANALYZE the statement run and each operator's rows, loops and time.
//!
//! ```text
//!   parse/explain_syntax.rs   the header: EXPLAIN [ANALYZE] [VERBOSE] or (options)
//!   tree.rs                   the physical plan as PostgreSQL's nodes
//!   deparse.rs                expressions written as PostgreSQL writes them
//!   estimates.rs              each node's estimate, from plan/cost.rs and the
//!                             statistics ANALYZE keeps (plan/selectivity.rs)
//!   text.rs, json.rs          the two formats
//! ```
//!
//! What the executor counts for ANALYZE (exec/instrument.rs) is kept by
//! the address of each operator of the plan, which lives as long as the
//! statement.

pub(crate) mod deparse;
mod estimates;
mod json;
mod text;
mod tree;

use std::ops::ControlFlow;
use std::time::Duration;

use snapscale_values::{SqlError, SqlType, Value};

use crate::plan::physical::{Query, Statement};
use crate::plan::Column;
use crate::stack::StackDepth;

pub(crate) use crate::exec::instrument::Stats;
pub use crate::parse::{ExplainFormat, ExplainOptions};

/// The result column of EXPLAIN in `format`.
pub(crate) fn columns(format: ExplainFormat) -> std::sync::Arc<[Column]> {
    let ty = match format {
        ExplainFormat::Text => SqlType::Text,
        ExplainFormat::Json => SqlType::Json,
    };
    std::sync::Arc::from(vec![Column { name: "QUERY PLAN".into(), ty }])
}

/// The FROM items of a statement's text: each relation's name and the
/// name it is given (its alias, else its own), in the order written.
pub(crate) fn written_names(statement: &sqlparser::ast::Statement) -> Vec<(String, String)> {
    use sqlparser::ast::{TableFactor, Visit, Visitor};
    struct Names(Vec<(String, String)>);
    impl Visitor for Names {
        type Break = ();
        fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table { name, alias, .. } = t {
                let last = name.0.last().and_then(|p| p.as_ident()).map(crate::bind::ident);
                if let Some(rel) = last {
                    let given = alias.as_ref().map_or_else(|| rel.clone(), |a| crate::bind::ident(&a.name));
                    self.0.push((rel, given));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut names = Names(Vec::new());
    let _ = statement.visit(&mut names);
    names.0
}

/// The rows EXPLAIN answers for `statement`: its plan in the options'
/// format, with `stats` (ANALYZE's counts) and the summary's planning and
/// execution times.
pub(crate) fn rows(
    statement: &Statement,
    subplans: &[Query],
    options: &ExplainOptions,
    names: Vec<(String, String)>,
    stats: Option<&Stats>,
    summary: Option<(Duration, Duration)>,
    stack: StackDepth,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut builder = tree::Builder::new(statement, subplans, options.verbose, names, stack);
    let root = builder.statement(statement)?;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let summary = summary.filter(|_| options.summary).map(|(p, e)| (ms(p), ms(e)));
    Ok(match options.format {
        ExplainFormat::Text => {
            let mut lines = text::render(&root, options, stats);
            if let Some((planning, execution)) = summary {
                lines.push(format!("Planning Time: {planning:.3} ms"));
                lines.push(format!("Execution Time: {execution:.3} ms"));
            }
            lines.into_iter().map(|l| vec![Value::Text(l)]).collect()
        }
        ExplainFormat::Json => {
            let text = json::render(&root, options, stats, summary);
            vec![vec![Value::Json(std::sync::Arc::from(text))]]
        }
    })
}

/// What a planned EXPLAIN keeps beside the plan of the statement it
/// explains: its options, the names the statement's text gives its
/// relations, and how long planning took.
#[derive(Debug, Clone)]
pub(crate) struct Explained {
    pub options: ExplainOptions,
    pub names: Vec<(String, String)>,
    pub planning: Duration,
}

impl Explained {
    /// The statement to plan, and for an EXPLAIN what to keep.
    pub(crate) fn of(parsed: &crate::parse::Parsed) -> (&crate::parse::Parsed, Option<Explained>) {
        match parsed {
            crate::parse::Parsed::Explain(e) => {
                let names = match &*e.statement {
                    crate::parse::Parsed::Sql(ast) => {
                        ast.statement.as_deref().map(written_names).unwrap_or_default()
                    }
                    _ => Vec::new(),
                };
                (&e.statement, Some(Explained { options: e.options, names, planning: Duration::ZERO }))
            }
            other => (other, None),
        }
    }

    /// Its result column.
    pub(crate) fn columns(&self) -> std::sync::Arc<[Column]> {
        columns(self.options.format)
    }

    /// EXPLAIN's answer for `statement`: under ANALYZE, after it ran in
    /// `execution` with `counters` filled.
    pub(crate) fn answer(
        &self,
        statement: &Statement,
        subplans: &[Query],
        counters: Option<&crate::exec::instrument::Counters>,
        execution: Duration,
        stack: StackDepth,
    ) -> Result<crate::output::Output, SqlError> {
        let stats = counters.map(|c| c.lock().unwrap_or_else(|e| e.into_inner()).clone());
        let rows = rows(
            statement,
            subplans,
            &self.options,
            self.names.clone(),
            stats.as_ref(),
            Some((self.planning, execution)),
            stack,
        )?;
        Ok(crate::output::Output::Rows {
            columns: self.columns(),
            rows: rows.into_iter().map(Into::into).collect(),
            tag: "EXPLAIN".into(),
        })
    }
}
