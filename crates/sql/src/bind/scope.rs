//! Names visible to a query's expressions: its FROM items' columns, and
//! through them the enclosing queries' (correlated subqueries).
//!
//! A query's expressions read one row: the FROM clause's items side by
//! side. Each item with a name (a table, an aliased subquery or join) is a
//! [`Named`] for qualified references (`t.c`, `t.*`); the columns an
//! unqualified name can mean are the [`Scope::visible`] list, in `*` order,
//! where a JOIN … USING shows its merged columns once. A name found only in
//! an enclosing query's scope becomes an argument of this query's subplan
//! ([`Expr::Outer`]): the enclosing query evaluates it on its own row and
//! passes the value in, as PostgreSQL passes PARAM_EXEC parameters.

use std::cell::RefCell;
use std::rc::Rc;

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};

use sqlparser::tokenizer::Location;

use crate::expr::Expr;
use crate::plan::Rel;

/// A column a name can refer to: how to read it from the FROM row.
#[derive(Clone, Debug)]
pub(super) struct Col {
    pub name: String,
    pub expr: Expr,
    pub ty: SqlType,
}

/// A FROM item with a name.
#[derive(Clone, Debug)]
pub(super) struct Named {
    pub alias: String,
    pub columns: Vec<Col>,
    /// A stored table's relation and its offset in the FROM row (what FOR
    /// UPDATE locks); `None` for a subquery, a join or a computed relation.
    pub table: Option<(Rel, usize)>,
    /// On the nullable side of an outer join (FOR UPDATE refuses it).
    pub nullable: bool,
}

/// See the module documentation.
#[derive(Default)]
pub(super) struct Scope<'a> {
    pub named: Vec<Named>,
    pub visible: Vec<Col>,
    parent: Option<&'a Scope<'a>>,
    /// The values this query's subplan takes from the enclosing row, in
    /// the enclosing scope's terms. Shared with the subqueries in this
    /// query's FROM clause, which run as part of it.
    args: Rc<RefCell<Vec<Expr>>>,
    /// Where in the statement each of this scope's columns was named, in
    /// the order they were (a grouping error is placed at the column).
    named_at: RefCell<Vec<(Expr, Location)>>,
}

