//! The PL/pgSQL interpreter: a block's variables, its statements run in
//! order over the session's transaction (through [`Spi`]), and its
//! exception handlers, each block with handlers a subtransaction
//! (PL-SUBXACT in the crate's README).
//!
//! The SQL of each statement is prepared once and kept with the body
//! between calls (PL-CACHE): parsed, its variable references replaced by
//! parameters `$k` (a name that is both a column and a variable reads the
//! variable), bound and planned for the variables' types, and planned
//! again only if those types change or a relation it uses does. Statements
//! that need no query run synchronously (`fast.rs`, PL-FAST).

use std::collections::HashMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;

use snapscale_engine::catalog::Row;
use snapscale_sqlstate::SqlState;
use snapscale_values::{Rec, SqlError, SqlType, Value};
use sqlparser::ast;

use super::spi::{Planned, Spi};
use crate::output::Output;
use crate::parse::Parsed;
use crate::plpgsql::ast::*;

mod cursor;
mod fast;
mod txn;

type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, SqlError>> + Send + 'a>>;

/// A variable's name: the language's own (FOUND, NEW, TG_OP, `$1`) are
/// not copied for each call.
type Name = std::borrow::Cow<'static, str>;

/// `$1` … `$32`, the positional parameters' names.
const POSITIONAL: [&str; 32] = [
    "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$16",
    "$17", "$18", "$19", "$20", "$21", "$22", "$23", "$24", "$25", "$26", "$27", "$28", "$29", "$30", "$31",
    "$32",
];

/// A variable: a scalar, or a record (`record`, `%ROWTYPE`, a FOR loop's
/// row) whose fields are known once it is assigned.
struct Var {
    name: Name,
    ty: SqlType,
    value: Value,
    constant: bool,
    not_null: bool,
    record: Option<Record>,
    is_record: bool,
    /// A row of declared fields (`t%ROWTYPE`, a table's type): a row put
    /// in it is fitted to them, never takes its own.
    fixed: bool,
    /// A domain's name, where the variable is declared of one: each
    /// value assigned is checked against its constraints.
    domain: Option<Arc<str>>,
    /// A bound cursor variable's declaration (what OPEN runs).
    cursor: Option<Arc<CursorDecl>>,
}

#[derive(Clone)]
struct Record {
    /// Shared: a trigger's NEW and OLD, and each row a loop assigns,
    /// have their table's fields (cloned per row, so not copied).
    fields: Arc<[(String, SqlType)]>,
    /// Shared too: a trigger's NEW is the queued row itself, a record's
    /// value the same `Arc`; the first field assigned copies them
    /// (`Arc::make_mut`) if another holds them.
    values: Row,
    /// The record as a whole is NULL, its fields known (a trigger's NEW
    /// or OLD where the event has no such row); assigning a field makes
    /// it a row.
    null: bool,
}

/// The names a block declared, innermost last.
struct Frame {
    label: Option<Name>,
    /// The parameters' frame, labelled by the function's name
    /// (`Interp::label`, not copied into each call's frame).
    function: bool,
    names: Vec<(Name, usize)>,
}

/// Where a statement's parameter `$k` takes its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    Var(usize),
    Field(usize, usize),
}

/// Hashes the cache's keys, addresses of the body's nodes, and the
/// compiled functions' oids: distinct already, so a multiply spreads them
/// (SipHash's cost buys nothing here: a trigger looks its function up per
/// row).
#[derive(Default, Clone, Copy)]
pub(crate) struct BuildAddr;

pub(crate) struct AddrHasher(u64);

impl std::hash::BuildHasher for BuildAddr {
    type Hasher = AddrHasher;
    fn build_hasher(&self) -> AddrHasher {
        AddrHasher(0)
    }
}

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Mixed into what came before: an (oid, oid) key is two writes.
        self.0 = (self.0.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_usize(n as usize);
    }
}

/// A body's statements as prepared, by their nodes' addresses (kept with
/// the body between calls: PL-CACHE).
pub(crate) type Statements = HashMap<usize, Box<Compiled>, BuildAddr>;

/// A statement's SQL as prepared for the variables.
pub(crate) struct Compiled {
    parsed: Parsed,
    sources: Vec<Src>,
    declared: Vec<Option<SqlType>>,
    planned: Option<Planned>,
    /// A declaration of a composite type: its fields, with the catalog
    /// generation they were read at.
    fields: Option<(u64, Fields)>,
    /// A declaration's type, if it is a domain: its name, with the
    /// catalog generation it was read at.
    domain: Option<(u64, Option<Arc<str>>)>,
}

/// A record's or composite type's field names and types.
type Fields = Arc<[(String, SqlType)]>;

thread_local! {
    /// Emptied variable and frame vectors of calls that ended, for the
    /// next calls to fill (a trigger function is called per row: its
    /// allocations are a good part of what a row costs).
    static SPARE_VARS: std::cell::RefCell<Vec<Vec<Var>>> = const { std::cell::RefCell::new(Vec::new()) };
    static SPARE_FRAMES: std::cell::RefCell<Vec<Vec<Frame>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// How many emptied vectors of each kind a thread keeps.
const SPARES: usize = 8;

type Spares<T> = std::thread::LocalKey<std::cell::RefCell<Vec<Vec<T>>>>;

/// An emptied vector from `pool`, or a new one of `capacity`.
fn spare<T>(pool: &'static Spares<T>, capacity: usize) -> Vec<T> {
    pool.try_with(|s| s.borrow_mut().pop()).ok().flatten().unwrap_or_else(|| Vec::with_capacity(capacity))
}

/// Keeps `v`, emptied, in `pool` (unless the pool is full or `v` grew
/// large: a few calls' worth of memory is all a thread keeps).
fn give_back<T>(pool: &'static Spares<T>, mut v: Vec<T>) {
    v.clear();
    let _ = pool.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < SPARES && v.capacity() <= 64 {
            s.push(v);
        }
    });
}

impl Drop for Interp<'_, '_> {
    fn drop(&mut self) {
        give_back(&SPARE_VARS, std::mem::take(&mut self.vars));
        give_back(&SPARE_FRAMES, std::mem::take(&mut self.frames));
    }
}

/// What a body is called: in CONTEXT lines (`f(integer)`,
/// `inline_code_block`) and as the label of its parameters (`f`). Made
/// once per compiled body, shared by its calls.
#[derive(Clone)]
pub(crate) struct CallName {
    display: Arc<str>,
    label: Arc<str>,
}

impl CallName {
    pub(crate) fn new(display: String, label: &str) -> CallName {
        CallName { display: display.into(), label: label.into() }
    }
}

/// How a statement ended.
enum Flow {
    Next,
    Exit(Option<String>),
    Continue(Option<String>),
    Return,
}

/// One run of a PL/pgSQL body.
pub(crate) struct Interp<'s, 'c> {
    spi: &'s mut Spi<'c>,
    /// The name CONTEXT lines give the code (`inline_code_block`,
    /// `f(integer)`), made once per compiled body.
    name: Arc<str>,
    /// The function's name as a label (`f.x` reads parameter `x`).
    label: Arc<str>,
    vars: Vec<Var>,
    frames: Vec<Frame>,
    cache: Statements,
    /// Assignment targets found, by their statement's place.
    targets: HashMap<usize, usize, BuildAddr>,
    found: bool,
    row_count: i64,
    /// The function's result type (`void` for a DO block).
    returns: SqlType,
    /// What RETURN gave.
    result: Value,
    /// RETURN ran.
    returned: bool,
    /// A set-returning function: the rows RETURN NEXT and RETURN QUERY
    /// gave, each a record.
    set: Option<Vec<Value>>,
    /// The output parameters' variables (OUT, INOUT, TABLE columns).
    outs: Vec<usize>,
    /// A row type result's column types (RETURNS SETOF table).
    row_types: Vec<SqlType>,
    /// The error a handler is handling (SQLSTATE, SQLERRM, GET STACKED
    /// DIAGNOSTICS).
    handling: Vec<SqlError>,
    /// The parameter values of the simple expression being evaluated (a
    /// buffer kept, not a vector per evaluation).
    scratch: std::cell::Cell<Vec<Value>>,
    /// The body's compiler options (`#print_strict_params`).
    options: crate::plpgsql::ast::Options,
}

fn syntax(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, message)
}

impl<'s, 'c> Interp<'s, 'c> {
    pub(crate) fn new(spi: &'s mut Spi<'c>, name: &CallName, returns: SqlType) -> Self {
        Interp {
            spi,
            name: Arc::clone(&name.display),
            label: Arc::clone(&name.label),
            vars: spare(&SPARE_VARS, 8),
            frames: spare(&SPARE_FRAMES, 4),
            cache: HashMap::default(),
            targets: HashMap::default(),
            found: false,
            row_count: 0,
            returns,
            result: Value::Null,
            returned: false,
            set: None,
            outs: Vec::new(),
            row_types: Vec::new(),
            handling: Vec::new(),
            scratch: std::cell::Cell::new(Vec::new()),
            options: Default::default(),
        }
    }

    /// Declares the function's parameters: read by name and as `$n`.
    pub(crate) fn parameters(&mut self, params: Vec<(String, SqlType, Value)>) {
        // Room for FOUND and a trigger's variables too: one allocation.
        let mut names = Vec::with_capacity(2 * params.len() + 1 + crate::plpgsql::TRIGGER_NAMES.len());
        for (i, (name, ty, value)) in params.into_iter().enumerate() {
            let k = self.vars.len();
            let name = Name::Owned(name);
            self.vars.push(Var {
                name: name.clone(),
                ty,
                value,
                constant: false,
                not_null: false,
                record: None,
                is_record: false,
                fixed: false,
                domain: None,
                cursor: None,
            });
            if !name.is_empty() {
                names.push((name, k));
            }
            let positional = match POSITIONAL.get(i) {
                Some(p) => Name::Borrowed(p),
                None => Name::Owned(format!("${}", i + 1)),
            };
            names.push((positional, k));
        }
        self.frames.push(Frame { label: None, function: true, names });
    }

    /// Declares the output parameters (those not also inputs start NULL),
    /// and whether the function returns a set.
    pub(crate) fn outputs(&mut self, outs: Vec<(String, SqlType)>, set: bool) {
        self.set = set.then(Vec::new);
        let frame = self.frames.last_mut().map(|f| f.names.clone()).unwrap_or_default();
        let mut names = Vec::new();
        for (name, ty) in outs {
            let k = match frame.iter().find(|(n, _)| *n == name && !name.is_empty()) {
                Some(&(_, k)) => k,
                None => {
                    let k = self.vars.len();
                    let name = Name::Owned(name);
                    self.vars.push(Var {
                        name: name.clone(),
                        ty,
                        value: Value::Null,
                        constant: false,
                        not_null: false,
                        record: None,
                        is_record: false,
                        fixed: false,
                        domain: None,
                        cursor: None,
                    });
                    if !name.is_empty() {
                        names.push((name, k));
                    }
                    k
                }
            };
            self.outs.push(k);
        }
        if let Some(f) = self.frames.last_mut() {
            f.names.extend(names);
        }
    }

    /// The output parameters are `$n` too, `positions` giving each one's
    /// place among all the parameters (an INOUT one is already).
    pub(crate) fn output_positions(&mut self, positions: &[usize]) {
        let mut names = Vec::new();
        for (&k, &p) in self.outs.iter().zip(positions) {
            let name = format!("${p}");
            if self.lookup(&name).is_none() {
                names.push((Name::Owned(name), k));
            }
        }
        if let Some(f) = self.frames.last_mut() {
            f.names.extend(names);
        }
    }

    /// The output parameters' values: one, or a record of several.
    fn out_value(&self) -> Value {
        match self.outs.as_slice() {
            [one] => self.vars[*one].value.clone(),
            many => {
                Value::Record(many.iter().map(|&k| self.vars[k].value.clone()).collect::<Vec<_>>().into())
            }
        }
    }

    /// 42601 for RETURN NEXT or RETURN QUERY (`kind`) in a function that
    /// returns no set.
    fn in_set(&self, line: usize, kind: &str) -> Result<(), SqlError> {
        if self.set.is_some() {
            return Ok(());
        }
        let e = SqlError::new(SqlState::SYNTAX_ERROR, format!("cannot use {kind} in a non-SETOF function"));
        Err(self.in_context(e, line, kind))
    }

    /// A set of records of no declared shape (RETURNS SETOF record, its
    /// columns the caller's column definition list's).
    fn anonymous_set(&self) -> bool {
        self.outs.is_empty()
            && self.row_types.is_empty()
            && matches!(self.returns, SqlType::Record(Rec::Anonymous))
    }

    /// A row of a set: a record of the output columns.
    fn as_row(&self, v: Value) -> Value {
        match v {
            Value::Record(_) if self.outs.len() != 1 || self.row_types.len() > 1 => v,
            other => Value::Record(vec![other].into()),
        }
    }

    /// Declares a trigger function's variables (NEW, OLD, TG_*): `values`
    /// in [`crate::plpgsql::TRIGGER_NAMES`]' order, NEW and OLD as records
    /// of `columns` (unassigned where the event has no such row).
    pub(crate) fn trigger_variables(
        &mut self,
        (columns, nulls): (&Arc<[(String, SqlType)]>, &Row),
        new: Option<Row>,
        old: Option<Row>,
        values: Vec<(SqlType, Value)>,
    ) {
        let mut names = std::mem::take(&mut self.frames.last_mut().expect("the parameters' frame").names);
        self.vars.reserve(2 + values.len());
        for (name, row) in [("new", new), ("old", old)] {
            let k = self.vars.len();
            self.vars.push(Var {
                name: Name::Borrowed(name),
                ty: SqlType::Record(Rec::Anonymous),
                value: Value::Null,
                constant: false,
                not_null: false,
                record: Some(match row {
                    Some(values) => Record { fields: Arc::clone(columns), values, null: false },
                    None => Record { fields: Arc::clone(columns), values: Arc::clone(nulls), null: true },
                }),
                is_record: true,
                fixed: false,
                domain: None,
                cursor: None,
            });
            names.push((Name::Borrowed(name), k));
        }
        for (name, (ty, value)) in crate::plpgsql::TRIGGER_NAMES[2..].iter().zip(values) {
            let k = self.vars.len();
            self.vars.push(Var {
                name: Name::Borrowed(name),
                ty,
                value,
                constant: false,
                not_null: false,
                record: None,
                is_record: false,
                fixed: false,
                domain: None,
                cursor: None,
            });
            names.push((Name::Borrowed(name), k));
        }
        self.frames.last_mut().expect("the parameters' frame").names = names;
    }

