//! Bound expressions and their evaluation.
//!
//! The binder resolves names and types once; evaluation then works on
//! column positions and parameter slots only. Arithmetic follows
//! PostgreSQL's result types and errors (22003 out of range, 22012
//! division by zero); comparisons with NULL are NULL; AND/OR use
//! three-valued logic.
//!
//! Long flat chains are flat here too, so that nothing recursive ever
//! walks their length: `a AND b AND c …` is one [`Expr::And`] over a list
//! (as PostgreSQL's parser flattens it), and `a + b - c || d …` is one
//! [`Expr::Chain`]: a first operand and the steps applied to the running
//! value, left to right. Everything else nests only as deep as the binder's
//! own recursion went, which `max_stack_depth` bounds; evaluation checks
//! the same bound ([`Ctx::stack`]).

use std::cmp::Ordering;
use std::sync::Arc;

use cast::describe;
use operators::{arith, concat, like};
use snapscale_engine::SessionView;
use snapscale_sqlstate::SqlState;
use snapscale_values::{int_arith, IntOp, Reg, SqlError, SqlType, Value, Zone};

use crate::stack::StackDepth;

pub use cast::{cast, cast_in};

mod advisory;
mod array;
mod cast;
mod datetime;
mod func;
mod operators;
pub mod populate;
pub mod quick;
mod replay;
pub mod scalar;
pub(crate) mod subquery;
pub mod user_types;
mod walk;

use func::func;

pub use advisory::{Advisory, AdvisoryOp};
pub use replay::{Pending, Replay};
pub use scalar::Scalar;
pub use walk::Rewrite;

/// Arithmetic operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Comparison operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, o: Ordering) -> bool {
        match self {
            Cmp::Eq => o.is_eq(),
            Cmp::Ne => o.is_ne(),
            Cmp::Lt => o.is_lt(),
            Cmp::Le => o.is_le(),
            Cmp::Gt => o.is_gt(),
            Cmp::Ge => o.is_ge(),
        }
    }

    /// The operator with its operands swapped (`1 < a` is `a > 1`).
    pub fn flipped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            other => other,
        }
    }
}

/// Scalar functions.
/// The shape of a subscript list: how many subscripts, which are slices
/// (`l:u`, bit k for subscript k), and of those which give a lower and an
/// upper bound. Each subscript contributes its expressions in order: an
/// index one, a slice its given bounds. With any slice, an index `i` reads
/// as the slice `1:i`, as in PostgreSQL.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Subscripts {
    pub count: u8,
    pub slices: u8,
    pub lowers: u8,
    pub uppers: u8,
}

