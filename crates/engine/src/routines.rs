//! User-defined functions and procedures in the catalog (ROUTINE-ROWS).
//!
//! A routine is a catalog row like a type (`RelEntry::routine`): created,
//! replaced and dropped inside transactions, logged, replayed and
//! invalidated as relations are, with an empty storage of its own that no
//! statement writes. Unlike a relation or a type its name is not unique in
//! its schema: routines are told apart by name and input argument types
//! (PostgreSQL's pg_proc key), so overloads are separate rows.
//!
//! The body is kept as the text the user wrote and bound again by each
//! statement that calls the routine, as a view's query is: a routine
//! follows the tables it reads through their renames and changes without
//! a stored plan to invalidate.

use snapscale_values::SqlType;

/// How an argument is passed (pg_proc.proargmodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgMode {
    In,
    Out,
    InOut,
    Variadic,
}

impl ArgMode {
    /// Whether the caller passes it (IN, INOUT, VARIADIC).
    pub fn is_input(self) -> bool {
        !matches!(self, ArgMode::Out)
    }

    /// Whether it is part of the result (OUT, INOUT).
    pub fn is_output(self) -> bool {
        matches!(self, ArgMode::Out | ArgMode::InOut)
    }

    /// pg_proc.proargmodes' letter.
    pub fn code(self) -> char {
        match self {
            ArgMode::In => 'i',
            ArgMode::Out => 'o',
            ArgMode::InOut => 'b',
            ArgMode::Variadic => 'v',
        }
    }

    pub fn of_code(c: u8) -> Option<ArgMode> {
        Some(match c {
            b'i' => ArgMode::In,
            b'o' => ArgMode::Out,
            b'b' => ArgMode::InOut,
            b'v' => ArgMode::Variadic,
            _ => return None,
        })
    }
}

/// One declared argument.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutineArg {
    /// Its name; empty for an unnamed one (read as `$n`).
    pub name: String,
    pub ty: SqlType,
    pub mode: ArgMode,
    /// The DEFAULT expression's text.
    pub default: Option<String>,
}

/// What a routine is (pg_proc.prokind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutineKind {
    Function,
    Procedure,
    /// CREATE AGGREGATE: its definition in [`RoutineDef::aggregate`].
    Aggregate,
}

/// pg_proc.provolatile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Volatility {
    Immutable,
    Stable,
    Volatile,
}

impl Volatility {
    pub fn code(self) -> char {
        match self {
            Volatility::Immutable => 'i',
            Volatility::Stable => 's',
            Volatility::Volatile => 'v',
        }
    }
}

/// A function's or procedure's definition.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutineDef {
    pub kind: RoutineKind,
    /// The language's name as pg_language has it (`sql`).
    pub language: String,
    pub args: Vec<RoutineArg>,
    /// The result type: a scalar, `void`, or a record of the output
    /// arguments or `TABLE (…)` columns (`result_columns`).
    pub returns: SqlType,
    /// RETURNS SETOF / TABLE.
    pub returns_set: bool,
    /// The columns of RETURNS TABLE (…) (kept as output arguments of
    /// their own mode in pg_proc: `t`).
    pub table_columns: Vec<(String, SqlType)>,
    /// The body as written; for a `BEGIN ATOMIC … END` body its statements,
    /// each ended by a semicolon.
    pub body: String,
    /// Whether the body was written `BEGIN ATOMIC … END` (SQL-standard,
    /// its statements in `body`).
    pub atomic: bool,
    pub volatility: Volatility,
    /// STRICT / RETURNS NULL ON NULL INPUT.
    pub strict: bool,
    pub security_definer: bool,
    pub leakproof: bool,
    /// PARALLEL: `s`, `r` or `u`.
    pub parallel: u8,
    /// COST (pg_proc.procost).
    pub cost: f32,
    /// ROWS (pg_proc.prorows; 0 for a function that returns no set).
    pub rows: f32,
    /// `RETURNS [SETOF] table`: that relation's name and its columns as they
    /// were when the function was made (the result's columns, which are
    /// not variables of the body, unlike OUT and TABLE columns).
    pub row_type: Option<RowType>,
    /// An aggregate's state and support functions (pg_aggregate); `None`
    /// for a function or procedure.
    pub aggregate: Option<Box<AggregateDef>>,
}

