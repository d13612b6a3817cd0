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
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
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
            self.declare(d).await.map_err(|e| self.in_context(e, d.line, "statement block"))?;
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
                for (name, value) in [("sqlstate", e.code.code().to_owned()), ("sqlerrm", e.message.clone())]
                {
                    self.vars.push(Var {
                        name: Name::Borrowed(name),
                        ty: SqlType::Text,
                        value: Value::Text(value),
                        constant: false,
                        not_null: false,
                        record: None,
                        is_record: false,
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
            let cols = self.columns_of(d, || format!("SELECT NULL::{}", d.ty)).await?;
            match cols[0].1 {
                // A variable of a composite type is a row of its fields,
                // NULL as a whole until assigned.
                SqlType::Composite(u) => {
                    let fields = self.composite_fields(d, u)?;
                    let values = nulls(fields.len());
                    (SqlType::Composite(u), Some(Record { fields, values, null: true }))
                }
                ty => (ty, None),
            }
        };
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
            self.store(k, v, from)?;
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
        // plus 0 to 2): a declaration's address twice, plus 3.
        let key = (d as *const Decl as usize) * 2 + 3;
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
        let key = (d as *const Decl as usize) * 2 + 3;
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
            Stmt::ForEach { label, var, array, body, line } => {
                let (v, _) =
                    self.value(array).await.map_err(|e| self.in_context(e, *line, "FOREACH over array"))?;
                let items = match v {
                    Value::Null => {
                        return Err(self.in_context(
                            SqlError::new(
                                SqlState::NULL_VALUE_NOT_ALLOWED,
                                "FOREACH expression must not be null",
                            ),
                            *line,
                            "FOREACH over array",
                        ))
                    }
                    Value::Array(a) => a.to_vec(),
                    _ => {
                        return Err(self.in_context(
                            SqlError::new(
                                SqlState::DATATYPE_MISMATCH,
                                "FOREACH expression must yield an array, not type",
                            ),
                            *line,
                            "FOREACH over array",
                        ))
                    }
                };
                let k = self.lookup(var).ok_or_else(|| not_variable(var))?;
                let ty = self.vars[k].ty;
                for item in items {
                    self.spi.xact.check_cancel()?;
                    let item = crate::expr::cast(item, ty, false, self.spi.xact.session_style())?;
                    self.vars[k].value = item;
                    if let Some(flow) = self.loop_turn(label, body).await? {
                        return Ok(flow);
                    }
                }
                Ok(Flow::Next)
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
            Stmt::Return { expr, line } => {
                if let Some(e) = expr {
                    if self.returns == SqlType::Void {
                        return Err(SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            "RETURN cannot have a parameter in function returning void",
                        ));
                    }
                    let (v, from) = self.value(e).await.map_err(|e| self.in_context(e, *line, "RETURN"))?;
                    self.result = self
                        .convert(v, from, self.returns)
                        .map_err(|e| self.in_context(e, *line, "RETURN"))?;
                }
                self.returned = true;
                Ok(Flow::Return)
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
                // A row of the set has the result's columns.
                let want =
                    if !self.row_types.is_empty() { self.row_types.len() } else { self.outs.len().max(1) };
                if let Value::Record(fields) = &row {
                    if fields.len() != want {
                        return Err(self.in_context(wrong_width(fields.len(), want), *line, "RETURN NEXT"));
                    }
                }
                self.set.as_mut().expect("checked").push(row);
                Ok(Flow::Next)
            }
            Stmt::ReturnQuery { query, line } => {
                self.in_set(*line, "RETURN QUERY")?;
                let (columns, rows) =
                    self.query_rows(query).await.map_err(|e| self.in_context(e, *line, "RETURN QUERY"))?;
                let wanted: Vec<SqlType> = if !self.row_types.is_empty() {
                    self.row_types.clone()
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
                            "returned_sqlstate" => Value::Text(e.code.code().into()),
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
                            "pg_context" => Value::Text(self.context(*line, "GET DIAGNOSTICS")),
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
                if let Some(k) = k {
                    self.targets.insert(key, k);
                }
                k
            }
        };
        if let Some(k) = found {
            if self.vars[k].is_record {
                return self.store_record(k, v, expr);
            }
            return self.store(k, v, from);
        }
        self.store_field(target, v, from)
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
        crate::expr::cast(v, to, false, self.spi.xact.session_style())
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
                if let SqlType::Composite(_) = self.vars[k].ty {
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
    fn compile(&self, text: &str) -> Result<Compiled, SqlError> {
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
                let mut err = None;
                let _ = ast::visit_expressions_mut(statement, |e| {
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
        Ok(Compiled { parsed, sources, declared, planned: None, fields: None })
    }

    /// The variable (or record field) expression `e` names, if any.
    fn reference(&self, e: &ast::Expr) -> Result<Option<Src>, SqlError> {
        let name =
            |i: &ast::Ident| if i.quote_style.is_some() { i.value.clone() } else { i.value.to_lowercase() };
        Ok(match e {
            ast::Expr::Identifier(i) => self.lookup(&name(i)).map(Src::Var),
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
        self.finish_statement(out, into, true)
    }

    fn finish_statement(
        &mut self,
        out: Output,
        into: Option<&IntoTargets>,
        is_static: bool,
    ) -> Result<(), SqlError> {
        match (out, into) {
            (Output::Rows { columns, rows, tag }, Some(into)) => {
                if into.strict && rows.len() != 1 {
                    return Err(if rows.is_empty() {
                        SqlError::new(SqlState::NO_DATA_FOUND, "query returned no rows")
                    } else {
                        SqlError::new(SqlState::TOO_MANY_ROWS, "query returned more than one row")
                            .with_hint("Make sure the query returns a single row, or use LIMIT 1.")
                    });
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
        let out = self.run_dynamic(query, using).await?;
        self.finish_statement(out, into, false)
    }

    async fn run_dynamic(&mut self, query: &Sql, using: &[Sql]) -> Result<Output, SqlError> {
        self.run_dynamic_plan(query, using).await.map(|(out, _, _)| out)
    }

    /// EXECUTE's statement run: its output, whether its plan could run
    /// backward, and its text.
    async fn run_dynamic_plan(
        &mut self,
        query: &Sql,
        using: &[Sql],
    ) -> Result<(Output, bool, String), SqlError> {
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
        loop {
            let planned = self.spi.plan(&parsed, &declared).map_err(named)?;
            if self.spi.current(&planned, true).await.map_err(named)? {
                let out = self.spi.run(&planned, &params).await.map_err(named)?;
                return Ok((out, planned.scrollable(), text));
            }
        }
    }

    /// RAISE.
    async fn raise(&mut self, r: &Raise) -> Result<(), SqlError> {
        let line = r.line;
        let level = r.level.as_str();
        // A bare RAISE re-throws the error being handled.
        if r.message.is_none() && r.condition.is_none() && r.options.is_empty() {
            return match self.handling.last() {
                Some(e) => Err(e.clone()),
                None => Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "RAISE without parameters cannot be used outside an exception handler",
                )),
            };
        }
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
        let mut code = match &r.condition {
            Some(c) => Some(condition_state(c)?),
            None => None,
        };
        let mut message = match &r.message {
            Some(fmt) => Some(format_raise(fmt, &args)?),
            None => None,
        };
        let (mut detail, mut hint) = (None, None);
        for (name, value) in &r.options {
            let (v, ty) = self.value(value).await.map_err(|e| self.in_context(e, line, "RAISE"))?;
            if matches!(v, Value::Null) {
                return Err(self.in_context(
                    SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "RAISE statement option cannot be null"),
                    line,
                    "RAISE",
                ));
            }
            let text =
                v.try_text_as(ty, style).map_err(|e| self.in_context(e, line, "RAISE"))?.unwrap_or_default();
            match name.as_str() {
                "message" => message = Some(text),
                "detail" => detail = Some(text),
                "hint" => hint = Some(text),
                "errcode" => {
                    code = Some(condition_state(&if text.len() == 5
                        && text.chars().all(|c| c.is_ascii_alphanumeric())
                        && text.chars().any(|c| c.is_ascii_digit())
                    {
                        format!("sqlstate:{text}")
                    } else {
                        text
                    })?)
                }
                "column" | "constraint" | "datatype" | "table" | "schema" => {}
                other => return Err(syntax(format!("unrecognized RAISE statement option \"{other}\""))),
            }
        }
        let code = code.unwrap_or(if level == "exception" {
            SqlState::RAISE_EXCEPTION
        } else {
            SqlState::SUCCESSFUL_COMPLETION
        });
        let message = message.unwrap_or_else(|| match &r.condition {
            Some(c) => c.strip_prefix("sqlstate:").unwrap_or(c).to_owned(),
            None => String::new(),
        });
        match level {
            "exception" => {
                let mut e = SqlError::new(code, message);
                e.detail = detail;
                e.hint = hint;
                Err(self.in_context(e, line, "RAISE"))
            }
            "warning" => {
                let code = if r.condition.is_none() && !r.options.iter().any(|(n, _)| n == "errcode") {
                    SqlState::WARNING
                } else {
                    code
                };
                self.spi.xact.notice_at("WARNING", code, message, detail);
                Ok(())
            }
            "notice" => {
                self.spi.xact.notice_at("NOTICE", code, message, detail);
                Ok(())
            }
            "info" => {
                self.spi.xact.notice_at("INFO", code, message, detail);
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

/// Whether handler `h` catches `e` (OTHERS catches all but a cancel and a
/// failed ASSERT).
fn catches(h: &Handler, e: &SqlError) -> bool {
    h.conditions.iter().any(|c| {
        if c == "others" {
            return !matches!(e.code, SqlState::QUERY_CANCELED | SqlState::ASSERT_FAILURE);
        }
        match condition_state(c) {
            Ok(state) => {
                // A class's name (`integrity_constraint_violation`) catches
                // every state of its class.
                state == e.code || (state.code().ends_with("000") && state.class() == e.code.class())
            }
            Err(_) => false,
        }
    })
}

/// The state a condition name or `sqlstate:XXXXX` stands for.
fn condition_state(c: &str) -> Result<SqlState, SqlError> {
    if let Some(code) = c.strip_prefix("sqlstate:") {
        return SqlState::from_code(code).ok_or_else(|| {
            SqlError::new(SqlState::SYNTAX_ERROR, format!("invalid SQLSTATE code \"{code}\""))
        });
    }
    SqlState::named(c).next().ok_or_else(|| {
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