impl Subscripts {
    /// Whether the result is a slice (an array) rather than an element.
    pub fn is_slice(self) -> bool {
        self.slices != 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Func {
    /// A call of the statement's PL/pgSQL function `k` (its `pl_calls`)
    /// with arguments that differ from row to row: the evaluation stops
    /// for it and the executor makes the call (PL-ROW-CALLS).
    PlRow(usize),
    Now,
    /// `clock_timestamp()`: the time now, not the transaction's.
    ClockTimestamp,
    /// `timezone(zone, value)`, `value AT TIME ZONE zone`.
    AtTimeZone,
    /// `date_trunc(unit, value [, zone])`.
    DateTrunc,
    /// `date_part(unit, value)`, `EXTRACT(unit FROM value)`.
    DatePart,
    /// `pg_is_in_recovery()`.
    InRecovery,
    /// `pg_last_wal_receive_lsn()`: NULL on a primary.
    LastReceiveLsn,
    /// `pg_last_wal_replay_lsn()`: NULL on a primary.
    LastReplayLsn,
    /// `pg_last_xact_replay_timestamp()`: NULL on a primary or before the
    /// first replayed commit.
    LastReplayTimestamp,
    /// pg_reload_conf(): asks the server to reload, as SIGHUP does.
    ReloadConf,
    /// `pg_current_wal_lsn()`: 55000 during recovery.
    CurrentWalLsn,
    /// `pg_current_snapshot()`: the statement's snapshot as
    /// `xmin:xmax:xip,...` (the xids it treats as running between its
    /// bounds).
    CurrentSnapshot,
    /// `version()`.
    Version,
    /// `current_user`, `session_user`, `user`, `current_role`.
    CurrentUser,
    /// `current_database()`, `current_catalog`.
    CurrentDatabase,
    /// `current_schema()`: the one schema, public.
    CurrentSchema,
    /// `current_setting(name [, missing_ok])`.
    CurrentSetting,
    /// `set_config(name, value, is_local)`.
    SetConfig,
    /// A function of its arguments alone ([`Scalar`]).
    Scalar(Scalar),
    /// `pg_backend_pid()`.
    BackendPid,
    /// `pg_trigger_depth()`: how many trigger functions deep the session
    /// is.
    TriggerDepth,
    /// `quote_literal(text)`.
    QuoteLiteral,
    Abs,
    /// The first argument that is not NULL; evaluated left to right, only
    /// as far as needed (`coalesce(1, 1/0)` is 1).
    Coalesce,
    /// Searched CASE: arguments are pairs of condition and result, then the
    /// ELSE result; only the conditions up to the first true one, and that
    /// one result, are evaluated.
    Case,
    /// `nullif(a, b)`: NULL if a = b, else a.
    NullIf,
    /// `greatest(…)` / `least(…)`: NULLs ignored, NULL if all are.
    Greatest,
    Least,
    /// `substring(text [FROM start] [FOR count])`, in characters, with
    /// SQL's rules for a start before 1.
    Substring,
    Lower,
    Upper,
    Length,
    /// `nextval(seq)`: arguments are the sequence's storage id, its name
    /// and whether it is logged (not temporary), as constants.
    NextVal,
    /// `currval(seq)`, arguments as NextVal's.
    CurrVal,
    /// `setval(seq, value, called)`: NextVal's arguments, then those two.
    SetVal,
    /// `lastval()`.
    LastVal,
    /// A sequence read as a relation (`SELECT * FROM seq`): NextVal's
    /// first two arguments, then the column (0: last_value, 1: log_cnt,
    /// 2: is_called), read when evaluated.
    SequenceRow,
    /// `ARRAY[a, b, …]` of elements.
    ArrayCons,
    /// `ARRAY[a, b, …]` of arrays: one more dimension.
    ArrayConsNested,
    /// `array || array` (`array_cat`).
    ArrayCat,
    /// `array || element` (`array_append`).
    ArrayAppend,
    /// `element || array` (`array_prepend`).
    ArrayPrepend,
    /// `array[i][j]…` or `array[l:u]…`: the array, then the subscripts'
    /// expressions as [`Subscripts`] lists them.
    Subscript(Subscripts),
    /// `array[…] := value` (UPDATE SET and INSERT targets): the array,
    /// the subscripts, then the value; the result is the whole array.
    SubscriptAssign(Subscripts),
    /// `jsonb[k]…`: the jsonb, then each subscript as text (`#>`).
    JsonbSubscript,
    /// `jsonb[k]… := value`: the jsonb, the subscripts as text, then the
    /// value; a NULL jsonb starts as an array when the first subscript was
    /// an integer, else an object.
    JsonbSubscriptAssign {
        first_is_int: bool,
    },
    /// `array_to_string(array, delimiter [, null_string])`.
    ArrayToString,
    /// `array_upper(array, dim)`, `array_lower`, `array_length`, and
    /// `cardinality(array)`, `array_ndims(array)`, `array_dims(array)`.
    ArrayUpper,
    ArrayLower,
    ArrayLength,
    Cardinality,
    ArrayNdims,
    ArrayDims,
    /// `array_position(array, value [, start])`, `array_positions`.
    ArrayPosition,
    ArrayPositions,
    /// `array_remove(array, value)`, `array_replace(array, from, to)`.
    ArrayRemove,
    ArrayReplace,
    /// `array_fill(value, dims [, lower bounds])`.
    ArrayFill,
    /// `trim_array(array, n)`.
    TrimArray,
    /// `width_bucket(value, thresholds)`.
    WidthBucketArray,
    /// `a @> b`, `a <@ b` (arguments swapped), `a && b` of arrays.
    ArrayContains,
    ArrayOverlap,
    /// `x op ANY (array)` / `x op ALL (array)`: arguments x and the array;
    /// `bpchar` as in [`Expr::Compare`].
    Any {
        op: Cmp,
        all: bool,
        bpchar: bool,
    },
    /// `text [NOT] [I]LIKE ANY|ALL (patterns)`: arguments the text and a
    /// text array.
    LikeAny {
        all: bool,
        negated: bool,
        icase: bool,
    },
    /// POSIX regular expression match (`~`, `~*`, `!~`, `!~*`).
    Regex {
        negated: bool,
        icase: bool,
    },
    /// `quote_ident(text)`.
    QuoteIdent,
    /// `(record).field`: the record's field number `0`.
    Field(usize),
    /// `ROW(a, b, …)`: its arguments as a record.
    MakeRecord,
    /// `pg_typeof(x)`: arguments x (evaluated for what it does) and its
    /// type's name, which is the result.
    TypeOf,
    /// `x IS [NOT] TRUE` (`Some(true)`), `IS [NOT] FALSE`, `IS [NOT]
    /// UNKNOWN` (`None`): never NULL.
    IsBool {
        want: Option<bool>,
        negated: bool,
    },
    /// `a IS [NOT] DISTINCT FROM b`: `=` with NULL a value like any other.
    IsDistinct {
        negated: bool,
        bpchar: bool,
    },
    /// A function that reads the catalog (`format_type`, `pg_get_indexdef`,
    /// …): evaluated through [`Ctx::catalog`].
    Catalog(CatalogFunc),
    /// `pg_advisory_lock` and its family; the key is one bigint argument
    /// or two integers.
    Advisory(Advisory),
}

/// The functions over the catalog that [`Catalog::call`] evaluates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CatalogFunc {
    FormatType,
    GetExpr,
    GetIndexDef,
    GetConstraintDef,
    GetUserById,
    TableIsVisible,
    TypeIsVisible,
    /// Visibility of the kinds of object this server has none of
    /// (functions, operators, conversions, …): never.
    FunctionIsVisible,
    CollationIsVisible,
    EncodingToChar,
    GetFunctionResult,
    GetFunctionArguments,
    GetFunctionDef,
    GetFunctionSqlBody,
    RelationIsPublishable,
    /// `pg_get_triggerdef`: no triggers exist (NULL).
    GetTriggerDef,
    /// `pg_isolation_test_session_is_blocked(pid, pids)`: what PostgreSQL's
    /// isolationtester asks to tell a waiting step.
    IsolationTestSessionIsBlocked,
    StatisticsObjDefColumns,
    ObjDescription,
    ColDescription,
    ShobjDescription,
    GetSerialSequence,
    HasPrivilege,
    RelationSize,
    SizePretty,
    ToReg(Reg),
    CurrentSchemas,
    MyTempSchema,
    IsOtherTempSchema,
    GetViewDef,
    GetRuleDef,
    TablespaceLocation,
    PostmasterStartTime,
    /// `age(xid)`: xids assigned since (PostgreSQL's, over 64-bit xids).
    XidAge,
}

/// Aggregate functions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// `string_agg(text, delimiter)`.
    StringAgg,
    /// `array_agg(x)`: NULLs kept.
    ArrayAgg,
    /// `array_agg(x)` of arrays: one more dimension; every input of one
    /// shape, none NULL or empty.
    ArrayAggArray,
    /// `bool_and` / `every`, `bool_or`.
    BoolAnd,
    BoolOr,
    /// `var_samp` / `variance`, `var_pop`, `stddev_samp` / `stddev`,
    /// `stddev_pop`.
    VarSamp,
    VarPop,
    StddevSamp,
    StddevPop,
    /// `json_agg(x)`, `jsonb_agg(x)`: NULLs kept (as json null).
    JsonAgg,
    JsonbAgg,
    /// `json_object_agg(key, value)`, `jsonb_object_agg(…)`: the value in
    /// the second-argument slot string_agg's delimiter uses.
    JsonObjectAgg,
    JsonbObjectAgg,
    /// A user-defined aggregate (CREATE AGGREGATE): its call is the
    /// Aggregate's or WindowCall's `user`.
    User,
}