    /// The record a trigger function's RETURN gave: its values, if it is
    /// a row of `width` columns; NULL is `None`.
    pub(crate) fn returned_row(v: &Value, width: usize) -> Result<Option<Vec<Value>>, SqlError> {
        match v {
            Value::Null => Ok(None),
            Value::Record(fields) if fields.len() == width => Ok(Some(fields.to_vec())),
            _ => Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                "returned row structure does not match the structure of the triggering table",
            )
            .with_detail("Number of returned columns does not match expected column count.")),
        }
    }

    /// The result is a row type's record of these column types.
    pub(crate) fn row_types(&mut self, types: Vec<SqlType>) {
        self.row_types = types;
    }

    /// Starts from the statements prepared by an earlier call (PL-CACHE).
    pub(crate) fn with_statements(mut self, statements: Statements) -> Self {
        self.cache = statements;
        self
    }

    /// Runs a SQL function's statements in order (PL-CALLS); its result is
    /// the last one's: its first row (NULL without one), every row for a
    /// set, nothing for void.
    pub(crate) async fn run_sql(
        mut self,
        statements: &[Sql],
        def: &snapscale_engine::routines::RoutineDef,
    ) -> (Result<Value, SqlError>, Statements) {
        let r = self.run_sql_inner(statements, def).await;
        (r, std::mem::take(&mut self.cache))
    }

    async fn run_sql_inner(
        &mut self,
        statements: &[Sql],
        def: &snapscale_engine::routines::RoutineDef,
    ) -> Result<Value, SqlError> {
        let mut last = None;
        for (i, sql) in statements.iter().enumerate() {
            let out = self.execute(sql).await.map_err(|e| {
                SqlError::from(snapscale_values::ErrorData {
                    context: Some(format!("{} statement {}", self.name, i + 1)),
                    position: None,
                    ..e.into_data()
                })
            })?;
            last = Some(out);
        }
        if def.returns == SqlType::Void {
            return Ok(Value::Null);
        }
        let (columns, rows) = last.map(rows_and_columns).unwrap_or_default();
        let record = |row: Vec<Value>| -> Value {
            if columns.len() == 1 && def.result_columns().len() <= 1 {
                row.into_iter().next().unwrap_or(Value::Null)
            } else {
                Value::Record(row.into())
            }
        };
        if def.returns_set {
            let want = def.result_columns().len().max(1);
            // SETOF record without columns of its own: the caller's column
            // definition list says what its rows hold.
            let anonymous = def.returns == SqlType::Record(snapscale_values::Rec::Anonymous)
                && def.result_columns().is_empty();
            if columns.len() != want && !anonymous {
                return Err(wrong_width(columns.len(), want));
            }
            return Ok(Value::array(rows.into_iter().map(|r| Value::Record(r.into())).collect()));
        }
        Ok(match rows.into_iter().next() {
            Some(row) => {
                let v = record(row);
                match columns.first() {
                    Some((_, from)) if columns.len() == 1 && def.result_columns().len() <= 1 => {
                        self.convert(v, *from, def.returns)?
                    }
                    _ => v,
                }
            }
            None => Value::Null,
        })
    }

    /// Runs the body; the value RETURN gave.
    pub(crate) async fn run(mut self, body: &Block) -> (Result<Value, SqlError>, Statements) {
        let r = self.run_inner(body).await;
        (r, std::mem::take(&mut self.cache))
    }

    async fn run_inner(&mut self, body: &Block) -> Result<Value, SqlError> {
        self.options = body.options;
        self.spi.context.current = Some(Arc::clone(&self.name));
        // FOUND is a variable of the outermost block.
        let k = self.vars.len();
        self.vars.push(Var {
            name: Name::Borrowed("found"),
            ty: SqlType::Bool,
            value: Value::Bool(false),
            constant: false,
            not_null: false,
            record: None,
            is_record: false,
            fixed: false,
            domain: None,
            cursor: None,
        });
        // In the function's frame, as PostgreSQL's (`f.found` reads it),
        // after the parameters (it hides one of the same name).
        match self.frames.last_mut() {
            Some(f) if f.function => f.names.push((Name::Borrowed("found"), k)),
            _ => self.frames.push(Frame {
                label: None,
                function: false,
                names: vec![(Name::Borrowed("found"), k)],
            }),
        }
        match self.block_here(body).await? {
            Flow::Next | Flow::Return => {}
            Flow::Exit(_) | Flow::Continue(_) => {
                return Err(syntax("CONTINUE cannot be used outside a loop"));
            }
        }
        if let Some(rows) = self.set.take() {
            return Ok(Value::array(rows));
        }
        if !self.outs.is_empty() {
            return Ok(self.out_value());
        }
        if !self.returned && self.returns != SqlType::Void {
            let e = SqlError::new(
                SqlState::FUNCTION_EXECUTED_NO_RETURN_STATEMENT,
                "control reached end of function without RETURN",
            );
            return Err(SqlError::from(snapscale_values::ErrorData {
                context: Some(format!("PL/pgSQL function {}", self.name)),
                ..e.into_data()
            }));
        }
        Ok(std::mem::replace(&mut self.result, Value::Null))
    }

    /// A CONTEXT line for an error in the statement at `line`, of `kind`.
    fn context(&self, line: usize, kind: &str) -> String {
        format!("PL/pgSQL function {} line {line} at {kind}", self.name)
    }

    #[cold]
    fn in_context(&self, mut e: SqlError, line: usize, kind: &str) -> SqlError {
        let here = self.context(line, kind);
        e.context = Some(match e.context.take() {
            Some(c) => format!("{c}\n{here}"),
            None => here,
        });
        e.position = None;
        e
    }

    /// A nested block (boxed: blocks nest without bound).
    fn block<'a>(&'a mut self, b: &'a Block) -> Fut<'a, Flow> {
        Box::pin(self.block_here(b))
    }

    /// A block, in the caller's future (the body's outermost one).
    async fn block_here(&mut self, b: &Block) -> Result<Flow, SqlError> {
        let mark = self.vars.len();
        self.frames.push(Frame {
            label: b.label.clone().map(Name::Owned),
            function: false,
            names: Vec::new(),
        });
        let flow = self.block_inner(b).await;
        self.frames.pop();
        self.vars.truncate(mark);
        flow
    }

    async fn block_inner(&mut self, b: &Block) -> Result<Flow, SqlError> {
        for d in &b.decls {
            self.declare(d).await.map_err(|mut e| {
                let here = format!(
                    "PL/pgSQL function {} line {} during statement block local variable initialization",
                    self.name, b.line
                );
                e.context = Some(match e.context.take() {
                    Some(c) => format!("{c}\n{here}"),
                    None => here,
                });
                e.position = None;
                e
            })?;
        }
        if b.handlers.is_empty() {
            return self.run_list(&b.body).await.map(|f| self.label_exit(f, &b.label));
        }
        // PL-SUBXACT: the block's work is a subtransaction, undone when
        // a handler catches its error.
        self.spi.xact.savepoint()?;
        let mark = self.vars.len();
        match self.run_list(&b.body).await {
            Ok(flow) => {
                let depth = self.spi.xact.depth();
                self.spi.xact.release()?;
                self.spi.portals.released(depth);
                Ok(self.label_exit(flow, &b.label))
            }
            Err(e) => {
                let depth = self.spi.xact.depth();
                self.spi.xact.rollback_level()?;
                self.spi.portals.rolled_back(depth);
                // Variables of blocks nested in it are gone (they were
                // truncated as those blocks ended); its own keep their
                // values, as PostgreSQL's do.
                self.vars.truncate(mark);
                let Some(h) = b.handlers.iter().find(|h| catches(h, &e)) else { return Err(e) };
                // SQLSTATE and SQLERRM are variables of the handler.
                let k = self.vars.len();
                for (name, value) in [("sqlstate", e.sqlstate().to_owned()), ("sqlerrm", e.message.clone())] {
                    self.vars.push(Var {
                        name: Name::Borrowed(name),
                        ty: SqlType::Text,
                        value: Value::Text(value),
                        constant: false,
                        not_null: false,
                        record: None,
                        is_record: false,
                        fixed: false,
                        domain: None,
                        cursor: None,
                    });
                }
                self.frames.push(Frame {
                    label: None,
                    function: false,
                    names: vec![(Name::Borrowed("sqlstate"), k), (Name::Borrowed("sqlerrm"), k + 1)],
                });
                self.handling.push(e);
                let flow = self.run_list(&h.body).await;
                self.handling.pop();
                self.frames.pop();
                self.vars.truncate(k);
                flow.map(|f| self.label_exit(f, &b.label))
            }
        }
    }

    /// EXIT label leaving the block it names ends there.
    fn label_exit(&self, flow: Flow, label: &Option<String>) -> Flow {
        match flow {
            Flow::Exit(Some(l)) if label.as_ref() == Some(&l) => Flow::Next,
            other => other,
        }
    }

    async fn declare(&mut self, d: &Decl) -> Result<(), SqlError> {
        if let Some(target) = &d.alias {
            // Another name of the same variable.
            let k = self.lookup(target).ok_or_else(|| {
                SqlError::new(SqlState::UNDEFINED_OBJECT, format!("variable \"{target}\" does not exist"))
            })?;
            self.frames.last_mut().expect("a block's frame").names.push((Name::Owned(d.name.clone()), k));
            return Ok(());
        }
        let ty_text = d.ty.trim().to_lowercase();
        let (ty, record) = if ty_text == "record" {
            (SqlType::Record(Rec::Anonymous), None)
        } else if let Some(table) = ty_text.strip_suffix("%rowtype") {
            let columns = self.columns_of(d, || format!("SELECT * FROM {} LIMIT 0", table.trim())).await?;
            let values = nulls(columns.len());
            (SqlType::Record(Rec::Anonymous), Some(Record { fields: columns.into(), values, null: false }))
        } else if let Some(of) = ty_text.strip_suffix("%type") {
            let of = of.trim();
            match self.lookup(of) {
                Some(k) => (self.vars[k].ty, None),
                None => {
                    let (table, column) = of
                        .rsplit_once('.')
                        .ok_or_else(|| syntax(format!("invalid type name \"{}\"", d.ty)))?;
                    let cols = self.columns_of(d, || format!("SELECT {column} FROM {table} LIMIT 0")).await?;
                    (cols[0].1, None)
                }
            }
        } else {
            let cols = match self.columns_of(d, || format!("SELECT NULL::{}", d.ty)).await {
                Ok(cols) => cols,
                // A table's name is its row type.
                Err(e) if e.code == SqlState::UNDEFINED_OBJECT => {
                    let key = (d as *const Decl as usize) * 2 + 5;
                    let columns = self
                        .columns_at(key, || format!("SELECT * FROM {} LIMIT 0", d.ty.trim()))
                        .await
                        .map_err(|_| e)?;
                    let values = nulls(columns.len());
                    let record = Record { fields: columns.into(), values, null: false };
                    return self.declare_as(d, SqlType::Record(Rec::Anonymous), Some(record), true).await;
                }
                Err(e) => return Err(e),
            };
            match cols[0].1 {
                // A variable of a composite type is a row of its fields,
                // NULL as a whole until assigned.
                SqlType::Composite(u) => {
                    let fields = self.composite_fields(d, u)?;
                    let values = nulls(fields.len());
                    (SqlType::Composite(u), Some(Record { fields, values, null: true }))
                }
                ty => {
                    let domain = self.domain_of(d)?;
                    if domain.is_some() {
                        return self.declare_domain(d, ty, domain).await;
                    }
                    (ty, None)
                }
            }
        };
        let fixed = ty_text.ends_with("%rowtype");
        self.declare_as(d, ty, record, fixed).await
    }

    /// The domain declaration `d`'s type is, if it is one: read from the
    /// catalog once per catalog generation, kept with the type's plan.
    fn domain_of(&mut self, d: &Decl) -> Result<Option<Arc<str>>, SqlError> {
        let key = (d as *const Decl as usize) * 2 + 3;
        let generation = self.spi.xact.catalog_generation();
        if let Some((at, domain)) = self.cache.get(&key).and_then(|c| c.domain.as_ref()) {
            if *at == generation {
                return Ok(domain.clone());
            }
        }
        let text = d.ty.trim();
        let name = if text.contains('"') { text.to_owned() } else { text.to_lowercase() };
        let simple =
            name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '"' || c == '$');
        let domain =
            match simple {
                true => self.spi.xact.user_type(&name)?.filter(|e| {
                    matches!(e.user_type, Some(snapscale_engine::user_types::TypeDef::Domain(_)))
                }),
                false => None,
            }
            .map(|_| Arc::<str>::from(text));
        if let Some(c) = self.cache.get_mut(&key) {
            c.domain = Some((generation, domain.clone()));
        }
        Ok(domain)
    }

    /// [`declare_as`](Self::declare_as) for a variable of a domain: its
    /// default (and each value assigned later) checked against the
    /// domain's constraints, NOT NULL included.
    async fn declare_domain(
        &mut self,
        d: &Decl,
        ty: SqlType,
        domain: Option<Arc<str>>,
    ) -> Result<(), SqlError> {
        self.declare_as(d, ty, None, false).await?;
        let k = self.lookup(&d.name).expect("just declared");
        self.vars[k].domain = domain;
        self.check_domain(k).await
    }

    /// Checks variable `k`'s value against its domain's constraints.
    async fn check_domain(&mut self, k: usize) -> Result<(), SqlError> {
        let Some(domain) = self.vars[k].domain.clone() else { return Ok(()) };
        let value = self.vars[k].value.clone();
        let ty = self.vars[k].ty;
        let text = format!("SELECT $1::{domain}");
        let mut parsed = crate::parse::parse(&text, self.spi.limits.max_stack_depth)?;
        let Some(parsed) = parsed.pop() else { return Ok(()) };
        let strip = |e: SqlError| {
            SqlError::from(snapscale_values::ErrorData { position: None, internal: None, ..e.into_data() })
        };
        loop {
            let planned = self.spi.plan(&parsed, &[Some(ty)]).map_err(strip)?;
            if self.spi.current(&planned, true).await.map_err(strip)? {
                self.spi.run(&planned, std::slice::from_ref(&value)).await.map_err(strip)?;
                return Ok(());
            }
        }
    }

    /// Declares `d` as a variable of type `ty` (a record's fields in
    /// `record`), with its default value.
    async fn declare_as(
        &mut self,
        d: &Decl,
        ty: SqlType,
        record: Option<Record>,
        fixed: bool,
    ) -> Result<(), SqlError> {
        let is_record = matches!(ty, SqlType::Record(_) | SqlType::Composite(_));
        let k = self.vars.len();
        self.vars.push(Var {
            name: Name::Owned(d.name.clone()),
            ty,
            value: Value::Null,
            constant: false,
            not_null: d.not_null,
            record,
            is_record,
            fixed,
            domain: None,
            cursor: None,
        });
        if let Some(cursor) = &d.cursor {
            // A bound cursor's portal is named after its variable, unless
            // the body names it otherwise before OPEN.
            self.vars[k].cursor = Some(Arc::clone(cursor));
            self.vars[k].value = Value::Text(d.name.clone());
        } else if let Some(default) = &d.default {
            // Boxed unless simple: the statement path's future would make
            // every block's future as large (see `Spi::run`).
            let (v, from) = match self.try_simple(default, Query::Expression) {
                Some(done) => done?,
                None => Box::pin(self.value(default)).await?,
            };
            if self.vars[k].is_record {
                self.store_record(k, v, default)?;
            } else {
                self.store(k, v, from)?;
            }
        } else if d.not_null {
            return Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                format!("variable \"{}\" must have a default value, since it's declared NOT NULL", d.name),
            ));
        }
        self.vars[k].constant = d.constant;
        self.frames.last_mut().expect("a block's frame").names.push((Name::Owned(d.name.clone()), k));
        Ok(())
    }

    /// The columns a query gives (declaration `d`'s type), its plan kept
    /// with the body's statements (PL-CACHE: a call declares its variables
    /// without parsing their types again) and made current before use.
    async fn columns_of(
        &mut self,
        d: &Decl,
        sql: impl FnOnce() -> String,
    ) -> Result<Vec<(String, SqlType)>, SqlError> {
        // Apart from every expression's key (`key_of`: an address twice,
        // plus 0 to 2): a declaration's address twice, plus 3 (plus 5:
        // its type read as a table's).
        self.columns_at((d as *const Decl as usize) * 2 + 3, sql).await
    }

    /// [`columns_of`](Self::columns_of) kept under `key`.
    async fn columns_at(
        &mut self,
        key: usize,
        sql: impl FnOnce() -> String,
    ) -> Result<Vec<(String, SqlType)>, SqlError> {
        let mut c = match self.cache.remove(&key) {
            Some(c) => c,
            None => {
                // Parsed as written: its names are the table's columns,
                // never variables.
                let mut parsed = crate::parse::parse(&sql(), self.spi.limits.max_stack_depth)?;
                let parsed = parsed.pop().ok_or_else(|| syntax("an empty type"))?;
                Box::new(Compiled {
                    parsed,
                    sources: Vec::new(),
                    declared: Vec::new(),
                    planned: None,
                    fields: None,
                    domain: None,
                })
            }
        };
        let r = self.refresh(&mut c).await;
        let columns = c.planned.as_ref().and_then(|p| p.columns());
        self.cache.insert(key, c);
        r?;
        Ok(columns.map(|c| c.iter().map(|c| (c.name.clone(), c.ty)).collect()).unwrap_or_default())
    }

    /// The fields of composite type `u`, declaration `d`'s type: read from
    /// the catalog once per catalog generation, kept with the type's plan.
    fn composite_fields(
        &mut self,
        d: &Decl,
        u: snapscale_values::UserType,
    ) -> Result<Arc<[(String, SqlType)]>, SqlError> {
        self.composite_fields_at((d as *const Decl as usize) * 2 + 3, u)
    }

    /// The fields of composite type `u`, kept with the statement cached
    /// under `key` (read once per catalog generation).
    fn composite_fields_at(
        &mut self,
        key: usize,
        u: snapscale_values::UserType,
    ) -> Result<Arc<[(String, SqlType)]>, SqlError> {
        let generation = self.spi.xact.catalog_generation();
        if let Some((at, fields)) = self.cache.get(&key).and_then(|c| c.fields.as_ref()) {
            if *at == generation {
                return Ok(Arc::clone(fields));
            }
        }
        let (_, entry) = self.spi.xact.user_type_by_oid(u.oid())?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type with OID {} does not exist", u.oid()))
        })?;
        let fields: Fields = entry.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
        if let Some(c) = self.cache.get_mut(&key) {
            c.fields = Some((generation, Arc::clone(&fields)));
        }
        Ok(fields)
    }

    /// The variable a name finds: `v`, `label.v`.
    fn lookup(&self, name: &str) -> Option<usize> {
        if let Some((label, var)) = name.split_once('.') {
            return self
                .frames
                .iter()
                .rev()
                .filter(|f| f.label.as_deref() == Some(label) || (f.function && *self.label == *label))
                .find_map(|f| f.names.iter().rev().find(|(n, _)| n == var).map(|(_, k)| *k));
        }
        self.frames.iter().rev().find_map(|f| f.names.iter().rev().find(|(n, _)| n == name).map(|(_, k)| *k))
    }

    async fn stmt(&mut self, s: &Stmt) -> Result<Flow, SqlError> {
        self.spi.xact.check_cancel()?;
        if let Some(here) = where_at(s) {
            self.spi.context.here = here;
        }
        match s {
            Stmt::Null => Ok(Flow::Next),
            Stmt::Block(b) => self.block(b).await,
            Stmt::Transaction { rollback, chain, line } => {
                let kind = if *rollback { "ROLLBACK" } else { "COMMIT" };
                // Boxed: ending the transaction holds the commit's large
                // future, which every statement's future would carry.
                Box::pin(self.end_transaction(*rollback, *chain))
                    .await
                    .map_err(|e| self.in_context(e, *line, kind))?;
                Ok(Flow::Next)
            }
            Stmt::Assign { target, expr, line } => {
                let r = self.assign(target, expr).await;
                r.map(|_| Flow::Next).map_err(|e| self.in_context(e, *line, "assignment"))
            }
            Stmt::AssignElem { target, shown, subscripts, expr, line } => {
                let r = self.assign_element(target, shown, subscripts, expr).await;
                r.map(|_| Flow::Next).map_err(|e| self.in_context(e, *line, "assignment"))
            }
            Stmt::If { branches, otherwise, line } => {
                for (cond, body) in branches {
                    let holds = self.truth(cond).await.map_err(|e| self.in_context(e, *line, "IF"))?;
                    if holds {
                        return self.run_list(body).await;
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body).await,
                    None => Ok(Flow::Next),
                }
            }
            Stmt::Case { subject, whens, otherwise, line } => {
                let subject = match subject {
                    Some(s) => Some(self.value(s).await.map_err(|e| self.in_context(e, *line, "CASE"))?),
                    None => None,
                };
                for (cond, body) in whens {
                    let holds = match &subject {
                        None => self.truth(cond).await,
                        Some((v, _)) => self.matches_any(v, cond).await,
                    }
                    .map_err(|e| self.in_context(e, *line, "CASE"))?;
                    if holds {
                        return self.run_list(body).await;
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body).await,
                    None => Err(self.in_context(
                        SqlError::new(SqlState::CASE_NOT_FOUND, "case not found")
                            .with_hint("CASE statement is missing ELSE part."),
                        *line,
                        "CASE",
                    )),
                }
            }
            Stmt::Loop { label, body, .. } => loop {
                self.spi.xact.check_cancel()?;
                match self.loop_turn(label, body).await? {
                    Some(flow) => return Ok(flow),
                    None => continue,
                }
            },
            Stmt::While { label, cond, body, line } => loop {
                self.spi.xact.check_cancel()?;
                if !self.truth(cond).await.map_err(|e| self.in_context(e, *line, "WHILE"))? {
                    return Ok(Flow::Next);
                }
                if let Some(flow) = self.loop_turn(label, body).await? {
                    return Ok(flow);
                }
            },
            Stmt::ForRange { label, var, reverse, from, to, by, body, line } => {
                self.for_range(label, var, *reverse, from, to, by.as_ref(), body).await.map_err(|e| {
                    if e.context.is_some() {
                        e
                    } else {
                        self.in_context(e, *line, "FOR with integer loop variable")
                    }
                })
            }
            Stmt::ForQuery { label, targets, query, body, line } => {
                let rows = self
                    .query_rows(query)
                    .await
                    .map_err(|e| self.in_context(e, *line, "FOR over SELECT rows"))?;
                self.for_rows(label, targets, rows, body).await
            }
            Stmt::Open { var, scroll, source, line } => {
                self.open(var, *scroll, source, line).await.map_err(|e| self.in_context(e, *line, "OPEN"))?;
                Ok(Flow::Next)
            }
            Stmt::Fetch { var, direction, into, line } => {
                let what = if into.is_some() { "FETCH" } else { "MOVE" };
                self.fetch(var, direction, into.as_ref())
                    .await
                    .map_err(|e| self.in_context(e, *line, what))?;
                Ok(Flow::Next)
            }
            Stmt::Close { var, line } => {
                self.close(var).map_err(|e| self.in_context(e, *line, "CLOSE"))?;
                Ok(Flow::Next)
            }
            Stmt::ForCursor { label, target, cursor, args, body, line } => {
                self.for_cursor(label, target, cursor, args.as_ref(), body, line).await
            }
            Stmt::ForEach { label, targets, slice, array, body, line } => {
                self.foreach(label, targets, *slice, array, body, *line).await
            }
            Stmt::Exit { next, label, when, line } => {
                if let Some(cond) = when {
                    let kind = if *next { "CONTINUE" } else { "EXIT" };
                    if !self.truth(cond).await.map_err(|e| self.in_context(e, *line, kind))? {
                        return Ok(Flow::Next);
                    }
                }
                Ok(if *next { Flow::Continue(label.clone()) } else { Flow::Exit(label.clone()) })
            }
            Stmt::Return { expr, line, .. } => {
                if let Some(e) = expr {
                    if self.returns == SqlType::Void {
                        return Err(SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            "RETURN cannot have a parameter in function returning void",
                        ));
                    }
                    let (v, from) = self.value(e).await.map_err(|e| self.in_context(e, *line, "RETURN"))?;
                    self.result = self.return_value(v, from, e, *line)?;
                }
                self.returned = true;
                Ok(Flow::Return)
            }
            Stmt::ReturnNext { expr: Some(e), line }
                if self.outs.is_empty() && matches!(self.returns, SqlType::Composite(_)) =>
            {
                // A set of a composite type: each row the type's fields.
                self.in_set(*line, "RETURN NEXT")?;
                let SqlType::Composite(u) = self.returns else { unreachable!("matched") };
                let (v, _) = self.value(e).await.map_err(|err| self.in_context(err, *line, "RETURN NEXT"))?;
                let types: Vec<SqlType> = self
                    .composite_fields_at(key_of(e, 0), u)
                    .map_err(|err| self.in_context(err, *line, "RETURN NEXT"))?
                    .iter()
                    .map(|(_, t)| *t)
                    .collect();
                let row = match v {
                    Value::Null => Ok(Value::Record(vec![Value::Null; types.len()].into())),
                    Value::Record(fields) => self.fit_fields(fields.to_vec(), &types),
                    _ => Err(SqlError::new(
                        SqlState::DATATYPE_MISMATCH,
                        "cannot return non-composite value from function returning composite type",
                    )),
                }
                .map_err(|err| self.in_context(err, *line, "RETURN NEXT"))?;
                self.set.as_mut().expect("checked").push(row);
                Ok(Flow::Next)
            }
            Stmt::ReturnNext { expr, line } => {
                self.in_set(*line, "RETURN NEXT")?;
                let row = match expr {
                    Some(e) => {
                        let (v, from) =
                            self.value(e).await.map_err(|e| self.in_context(e, *line, "RETURN NEXT"))?;
                        let v = if self.outs.len() == 1 || self.outs.is_empty() {
                            let ty = self.outs.first().map_or(self.returns, |&k| self.vars[k].ty);
                            self.convert(v, from, ty).map_err(|e| self.in_context(e, *line, "RETURN NEXT"))?
                        } else {
                            v
                        };
                        self.as_row(v)
                    }
                    None => self.as_row(self.out_value()),
                };
                // A row of the set has the result's columns (a set of
                // records of no declared shape, whatever it has).
                let want =
                    if !self.row_types.is_empty() { self.row_types.len() } else { self.outs.len().max(1) };
                let anonymous = self.anonymous_set();
                if let Value::Record(fields) = &row {
                    if fields.len() != want && !anonymous {
                        return Err(self.in_context(wrong_width(fields.len(), want), *line, "RETURN NEXT"));
                    }
                }
                self.set.as_mut().expect("checked").push(row);
                Ok(Flow::Next)
            }
            Stmt::ReturnQuery { query, line } => {
                self.in_set(*line, "RETURN QUERY")?;
                let out = match query {
                    Source::Static(sql) => self.execute_returning_rows(sql).await,
                    Source::Dynamic { query, using } => {
                        self.run_dynamic_plan(query, using, true).await.map(|(out, _, _, _)| out)
                    }
                };
                let (columns, rows) =
                    rows_and_columns(out.map_err(|e| self.in_context(e, *line, "RETURN QUERY"))?);
                let wanted: Vec<SqlType> = if !self.row_types.is_empty() {
                    self.row_types.clone()
                } else if self.anonymous_set() {
                    columns.iter().map(|(_, t)| *t).collect()
                } else if let (
                    SqlType::Composite(u),
                    Source::Static(sql) | Source::Dynamic { query: sql, .. },
                ) = (self.returns, query)
                {
                    let fields = self
                        .composite_fields_at(key_of(sql, 0), u)
                        .map_err(|e| self.in_context(e, *line, "RETURN QUERY"))?;
                    fields.iter().map(|(_, t)| *t).collect()
                } else if self.outs.is_empty() {
                    vec![self.returns]
                } else {
                    self.outs.iter().map(|&k| self.vars[k].ty).collect()
                };
                if columns.len() != wanted.len() {
                    return Err(self.in_context(
                        SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            "structure of query does not match function result type",
                        )
                        .with_detail(format!(
                            "Number of returned columns ({}) does not match expected column count ({}).",
                            columns.len(),
                            wanted.len()
                        )),
                        *line,
                        "RETURN QUERY",
                    ));
                }
                let n = rows.len();
                for row in rows {
                    let mut fields = Vec::with_capacity(row.len());
                    for ((v, (_, from)), to) in row.iter().zip(&columns).zip(&wanted) {
                        fields.push(
                            self.convert(v.clone(), *from, *to)
                                .map_err(|e| self.in_context(e, *line, "RETURN QUERY"))?,
                        );
                    }
                    self.set.as_mut().expect("checked").push(Value::Record(fields.into()));
                }
                self.set_found(n > 0, n);
                Ok(Flow::Next)
            }
            Stmt::Raise(r) => self.raise(r).await.map(|_| Flow::Next),
            Stmt::Assert { .. } if !self.check_asserts() => Ok(Flow::Next),
            Stmt::Assert { cond, message, line } => {
                if self.truth_or_null(cond).await.map_err(|e| self.in_context(e, *line, "ASSERT"))?
                    == Some(true)
                {
                    return Ok(Flow::Next);
                }
                let text = match message {
                    Some(m) => {
                        let (v, _) = self.value(m).await.map_err(|e| self.in_context(e, *line, "ASSERT"))?;
                        v.try_text_in(self.spi.xact.session_style())
                            .map_err(|e| self.in_context(e, *line, "ASSERT"))?
                            .unwrap_or_else(|| "assertion failed".into())
                    }
                    None => "assertion failed".into(),
                };
                Err(self.in_context(SqlError::new(SqlState::ASSERT_FAILURE, text), *line, "ASSERT"))
            }
            Stmt::Perform { query, line } => {
                let out = self
                    .execute_keyed(key_of(query, 0), query, |text| format!("SELECT {text}"))
                    .await
                    .map_err(|e| self.in_context(e, *line, "PERFORM"))?;
                let n = rows_of(&out).len();
                self.set_found(n > 0, n);
                Ok(Flow::Next)
            }
            Stmt::Sql { sql, into, line } => {
                let kind = if sql.text.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("call ")) {
                    "CALL"
                } else {
                    "SQL statement"
                };
                self.sql(sql, into.as_ref()).await.map_err(|e| self.in_context(e, *line, kind))?;
                Ok(Flow::Next)
            }
            Stmt::Execute { query, into, using, line } => {
                self.dynamic(query, into.as_ref(), using)
                    .await
                    .map_err(|e| self.in_context(e, *line, "EXECUTE"))?;
                Ok(Flow::Next)
            }
            Stmt::GetDiagnostics { items, stacked, line } => {
                for (target, item) in items {
                    let value = if *stacked {
                        let Some(e) = self.handling.last() else {
                            return Err(self.in_context(
                                SqlError::new(
                                    SqlState::STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER,
                                    "GET STACKED DIAGNOSTICS cannot be used outside an exception handler",
                                ),
                                *line,
                                "GET STACKED DIAGNOSTICS",
                            ));
                        };
                        match item.as_str() {
                            "returned_sqlstate" => Value::Text(e.sqlstate().into()),
                            "message_text" => Value::Text(e.message.clone()),
                            "pg_exception_detail" => Value::Text(e.detail.clone().unwrap_or_default()),
                            "pg_exception_hint" => Value::Text(e.hint.clone().unwrap_or_default()),
                            "pg_exception_context" => Value::Text(e.context.clone().unwrap_or_default()),
                            "column_name" => Value::Text(
                                e.object.as_ref().and_then(|o| o.column.clone()).unwrap_or_default(),
                            ),
                            "constraint_name" => Value::Text(
                                e.object.as_ref().and_then(|o| o.constraint.clone()).unwrap_or_default(),
                            ),
                            "table_name" => Value::Text(
                                e.object.as_ref().and_then(|o| o.table.clone()).unwrap_or_default(),
                            ),
                            "schema_name" => Value::Text(
                                e.object.as_ref().and_then(|o| o.schema.clone()).unwrap_or_default(),
                            ),
                            "pg_datatype_name" => Value::Text(
                                e.object.as_ref().and_then(|o| o.datatype.clone()).unwrap_or_default(),
                            ),
                            other => {
                                return Err(syntax(format!(
                                    "unrecognized GET STACKED DIAGNOSTICS item \"{other}\""
                                )))
                            }
                        }
                    } else {
                        match item.as_str() {
                            "row_count" => Value::Int(self.row_count),
                            "pg_context" => {
                                let mut text = self.context(*line, "GET DIAGNOSTICS");
                                for (name, line, kind) in self.spi.context.callers.iter().rev() {
                                    text.push_str(&format!(
                                        "\nPL/pgSQL function {name} line {line} at {kind}"
                                    ));
                                }
                                Value::Text(text)
                            }
                            other => {
                                return Err(syntax(format!("unrecognized GET DIAGNOSTICS item \"{other}\"")))
                            }
                        }
                    };
                    let k = self.lookup(target).ok_or_else(|| not_variable(target))?;
                    let from = match value {
                        Value::Int(_) => SqlType::Int8,
                        _ => SqlType::Text,
                    };
                    self.store(k, value, from).map_err(|e| self.in_context(e, *line, "GET DIAGNOSTICS"))?;
                }
                Ok(Flow::Next)
            }
        }
    }

    /// FOREACH targets [SLICE n] IN ARRAY expr: each element (or each
    /// slice of the `slice` last dimensions) in turn, in storage order.
    async fn foreach(
        &mut self,
        label: &Option<String>,
        targets: &[String],
        slice: usize,
        array: &Sql,
        body: &[Stmt],
        line: usize,
    ) -> Result<Flow, SqlError> {
        const KIND: &str = "FOREACH over array";
        let (v, ty) = self.value(array).await.map_err(|e| self.in_context(e, line, KIND))?;
        let fail = |this: &Self, code: SqlState, message: String| {
            Err(this.in_context(SqlError::new(code, message), line, KIND))
        };
        let a = match v {
            Value::Null => {
                return fail(
                    self,
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "FOREACH expression must not be null".into(),
                )
            }
            Value::Array(a) => a,
            _ => {
                return fail(
                    self,
                    SqlState::DATATYPE_MISMATCH,
                    format!("FOREACH expression must yield an array, not type {}", ty.name()),
                )
            }
        };
        let mut ks = Vec::with_capacity(targets.len());
        for t in targets {
            ks.push(self.lookup(t).ok_or_else(|| not_variable(t))?);
        }
        if let [k] = ks.as_slice() {
            let is_array = matches!(self.vars[*k].ty, SqlType::Array(_));
            if slice > 0 && !is_array {
                return fail(
                    self,
                    SqlState::DATATYPE_MISMATCH,
                    "FOREACH ... SLICE loop variable must be of an array type".into(),
                );
            }
            if slice == 0 && is_array {
                return fail(
                    self,
                    SqlState::DATATYPE_MISMATCH,
                    "FOREACH loop variable must not be of an array type".into(),
                );
            }
        }
        if slice > a.ndims() {
            return fail(
                self,
                SqlState::ARRAY_SUBSCRIPT_ERROR,
                format!("slice dimension ({slice}) is out of the valid range 0..{}", a.ndims()),
            );
        }
        let items = a.items();
        let (chunk, dims) = if slice == 0 {
            (1, Vec::new())
        } else {
            let dims = a.dims()[a.ndims() - slice..].to_vec();
            (dims.iter().map(|d| d.len.max(0) as usize).product::<usize>().max(1), dims)
        };
        let elem_ty = if slice == 0 { ty.elem().unwrap_or(SqlType::Text) } else { ty };
        let mut any = false;
        for at in (0..items.len()).step_by(chunk) {
            self.spi.xact.check_cancel()?;
            any = true;
            let item = if slice == 0 {
                items[at].clone()
            } else {
                let part = items[at..(at + chunk).min(items.len())].to_vec();
                Value::Array(Arc::new(snapscale_values::Array::from_parts(dims.clone(), part)?))
            };
            self.foreach_assign(&ks, targets, item, elem_ty).map_err(|e| self.in_context(e, line, KIND))?;
            if let Some(flow) = self.loop_turn(label, body).await? {
                self.set_found(true, 0);
                return Ok(flow);
            }
        }
        self.set_found(any, 0);
        Ok(Flow::Next)
    }

    /// A FOREACH element (of type `from`) into its loop variables.
    fn foreach_assign(
        &mut self,
        ks: &[usize],
        targets: &[String],
        item: Value,
        from: SqlType,
    ) -> Result<(), SqlError> {
        if let [k] = ks {
            if self.vars[*k].is_record {
                return self.store_record(*k, item, &NO_SQL);
            }
            return self.store(*k, item, from);
        }
        let values = match item {
            Value::Record(fields) => fields,
            Value::Null => nulls(ks.len()),
            _ => {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "cannot assign non-composite value to a row variable",
                ))
            }
        };
        let columns: Vec<(String, SqlType)> =
            values.iter().enumerate().map(|(i, _)| (format!("f{}", i + 1), SqlType::Text)).collect();
        self.assign_row(targets, &columns, Some(values))
    }

    /// One turn of a loop's body: `None` to go on, or how the loop ends.
    async fn loop_turn(&mut self, label: &Option<String>, body: &[Stmt]) -> Result<Option<Flow>, SqlError> {
        // The body synchronously as far as it goes (PL-FAST): a turn of a
        // loop of simple statements makes no future.
        let flow = match self.sync_list(body)? {
            fast::Sync::Done(flow) => flow,
            fast::Sync::Pending(work) => self.run_pending(work).await?,
        };
        Ok(turn_end(label, flow))
    }

    #[allow(clippy::too_many_arguments)]
    async fn for_range(
        &mut self,
        label: &Option<String>,
        var: &str,
        reverse: bool,
        from: &Sql,
        to: &Sql,
        by: Option<&Sql>,
        body: &[Stmt],
    ) -> Result<Flow, SqlError> {
        let int = |v: Value, what: &str| -> Result<i64, SqlError> {
            match v {
                Value::Int(i) => Ok(i),
                Value::Null => Err(SqlError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    format!("{what} of FOR loop cannot be null"),
                )),
                other => {
                    match crate::expr::cast(other, SqlType::Int4, false, snapscale_values::Style::default())?
                    {
                        Value::Int(i) => Ok(i),
                        _ => Err(SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!("{what} of FOR loop must be an integer"),
                        )),
                    }
                }
            }
        };
        let lo = int(self.value(from).await?.0, "lower bound")?;
        let hi = int(self.value(to).await?.0, "upper bound")?;
        let step = match by {
            Some(b) => int(self.value(b).await?.0, "BY value")?,
            None => 1,
        };
        if step <= 0 {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "BY value of FOR loop must be greater than zero",
            ));
        }
        // The loop variable is an integer of its own block.
        let k = self.vars.len();
        self.vars.push(Var {
            name: Name::Owned(var.to_owned()),
            ty: SqlType::Int4,
            value: Value::Null,
            constant: false,
            not_null: false,
            record: None,
            is_record: false,
            fixed: false,
            domain: None,
            cursor: None,
        });
        self.frames.push(Frame {
            label: label.clone().map(Name::Owned),
            function: false,
            names: vec![(Name::Owned(var.to_owned()), k)],
        });
        let mut i = lo;
        let mut any = false;
        let mut flow = Flow::Next;
        loop {
            if (!reverse && i > hi) || (reverse && i < hi) {
                break;
            }
            any = true;
            self.spi.xact.check_cancel()?;
            // Written in place where it can be (a value made and moved
            // costs more than the turn's own arithmetic).
            match &mut self.vars[k].value {
                Value::Int(x) => *x = i,
                other => *other = Value::Int(i),
            }
            // As `loop_turn`, without its future for a turn that runs
            // synchronously through.
            let turn = match self.sync_list(body) {
                Ok(fast::Sync::Done(flow)) => Ok(flow),
                Ok(fast::Sync::Pending(work)) => self.run_pending(work).await,
                Err(e) => Err(e),
            };
            match turn.map(|flow| turn_end(label, flow)) {
                Ok(None) => {}
                Ok(Some(f)) => {
                    flow = f;
                    break;
                }
                Err(e) => {
                    self.frames.pop();
                    self.vars.truncate(k);
                    return Err(e);
                }
            }
            let next = if reverse { i.checked_sub(step) } else { i.checked_add(step) };
            match next {
                Some(n) if n >= i32::MIN as i64 && n <= i32::MAX as i64 => i = n,
                _ => break,
            }
        }
        self.frames.pop();
        self.vars.truncate(k);
        self.set_found(any, 0);
        Ok(flow)
    }

    async fn for_rows(
        &mut self,
        label: &Option<String>,
        targets: &[String],
        (columns, rows): (Vec<(String, SqlType)>, Vec<Row>),
        body: &[Stmt],
    ) -> Result<Flow, SqlError> {
        let any = !rows.is_empty();
        let mut flow = Flow::Next;
        for row in rows {
            self.spi.xact.check_cancel()?;
            self.assign_row(targets, &columns, Some(row))?;
            if let Some(f) = self.loop_turn(label, body).await? {
                flow = f;
                break;
            }
        }
        self.set_found(any, 0);
        Ok(flow)
    }

    fn set_found(&mut self, found: bool, rows: usize) {
        self.found = found;
        self.row_count = rows as i64;
        if let Some(k) = self.lookup("found") {
            self.vars[k].value = Value::Bool(found);
        }
    }

    /// A query's columns and rows: static SQL or EXECUTE's.
    async fn query_rows(&mut self, q: &Source) -> Result<(Vec<(String, SqlType)>, Vec<Row>), SqlError> {
        let out = match q {
            Source::Static(sql) => self.execute(sql).await?,
            Source::Dynamic { query, using } => self.run_dynamic(query, using).await?,
        };
        Ok(result_rows(out))
    }

    /// `target := expr`.
    async fn assign(&mut self, target: &str, expr: &Sql) -> Result<(), SqlError> {
        let (v, from) = self.value_as(expr, Query::Assignment(target)).await?;
        // The target a name finds at this place of the body is the same
        // each time the statement runs: found once.
        let key = key_of(expr, 2);
        let found = match self.targets.get(&key) {
            Some(&k) => Some(k),
            None => {
                let k = self.lookup(target);
                // (A domain's variable is checked on the statement path.)
                if let Some(k) = k.filter(|&k| self.vars[k].domain.is_none()) {
                    self.targets.insert(key, k);
                }
                k
            }
        };
        if let Some(k) = found {
            if self.vars[k].is_record {
                return self.store_record(k, v, expr);
            }
            self.store(k, v, from)?;
            return self.check_domain(k).await;
        }
        self.store_field(target, v, from)
    }

    /// `target[i]… := expr`: the element of an array variable (or record
    /// field) set, the array grown as PostgreSQL grows one.
    async fn assign_element(
        &mut self,
        target: &str,
        shown: &str,
        subscripts: &[Sql],
        expr: &Sql,
    ) -> Result<(), SqlError> {
        let mut subs = Vec::with_capacity(subscripts.len());
        for s in subscripts {
            let t = s.text.replace("::", "");
            if t.contains(':') {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "assigning to an array slice in PL/pgSQL is not supported",
                ));
            }
            let (v, ty) = self.value(s).await?;
            let n = match v {
                Value::Null => {
                    return Err(SqlError::new(
                        SqlState::NULL_VALUE_NOT_ALLOWED,
                        "array subscript in assignment must not be null",
                    ))
                }
                v => match self.convert(v, ty, SqlType::Int4)? {
                    Value::Int(n) => n as i32,
                    _ => {
                        return Err(SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            "array subscript must have type integer",
                        ))
                    }
                },
            };
            subs.push(n);
        }
        let (v, from) = self.value_as(expr, Query::Assignment(shown)).await?;
        // The array now: a variable's, or a record's field.
        let (current, ty, field) = match self.lookup(target) {
            Some(k) if !self.vars[k].is_record => (self.vars[k].value.clone(), self.vars[k].ty, None),
            Some(_) => {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("cannot subscript type {} because it does not support subscripting", "record"),
                ))
            }
            None => {
                let Some((rec, name)) = target.rsplit_once('.') else { return Err(not_variable(target)) };
                let k = self.lookup(rec).ok_or_else(|| not_variable(target))?;
                let r = self.vars[k].record.as_ref().ok_or_else(|| not_assigned(rec))?;
                let i = r.fields.iter().position(|(n, _)| n == name).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("record \"{rec}\" has no field \"{name}\""),
                    )
                })?;
                (r.values[i].clone(), r.fields[i].1, Some(()))
            }
        };
        let Some(elem) = ty.elem() else {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", ty.name()),
            ));
        };
        let v = self.convert(v, from, elem)?;
        let base = match &current {
            Value::Array(a) => Some(&**a),
            _ => None,
        };
        let array = Value::Array(Arc::new(snapscale_values::array::ops::assign_element(base, &subs, v)?));
        match field {
            None => {
                let k = self.lookup(target).expect("found above");
                self.store(k, array, ty)?;
                self.check_domain(k).await
            }
            Some(()) => self.store_field(target, array, ty),
        }
    }

    /// RETURN's value as the function's result: a composite result takes
    /// a row (each field converted to its column's type); a scalar one
    /// any value, converted as PostgreSQL converts it when the function
    /// ends (its errors name no line).
    fn return_value(&mut self, v: Value, from: SqlType, e: &Sql, line: usize) -> Result<Value, SqlError> {
        let name = Arc::clone(&self.name);
        let casting = |err: SqlError| -> SqlError {
            let here =
                format!("PL/pgSQL function {name} while casting return value to function's return type");
            let mut err = err;
            err.context = Some(match err.context.take() {
                Some(c) => format!("{c}\n{here}"),
                None => here,
            });
            err.position = None;
            err
        };
        let composite = match self.returns {
            SqlType::Composite(u) => Some(Some(u)),
            SqlType::Record(_) if !self.row_types.is_empty() || self.outs.is_empty() => Some(None),
            _ => None,
        };
        if let Some(u) = composite {
            return match v {
                Value::Null => Ok(Value::Null),
                Value::Record(fields) => match u {
                    Some(u) => {
                        let types = self.composite_fields_at(key_of(e, 0), u)?;
                        self.fit_fields(fields.to_vec(), &types.iter().map(|(_, t)| *t).collect::<Vec<_>>())
                            .map_err(casting)
                    }
                    None if !self.row_types.is_empty() => {
                        let types = self.row_types.clone();
                        self.fit_fields(fields.to_vec(), &types).map_err(casting)
                    }
                    None => Ok(Value::Record(fields)),
                },
                _ => Err(self.in_context(
                    SqlError::new(
                        SqlState::DATATYPE_MISMATCH,
                        "cannot return non-composite value from function returning composite type",
                    ),
                    line,
                    "RETURN",
                )),
            };
        }
        match (self.returns, &v) {
            (SqlType::Trigger | SqlType::Record(_), _) => Ok(v),
            (to, Value::Record(_)) => {
                let text = v.try_text_in(self.spi.xact.session_style()).map_err(casting)?.unwrap_or_default();
                self.convert(Value::Text(text), SqlType::Text, to).map_err(casting)
            }
            (to, _) => self.convert(v, from, to).map_err(casting),
        }
    }

    /// A row's values as a row of `types`: as many, each converted.
    fn fit_fields(&self, values: Vec<Value>, types: &[SqlType]) -> Result<Value, SqlError> {
        if values.len() != types.len() {
            return Err(wrong_width(values.len(), types.len()));
        }
        let style = self.spi.xact.session_style();
        let mut out = Vec::with_capacity(values.len());
        for (v, ty) in values.into_iter().zip(types) {
            out.push(match v {
                Value::Null => Value::Null,
                v => crate::expr::cast(v, *ty, false, style)?,
            });
        }
        Ok(Value::Record(out.into()))
    }

    /// Stores `v` (of type `from`) in the record field `target` names
    /// (`rec.field`), converted to the field's type: an assignment's or an
    /// INTO's target that is no variable.
    fn store_field(&mut self, target: &str, v: Value, from: SqlType) -> Result<(), SqlError> {
        if let Some((rec, field)) = target.rsplit_once('.') {
            if let Some(k) = self.lookup(rec) {
                let Some(r) = self.vars[k].record.as_mut() else {
                    return Err(not_assigned(rec));
                };
                let Some(i) = r.fields.iter().position(|(n, _)| n == field) else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("record \"{rec}\" has no field \"{field}\""),
                    ));
                };
                let ty = r.fields[i].1;
                let style = self.spi.xact.session_style();
                Arc::make_mut(&mut r.values)[i] = if from == ty || matches!(v, Value::Null) {
                    v
                } else {
                    crate::expr::cast(v, ty, false, style)?
                };
                r.null = false;
                return Ok(());
            }
        }
        Err(not_variable(target))
    }

    /// Fills composite variable `k`'s fields from `values` (with their
    /// types) in order, each converted to its field's type; fields left
    /// over are NULL, values left over ignored, as PostgreSQL moves a row
    /// into a row variable.
    /// A value whose type is not known (a row constructor's field) is
    /// cast from what it holds.
    fn fill_composite(
        &mut self,
        k: usize,
        values: impl Iterator<Item = (Value, Option<SqlType>)>,
    ) -> Result<(), SqlError> {
        let Some(fields) = self.vars[k].record.as_ref().map(|r| Arc::clone(&r.fields)) else {
            return Err(not_assigned(&self.vars[k].name));
        };
        let mut out = Vec::with_capacity(fields.len());
        let mut values = values;
        for (_, ty) in fields.iter() {
            out.push(match values.next() {
                Some((v, Some(from))) => self.convert(v, from, *ty)?,
                Some((Value::Null, None)) => Value::Null,
                Some((v, None)) => crate::expr::cast(v, *ty, false, self.spi.xact.session_style())?,
                None => Value::Null,
            });
        }
        self.vars[k].record = Some(Record { fields, values: out.into(), null: false });
        Ok(())
    }

    /// Stores a row value in record variable `k`: its fields are those of
    /// the record variable `expr` names (`r := NEW`), else those `k` has
    /// if as many, else named f1, f2, … as PostgreSQL names an anonymous
    /// row's.
    fn store_record(&mut self, k: usize, v: Value, expr: &Sql) -> Result<(), SqlError> {
        if self.vars[k].constant {
            return Err(SqlError::new(
                SqlState::ERROR_IN_ASSIGNMENT,
                format!("variable \"{}\" is declared CONSTANT", self.vars[k].name),
            ));
        }
        let source = self.lookup(&expr.text.trim().to_lowercase()).and_then(|s| self.vars[s].record.clone());
        if let (SqlType::Composite(_), Value::Record(values)) = (self.vars[k].ty, &v) {
            // Its fields are its type's; the source's types where known.
            let types: Vec<Option<SqlType>> = match &source {
                Some(r) if r.fields.len() == values.len() => r.fields.iter().map(|(_, t)| Some(*t)).collect(),
                _ => vec![None; values.len()],
            };
            return self.fill_composite(k, values.iter().cloned().zip(types));
        }
        let record = match v {
            Value::Null => {
                let fields = source
                    .map(|r| r.fields)
                    .or_else(|| self.vars[k].record.as_ref().map(|r| r.fields.clone()));
                let fields = fields.unwrap_or_else(|| Arc::from(Vec::new()));
                let values = nulls(fields.len());
                Record { fields, values, null: true }
            }
            Value::Record(values) => {
                let fields = match (source, &self.vars[k].record) {
                    (Some(r), _) if r.fields.len() == values.len() => r.fields,
                    (_, Some(r)) if r.fields.len() == values.len() => r.fields.clone(),
                    _ => (1..=values.len())
                        .map(|i| (format!("f{i}"), SqlType::Text))
                        .collect::<Vec<_>>()
                        .into(),
                };
                Record { fields, values, null: false }
            }
            _ => {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "cannot assign non-composite value to a record variable",
                ))
            }
        };
        self.vars[k].record = Some(record);
        Ok(())
    }

    /// Stores `v` (of type `from`) in variable `k`, converted to its type.
    fn store(&mut self, k: usize, v: Value, from: SqlType) -> Result<(), SqlError> {
        let var = &mut self.vars[k];
        // The common case, the value moved once: already of the variable's
        // type, and nothing to check.
        if from == var.ty && !var.constant && !var.is_record && !var.not_null {
            var.value = v;
            return Ok(());
        }
        let var = &self.vars[k];
        if var.constant {
            return Err(SqlError::new(
                SqlState::ERROR_IN_ASSIGNMENT,
                format!("variable \"{}\" is declared CONSTANT", var.name),
            ));
        }
        if var.is_record {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("assigning a value to record \"{}\" is not supported yet", var.name),
            ));
        }
        if matches!(v, Value::Null) && var.not_null {
            return Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                format!("null value cannot be assigned to variable \"{}\" declared NOT NULL", var.name),
            ));
        }
        let v = self.convert(v, from, var.ty)?;
        self.vars[k].value = v;
        Ok(())
    }

    /// `v` of type `from` as a value of type `to` (an assignment cast).
    fn convert(&self, v: Value, from: SqlType, to: SqlType) -> Result<Value, SqlError> {
        if from == to
            || matches!(v, Value::Null)
            || matches!(to, SqlType::Record(_) | SqlType::Trigger)
            || matches!((&v, to), (Value::Record(_), SqlType::Composite(_)))
        {
            return Ok(v);
        }
        let v = match (from, &v) {
            (SqlType::Int2Vector | SqlType::OidVector, _) => {
                Value::Text(v.try_text_as(from, self.spi.xact.session_style())?.unwrap_or_default())
            }
            _ => v,
        };
        let style = self.spi.xact.session_style();
        // Where no cast converts it, PostgreSQL's PL/pgSQL converts
        // through text (its I/O conversion): 1 to boolean is true.
        let backup = match &v {
            Value::Text(_) | Value::Record(_) => None,
            other => Some(other.clone()),
        };
        match crate::expr::cast(v, to, false, style) {
            Err(e) if e.code == SqlState::DATATYPE_MISMATCH && e.message.starts_with("cannot convert ") => {
                match backup.and_then(|b| b.to_text_as(from, style)) {
                    Some(text) => crate::expr::cast(Value::Text(text), to, false, style),
                    None => Err(e),
                }
            }
            r => r,
        }
    }

    /// The rows of a statement assigned to INTO targets, or to nothing.
    fn assign_row(
        &mut self,
        targets: &[String],
        columns: &[(String, SqlType)],
        row: Option<Row>,
    ) -> Result<(), SqlError> {
        // One record target takes the whole row.
        if let [one] = targets {
            if let Some(k) = self.lookup(one) {
                if matches!(self.vars[k].ty, SqlType::Composite(_)) || self.vars[k].fixed {
                    if row.is_some() {
                        let want = self.vars[k].record.as_ref().map_or(0, |r| r.fields.len());
                        self.multi_assignment(columns.len(), want)?;
                    }
                    let values = row.unwrap_or_else(|| nulls(columns.len()));
                    let types = columns.iter().map(|(_, t)| Some(*t));
                    return self.fill_composite(k, values.iter().cloned().zip(types));
                }
                if self.vars[k].is_record {
                    let values = row.unwrap_or_else(|| nulls(columns.len()));
                    self.vars[k].record = Some(Record { fields: columns.into(), values, null: false });
                    return Ok(());
                }
            }
        }
        if row.is_some() {
            self.multi_assignment(columns.len(), targets.len())?;
        }
        let row = row.unwrap_or_else(|| nulls(columns.len()));
        for (i, target) in targets.iter().enumerate() {
            let (v, from) = match (row.get(i), columns.get(i)) {
                (Some(v), Some((_, ty))) => (v.clone(), *ty),
                _ => (Value::Null, SqlType::Text),
            };
            match self.lookup(target) {
                Some(k) => self.store(k, v, from)?,
                None => self.store_field(target, v, from)?,
            }
        }
        Ok(())
    }

    /// plpgsql's strict_multi_assignment check: a row of `got` columns
    /// put in `want` targets.
    fn multi_assignment(&mut self, got: usize, want: usize) -> Result<(), SqlError> {
        if got == want {
            return Ok(());
        }
        let extra = self.extra();
        let check = crate::plpgsql::Extra::STRICT_MULTI_ASSIGNMENT;
        let which = if extra.errors & check != 0 {
            "extra_errors"
        } else if extra.warnings & check != 0 {
            "extra_warnings"
        } else {
            return Ok(());
        };
        let message = "number of source and target fields in assignment does not match";
        let detail = format!("strict_multi_assignment check of {which} is active.");
        let hint = "Make sure the query returns the exact list of columns.";
        if which == "extra_errors" {
            return Err(SqlError::new(SqlState::DATATYPE_MISMATCH, message)
                .with_detail(detail)
                .with_hint(hint));
        }
        let mut n = snapscale_engine::xact::Notice::new(
            "WARNING",
            SqlState::DATATYPE_MISMATCH,
            message.into(),
            Some(detail),
        );
        n.hint = Some(hint.into());
        self.spi.xact.notice_full(n);
        Ok(())
    }

    /// An expression's value and type: its query's one row and column.
    async fn value(&mut self, e: &Sql) -> Result<(Value, SqlType), SqlError> {
        self.value_as(e, Query::Expression).await
    }

    /// [`value`](Self::value), its errors naming the query as `q`.
    async fn value_as(&mut self, e: &Sql, q: Query<'_>) -> Result<(Value, SqlType), SqlError> {
        if let Some(done) = self.try_simple(e, q) {
            return done;
        }
        self.value_keyed(key_of(e, 0), e, "SELECT ", "", q).await
    }

    /// The value of the query `query` makes of `e`'s text, prepared once
    /// under `key` (the AST node's place: stable while the body runs).
    async fn value_keyed(
        &mut self,
        key: usize,
        e: &Sql,
        prefix: &str,
        suffix: &str,
        q: Query<'_>,
    ) -> Result<(Value, SqlType), SqlError> {
        let skipped = prefix.chars().count();
        let mut compiled = match self.cache.remove(&key) {
            Some(c) => c,
            None => Box::new(
                self.compile(&format!("{prefix}{}{suffix}", e.text))
                    .map_err(|err| spi_error(err, &e.text, skipped, q))?,
            ),
        };
        let r = self.value_of(&mut compiled, e, skipped, q).await;
        self.cache.insert(key, compiled);
        r
    }

    /// An expression's value from its prepared query: evaluated alone
    /// when it reads nothing (the fast path), else run. Errors while it
    /// is planned or run name the query (PL-SPI-ERRORS), but those of an
    /// expression PostgreSQL evaluates outside SPI, unless it is constant
    /// (PostgreSQL computed it while planning).
    async fn value_of(
        &mut self,
        c: &mut Compiled,
        e: &Sql,
        skipped: usize,
        q: Query<'_>,
    ) -> Result<(Value, SqlType), SqlError> {
        self.refresh(c).await.map_err(|err| spi_error(err, &e.text, skipped, q))?;
        let planned = c.planned.as_ref().expect("refreshed");
        let params = self.params(&c.sources)?;
        // Constant: no variable, nothing volatile (PL/pgSQL calls).
        let constant = c.sources.is_empty() && planned.simple().is_some();
        let at_run = |err: SqlError| {
            if planned.expression_only() && !constant {
                unnamed_error(err)
            } else {
                spi_error(err, &e.text, skipped, q)
            }
        };
        if let Some((simple, ty)) = planned.simple() {
            // The statement's own cancel check covers it.
            let v = crate::exec::evaluate_simple(self.spi.xact, self.spi.limits, simple, &params)
                .map_err(at_run)?;
            return Ok((v, ty));
        }
        let out = self.spi.run(planned, &params).await.map_err(at_run)?;
        let Output::Rows { columns, rows, .. } = out else {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("query \"{}\" did not return data", e.text),
            ));
        };
        if columns.len() != 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("query \"SELECT {}\" returned {} columns", e.text, columns.len()),
            ));
        }
        if rows.len() > 1 {
            return Err(SqlError::new(
                SqlState::CARDINALITY_VIOLATION,
                format!("query \"SELECT {}\" returned more than one row", e.text),
            ));
        }
        let v = rows.into_iter().next().map_or(Value::Null, |r| r[0].clone());
        Ok((v, columns[0].ty))
    }

    async fn truth(&mut self, e: &Sql) -> Result<bool, SqlError> {
        Ok(self.truth_or_null(e).await? == Some(true))
    }

    async fn truth_or_null(&mut self, e: &Sql) -> Result<Option<bool>, SqlError> {
        let (v, ty) = self.value(e).await?;
        self.truth_of(v, ty)
    }

    /// A condition's value as a truth value (NULL: `None`).
    fn truth_of(&self, v: Value, ty: SqlType) -> Result<Option<bool>, SqlError> {
        match v {
            Value::Bool(b) => Ok(Some(b)),
            Value::Null => Ok(None),
            other => match self.convert(other, ty, SqlType::Bool)? {
                Value::Bool(b) => Ok(Some(b)),
                _ => Ok(None),
            },
        }
    }

    /// CASE subject WHEN a, b THEN: whether `subject` equals one of them.
    async fn matches_any(&mut self, subject: &Value, list: &Sql) -> Result<bool, SqlError> {
        let (v, _) = self.value_keyed(key_of(list, 1), list, "SELECT ARRAY[", "]", Query::Expression).await?;
        Ok(match v {
            Value::Array(a) => {
                a.to_vec().iter().any(|x| x.compare(subject) == Some(std::cmp::Ordering::Equal))
            }
            _ => false,
        })
    }

    /// Runs a SQL statement of the body that must give rows (RETURN
    /// QUERY's): one that gives none is refused before it runs, as
    /// PostgreSQL's SPI refuses it.
    async fn execute_returning_rows(&mut self, sql: &Sql) -> Result<Output, SqlError> {
        let key = key_of(sql, 0);
        let mut compiled = match self.cache.remove(&key) {
            Some(c) => c,
            None => {
                Box::new(self.compile(&sql.text).map_err(|e| spi_error(e, &sql.text, 0, Query::Statement))?)
            }
        };
        let mut ready = Ok(());
        if !matches!(compiled.parsed, Parsed::Do { .. }) {
            ready = self.refresh(&mut compiled).await;
            if ready.is_ok() && compiled.planned.as_ref().and_then(|p| p.columns()).is_none() {
                ready = Err(no_tuples(&sql.text));
            }
        }
        let out = match ready {
            Ok(()) => self.run_compiled(&mut compiled).await,
            Err(e) => Err(e),
        };
        self.cache.insert(key, compiled);
        out.map_err(|e| spi_error(e, &sql.text, 0, Query::Statement))
    }

    /// Runs a SQL statement of the body.
    async fn execute(&mut self, sql: &Sql) -> Result<Output, SqlError> {
        self.execute_keyed(key_of(sql, 0), sql, str::to_owned).await
    }

    /// Runs the statement `statement` makes of `sql`'s text, prepared once
    /// under `key` (its place in the body).
    async fn execute_keyed(
        &mut self,
        key: usize,
        sql: &Sql,
        statement: impl Fn(&str) -> String,
    ) -> Result<Output, SqlError> {
        let mut compiled = match self.cache.remove(&key) {
            Some(c) => c,
            None => {
                let text = statement(&sql.text);
                Box::new(self.compile(&text).map_err(|e| spi_error(e, &text, 0, Query::Statement))?)
            }
        };
        let out = self.run_compiled(&mut compiled).await;
        self.cache.insert(key, compiled);
        out.map_err(|e| spi_error(e, &statement(&sql.text), 0, Query::Statement))
    }

    /// `text` parsed, its variable references made parameters.
    fn compile(&mut self, text: &str) -> Result<Compiled, SqlError> {
        let stars = super::record_stars::rewrite(text, |name| {
            let k = self.lookup(name).filter(|&k| self.vars[k].is_record)?;
            let r = self.vars[k].record.as_ref()?;
            Some(r.fields.iter().map(|(n, _)| n.clone()).collect())
        });
        let text = stars.as_deref().unwrap_or(text);
        let mut parsed = crate::parse::parse(text, self.spi.limits.max_stack_depth)?;
        if parsed.len() != 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let mut parsed = parsed.pop().expect("one");
        let mut sources: Vec<Src> = Vec::new();
        if let Parsed::Sql(ast) = &mut parsed {
            if let Some(statement) = ast.statement.as_deref_mut() {
                // A name that is both a variable and a column of a table
                // the statement reads (plpgsql.variable_conflict).
                let conflict = self.conflict_mode();
                let columns = match conflict {
                    crate::plpgsql::ast::Conflict::UseVariable => None,
                    _ => self.statement_columns(statement)?,
                };
                let mut err = None;
                let _ = ast::visit_expressions_mut(statement, |e| {
                    if let (Some(columns), ast::Expr::Identifier(i)) = (&columns, &*e) {
                        let name =
                            if i.quote_style.is_some() { i.value.clone() } else { i.value.to_lowercase() };
                        if columns.contains(&name) && self.lookup(&name).is_some() {
                            if conflict == crate::plpgsql::ast::Conflict::UseColumn {
                                return ControlFlow::Continue(());
                            }
                            let mut x = SqlError::new(
                                SqlState::AMBIGUOUS_COLUMN,
                                format!("column reference \"{name}\" is ambiguous"),
                            )
                            .with_detail("It could refer to either a PL/pgSQL variable or a table column.");
                            if let Some(p) = char_position(text, i.span.start.line, i.span.start.column) {
                                x = x.at_position(p);
                            }
                            err = Some(x);
                            return ControlFlow::Break(());
                        }
                    }
                    match self.reference(e) {
                        Ok(Some(src)) => {
                            let k = match sources.iter().position(|s| *s == src) {
                                Some(k) => k,
                                None => {
                                    sources.push(src);
                                    sources.len() - 1
                                }
                            };
                            *e = ast::Expr::value(ast::Value::Placeholder(format!("${}", k + 1)));
                        }
                        Ok(None) => {}
                        Err(x) => {
                            err = Some(x);
                            return ControlFlow::Break(());
                        }
                    }
                    ControlFlow::Continue(())
                });
                if let Some(e) = err {
                    return Err(e);
                }
            }
            // The positions the binder finds are in `text`, the function's
            // query: an error carries them as its internal position
            // (PL-SPI-ERRORS), never as the client's.
        }
        let declared = self.declared(&sources);
        Ok(Compiled { parsed, sources, declared, planned: None, fields: None, domain: None })
    }

    /// What a name that is both a variable and a column means: the
    /// body's `#variable_conflict`, else plpgsql.variable_conflict.
    fn conflict_mode(&self) -> crate::plpgsql::ast::Conflict {
        use crate::plpgsql::ast::Conflict;
        if let Some(c) = self.options.variable_conflict {
            return c;
        }
        let shown =
            self.spi.xact.session_view.as_ref().and_then(|v| (v.show)("plpgsql.variable_conflict").ok());
        match shown.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("use_variable") => Conflict::UseVariable,
            Some("use_column") => Conflict::UseColumn,
            _ => Conflict::Error,
        }
    }

    /// The names of the columns of the tables `statement` reads (an
    /// INSERT's target aside: its columns are not in scope of its
    /// values), `None` if it reads none.
    fn statement_columns(
        &mut self,
        statement: &ast::Statement,
    ) -> Result<Option<std::collections::HashSet<String>>, SqlError> {
        let mut names = Vec::new();
        let _ = ast::visit_relations(statement, |n| {
            names.push(n.clone());
            ControlFlow::<()>::Continue(())
        });
        if let ast::Statement::Insert(insert) = statement {
            if let ast::TableObject::TableName(target) = &insert.table {
                if let Some(at) = names.iter().position(|n| n == target) {
                    names.remove(at);
                }
            }
        }
        if names.is_empty() {
            return Ok(None);
        }
        let mut columns = std::collections::HashSet::new();
        for n in names {
            let Ok(key) = crate::bind::relation_name(&n) else { continue };
            if let Some(rel) = self.spi.xact.relation(&key)? {
                columns.extend(rel.entry.columns.iter().map(|c| c.name.clone()));
            }
        }
        Ok(Some(columns))
    }

    /// The variable (or record field) expression `e` names, if any.
    fn reference(&self, e: &ast::Expr) -> Result<Option<Src>, SqlError> {
        let name =
            |i: &ast::Ident| if i.quote_style.is_some() { i.value.clone() } else { i.value.to_lowercase() };
        Ok(match e {
            ast::Expr::Identifier(i) => self.lookup(&name(i)).map(Src::Var),
            // label.record.field
            ast::Expr::CompoundIdentifier(parts) if parts.len() == 3 => {
                let (a, b, c) = (name(&parts[0]), name(&parts[1]), name(&parts[2]));
                match self.lookup(&format!("{a}.{b}")).filter(|&k| self.vars[k].is_record) {
                    Some(k) => {
                        let Some(r) = &self.vars[k].record else { return Err(not_assigned(&b)) };
                        match r.fields.iter().position(|(n, _)| *n == c) {
                            Some(f) => Some(Src::Field(k, f)),
                            None => {
                                return Err(SqlError::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("record \"{b}\" has no field \"{c}\""),
                                ))
                            }
                        }
                    }
                    None => None,
                }
            }
            ast::Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                let (a, b) = (name(&parts[0]), name(&parts[1]));
                if let Some(k) = self.lookup(&a).filter(|&k| self.vars[k].is_record) {
                    let Some(r) = &self.vars[k].record else { return Err(not_assigned(&a)) };
                    match r.fields.iter().position(|(n, _)| *n == b) {
                        Some(f) => Some(Src::Field(k, f)),
                        None => {
                            return Err(SqlError::new(
                                SqlState::UNDEFINED_COLUMN,
                                format!("record \"{a}\" has no field \"{b}\""),
                            ))
                        }
                    }
                } else {
                    self.lookup(&format!("{a}.{b}")).map(Src::Var)
                }
            }
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Placeholder(p) => match self.lookup(p) {
                    Some(k) => Some(Src::Var(k)),
                    None => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_PARAMETER,
                            format!("there is no parameter {p}"),
                        ))
                    }
                },
                _ => None,
            },
            _ => None,
        })
    }

    fn declared(&self, sources: &[Src]) -> Vec<Option<SqlType>> {
        sources.iter().map(|s| self.type_of(*s)).collect()
    }

    fn type_of(&self, s: Src) -> Option<SqlType> {
        match s {
            Src::Var(k) => Some(self.vars[k].ty),
            Src::Field(k, f) => self.vars[k].record.as_ref().and_then(|r| r.fields.get(f)).map(|(_, t)| *t),
        }
    }

    fn params(&self, sources: &[Src]) -> Result<Vec<Value>, SqlError> {
        let mut out = Vec::with_capacity(sources.len());
        fill_params(&self.vars, sources, &mut out)?;
        Ok(out)
    }

    async fn run_compiled(&mut self, c: &mut Compiled) -> Result<Output, SqlError> {
        if let Parsed::Do { language, code } = &c.parsed {
            return self.run_do(language, code).await;
        }
        self.refresh(c).await?;
        let params = self.params(&c.sources)?;
        // WHERE CURRENT OF a cursor variable names the portal it holds.
        if let Parsed::Sql(ast) = &c.parsed {
            if let Some(k) = ast.pre.current_of.as_deref().and_then(|n| self.lookup(n)) {
                if let (SqlType::Refcursor, Value::Text(portal)) = (self.vars[k].ty, &self.vars[k].value) {
                    self.spi.current_of = Some(portal.clone());
                }
            }
        }
        self.spi.run(c.planned.as_ref().expect("refreshed"), &params).await
    }

    /// Makes `c`'s plan current: planned again if a variable's type or a
    /// relation it reads changed.
    async fn refresh(&mut self, c: &mut Compiled) -> Result<(), SqlError> {
        let same = c.sources.len() == c.declared.len()
            && c.sources.iter().zip(&c.declared).all(|(s, d)| self.type_of(*s) == *d);
        if !same {
            c.declared = self.declared(&c.sources);
            c.planned = None;
        }
        loop {
            let fresh = c.planned.is_none();
            if fresh {
                c.planned = Some(self.spi.plan(&c.parsed, &c.declared)?);
            }
            if self.spi.current(c.planned.as_ref().expect("planned"), fresh).await? {
                return Ok(());
            }
            c.planned = None;
        }
    }

    /// A SQL statement, its rows into INTO's targets.
    async fn sql(&mut self, sql: &Sql, into: Option<&IntoTargets>) -> Result<(), SqlError> {
        let out = self.execute(sql).await?;
        self.finish_statement(out, into, StrictParams::Static(sql))
    }

    /// Whether a STRICT failure shows the query's parameters
    /// (`#print_strict_params`, else plpgsql.print_strict_params).
    fn print_strict_params(&self) -> bool {
        self.options.print_strict_params.unwrap_or_else(|| {
            self.spi
                .xact
                .session_view
                .as_ref()
                .and_then(|v| (v.show)("plpgsql.print_strict_params").ok())
                .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "on" | "true" | "yes" | "1"))
        })
    }

    /// plpgsql.check_asserts: whether ASSERT is checked (on by default).
    fn check_asserts(&self) -> bool {
        let shown = self.spi.xact.session_view.as_ref().and_then(|v| (v.show)("plpgsql.check_asserts").ok());
        !shown.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "off" | "false" | "no" | "0"))
    }

    /// The checks plpgsql.extra_warnings and extra_errors ask for.
    fn extra(&self) -> crate::plpgsql::Extra {
        crate::plpgsql::extra_checks(self.spi.xact.session_view.as_deref())
    }

    /// A STRICT failure's DETAIL: the query's parameters and their
    /// values, when print_strict_params asks for them.
    fn strict_detail(&self, params: &StrictParams<'_>) -> Option<String> {
        if !self.print_strict_params() {
            return None;
        }
        let style = self.spi.xact.session_style();
        let quote = |v: &Value, ty: SqlType| match v {
            Value::Null => "NULL".to_owned(),
            v => format!("'{}'", v.to_text_as(ty, style).unwrap_or_default().replace('\'', "''")),
        };
        let parts: Vec<String> = match params {
            StrictParams::Static(sql) => {
                let c = self.cache.get(&key_of(sql, 0))?;
                let mut sources = c.sources.clone();
                sources.sort_by_key(|s| match *s {
                    Src::Var(k) | Src::Field(k, _) => k,
                });
                let mut out = Vec::with_capacity(sources.len());
                for s in sources {
                    let (name, v, ty) = match s {
                        Src::Var(k) => {
                            let var = &self.vars[k];
                            let v = match &var.record {
                                Some(r) if var.is_record => record_value(r),
                                _ => var.value.clone(),
                            };
                            (var.name.to_string(), v, var.ty)
                        }
                        Src::Field(k, f) => {
                            let var = &self.vars[k];
                            let r = var.record.as_ref()?;
                            (format!("{}.{}", var.name, r.fields[f].0), r.values[f].clone(), r.fields[f].1)
                        }
                    };
                    out.push(format!("{name} = {}", quote(&v, ty)));
                }
                out
            }
            StrictParams::Dynamic(values) => values
                .iter()
                .enumerate()
                .map(|(i, (v, ty))| format!("${} = {}", i + 1, quote(v, *ty)))
                .collect(),
        };
        (!parts.is_empty()).then(|| format!("parameters: {}", parts.join(", ")))
    }

    fn finish_statement(
        &mut self,
        out: Output,
        into: Option<&IntoTargets>,
        params: StrictParams<'_>,
    ) -> Result<(), SqlError> {
        let is_static = matches!(params, StrictParams::Static(_));
        match (out, into) {
            (Output::Rows { columns, rows, tag }, Some(into)) => {
                // A data-modifying statement's RETURNING INTO is strict
                // about more than one row, as is plpgsql's too_many_rows
                // check (static SQL only).
                let modifies = is_static && !tag.starts_with("SELECT");
                if rows.is_empty() && into.strict {
                    let mut e = SqlError::new(SqlState::NO_DATA_FOUND, "query returned no rows");
                    e.detail = self.strict_detail(&params);
                    return Err(e);
                }
                if rows.len() > 1 {
                    let extra = if is_static && !(into.strict || modifies) {
                        self.extra()
                    } else {
                        crate::plpgsql::Extra::default()
                    };
                    let too_many = crate::plpgsql::Extra::TOO_MANY_ROWS;
                    let error = into.strict || modifies || extra.errors & too_many != 0;
                    if error || extra.warnings & too_many != 0 {
                        let mut e =
                            SqlError::new(SqlState::TOO_MANY_ROWS, "query returned more than one row");
                        e.detail = self.strict_detail(&params);
                        if is_static {
                            e.hint = Some("Make sure the query returns a single row, or use LIMIT 1.".into());
                        }
                        if error {
                            return Err(e);
                        }
                        let d = e.into_data();
                        let mut n =
                            snapscale_engine::xact::Notice::new("WARNING", d.code, d.message, d.detail);
                        n.hint = d.hint;
                        self.spi.xact.notice_full(n);
                    }
                }
                let n = affected(&tag).unwrap_or(rows.len());
                let cols: Vec<(String, SqlType)> = columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
                self.assign_row(&into.targets, &cols, rows.into_iter().next())?;
                self.set_found(n > 0, n);
                Ok(())
            }
            (Output::Rows { tag, rows, .. }, None) if tag.starts_with("SELECT") && is_static => {
                let _ = rows;
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "query has no destination for result data")
                    .with_hint("If you want to discard the results of a SELECT, use PERFORM instead."))
            }
            (Output::Rows { tag, rows, .. }, None) => {
                let n = affected(&tag).unwrap_or(rows.len());
                self.set_found(n > 0, n);
                Ok(())
            }
            (Output::Command(tag), Some(_)) => {
                let _ = tag;
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "INTO used with a command that cannot return data"))
            }
            (Output::Command(tag), None) => {
                let n = affected(&tag).unwrap_or(0);
                self.set_found(n > 0, n);
                Ok(())
            }
            (_, _) => Ok(()),
        }
    }

    /// EXECUTE string [INTO …] [USING …].
    async fn dynamic(
        &mut self,
        query: &Sql,
        into: Option<&IntoTargets>,
        using: &[Sql],
    ) -> Result<(), SqlError> {
        let (out, _, _, params) = self.run_dynamic_plan(query, using, false).await?;
        self.finish_statement(out, into, StrictParams::Dynamic(params))
    }

    async fn run_dynamic(&mut self, query: &Sql, using: &[Sql]) -> Result<Output, SqlError> {
        self.run_dynamic_plan(query, using, false).await.map(|(out, _, _, _)| out)
    }

    /// EXECUTE's statement run: its output, whether its plan could run
    /// backward, and its text.
    /// `must_return`: a statement that gives no rows is refused before it
    /// runs (RETURN QUERY's).
    async fn run_dynamic_plan(
        &mut self,
        query: &Sql,
        using: &[Sql],
        must_return: bool,
    ) -> Result<(Output, bool, String, Vec<(Value, SqlType)>), SqlError> {
        let (text, _) = self.value(query).await?;
        let text = match text {
            Value::Null => {
                return Err(SqlError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "query string argument of EXECUTE is null",
                ))
            }
            v => v.try_text_in(self.spi.xact.session_style())?.unwrap_or_default(),
        };
        let mut params = Vec::new();
        let mut declared = Vec::new();
        for u in using {
            let (v, ty) = self.value(u).await?;
            params.push(v);
            declared.push(Some(ty));
        }
        let named = |e| spi_error(e, &text, 0, Query::Statement);
        let mut parsed = crate::parse::parse(&text, self.spi.limits.max_stack_depth).map_err(named)?;
        if parsed.len() != 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let parsed = parsed.pop().expect("one");
        if let Parsed::Do { language, code } = &parsed {
            let out = self.run_do(language, code).await.map_err(named)?;
            return Ok((out, false, text, Vec::new()));
        }
        loop {
            let planned = self.spi.plan(&parsed, &declared).map_err(named)?;
            if self.spi.current(&planned, true).await.map_err(named)? {
                if must_return && planned.columns().is_none() {
                    return Err(named(no_tuples(&text)));
                }
                let out = self.spi.run(&planned, &params).await.map_err(named)?;
                let typed =
                    params.into_iter().zip(declared.iter().map(|d| d.unwrap_or(SqlType::Text))).collect();
                return Ok((out, planned.scrollable(), text, typed));
            }
        }
    }

    /// A DO block the body runs (a statement, or EXECUTE's): run as an
    /// anonymous function in this transaction.
    fn run_do<'a>(&'a mut self, language: &'a str, code: &'a str) -> Fut<'a, Output> {
        Box::pin(async move {
            let name = crate::plpgsql::DO_NAME;
            let (block, _) = crate::plpgsql::compile_do(
                language,
                code,
                self.spi.xact.session_view.as_deref(),
                self.spi.limits.max_stack_depth / 1024,
                None,
            )?;
            if super::too_deep(self.spi) {
                return Err(crate::stack::too_deep(self.spi.limits.max_stack_depth));
            }
            self.spi.depth += 1;
            let nonatomic = std::mem::replace(&mut self.spi.nonatomic, false);
            let (ran, _) =
                Interp::new(&mut *self.spi, &CallName::new(name.into(), ""), SqlType::Void).run(&block).await;
            self.spi.nonatomic = nonatomic;
            self.spi.depth -= 1;
            ran?;
            Ok(Output::Command("DO".into()))
        })
    }

    /// RAISE.
    async fn raise(&mut self, r: &Raise) -> Result<(), SqlError> {
        let line = r.line;
        let level = r.level.as_str();
        // A bare RAISE re-throws the error being handled.
        if r.message.is_none() && r.condition.is_none() && r.options.is_empty() {
            return match self.handling.last() {
                Some(e) => Err(e.clone()),
                None => Err(self.in_context(
                    SqlError::new(
                        SqlState::STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER,
                        "RAISE without parameters cannot be used outside an exception handler",
                    ),
                    line,
                    "RAISE",
                )),
            };
        }
        self.raise_inner(r, level).await.map_err(|e| {
            if e.context.is_some() {
                e
            } else {
                self.in_context(e, line, "RAISE")
            }
        })
    }

    async fn raise_inner(&mut self, r: &Raise, level: &str) -> Result<(), SqlError> {
        let line = r.line;
        let style = self.spi.xact.session_style();
        let mut args = Vec::with_capacity(r.args.len());
        for a in &r.args {
            let (v, ty) = self.value(a).await.map_err(|e| self.in_context(e, line, "RAISE"))?;
            args.push(if matches!(v, Value::Null) {
                "<NULL>".to_owned()
            } else {
                v.try_text_as(ty, style).map_err(|e| self.in_context(e, line, "RAISE"))?.unwrap_or_default()
            });
        }
        // The condition (a name or a SQLSTATE) and the name it was given
        // by, the message when nothing else gives one.
        let mut code: Option<Condition> = None;
        let mut condname: Option<String> = None;
        if let Some(c) = &r.condition {
            code = Some(condition_state(c)?);
            condname = Some(c.strip_prefix("sqlstate:").unwrap_or(c).to_owned());
        }
        let mut message = match &r.message {
            Some(fmt) => Some(format_raise(fmt, &args)?),
            None => None,
        };
        let (mut detail, mut hint) = (None, None);
        let mut object = snapscale_values::ErrorObject::default();
        let already = |what: &str| {
            SqlError::new(SqlState::SYNTAX_ERROR, format!("RAISE option already specified: {what}"))
        };
        for (name, value) in &r.options {
            let (v, ty) = self.value(value).await.map_err(|e| self.in_context(e, line, "RAISE"))?;
            if matches!(v, Value::Null) {
                return Err(SqlError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "RAISE statement option cannot be null",
                ));
            }
            let text = v.try_text_as(ty, style)?.unwrap_or_default();
            let slot = match name.as_str() {
                "errcode" => {
                    if code.is_some() {
                        return Err(already("ERRCODE"));
                    }
                    code = Some(condition_state(&text)?);
                    condname = Some(text);
                    continue;
                }
                "message" => (&mut message, "MESSAGE"),
                "detail" => (&mut detail, "DETAIL"),
                "hint" => (&mut hint, "HINT"),
                "column" => (&mut object.column, "COLUMN"),
                "constraint" => (&mut object.constraint, "CONSTRAINT"),
                "datatype" => (&mut object.datatype, "DATATYPE"),
                "table" => (&mut object.table, "TABLE"),
                "schema" => (&mut object.schema, "SCHEMA"),
                other => return Err(syntax(format!("unrecognized RAISE statement option \"{other}\""))),
            };
            if slot.0.is_some() {
                return Err(already(slot.1));
            }
            *slot.0 = Some(text);
        }
        let code = code.unwrap_or(if level == "exception" {
            Condition::of(SqlState::RAISE_EXCEPTION)
        } else if level == "warning" {
            Condition::of(SqlState::WARNING)
        } else {
            Condition::of(SqlState::SUCCESSFUL_COMPLETION)
        });
        let message = match (message, condname) {
            (Some(m), _) => m,
            (None, Some(c)) => c,
            (None, None) => code.text().to_owned(),
        };
        match level {
            "exception" => {
                let mut e = SqlError::new(code.state, message);
                e.custom_code = code.custom;
                e.detail = detail;
                e.hint = hint;
                if object != snapscale_values::ErrorObject::default() {
                    e.object = Some(Box::new(object));
                }
                Err(self.in_context(e, line, "RAISE"))
            }
            "warning" | "notice" | "info" => {
                let severity = match level {
                    "warning" => "WARNING",
                    "notice" => "NOTICE",
                    _ => "INFO",
                };
                let mut n = snapscale_engine::xact::Notice::new(severity, code.state, message, detail);
                n.hint = hint;
                n.custom_code = code.custom;
                self.spi.xact.notice_full(n);
                Ok(())
            }
            // DEBUG and LOG go to the server log only (client_min_messages).
            _ => {
                tracing::debug!(target: "plpgsql", "{message}");
                Ok(())
            }
        }
    }
}