/// An aggregate's definition (PostgreSQL's pg_aggregate row): the
/// routine row keeps its name, arguments and result; this its state and
/// the functions that carry the state from row to row and finish it.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateDef {
    /// pg_aggregate.aggkind: `n` (normal), `o` (ordered-set) or `h`
    /// (hypothetical-set).
    pub kind: u8,
    /// How many of the arguments are direct ones (an ordered-set
    /// aggregate's, before ORDER BY).
    pub direct_args: u16,
    pub transfn: AggSupport,
    pub finalfn: Option<AggSupport>,
    pub combinefn: Option<AggSupport>,
    pub serialfn: Option<AggSupport>,
    pub deserialfn: Option<AggSupport>,
    /// The moving-aggregate functions (kept; a window recomputes instead).
    pub mtransfn: Option<AggSupport>,
    pub minvtransfn: Option<AggSupport>,
    pub mfinalfn: Option<AggSupport>,
    /// FINALFUNC_EXTRA, MFINALFUNC_EXTRA.
    pub final_extra: bool,
    pub mfinal_extra: bool,
    /// FINALFUNC_MODIFY, MFINALFUNC_MODIFY: `r`, `s` or `w`.
    pub final_modify: u8,
    pub mfinal_modify: u8,
    /// The state's type (STYPE), possibly polymorphic.
    pub state: SqlType,
    /// SSPACE.
    pub state_space: i32,
    /// MSTYPE and MSSPACE.
    pub mstate: Option<SqlType>,
    pub mstate_space: i32,
    /// INITCOND and MINITCOND as written (read as the state's type at
    /// each call, as PostgreSQL reads them).
    pub init: Option<String>,
    pub minit: Option<String>,
}

/// A function an aggregate calls: a user's routine by its oid (and its
/// name when the aggregate was made), or a built-in one by name (oid 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggSupport {
    pub name: String,
    pub oid: u32,
}

/// A relation's row type as a result ([`RoutineDef::row_type`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RowType {
    pub name: String,
    pub columns: Vec<(String, SqlType)>,
}

impl RoutineDef {
    /// The input argument types, which with the name identify the routine.
    pub fn input_types(&self) -> Vec<SqlType> {
        self.args.iter().filter(|a| a.mode.is_input()).map(|a| a.ty).collect()
    }

    /// The input types' names joined by commas, as PostgreSQL's messages
    /// list a routine's signature (`int4,text`).
    pub fn input_type_list(&self) -> String {
        self.input_types().iter().map(|t| t.name()).collect::<Vec<_>>().join(",")
    }

    /// The result's columns: the output arguments and TABLE columns, or a
    /// row type's.
    pub fn result_columns(&self) -> Vec<(String, SqlType)> {
        let mut out = self.output_columns();
        // Output parameters without names are the result's columnN, as
        // PostgreSQL names them, where there are several.
        if out.len() > 1 {
            for (i, (name, _)) in out.iter_mut().enumerate() {
                if name.is_empty() {
                    *name = format!("column{}", i + 1);
                }
            }
        }
        match &self.row_type {
            Some(r) if out.is_empty() => r.columns.clone(),
            _ => out,
        }
    }

    /// The output arguments and TABLE columns: the result's fields when
    /// there are any.
    pub fn output_columns(&self) -> Vec<(String, SqlType)> {
        let mut out: Vec<(String, SqlType)> =
            self.args.iter().filter(|a| a.mode.is_output()).map(|a| (a.name.clone(), a.ty)).collect();
        out.extend(self.table_columns.iter().cloned());
        out
    }
}

/// Whether this process has made or read a routine row: until one exists
/// a statement's function calls need not look in the catalog for one.
/// Never reset (a drop leaves it set: it only costs the lookup).
static DEFINED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a routine row exists, before it is inserted or applied.
pub fn note_defined() {
    // Release: pairs with the Acquire load in `may_exist`. The creator
    // stores before its catalog insert, and a reader that can see that
    // row took its snapshot after the commit, which follows the store.
    DEFINED.store(true, std::sync::atomic::Ordering::Release);
}

/// False while no routine row can exist in this process.
pub fn may_exist() -> bool {
    // Acquire: pairs with the Release store in `note_defined`.
    DEFINED.load(std::sync::atomic::Ordering::Acquire)
}