impl AggFunc {
    /// The aggregate a call names (`count(*)` is `star`).
    pub fn named(name: &str, star: bool) -> Option<AggFunc> {
        Some(match name {
            "count" if star => AggFunc::CountStar,
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "avg" => AggFunc::Avg,
            "string_agg" => AggFunc::StringAgg,
            "array_agg" => AggFunc::ArrayAgg,
            "bool_and" | "every" => AggFunc::BoolAnd,
            "bool_or" => AggFunc::BoolOr,
            "var_samp" | "variance" => AggFunc::VarSamp,
            "var_pop" => AggFunc::VarPop,
            "stddev_samp" | "stddev" => AggFunc::StddevSamp,
            "stddev_pop" => AggFunc::StddevPop,
            "json_agg" => AggFunc::JsonAgg,
            "jsonb_agg" => AggFunc::JsonbAgg,
            "json_object_agg" => AggFunc::JsonObjectAgg,
            "jsonb_object_agg" => AggFunc::JsonbObjectAgg,
            _ => return None,
        })
    }
}

/// Window functions (aggregates are window functions too, over a window).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    /// `lag(x [, offset [, default]])`, `lead(…)`.
    Lag,
    Lead,
    /// `first_value(x)`, `last_value(x)` (the frame's last row: the current
    /// row's last peer).
    FirstValue,
    LastValue,
    /// An aggregate over the window frame: the partition up to the current
    /// row's last peer with ORDER BY, the whole partition without.
    Agg(AggFunc),
    /// `nth_value(x, n)`: the frame's n-th row's x.
    NthValue,
    /// `ntile(n)`: the row's bucket of n, as equal as can be.
    Ntile,
    /// `percent_rank()`: (rank - 1) / (rows - 1).
    PercentRank,
    /// `cume_dist()`: rows up to the current row's last peer / rows.
    CumeDist,
}