/// Where a STRICT failure's parameters come from: the static statement
/// (its variables), or EXECUTE's USING values.
enum StrictParams<'a> {
    Static(&'a Sql),
    Dynamic(Vec<(Value, SqlType)>),
}

/// A condition RAISE raises or a handler catches: a state PostgreSQL
/// names, or a SQLSTATE it does not (five of `0-9A-Z`).
#[derive(Clone, Copy)]
struct Condition {
    state: SqlState,
    custom: Option<[u8; 5]>,
}

impl Condition {
    fn of(state: SqlState) -> Condition {
        Condition { state, custom: None }
    }

    /// The five-character code.
    fn text(&self) -> &str {
        match &self.custom {
            Some(c) => std::str::from_utf8(c).unwrap_or(self.state.code()),
            None => self.state.code(),
        }
    }
}

/// Whether `code` is a SQLSTATE as PL/pgSQL accepts one: five of
/// `0-9A-Z`.
pub(crate) fn is_sqlstate(code: &str) -> bool {
    code.len() == 5 && code.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

/// Whether handler `h` catches `e` (OTHERS catches all but a cancel and a
/// failed ASSERT).
fn catches(h: &Handler, e: &SqlError) -> bool {
    let code = e.sqlstate();
    h.conditions.iter().any(|c| {
        if c == "others" {
            return e.custom_code.is_some()
                || !matches!(e.code, SqlState::QUERY_CANCELED | SqlState::ASSERT_FAILURE);
        }
        match condition_state(c) {
            Ok(cond) => {
                // A class's code (`integrity_constraint_violation`,
                // `SQLSTATE '23000'`) catches every state of its class.
                let want = cond.text();
                want == code || (want.ends_with("000") && want[..2] == code[..2])
            }
            Err(_) => false,
        }
    })
}

/// The condition a condition name, `sqlstate:XXXXX` or a bare SQLSTATE
/// (RAISE's ERRCODE) stands for.
fn condition_state(c: &str) -> Result<Condition, SqlError> {
    let code = c.strip_prefix("sqlstate:").unwrap_or(c);
    if is_sqlstate(code) {
        return Ok(match SqlState::from_code(code) {
            Some(state) => Condition::of(state),
            None => {
                let mut bytes = [0u8; 5];
                bytes.copy_from_slice(code.as_bytes());
                Condition { state: SqlState::RAISE_EXCEPTION, custom: Some(bytes) }
            }
        });
    }
    if c.starts_with("sqlstate:") {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("invalid SQLSTATE code \"{code}\"")));
    }
    SqlState::named(c).next().map(Condition::of).ok_or_else(|| {
        SqlError::new(SqlState::UNDEFINED_OBJECT, format!("unrecognized exception condition \"{c}\""))
    })
}

