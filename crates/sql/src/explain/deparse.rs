//! Expressions as EXPLAIN prints them, in PostgreSQL's style: every
//! operator's expression in parentheses, constants other than integers,
//! numbers and Booleans quoted with their type after `::`, columns by
//! name (qualified by their relation's name where the plan reads several),
//! statement parameters as `$n`, subqueries by their subplan's name.

use snapscale_values::{SqlType, Value};

use crate::expr::{Arith, Cmp, Expr, Func, Step, SubKind};
use crate::plan::{Aggregate, SortKey};

/// A column of a node's input row, as expressions above name it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Col {
    /// A relation's column: the relation's name in the plan, its own.
    Var { rel: String, name: String },
    /// A computed value, already written out.
    Expr(String),
    /// A value the node being shown computes itself, written out (no
    /// parentheses: it is not a reference).
    Raw(String),
}

/// Names subplan `plan` of `kind` (uncorrelated or not), given the values
/// passed to it written out.
pub(crate) type NameSubplan<'a> = &'a dyn Fn(usize, &SubKind, bool, Vec<String>) -> String;

/// How the expressions of one node are written: its input's columns, and
/// whether a column is qualified by its relation's name.
pub(crate) struct Deparser<'a> {
    pub cols: &'a [Col],
    pub prefix: bool,
    /// How the statement's subplans are named (`(SubPlan 1)`, `$0`),
    /// given the values passed to them written out.
    pub sublinks: NameSubplan<'a>,
    /// The values of the enclosing row a subplan reads, written out in
    /// the enclosing node's terms (PostgreSQL shows the column, not the
    /// parameter).
    pub outer: &'a [String],
    /// Whether the enclosing node's columns are qualified.
    pub upper_prefix: bool,
}