/// A bound expression.
#[derive(Clone, PartialEq, Debug)]
pub enum Expr {
    Const(Value),
    /// A column of the input row.
    Column(usize),
    /// A statement parameter ($1 is 0).
    Param(usize),
    /// What the statement's k-th call of a PL/pgSQL function returned: run
    /// before the statement, its arguments being constant (PL-CALLS).
    Called(usize),
    /// A left-associative chain: the first operand, then each step applied
    /// to the running value.
    Chain(Box<Expr>, Vec<Step>),
    Neg(Box<Expr>, SqlType),
    /// `bpchar`: compare without trailing blanks (char(n) semantics).
    Compare(Box<Expr>, Cmp, Box<Expr>, bool),
    /// Three-valued AND of all of them (never fewer than two).
    And(Vec<Expr>),
    /// Three-valued OR of all of them (never fewer than two).
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
    InList(Box<Expr>, Vec<Expr>, bool),
    Like(Box<Expr>, Box<Expr>, bool),
    /// Conversion to a type; `explicit` casts truncate char/varchar.
    Cast(Box<Expr>, SqlType, bool),
    Func(Func, Vec<Expr>),
    /// Result slot of an aggregate, as the binder writes it (the planner
    /// makes it a column of the Aggregate's rows).
    Agg(usize),
    /// Value of a group key, as the binder writes it (likewise a column).
    GroupKey(usize),
    /// Result of a window function call, as the binder writes it (the
    /// planner makes it a column of the Window operator's rows).
    Window(usize),
    /// Value of a set-returning call of the select list, as the binder
    /// writes it (likewise a column, of the ProjectSet operator's rows).
    SetFunc(usize),
    /// The k-th argument of the subquery this expression belongs to: a
    /// value of the enclosing query's row, passed in (PostgreSQL's
    /// PARAM_EXEC parameter).
    Outer(usize),
    /// A subquery used as a value (see [`SubLink`]).
    SubLink(Box<SubLink>),
    /// An operation that needs a user-defined type's definition: reading
    /// an enum label from text, `enum_first` / `enum_last` /
    /// `enum_range`, or a domain's constraints checked on a value.
    UserType(Arc<user_types::TypeOp>, Vec<Expr>),
}

/// What an enum operation ([`user_types::TypeOp::Enum`]) does with its
/// labels and arguments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EnumOp {
    /// Text to the label it names (enum_in).
    Input,
    First,
    Last,
    /// `enum_range(lo, hi)` (either NULL: unbounded).
    Range,
}

/// A subquery used as an expression. Its plan is the statement's subplan
/// number `plan` (the executor holds them); `args` are evaluated in the
/// enclosing row's context and are what the subquery's [`Expr::Outer`]
/// references read. Without arguments the rows are computed once per
/// statement (PostgreSQL's initplan); with them, once per distinct
/// argument values of an enclosing row (a correlated subplan).
#[derive(Clone, PartialEq, Debug)]
pub struct SubLink {
    pub kind: SubKind,
    pub plan: usize,
    pub args: Vec<Expr>,
}

/// What a subquery expression asks of its rows.
#[derive(Clone, PartialEq, Debug)]
pub enum SubKind {
    /// `EXISTS (…)`: true if there is a row.
    Exists,
    /// `(SELECT x …)`: the one row's value, NULL without a row; 21000 for
    /// more than one.
    Scalar,
    /// `lhs op ANY (…)` (`IN` is `= ANY`): true if the comparison holds for
    /// some row, NULL if it holds for none but one was NULL.
    Any { lhs: Expr, op: Cmp, bpchar: bool },
    /// `lhs op ALL (…)` (`NOT IN` is `<> ALL`).
    All { lhs: Expr, op: Cmp, bpchar: bool },
    /// `ARRAY(…)`: the rows' values as an array.
    Array,
    /// `ARRAY(SELECT array …)`: the rows' arrays stacked, one more
    /// dimension.
    ArrayOfArrays,
    /// A call of a user-defined SQL function: the subplan is its body, the
    /// arguments its parameters' values (ROUTINE-CALL in the README).
    Call(RoutineCall),
}

/// How a SQL function's body answers a call ([`SubKind::Call`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RoutineCall {
    /// STRICT: a NULL argument answers NULL (no rows) without running it.
    pub strict: bool,
    /// VOLATILE: run for every call, never answered from the last run's
    /// rows.
    pub volatile: bool,
    pub result: CallResult,
}

/// What a call of a SQL function gives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CallResult {
    /// The first row's value, NULL without one (PostgreSQL's rule for a
    /// function that returns no set: further rows are ignored).
    Value,
    /// `void`, whatever the body returns.
    Void,
    /// Every row's value, as an array (a set-returning call in a select
    /// list, which `unnest` turns into rows).
    Set,
}

/// The rows of subplans, as the executor computes them for the evaluator.
pub trait Subqueries {
    /// The first column of every row of subplan `plan` run with `args` as
    /// its outer values, its recursion counted from `stack`'s root (a
    /// function that calls itself nests subplans in one evaluation). With
    /// `fresh` it runs even if it last ran with the same arguments (a
    /// volatile function's body).
    fn rows(
        &self,
        plan: usize,
        args: &[Value],
        stack: StackDepth,
        fresh: bool,
    ) -> Result<Arc<[Value]>, SqlError>;