/// `%` replaced by the arguments, `%%` by `%`.
fn format_raise(fmt: &str, args: &[String]) -> Result<String, SqlError> {
    let mut out = String::new();
    let mut next = args.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        match next.next() {
            Some(a) => out.push_str(a),
            None => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "too few parameters specified for RAISE"))
            }
        }
    }
    if next.next().is_some() {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "too many parameters specified for RAISE"));
    }
    Ok(out)
}

/// 42601 for a statement that must give rows and gives none (SPI's
/// must_return_tuples): named by its command.
fn no_tuples(text: &str) -> SqlError {
    let first = text.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
    let what = match first.as_str() {
        "SELECT" | "WITH" | "TABLE" | "VALUES" | "(" => "SELECT INTO".to_owned(),
        "CREATE" => "CREATE TABLE AS".to_owned(),
        other => other.to_owned(),
    };
    SqlError::new(SqlState::SYNTAX_ERROR, format!("{what} query does not return tuples"))
}

/// 42804: a row of a set-returning function's result with the wrong
/// number of columns (a table's row type changed since the function was
/// made, or a record of another shape).
fn wrong_width(got: usize, want: usize) -> SqlError {
    SqlError::new(SqlState::DATATYPE_MISMATCH, "returned record type does not match expected record type")
        .with_detail(format!(
            "Number of returned columns ({got}) does not match expected column count ({want})."
        ))
}