/// An identifier, quoted where PostgreSQL's quote_ident would quote it.
pub(crate) fn ident(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$');
    if plain && !RESERVED.contains(&name) {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Words quote_ident quotes because the grammar reserves them (the ones a
/// column or table is likely to be named).
const RESERVED: &[&str] = &[
    "all",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "case",
    "cast",
    "check",
    "column",
    "constraint",
    "create",
    "default",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "intersect",
    "into",
    "limit",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "primary",
    "references",
    "select",
    "table",
    "then",
    "to",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "when",
    "where",
    "window",
    "with",
];

/// A constant as PostgreSQL's deparser writes one.
pub(crate) fn constant(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) if *n >= 0 && *n <= i64::from(i32::MAX) => n.to_string(),
        Value::Int(n) if *n >= i64::from(i32::MIN) => format!("'{n}'::integer"),
        Value::Int(n) => format!("'{n}'::bigint"),
        Value::Numeric(_) => {
            let text = v.to_text().unwrap_or_default();
            if text.starts_with('-') || !text.contains('.') {
                format!("'{text}'::numeric")
            } else {
                text
            }
        }
        Value::Float(_) => format!("{}::double precision", quoted(&v.to_text().unwrap_or_default())),
        Value::Float4(_) => format!("{}::real", quoted(&v.to_text().unwrap_or_default())),
        Value::Text(s) => format!("{}::text", quoted(s)),
        Value::Date(_) => format!("{}::date", quoted(&v.to_text().unwrap_or_default())),
        Value::Timestamp(_) => {
            format!("{}::timestamp without time zone", quoted(&v.to_text().unwrap_or_default()))
        }
        Value::TimestampTz(_) => {
            format!("{}::timestamp with time zone", quoted(&v.to_text().unwrap_or_default()))
        }
        Value::Interval(_) => format!("{}::interval", quoted(&v.to_text().unwrap_or_default())),
        Value::Json(_) => format!("{}::json", quoted(&v.to_text().unwrap_or_default())),
        Value::Jsonb(_) => format!("{}::jsonb", quoted(&v.to_text().unwrap_or_default())),
        other => quoted(&other.to_text().unwrap_or_default()),
    }
}

/// A string literal.
fn quoted(s: &str) -> String {
    if s.contains('\\') {
        format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

pub(crate) fn cmp_op(op: Cmp) -> &'static str {
    match op {
        Cmp::Eq => "=",
        Cmp::Ne => "<>",
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
    }
}

fn arith_op(op: Arith) -> &'static str {
    match op {
        Arith::Add => "+",
        Arith::Sub => "-",
        Arith::Mul => "*",
        Arith::Div => "/",
        Arith::Rem => "%",
    }
}

/// The name a type is written with after `::`.
fn type_name(ty: SqlType) -> String {
    match ty {
        SqlType::Varchar(Some(n)) => format!("character varying({n})"),
        SqlType::Char(n) => format!("character({n})"),
        other => other.name().to_owned(),
    }
}

impl Deparser<'_> {
    /// `e` written out.
    pub(crate) fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Const(v) => constant(v),
            Expr::Column(i) => self.column(*i),
            Expr::Param(i) => format!("${}", i + 1),
            Expr::Called(k) => format!("$called{}", k + 1),
            Expr::Outer(k) => self.outer.get(*k).cloned().unwrap_or_else(|| format!("${}", k + 1)),
            Expr::Chain(first, steps) => {
                let mut out = self.expr(first);
                for step in steps {
                    out = match step {
                        Step::Arith(op, operand, _) => {
                            format!("({out} {} {})", arith_op(*op), self.expr(operand))
                        }
                        Step::Concat(operand) => format!("({out} || {})", self.expr(operand)),
                        Step::Cast(ty, _) => format!("({out})::{}", type_name(*ty)),
                    };
                }
                out
            }
            Expr::Neg(x, _) => format!("(- {})", self.expr(x)),
            Expr::Compare(a, op, b, _) => format!("({} {} {})", self.expr(a), cmp_op(*op), self.expr(b)),
            Expr::And(list) => self.joined(list, " AND "),
            Expr::Or(list) => self.joined(list, " OR "),
            Expr::Not(x) => format!("(NOT {})", self.expr(x)),
            Expr::IsNull(x, negated) => {
                format!("({} IS {}NULL)", self.expr(x), if *negated { "NOT " } else { "" })
            }
            Expr::InList(x, list, negated) => {
                let items: Vec<String> = list.iter().map(|e| self.expr(e)).collect();
                let (op, q) = if *negated { ("<>", "ALL") } else { ("=", "ANY") };
                format!("({} {op} {q} (ARRAY[{}]))", self.expr(x), items.join(", "))
            }
            Expr::Like(x, pattern, negated) => {
                format!("({} {} {})", self.expr(x), if *negated { "!~~" } else { "~~" }, self.expr(pattern))
            }
            Expr::Cast(x, ty, _) => match &**x {
                Expr::Const(v) if !matches!(v, Value::Null) => {
                    format!("{}::{}", quoted(&v.to_text().unwrap_or_default()), type_name(*ty))
                }
                Expr::Const(_) => format!("NULL::{}", type_name(*ty)),
                inner => format!("({})::{}", self.expr(inner), type_name(*ty)),
            },
            Expr::Func(f, args) => self.func(f, args),
            Expr::Agg(i) => format!("$agg{}", i + 1),
            Expr::GroupKey(i) => format!("$key{}", i + 1),
            Expr::Window(i) => format!("$window{}", i + 1),
            Expr::SetFunc(i) => format!("$srf{}", i + 1),
            Expr::SubLink(s) => {
                let args = Deparser { prefix: self.upper_prefix, ..*self };
                let args = s.args.iter().map(|a| args.expr(a)).collect();
                let name = (self.sublinks)(s.plan, &s.kind, s.args.is_empty(), args);
                match &s.kind {
                    SubKind::Any { op: Cmp::Eq, .. } if s.args.is_empty() => format!("({name})"),
                    SubKind::All { op: Cmp::Ne, .. } if s.args.is_empty() => format!("(NOT ({name}))"),
                    // PostgreSQL 15 names the subplan alone; its
                    // comparison is the subplan's own.
                    SubKind::Exists | SubKind::Scalar if s.args.is_empty() => name,
                    _ => format!("({name})"),
                }
            }
            Expr::UserType(_, args) => args.first().map_or_else(String::new, |a| self.expr(a)),
        }
    }

    fn column(&self, i: usize) -> String {
        match self.cols.get(i) {
            Some(Col::Var { rel, name }) if self.prefix && !rel.is_empty() => {
                format!("{}.{}", ident(rel), ident(name))
            }
            Some(Col::Var { name, .. }) => ident(name),
            // A value an input node computed: in parentheses, as
            // PostgreSQL writes a reference to a non-column output.
            Some(Col::Expr(text)) => format!("({text})"),
            Some(Col::Raw(text)) => text.clone(),
            None => "?column?".into(),
        }
    }

    fn joined(&self, list: &[Expr], sep: &str) -> String {
        let parts: Vec<String> = list.iter().map(|e| self.expr(e)).collect();
        format!("({})", parts.join(sep))
    }

    fn args(&self, args: &[Expr]) -> String {
        args.iter().map(|a| self.expr(a)).collect::<Vec<_>>().join(", ")
    }

    fn func(&self, f: &Func, args: &[Expr]) -> String {
        let call = |name: &str| format!("{name}({})", self.args(args));
        match f {
            Func::Scalar(s) => call(s.name),
            Func::Coalesce => format!("COALESCE({})", self.args(args)),
            Func::Greatest => format!("GREATEST({})", self.args(args)),
            Func::Least => format!("LEAST({})", self.args(args)),
            Func::NullIf => format!("NULLIF({})", self.args(args)),
            Func::Case => {
                let mut out = String::from("CASE");
                let mut pairs = args.chunks_exact(2);
                for pair in &mut pairs {
                    out += &format!(" WHEN {} THEN {}", self.expr(&pair[0]), self.expr(&pair[1]));
                }
                if let [otherwise] = pairs.remainder() {
                    out += &format!(" ELSE {}", self.expr(otherwise));
                }
                out + " END"
            }
            Func::ArrayCons | Func::ArrayConsNested => format!("ARRAY[{}]", self.args(args)),
            Func::MakeRecord => format!("ROW({})", self.args(args)),
            Func::Any { op, all, .. } if args.len() == 2 => format!(
                "({} {} {} ({}))",
                self.expr(&args[0]),
                cmp_op(*op),
                if *all { "ALL" } else { "ANY" },
                self.expr(&args[1])
            ),
            Func::Regex { negated, icase } if args.len() == 2 => {
                let op = match (negated, icase) {
                    (false, false) => "~",
                    (false, true) => "~*",
                    (true, false) => "!~",
                    (true, true) => "!~*",
                };
                format!("({} {op} {})", self.expr(&args[0]), self.expr(&args[1]))
            }
            Func::IsDistinct { negated, .. } if args.len() == 2 => format!(
                "({} IS {}DISTINCT FROM {})",
                self.expr(&args[0]),
                if *negated { "NOT " } else { "" },
                self.expr(&args[1])
            ),
            Func::IsBool { want, negated } if args.len() == 1 => {
                let what = match want {
                    Some(true) => "TRUE",
                    Some(false) => "FALSE",
                    None => "UNKNOWN",
                };
                format!("({} IS {}{what})", self.expr(&args[0]), if *negated { "NOT " } else { "" })
            }
            Func::Field(k) if args.len() == 1 => format!("({}).f{}", self.expr(&args[0]), k + 1),
            Func::Now => "now()".into(),
            Func::Lower => call("lower"),
            Func::Upper => call("upper"),
            Func::Length => call("length"),
            Func::Abs => call("abs"),
            Func::Substring => call("\"substring\""),
            Func::NextVal if args.len() >= 2 => format!("nextval({}::regclass)", self.expr(&args[1])),
            Func::CurrVal if args.len() >= 2 => format!("currval({}::regclass)", self.expr(&args[1])),
            other => {
                let name = format!("{other:?}");
                let name = name.split(['(', ' ', '{']).next().unwrap_or("").to_owned();
                call(&snake(&name))
            }
        }
    }

    /// An aggregate call (`count(*)`, `sum(x)`, with its ORDER BY and
    /// FILTER).
    pub(crate) fn aggregate(&self, a: &Aggregate) -> String {
        use crate::expr::AggFunc as A;
        let name = match a.func {
            A::CountStar | A::Count => "count",
            A::Sum => "sum",
            A::Min => "min",
            A::Max => "max",
            A::Avg => "avg",
            A::StringAgg => "string_agg",
            A::ArrayAgg | A::ArrayAggArray => "array_agg",
            A::BoolAnd => "bool_and",
            A::BoolOr => "bool_or",
            A::VarSamp => "var_samp",
            A::VarPop => "var_pop",
            A::StddevSamp => "stddev_samp",
            A::StddevPop => "stddev_pop",
            A::JsonAgg => "json_agg",
            A::JsonbAgg => "jsonb_agg",
            A::JsonObjectAgg => "json_object_agg",
            A::JsonbObjectAgg => "jsonb_object_agg",
            _ => "",
        };
        let mut args: Vec<String> = match (&a.user, a.func) {
            (Some(u), _) => u.args.iter().map(|e| self.expr(e)).collect(),
            (None, A::CountStar) => vec!["*".into()],
            (None, _) => a.arg.iter().chain(a.delimiter.as_ref()).map(|e| self.expr(e)).collect(),
        };
        let name = a.user.as_ref().map_or(name.to_owned(), |u| u.name.clone());
        if !a.order.is_empty() {
            let keys = self.sort_keys(&a.order).join(", ");
            if let Some(last) = args.last_mut() {
                *last = format!("{last} ORDER BY {keys}");
            }
        }
        let mut out = format!("{name}({})", args.join(", "));
        if let Some(f) = &a.filter {
            out += &format!(" FILTER (WHERE {})", self.expr(f));
        }
        out
    }

    /// ORDER BY keys as a Sort Key line lists them.
    pub(crate) fn sort_keys(&self, keys: &[SortKey]) -> Vec<String> {
        keys.iter()
            .map(|k| {
                let mut s = self.expr(&k.expr);
                if k.desc {
                    s += " DESC";
                    if !k.nulls_first {
                        s += " NULLS LAST";
                    }
                } else if k.nulls_first {
                    s += " NULLS FIRST";
                }
                s
            })
            .collect()
    }

    /// A qualification's conjuncts (an AND's operands, or the expression).
    pub(crate) fn conjuncts(&self, e: &Expr) -> Vec<String> {
        match e {
            Expr::And(list) => list.iter().map(|e| self.expr(e)).collect(),
            other => vec![self.expr(other)],
        }
    }
}