    /// Whether subplan `plan` run with `args` has a row (EXISTS): its run
    /// may stop at the first, as PostgreSQL's EXISTS subplan stops
    /// fetching once it has one.
    fn exists(&self, plan: usize, args: &[Value], stack: StackDepth) -> Result<bool, SqlError> {
        Ok(!self.rows(plan, args, stack, false)?.is_empty())
    }

    /// The first column of subplan `plan`'s rows as a set, for `x IN
    /// (SELECT …)` and `x NOT IN (SELECT …)` (PostgreSQL's hashed
    /// SubPlan); `None` where its values are not all plain scalars.
    fn row_set(
        &self,
        plan: usize,
        args: &[Value],
        stack: StackDepth,
    ) -> Result<Option<Arc<subquery::RowSet>>, SqlError> {
        Ok(subquery::RowSet::of(&self.rows(plan, args, stack, false)?).map(Arc::new))
    }
}

/// One step of a [`Expr::Chain`], applied to the running value.
#[derive(Clone, PartialEq, Debug)]
pub enum Step {
    /// `value op operand`, computed in `SqlType`.
    Arith(Arith, Expr, SqlType),
    /// `value || operand` (both already text).
    Concat(Expr),
    /// A conversion of the running value; `explicit` as in [`Expr::Cast`].
    Cast(SqlType, bool),
}

impl Step {
    fn operand(&self) -> Option<&Expr> {
        match self {
            Step::Arith(_, e, _) | Step::Concat(e) => Some(e),
            Step::Cast(..) => None,
        }
    }
}

/// What an expression is evaluated against.
pub struct Ctx<'a> {
    pub row: &'a [Value],
    pub params: &'a [Value],
    /// What the statement's PL/pgSQL calls returned ([`Expr::Called`]).
    pub called: &'a [Value],
    /// The transaction's timestamp (now() is stable within a transaction).
    pub now: i64,
    /// Where this evaluation's recursion started (`max_stack_depth`).
    pub stack: StackDepth,
    /// The database, for functions that report its state (replay
    /// progress); `None` where no statement runs (tests).
    pub db: Option<&'a snapscale_engine::database::Database>,
    /// The statement's snapshot, if it took one (`pg_current_snapshot()`).
    pub snapshot: Option<&'a snapscale_engine::Snapshot>,
    /// Who and where the session is, and its settings (`current_user`,
    /// `current_setting()`); `None` in tests.
    pub session: Option<&'a SessionView>,
    /// The arguments of the subquery being evaluated ([`Expr::Outer`]).
    pub outer: &'a [Value],
    /// Where subquery expressions get their rows; `None` where no
    /// statement runs (tests, defaults evaluated outside a query).
    pub subqueries: Option<&'a dyn Subqueries>,
    /// The catalog as the statement sees it: names for the oid alias types
    /// and the catalog functions; `None` outside a statement.
    pub catalog: Option<&'a dyn Catalog>,
    /// The journal of volatile calls, for a statement that may stop to
    /// wait for an advisory lock ([`Replay`]); `None` otherwise.
    pub replay: Option<&'a Replay>,
}

impl<'a> Ctx<'a> {
    /// A context over `row` alone: no parameters, session, database or
    /// subqueries (an index expression's, which reads only its row).
    pub fn detached(row: &'a [Value]) -> Ctx<'a> {
        Ctx {
            row,
            params: &[],
            called: &[],
            now: 0,
            stack: StackDepth::here(crate::stack::DEFAULT_MAX_STACK_DEPTH),
            db: None,
            snapshot: None,
            session: None,
            outer: &[],
            subqueries: None,
            catalog: None,
            replay: None,
        }
    }

    /// The session's TimeZone (UTC where no session runs).
    pub fn zone(&self) -> Zone {
        self.style().zone
    }

    /// The session's TimeZone, DateStyle and IntervalStyle (UTC, ISO and
    /// postgres where no session runs): how values become text.
    pub fn style(&self) -> snapscale_values::Style {
        self.session.map_or_else(snapscale_values::Style::default, |s| s.style)
    }
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

fn from_truth(t: Option<bool>) -> Value {
    t.map_or(Value::Null, Value::Bool)
}

/// Compares two non-NULL values; char(n) ignores trailing blanks.
pub fn compare(a: &Value, b: &Value, bpchar: bool) -> Result<Ordering, SqlError> {
    if bpchar {
        if let (Value::Text(x), Value::Text(y)) = (a, b) {
            return Ok(x.trim_end_matches(' ').cmp(y.trim_end_matches(' ')));
        }
    }
    a.compare(b).ok_or_else(|| {
        SqlError::new(SqlState::UNDEFINED_FUNCTION, "operator does not exist for these operand types")
    })
}

impl Expr {
    /// Evaluates the expression.
    pub fn eval(&self, cx: &Ctx<'_>) -> Result<Value, SqlError> {
        match self {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Column(i) => Ok(cx.row[*i].clone()),
            Expr::Param(i) => Ok(cx.params[*i].clone()),
            Expr::Called(k) => cx.called.get(*k).cloned().ok_or_else(|| {
                SqlError::new(SqlState::INTERNAL_ERROR, "a PL/pgSQL call's result read before it ran")
            }),
            Expr::Outer(i) => Ok(cx.outer[*i].clone()),
            // The planner rewrites both into columns of the Aggregate's rows.
            Expr::Agg(_) | Expr::GroupKey(_) | Expr::Window(_) | Expr::SetFunc(_) => {
                Err(SqlError::new(SqlState::INTERNAL_ERROR, "a group reference outside a grouped query"))
            }
            inner => match cx.stack.check() {
                Ok(()) => inner.eval_inner(cx),
                Err(e) => Err(e),
            },
        }
    }

    /// The value, borrowed where it already is (a column, a parameter, a
    /// constant, an outer value): a comparison reads its operands, and
    /// cloning a text operand per row was an allocation per row.
    pub(crate) fn operand<'v>(&'v self, cx: &'v Ctx<'_>) -> Result<std::borrow::Cow<'v, Value>, SqlError> {
        use std::borrow::Cow;
        Ok(match self {
            Expr::Const(v) => Cow::Borrowed(v),
            Expr::Column(i) => Cow::Borrowed(&cx.row[*i]),
            Expr::Param(i) => Cow::Borrowed(&cx.params[*i]),
            Expr::Outer(i) => Cow::Borrowed(&cx.outer[*i]),
            other => Cow::Owned(other.eval(cx)?),
        })
    }