fn not_variable(name: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("\"{name}\" is not a known variable"))
}

fn not_assigned(name: &str) -> SqlError {
    SqlError::new(
        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("record \"{name}\" is not assigned yet"),
    )
    .with_detail("The tuple structure of a not-yet-assigned record is indeterminate.")
}

/// What a query of the body is to PostgreSQL's SPI error callback, which
/// names it in an error raised while it is prepared or run (PL-SPI-ERRORS).
#[derive(Clone, Copy)]
pub(super) enum Query<'a> {
    /// An expression, run as `SELECT expr`: `SQL expression "expr"`.
    Expression,
    /// `target := expr`, its expression run as `SELECT expr`:
    /// `PL/pgSQL assignment "target := expr"`.
    Assignment(&'a str),
    /// A statement, run as written: `SQL statement "…"`.
    Statement,
}

/// An error raised while a query of the body was prepared or run, as
/// PostgreSQL's SPI error callback reports it (PL-SPI-ERRORS): a position
/// in the query becomes a place in the function's query (psql's `QUERY:`),
/// shown as PostgreSQL shows it (an expression without the `SELECT` it
/// ran as: `skipped` characters before `body`); any other error gets a
/// CONTEXT line naming the query, after those of the calls it made.
#[cold]
pub(super) fn spi_error(e: SqlError, body: &str, skipped: usize, q: Query<'_>) -> SqlError {
    let (shown, before, what) = match q {
        Query::Expression => (body.to_owned(), 0, "SQL expression"),
        Query::Assignment(target) => {
            (format!("{target} := {body}"), target.chars().count() + 4, "PL/pgSQL assignment")
        }
        Query::Statement => (body.to_owned(), 0, "SQL statement"),
    };
    let mut d = e.into_data();
    match d.position.take().map(|p| p as usize) {
        Some(p) if p > skipped => {
            let position = u32::try_from(p - skipped + before).unwrap_or(u32::MAX);
            d.internal = Some(Box::new(snapscale_values::InternalQuery { query: shown, position }));
        }
        _ => {
            let line = format!("{what} \"{shown}\"");
            d.context = Some(match d.context.take() {
                Some(c) => format!("{c}\n{line}"),
                None => line,
            });
        }
    }
    SqlError::from(d)
}

