//! CREATE TABLE's `LIKE source [INCLUDING | EXCLUDING …]` elements
//! (parse/like_syntax.rs reads them): the source's columns with their
//! names, types and NOT NULL, and, as the options say, their defaults,
//! generation expressions, identity (with a sequence of the new table's
//! own), CHECK constraints (by their names) and indexes (named anew for
//! the new table), as PostgreSQL's transformTableLikeClause copies them.
//! Foreign keys are never copied, as in PostgreSQL.

use snapscale_engine::catalog::{ColumnDef, EXPRESSION};
use snapscale_engine::user_types::CheckDef;
use snapscale_engine::LockMode;
use snapscale_values::SqlError;

use super::ddl::index_name;
use super::index_ddl::IndexSpec;
use super::{Binder, Resolver};
use crate::parse::TableLike;
use crate::plan::{NewIndex, Serial};

/// What one LIKE element brings.
pub(super) struct Copied {
    pub columns: Vec<ColumnDef>,
    pub checks: Vec<CheckDef>,
    /// PRIMARY KEY and UNIQUE constraints, by column names.
    pub constraints: Vec<IndexSpec>,
    /// Other indexes.
    pub indexes: Vec<CopiedIndex>,
}

/// An index LIKE copies, by the names of the columns it reads.
pub(super) struct CopiedIndex {
    /// Key columns' names; `None` for an expression.
    key: Vec<Option<String>>,
    /// The key parts' names in the new index's name (`lower` for
    /// `lower(a)`).
    names: Vec<String>,
    include: Vec<String>,
    unique: bool,
    nulls_not_distinct: bool,
    exprs: Vec<String>,
    predicate: Option<String>,
    options: Vec<String>,
    opclasses: Vec<String>,
    orders: Vec<u8>,
}

impl<R: Resolver> Binder<'_, R> {
    /// The columns, constraints and indexes `like` copies into table
    /// `table`; an identity column's new sequence goes to `serials`.
    pub(super) fn table_like(
        &mut self,
        like: &TableLike,
        table: &str,
        serials: &mut Vec<Serial>,
    ) -> Result<Copied, SqlError> {
        let source = self.rel(&like.source, LockMode::AccessShare)?;
        let options = like.options;
        let entry = &source.entry;
        let mut columns = Vec::new();
        for src in &entry.columns {
            let mut def = src.clone();
            def.missing = None;
            def.identity = None;
            def.generated = None;
            def.default = None;
            if src.generated.is_some() && options.generated {
                def.generated = src.generated.clone();
            } else if src.identity.is_some() && options.identity {
                def.identity = src.identity;
                def.default = Some(self.serial(table, &src.name, src.ty, &[], serials)?);
            } else if src.generated.is_none() && src.identity.is_none() && options.defaults {
                def.default = src.default.clone();
            }
            columns.push(def);
        }
        let checks = if options.constraints { entry.checks.clone() } else { Vec::new() };
        let name = |c: &usize| entry.columns[*c].name.clone();
        let mut constraints = Vec::new();
        let mut indexes = Vec::new();
        for ix in entry.indexes.iter().filter(|_| options.indexes) {
            let include = ix.include.iter().map(name).collect();
            if ix.constraint {
                constraints.push(IndexSpec {
                    columns: ix.columns.iter().map(name).collect(),
                    include,
                    primary: ix.primary,
                    nulls_not_distinct: ix.nulls_not_distinct,
                    name: None,
                });
                continue;
            }
            let key: Vec<Option<String>> =
                ix.columns.iter().map(|&c| (c != EXPRESSION).then(|| name(&c))).collect();
            let mut exprs = ix.exprs.iter();
            let names = key
                .iter()
                .map(|k| match k {
                    Some(n) => n.clone(),
                    None => exprs.next().map_or("expr".into(), |e| crate::parse::column_refs::part_name(e)),
                })
                .collect();
            indexes.push(CopiedIndex {
                key,
                names,
                include,
                unique: ix.unique,
                nulls_not_distinct: ix.nulls_not_distinct,
                exprs: ix.exprs.clone(),
                predicate: ix.predicate.clone(),
                options: ix.options.clone(),
                opclasses: ix.opclasses.clone(),
                orders: ix.orders.clone(),
            });
        }
        Ok(Copied { columns, checks, constraints, indexes })
    }
}

/// A copied plain index of table `table`, named as CREATE INDEX names one
/// and numbered past the names in `taken`.
pub(super) fn copied_index(
    table: &str,
    index: CopiedIndex,
    position: impl Fn(&str) -> Option<usize>,
    taken: &[String],
) -> Option<NewIndex> {
    let all: Vec<String> = index.names.iter().chain(&index.include).cloned().collect();
    let base = index_name(table, &all, false, false);
    let mut name = base.clone();
    let mut n = 0;
    while taken.contains(&name) {
        n += 1;
        name = format!("{base}{n}");
    }
    Some(NewIndex {
        name,
        columns: index
            .key
            .iter()
            .map(|c| match c {
                Some(c) => position(c),
                None => Some(EXPRESSION),
            })
            .collect::<Option<_>>()?,
        include: index.include.iter().map(|c| position(c)).collect::<Option<_>>()?,
        unique: index.unique,
        primary: false,
        nulls_not_distinct: index.nulls_not_distinct,
        constraint: false,
        exprs: index.exprs,
        predicate: index.predicate,
        options: index.options,
        opclasses: index.opclasses,
        orders: index.orders,
    })
}