    /// The inner nodes. A nest recurses through here, so this is a small
    /// frame: each arm is one out-of-line call with no temporaries of its
    /// own, so a nest costs the frames of the kinds it nests, not the
    /// locals of every kind (unoptimised builds do not share stack slots
    /// between arms).
    fn eval_inner(&self, cx: &Ctx<'_>) -> Result<Value, SqlError> {
        match self {
            Expr::Const(_)
            | Expr::Column(_)
            | Expr::Param(_)
            | Expr::Called(_)
            | Expr::Outer(_)
            | Expr::Agg(_)
            | Expr::GroupKey(_)
            | Expr::Window(_)
            | Expr::SetFunc(_) => unreachable!("leaves are evaluated by Expr::eval"),
            Expr::Chain(first, steps) => eval_chain(first, steps, cx),
            Expr::Neg(a, ty) => eval_neg(a, *ty, cx),
            Expr::Compare(a, op, b, bpchar) => eval_compare(a, *op, b, *bpchar, cx),
            Expr::And(args) => eval_junction(args, false, cx),
            Expr::Or(args) => eval_junction(args, true, cx),
            Expr::Not(a) => eval_not(a, cx),
            Expr::IsNull(a, negated) => eval_is_null(a, *negated, cx),
            Expr::InList(a, list, negated) => eval_in_list(a, list, *negated, cx),
            Expr::Like(a, p, negated) => eval_like(a, p, *negated, cx),
            Expr::Cast(a, ty, explicit) => eval_cast(a, *ty, *explicit, cx),
            Expr::Func(f, args) => eval_func(*f, args, cx),
            Expr::SubLink(link) => subquery::eval(link, cx),
            Expr::UserType(op, args) => user_types::eval(op, args, cx),
        }
    }

    /// True if the expression reads no row column (a constant or a
    /// parameter function): usable as an index probe.
    pub fn is_row_free(&self) -> bool {
        match self {
            Expr::Column(_) | Expr::Agg(_) | Expr::GroupKey(_) | Expr::Window(_) | Expr::SetFunc(_) => false,
            Expr::Const(_) | Expr::Param(_) | Expr::Called(_) | Expr::Outer(_) => true,
            Expr::SubLink(link) => {
                link.args.iter().all(Expr::is_row_free)
                    && match &link.kind {
                        SubKind::Any { lhs, .. } | SubKind::All { lhs, .. } => lhs.is_row_free(),
                        SubKind::Exists
                        | SubKind::Scalar
                        | SubKind::Array
                        | SubKind::ArrayOfArrays
                        | SubKind::Call(_) => true,
                    }
            }
            Expr::Chain(first, steps) => {
                first.is_row_free() && steps.iter().filter_map(Step::operand).all(Expr::is_row_free)
            }
            Expr::Compare(a, _, b, _) | Expr::Like(a, b, _) => a.is_row_free() && b.is_row_free(),
            Expr::And(args) | Expr::Or(args) | Expr::Func(_, args) | Expr::UserType(_, args) => {
                args.iter().all(Expr::is_row_free)
            }
            Expr::Neg(a, _) | Expr::Not(a) | Expr::IsNull(a, _) | Expr::Cast(a, _, _) => a.is_row_free(),
            Expr::InList(a, l, _) => a.is_row_free() && l.iter().all(Expr::is_row_free),
        }
    }

    /// Appends a step to this expression: a chain grows in place rather
    /// than nesting (the binder folds `a + b + c …` this way).
    pub fn then(self, step: Step) -> Expr {
        match self {
            Expr::Chain(first, mut steps) => {
                steps.push(step);
                Expr::Chain(first, steps)
            }
            other => Expr::Chain(Box::new(other), vec![step]),
        }
    }