/// An error of an expression PostgreSQL evaluates outside SPI (a simple
/// expression at run time): it names no query, and its position, if
/// any, is not the client's.
pub(super) fn unnamed_error(e: SqlError) -> SqlError {
    if e.position.is_none() {
        return e;
    }
    SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() })
}

/// The 1-based character position of `line`:`column` (1-based) in
/// `text`, as the parser's spans count them.
fn char_position(text: &str, line: u64, column: u64) -> Option<usize> {
    if line == 0 || column == 0 {
        return None;
    }
    let mut position = 0;
    for (n, l) in text.split('\n').enumerate() {
        if n as u64 + 1 == line {
            return Some(position + column as usize);
        }
        position += l.chars().count() + 1;
    }
    None
}

/// The line of statement `s` and its kind as CONTEXT lines name it,
/// for a statement that may call a function (GET DIAGNOSTICS …
/// PG_CONTEXT names the callers so).
fn where_at(s: &Stmt) -> Option<(usize, &'static str)> {
    Some(match s {
        Stmt::Assign { line, .. } | Stmt::AssignElem { line, .. } => (*line, "assignment"),
        Stmt::If { line, .. } => (*line, "IF"),
        Stmt::Case { line, .. } => (*line, "CASE"),
        Stmt::While { line, .. } => (*line, "WHILE"),
        Stmt::ForRange { line, .. } => (*line, "FOR with integer loop variable"),
        Stmt::ForQuery { line, .. } => (*line, "FOR over SELECT rows"),
        Stmt::ForEach { line, .. } => (*line, "FOREACH over array"),
        Stmt::ForCursor { line, .. } => (*line, "FOR over cursor"),
        Stmt::Exit { line, next: false, .. } => (*line, "EXIT"),
        Stmt::Exit { line, next: true, .. } => (*line, "CONTINUE"),
        Stmt::Return { line, .. } => (*line, "RETURN"),
        Stmt::ReturnNext { line, .. } => (*line, "RETURN NEXT"),
        Stmt::ReturnQuery { line, .. } => (*line, "RETURN QUERY"),
        Stmt::Raise(r) => (r.line, "RAISE"),
        Stmt::Assert { line, .. } => (*line, "ASSERT"),
        Stmt::Perform { line, .. } => (*line, "PERFORM"),
        Stmt::Sql { line, .. } => (*line, "SQL statement"),
        Stmt::Execute { line, .. } => (*line, "EXECUTE"),
        Stmt::Open { line, .. } => (*line, "OPEN"),
        Stmt::Fetch { line, .. } => (*line, "FETCH"),
        _ => return None,
    })
}