/// `CamelCase` as `camel_case`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Conjuncts as one qualification: one alone, several in an AND.
pub(crate) fn and_of(conjuncts: &[String]) -> String {
    match conjuncts {
        [one] => one.clone(),
        many => format!("({})", many.join(" AND ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<Col> {
        vec![
            Col::Var { rel: "t".into(), name: "a".into() },
            Col::Var { rel: "t".into(), name: "b".into() },
            Col::Var { rel: "u".into(), name: "Select".into() },
        ]
    }

    fn deparse(e: &Expr, prefix: bool) -> String {
        let cols = names();
        let sub = |plan: usize, _: &SubKind, _: bool, _: Vec<String>| format!("SubPlan {}", plan + 1);
        Deparser { cols: &cols, prefix, sublinks: &sub, outer: &[], upper_prefix: true }.expr(e)
    }

    #[test]
    fn operators_in_parentheses_and_constants_typed() {
        let e =
            Expr::Compare(Box::new(Expr::Column(0)), Cmp::Eq, Box::new(Expr::Const(Value::Int(1))), false);
        assert_eq!(deparse(&e, false), "(a = 1)");
        assert_eq!(deparse(&e, true), "(t.a = 1)");
        let e = Expr::Compare(
            Box::new(Expr::Column(1)),
            Cmp::Ne,
            Box::new(Expr::Const(Value::Text("it's".into()))),
            false,
        );
        assert_eq!(deparse(&e, false), "(b <> 'it''s'::text)");
        let both = Expr::And(vec![
            Expr::Compare(Box::new(Expr::Column(0)), Cmp::Gt, Box::new(Expr::Param(0)), false),
            Expr::IsNull(Box::new(Expr::Column(2)), true),
        ]);
        assert_eq!(deparse(&both, true), "((t.a > $1) AND (u.\"Select\" IS NOT NULL))");
        assert_eq!(constant(&Value::Int(-3)), "'-3'::integer");
        assert_eq!(constant(&Value::Bool(false)), "false");
    }

    #[test]
    fn casts_arithmetic_and_subplans() {
        let e = Expr::Cast(Box::new(Expr::Column(0)), SqlType::Int8, false);
        assert_eq!(deparse(&e, false), "(a)::bigint");
        let e = Expr::Chain(
            Box::new(Expr::Column(0)),
            vec![Step::Arith(Arith::Add, Expr::Const(Value::Int(1)), SqlType::Int4)],
        );
        assert_eq!(deparse(&e, false), "(a + 1)");
        let e = Expr::SubLink(Box::new(crate::expr::SubLink {
            kind: SubKind::Exists,
            plan: 0,
            args: vec![Expr::Column(0)],
        }));
        assert_eq!(deparse(&e, false), "(SubPlan 1)");
        assert_eq!(ident("Select"), "\"Select\"");
        assert_eq!(ident("order"), "\"order\"");
        assert_eq!(ident("a_1"), "a_1");
    }
}