    /// `self AND other` (`or`: OR), flattened into one list.
    pub fn junction(self, other: Expr, or: bool) -> Expr {
        let mut args = match (self, or) {
            (Expr::And(args), false) | (Expr::Or(args), true) => args,
            (e, _) => vec![e],
        };
        match (other, or) {
            (Expr::And(more), false) | (Expr::Or(more), true) => args.extend(more),
            (e, _) => args.push(e),
        }
        if or {
            Expr::Or(args)
        } else {
            Expr::And(args)
        }
    }
}

#[inline(never)]
fn eval_chain(first: &Expr, steps: &[Step], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let mut value = first.eval(cx)?;
    for step in steps {
        value = match step {
            Step::Arith(op, e, ty) => arith(&value, *op, &e.eval(cx)?, *ty, cx.zone())?,
            Step::Concat(e) => concat(value, e.eval(cx)?, cx.style())?,
            Step::Cast(ty, explicit) => cast_in(value, *ty, *explicit, cx)?,
        };
    }
    Ok(value)
}

#[inline(never)]
fn eval_neg(a: &Expr, ty: SqlType, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    Ok(match a.eval(cx)? {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(int_arith(ty, IntOp::Sub, 0, i)?),
        Value::Float(f) => Value::Float(-f),
        Value::Numeric(n) => Value::Numeric(n.neg()),
        Value::Float4(f) => Value::Float4(-f),
        Value::Interval(i) => {
            let neg = (|| {
                Some(snapscale_values::Interval {
                    months: i.months.checked_neg()?,
                    days: i.days.checked_neg()?,
                    micros: i.micros.checked_neg()?,
                })
            })();
            Value::Interval(
                neg.ok_or_else(|| SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range"))?,
            )
        }
        _ => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                "operator does not exist: - for this type",
            ))
        }
    })
}

#[inline(never)]
fn eval_not(a: &Expr, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    Ok(from_truth(truth(&a.eval(cx)?).map(|t| !t)))
}

#[inline(never)]
fn eval_is_null(a: &Expr, negated: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    Ok(Value::Bool(matches!(a.eval(cx)?, Value::Null) != negated))
}

#[inline(never)]
fn eval_cast(a: &Expr, ty: SqlType, explicit: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    cast_in(a.eval(cx)?, ty, explicit, cx)
}

#[inline(never)]
fn eval_compare(a: &Expr, op: Cmp, b: &Expr, bpchar: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let (a, b) = (a.operand(cx)?, b.operand(cx)?);
    if matches!(*a, Value::Null) || matches!(*b, Value::Null) {
        return Ok(Value::Null);
    }
    Ok(Value::Bool(op.holds(compare(&a, &b, bpchar)?)))
}

/// AND (`or` false): FALSE wins, else NULL if any was NULL, else TRUE.
/// OR: TRUE wins, else NULL if any was NULL, else FALSE.
#[inline(never)]
fn eval_junction(args: &[Expr], or: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let mut unknown = false;
    for a in args {
        match truth(&a.eval(cx)?) {
            Some(t) if t == or => return Ok(Value::Bool(or)),
            None => unknown = true,
            Some(_) => {}
        }
    }
    Ok(from_truth((!unknown).then_some(!or)))
}