/// No SQL: what a record variable is assigned from when no variable
/// gives its fields.
static NO_SQL: Sql = Sql { text: String::new(), at: 0 };

fn record_value(r: &Record) -> Value {
    if r.null {
        return Value::Null;
    }
    Value::Record(Arc::clone(&r.values))
}

fn rows_of(out: &Output) -> &[snapscale_engine::catalog::Row] {
    match out {
        Output::Rows { rows, .. } => rows,
        _ => &[],
    }
}

fn rows_and_columns(out: Output) -> (Vec<(String, SqlType)>, Vec<Vec<Value>>) {
    let (columns, rows) = result_rows(out);
    (columns, rows.into_iter().map(|r| r.to_vec()).collect())
}

/// A statement's columns and rows (none for a command).
fn result_rows(out: Output) -> (Vec<(String, SqlType)>, Vec<Row>) {
    match out {
        Output::Rows { columns, rows, .. } => {
            (columns.iter().map(|c| (c.name.clone(), c.ty)).collect(), rows)
        }
        _ => (Vec::new(), Vec::new()),
    }
}

/// A row of `n` NULLs.
fn nulls(n: usize) -> Row {
    std::iter::repeat_n(Value::Null, n).collect()
}

/// How a loop's turn that ended with `flow` goes on: `None` to the next
/// turn, else how the loop labelled `label` ends.
fn turn_end(label: &Option<String>, flow: Flow) -> Option<Flow> {
    match flow {
        Flow::Next => None,
        Flow::Continue(None) => None,
        Flow::Continue(Some(l)) if label.as_ref() == Some(&l) => None,
        Flow::Exit(None) => Some(Flow::Next),
        Flow::Exit(Some(l)) if label.as_ref() == Some(&l) => Some(Flow::Next),
        other => Some(other),
    }
}