impl<'a> Scope<'a> {
    /// No names at all (VALUES, defaults, LIMIT).
    pub fn empty() -> Scope<'static> {
        Scope::default()
    }

    /// One stored table under `alias` (UPDATE, DELETE, RETURNING).
    pub fn table(alias: &str, rel: &Rel) -> Scope<'static> {
        let named = Named::table(alias, rel, 0);
        Scope { visible: named.columns.clone(), named: vec![named], ..Scope::default() }
    }

    /// A scope for a query nested in this one's expressions.
    pub fn child(&'a self) -> Scope<'a> {
        Scope { parent: Some(self), ..Scope::default() }
    }

    /// A scope for a subquery in this query's FROM clause: it sees the
    /// queries enclosing this one (not this one's other FROM items: a
    /// LATERAL item is bound as a child of a scope that shows them), and
    /// its outer values are this query's.
    pub fn derived(&self) -> Scope<'a> {
        Scope { parent: self.parent, args: Rc::clone(&self.args), ..Scope::default() }
    }

    /// The FROM items are bound: this scope shows `named` and `visible`.
    pub fn with_items(mut self, named: Vec<Named>, visible: Vec<Col>) -> Scope<'a> {
        self.named = named;
        self.visible = visible;
        self
    }

    /// Starts this query's subplan arguments with `args`, in order (a
    /// routine's body: its parameters, outer values 0..n whatever it
    /// reads; ROUTINE-CALL).
    pub fn seed_args(&self, args: Vec<Expr>) {
        *self.args.borrow_mut() = args;
    }

    /// The subplan arguments gathered while binding this query.
    pub fn take_args(&self) -> Vec<Expr> {
        std::mem::take(&mut self.args.borrow_mut())
    }

    /// The enclosing query's scope, if any.
    pub fn parent(&self) -> Option<&Scope<'a>> {
        self.parent
    }

    /// The scope `levels` queries out (0: this one).
    pub fn ancestor(&self, levels: usize) -> Option<&Scope<'a>> {
        let mut s = self;
        for _ in 0..levels {
            s = s.parent?;
        }
        Some(s)
    }

    /// This query's outer value `k`, in the enclosing scope's terms.
    pub fn arg(&self, k: usize) -> Option<Expr> {
        self.args.borrow().get(k).cloned()
    }

    /// How many outer values this scope and each enclosing one have
    /// gathered, innermost first: what [`Scope::forget_args`] goes back to.
    pub fn arg_marks(&self) -> Vec<usize> {
        let mut marks = vec![self.args.borrow().len()];
        let mut s = self.parent;
        while let Some(p) = s {
            marks.push(p.args.borrow().len());
            s = p.parent;
        }
        marks
    }

    /// Drops the outer values gathered since `marks` in the innermost
    /// `levels` scopes (an aggregate that moved to an outer query no
    /// longer reads them here).
    pub fn forget_args(&self, marks: &[usize], levels: usize) {
        let mut s = Some(self);
        for &m in marks.iter().take(levels) {
            let Some(scope) = s else { return };
            scope.args.borrow_mut().truncate(m);
            s = scope.parent;
        }
    }

    /// `e`, an expression in the terms of the scope `levels` queries out,
    /// passed down to this one as an outer value (through each query in
    /// between, as a column of an enclosing query is).
    pub fn pass_down(&self, levels: usize, e: Expr) -> Expr {
        let Some(parent) = self.parent.filter(|_| levels > 0) else { return e };
        let e = parent.pass_down(levels - 1, e);
        let mut args = self.args.borrow_mut();
        let k = match args.iter().position(|a| *a == e) {
            Some(k) => k,
            None => {
                args.push(e);
                args.len() - 1
            }
        };
        Expr::Outer(k)
    }

    /// Resolves `qualifier.name` or `name` here or in an enclosing scope.
    pub fn column(&self, qualifier: Option<&str>, name: &str) -> Result<(Expr, SqlType), SqlError> {
        self.column_at(qualifier, name, None)
    }

    /// [`Scope::column`], the name written at `at`.
    pub fn column_at(
        &self,
        qualifier: Option<&str>,
        name: &str,
        at: Option<Location>,
    ) -> Result<(Expr, SqlType), SqlError> {
        match self.lookup(qualifier, name, at)? {
            Some(found) => Ok(found),
            None => Err(match qualifier {
                Some(q) if !self.has_alias(q) => SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ),
                Some(q) => {
                    SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column {q}.{name} does not exist"))
                }
                None => {
                    SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{name}\" does not exist"))
                }
            }),
        }
    }

    fn has_alias(&self, q: &str) -> bool {
        self.named.iter().any(|n| n.alias == q) || self.parent.is_some_and(|p| p.has_alias(q))
    }

    /// The column in this scope's terms, or `None` if no scope has it.
    fn lookup(
        &self,
        qualifier: Option<&str>,
        name: &str,
        at: Option<Location>,
    ) -> Result<Option<(Expr, SqlType)>, SqlError> {
        if let Some(found) = self.here(qualifier, name)? {
            if let Some(at) = at {
                self.named_at.borrow_mut().push((found.0.clone(), at));
            }
            return Ok(Some(found));
        }
        let Some(parent) = self.parent else { return Ok(None) };
        let Some((expr, ty)) = parent.lookup(qualifier, name, at)? else { return Ok(None) };
        let mut args = self.args.borrow_mut();
        let k = match args.iter().position(|a| *a == expr) {
            Some(k) => k,
            None => {
                args.push(expr);
                args.len() - 1
            }
        };
        Ok(Some((Expr::Outer(k), ty)))
    }

    /// The column among this query's own FROM items.
    fn here(&self, qualifier: Option<&str>, name: &str) -> Result<Option<(Expr, SqlType)>, SqlError> {
        let candidates: Vec<&Col> = match qualifier {
            Some(q) => {
                let Some(item) = self.named.iter().find(|n| n.alias == q) else { return Ok(None) };
                item.columns.iter().filter(|c| c.name == name).collect()
            }
            None => self.visible.iter().filter(|c| c.name == name).collect(),
        };
        match candidates.as_slice() {
            // A FROM item's name alone is its whole row (`SELECT t FROM
            // t`, a trigger's `OLD`).
            [] if qualifier.is_none() => Ok(self.named.iter().find(|n| n.alias == name).map(|item| {
                let fields = item.columns.iter().map(|c| c.expr.clone()).collect();
                (
                    Expr::Func(crate::expr::Func::MakeRecord, fields),
                    SqlType::Record(snapscale_values::Rec::Anonymous),
                )
            })),
            [] => Ok(None),
            [c] => Ok(Some((c.expr.clone(), c.ty))),
            _ => Err(SqlError::new(
                SqlState::AMBIGUOUS_COLUMN,
                format!("column reference \"{name}\" is ambiguous"),
            )),
        }
    }

    /// The columns `*` or `alias.*` stands for.
    pub fn wildcard(&self, qualifier: Option<&str>) -> Result<Vec<Col>, SqlError> {
        match qualifier {
            None if self.named.is_empty() && self.visible.is_empty() => {
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "SELECT * with no tables specified is not valid"))
            }
            None => Ok(self.visible.clone()),
            Some(q) => self.named.iter().find(|n| n.alias == q).map(|n| n.columns.clone()).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                )
            }),
        }
    }

    /// Where the column `e` of this scope was first named.
    pub fn named_at(&self, e: &Expr) -> Option<Location> {
        self.named_at.borrow().iter().find(|(c, _)| c == e).map(|(_, at)| *at)
    }

    /// The name of the column an expression reads, if it is one of ours
    /// (for "must appear in the GROUP BY clause" messages).
    pub fn describe(&self, e: &Expr) -> Option<String> {
        self.named
            .iter()
            .find_map(|n| n.columns.iter().find(|c| c.expr == *e).map(|c| format!("{}.{}", n.alias, c.name)))
    }
}

impl Named {
    /// A stored table's columns at `offset` in the FROM row.
    pub fn table(alias: &str, rel: &Rel, offset: usize) -> Named {
        let columns = rel
            .entry
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| Col { name: c.name.clone(), expr: Expr::Column(offset + i), ty: c.ty })
            .collect();
        Named { alias: alias.to_owned(), columns, table: Some((rel.clone(), offset)), nullable: false }
    }
}