#[inline(never)]
fn eval_in_list(a: &Expr, list: &[Expr], negated: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let a = a.eval(cx)?;
    if matches!(a, Value::Null) {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for e in list {
        let v = e.eval(cx)?;
        if matches!(v, Value::Null) {
            saw_null = true;
        } else if compare(&a, &v, false)?.is_eq() {
            return Ok(Value::Bool(!negated));
        }
    }
    Ok(if saw_null { Value::Null } else { Value::Bool(negated) })
}

#[inline(never)]
fn eval_like(a: &Expr, p: &Expr, negated: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    Ok(match (a.eval(cx)?, p.eval(cx)?) {
        (Value::Text(s), Value::Text(p)) => Value::Bool(like(&s, &p)? != negated),
        // bytea: byte by byte, each byte a character.
        (Value::Bytes(s), Value::Bytes(p)) => {
            Value::Bool(like(&scalar::latin1(&s), &scalar::latin1(&p))? != negated)
        }
        _ => Value::Null,
    })
}

#[inline(never)]
fn eval_func(f: Func, args: &[Expr], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    match f {
        Func::Coalesce => {
            for a in args {
                match a.eval(cx)? {
                    Value::Null => {}
                    v => return Ok(v),
                }
            }
            return Ok(Value::Null);
        }
        Func::Case => {
            let (otherwise, pairs) = args.split_last().expect("the binder gives CASE an ELSE");
            for pair in pairs.chunks_exact(2) {
                if passes(&pair[0], cx)? {
                    return pair[1].eval(cx);
                }
            }
            return otherwise.eval(cx);
        }
        _ => {}
    }
    if let Func::Scalar(s) = f {
        if !s.volatile {
            return eval_scalar(s, args, cx);
        }
    }
    let vals = args.iter().map(|a| a.eval(cx)).collect::<Result<Vec<_>, _>>()?;
    func(f, vals, cx)
}

/// A built-in function that answers the same for the same arguments, its
/// arguments gathered on the stack: a vector for them was an allocation
/// per call and row (a `doc ->> 'k'` filter's). A volatile one goes
/// through `func`, which journals its calls (EVAL-REPLAY).
#[inline(never)]
fn eval_scalar(s: Scalar, args: &[Expr], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let vals = args.iter().map(|a| a.eval(cx)).collect::<Result<smallvec::SmallVec<[Value; 4]>, _>>()?;
    s.apply(&vals, cx.style())
}

/// The catalog as the running statement sees it: names of catalog objects
/// (what the oid alias types read and print) and the catalog functions.
pub trait Catalog {
    /// The object of kind `reg` that `name` names (as written, possibly
    /// schema-qualified or quoted), with its oid and its name as it prints.
    fn oid_of(&self, reg: Reg, name: &str) -> Option<(u32, String)>;
    /// The name of object `oid` of kind `reg`, as it prints.
    fn name_of(&self, reg: Reg, oid: u32) -> Option<String>;
    /// Evaluates a catalog function.
    fn call(&self, f: CatalogFunc, args: &[Value]) -> Result<Value, SqlError>;
}

/// Evaluates a WHERE clause: only TRUE passes.
pub fn passes(e: &Expr, cx: &Ctx<'_>) -> Result<bool, SqlError> {
    Ok(matches!(e.eval(cx)?, Value::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Ctx<'static> {
        Ctx::detached(&[])
    }

    #[test]
    fn like_patterns() {
        let like = |s, p| like(s, p).unwrap();
        assert!(like("abc", "a%"));
        assert!(like("abc", "_b_"));
        assert!(!like("abc", "a_"));
        assert!(like("a%c", "a\\%c"));
        assert!(!like("abd", "a\\%c"));
        assert!(like("", "%"));
        assert!(like("abcbd", "%b%d"));
        assert!(like("aXbXc", "a%b%c"));
        assert!(!like("aXbXc", "a%c%b"));
        assert!(like("ab", "a%%b"));
        assert!(!like("abc", ""));
        // A trailing escape is an error only where matching reaches it.
        assert!(!like("a", "a\\"));
        assert_eq!(super::like("ab", "a\\").unwrap_err().code, "22025");
    }

    #[test]
    fn like_is_not_exponential() {
        let s = "a".repeat(5_000);
        let p = format!("{}b", "%a".repeat(2_000));
        assert!(!like(&s, &p).unwrap());
    }

    #[test]
    fn three_valued_logic() {
        let cx = cx();
        let null = || Expr::Const(Value::Null);
        let f = || Expr::Const(Value::Bool(false));
        let t = || Expr::Const(Value::Bool(true));
        assert_eq!(Expr::And(vec![null(), f()]).eval(&cx).unwrap(), Value::Bool(false));
        assert_eq!(Expr::And(vec![null(), t()]).eval(&cx).unwrap(), Value::Null);
        assert_eq!(Expr::And(vec![t(), t(), t()]).eval(&cx).unwrap(), Value::Bool(true));
        assert_eq!(Expr::Or(vec![null(), t()]).eval(&cx).unwrap(), Value::Bool(true));
        assert_eq!(Expr::Or(vec![null(), f()]).eval(&cx).unwrap(), Value::Null);
        assert_eq!(Expr::Not(Box::new(null())).eval(&cx).unwrap(), Value::Null);
    }

    #[test]
    fn a_long_chain_is_flat() {
        let one = || Expr::Const(Value::Int(1));
        let mut e = one();
        for _ in 0..100_000 {
            e = e.then(Step::Arith(Arith::Add, one(), SqlType::Int4));
        }
        assert_eq!(e.eval(&cx()).unwrap(), Value::Int(100_001));
        let e = (0..100_000).fold(Expr::Const(Value::Bool(false)), |acc, _| {
            acc.junction(Expr::Const(Value::Bool(false)), true)
        });
        assert_eq!(e.eval(&cx()).unwrap(), Value::Bool(false));
        let copy = e.clone();
        assert_eq!(copy, e);
    }

    #[test]
    fn deep_nesting_is_54001_not_an_overflow() {
        let mut e = Expr::Const(Value::Int(1));
        for _ in 0..20_000 {
            e = Expr::Neg(Box::new(e), SqlType::Int4);
        }
        let small = Ctx { stack: StackDepth::here(64 << 10), ..cx() };
        assert_eq!(e.eval(&small).unwrap_err().code, "54001");
        // Dropping it is the binder's bound; here, take it apart by hand.
        while let Expr::Neg(inner, _) = e {
            e = *inner;
        }
    }
}