/// Fills `out` with the values `sources` name.
fn fill_params(vars: &[Var], sources: &[Src], out: &mut Vec<Value>) -> Result<(), SqlError> {
    out.clear();
    for s in sources {
        out.push(match *s {
            Src::Var(k) => {
                let var = &vars[k];
                if var.is_record {
                    match &var.record {
                        Some(r) => record_value(r),
                        None => return Err(not_assigned(&var.name)),
                    }
                } else {
                    var.value.clone()
                }
            }
            Src::Field(k, f) => match vars[k].record.as_ref().and_then(|r| r.values.get(f)) {
                Some(v) => v.clone(),
                None => return Err(not_assigned(&vars[k].name)),
            },
        });
    }
    Ok(())
}

/// The cache key of SQL `sql` of the body, used as `use_` (0: as itself,
/// 1: a CASE's WHEN list): the node's address, which the body's AST keeps
/// while it runs.
fn key_of(sql: &Sql, use_: usize) -> usize {
    (sql as *const Sql as usize) * 2 + use_
}

/// The row count of a command tag (`INSERT 0 3`, `UPDATE 2`).
fn affected(tag: &str) -> Option<usize> {
    tag.rsplit(' ').next().and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(position: Option<usize>) -> SqlError {
        let e = SqlError::new(SqlState::UNDEFINED_COLUMN, "column \"y\" does not exist");
        match position {
            Some(p) => e.at_position(p),
            None => e,
        }
    }

    /// A place in the query run becomes a place in the query as
    /// PostgreSQL shows it: an expression without its SELECT, an
    /// assignment with its target.
    #[test]
    fn positions_move_into_the_query_shown() {
        // `SELECT x + y`: y at 12.
        let e = spi_error(placed(Some(12)), "x + y", 7, Query::Expression);
        let i = e.internal.as_deref().expect("internal query");
        assert_eq!((i.query.as_str(), i.position, e.position), ("x + y", 5, None));
        let e = spi_error(placed(Some(12)), "x + y", 7, Query::Assignment("r.a"));
        let i = e.internal.as_deref().expect("internal query");
        assert_eq!((i.query.as_str(), i.position), ("r.a := x + y", 12));
        let e = spi_error(placed(Some(8)), "SELECT y", 0, Query::Statement);
        assert_eq!(e.internal.as_deref().map(|i| i.position), Some(8));
        assert!(e.context.is_none());
    }

    /// Without a place, the query is named on a CONTEXT line after those
    /// of the calls it made.
    #[test]
    fn other_errors_name_the_query() {
        let mut inner = placed(None);
        inner.context = Some("PL/pgSQL function f() line 3 at RETURN".into());
        let e = spi_error(inner, "SELECT f()", 0, Query::Statement);
        assert_eq!(
            e.context.as_deref(),
            Some("PL/pgSQL function f() line 3 at RETURN\nSQL statement \"SELECT f()\"")
        );
        let e = spi_error(placed(None), "1/0", 7, Query::Expression);
        assert_eq!(e.context.as_deref(), Some("SQL expression \"1/0\""));
        let e = spi_error(placed(None), "1/x", 7, Query::Assignment("v"));
        assert_eq!(e.context.as_deref(), Some("PL/pgSQL assignment \"v := 1/x\""));
        assert!(e.internal.is_none());
        // A place inside the SELECT put before an expression is no place
        // PostgreSQL would show.
        let e = spi_error(placed(Some(3)), "x", 7, Query::Expression);
        assert!(e.internal.is_none() && e.context.is_some());
    }
}
