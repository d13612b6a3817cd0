//! A PL/pgSQL body as the parser leaves it. The SQL inside it (each
//! expression, each query) stays text ([`Sql`]), parsed and bound when it
//! first runs, with the variables it names read as parameters.

/// SQL text from the body (statements carry their lines, for CONTEXT).
#[derive(Clone, Debug)]
pub(crate) struct Sql {
    pub text: String,
    /// Where it starts in the body (a byte offset; 0 where it has no
    /// place there), for a compiler error's position.
    pub at: usize,
}

/// The compiler options a body starts with (`#print_strict_params on`,
/// `#variable_conflict use_column`).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Options {
    /// `#print_strict_params`, if given (else the setting's).
    pub print_strict_params: Option<bool>,
    /// `#variable_conflict`, if given (else plpgsql.variable_conflict).
    pub variable_conflict: Option<Conflict>,
}

/// What a name that is both a variable and a column means
/// (`#variable_conflict`; plpgsql.variable_conflict, error by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conflict {
    Error,
    UseVariable,
    UseColumn,
}

#[derive(Debug)]
pub(crate) struct Block {
    /// The body's compiler options (the outermost block's only).
    pub options: Options,
    /// The line it starts on (its DECLARE's, or BEGIN's).
    pub line: usize,
    pub label: Option<String>,
    pub decls: Vec<Decl>,
    pub body: Vec<Stmt>,
    /// EXCEPTION WHEN …: the block runs in a subtransaction when it has
    /// any.
    pub handlers: Vec<Handler>,
}

#[derive(Debug)]
pub(crate) struct Decl {
    pub name: String,
    /// The type as written (`integer`, `t.c%TYPE`, `record`, `t%ROWTYPE`).
    pub ty: String,
    pub constant: bool,
    pub not_null: bool,
    pub default: Option<Sql>,
    /// A bound cursor variable's query (its type is then refcursor).
    pub cursor: Option<std::sync::Arc<CursorDecl>>,
    /// `name ALIAS FOR other`: the variable (or `$n`, `label.v`) it is
    /// another name of.
    pub alias: Option<String>,
    /// Where its name is in the body (a byte offset).
    pub at: usize,
}

/// `name [NO] SCROLL CURSOR [(params)] FOR query`: what OPEN runs.
#[derive(Debug)]
pub(crate) struct CursorDecl {
    pub scroll: Option<bool>,
    /// Each parameter's name and type as written.
    pub params: Vec<(String, String)>,
    /// Where each parameter's name is in the body (byte offsets).
    pub params_at: Vec<usize>,
    pub query: Sql,
}

/// Where an OPEN's rows come from.
#[derive(Debug)]
pub(crate) enum OpenSource {
    /// A bound cursor's query, with its arguments as one select list
    /// `arg AS param, …` in the parameters' order (`None`: it has none).
    Bound(Option<Sql>),
    /// `FOR query`.
    Query(Sql),
    /// `FOR EXECUTE string [USING …]`.
    Execute { query: Sql, using: Vec<Sql> },
}

/// A FETCH's or MOVE's direction: how, and how far (`None`: one row).
#[derive(Debug)]
pub(crate) struct FetchDir {
    pub kind: FetchKind,
    pub count: FetchCount,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FetchKind {
    Forward,
    Backward,
    Absolute,
    Relative,
}

#[derive(Debug)]
pub(crate) enum FetchCount {
    Rows(i64),
    All,
    Expr(Sql),
}

#[derive(Debug)]
pub(crate) struct Handler {
    /// Condition names (lower-cased), `sqlstate:XXXXX`, or `others`.
    pub conditions: Vec<String>,
    pub body: Vec<Stmt>,
}

/// INTO [STRICT] targets.
#[derive(Clone, Debug)]
pub(crate) struct IntoTargets {
    pub strict: bool,
    pub targets: Vec<String>,
}

#[derive(Debug)]
pub(crate) enum Stmt {
    /// `target := expr` (target `v`, `r.f`).
    Assign {
        target: String,
        expr: Sql,
        line: usize,
    },
    /// `target[i]… := expr`: an element of an array variable or field;
    /// `shown` is the target as written.
    AssignElem {
        target: String,
        shown: String,
        subscripts: Vec<Sql>,
        expr: Sql,
        line: usize,
    },
    If {
        branches: Vec<(Sql, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
        line: usize,
    },
    /// CASE [subject] WHEN … THEN …: each WHEN's list of expressions.
    Case {
        subject: Option<Sql>,
        whens: Vec<(Sql, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
        line: usize,
    },
    Loop {
        label: Option<String>,
        body: Vec<Stmt>,
    },
    While {
        label: Option<String>,
        cond: Sql,
        body: Vec<Stmt>,
        line: usize,
    },
    ForRange {
        label: Option<String>,
        var: String,
        reverse: bool,
        from: Sql,
        to: Sql,
        by: Option<Sql>,
        body: Vec<Stmt>,
        line: usize,
    },
    /// FOR targets IN query LOOP, or IN EXECUTE expr [USING …].
    ForQuery {
        label: Option<String>,
        targets: Vec<String>,
        query: Source,
        body: Vec<Stmt>,
        line: usize,
    },
    /// FOREACH target [, …] [SLICE n] IN ARRAY expr LOOP.
    ForEach {
        label: Option<String>,
        targets: Vec<String>,
        slice: usize,
        array: Sql,
        body: Vec<Stmt>,
        line: usize,
    },
    /// EXIT (`next`: false) or CONTINUE (true).
    Exit {
        next: bool,
        label: Option<String>,
        when: Option<Sql>,
        line: usize,
    },
    Return {
        expr: Option<Sql>,
        line: usize,
        /// Where what follows RETURN starts in the body (a byte offset).
        at: usize,
    },
    ReturnNext {
        expr: Option<Sql>,
        line: usize,
    },
    ReturnQuery {
        query: Source,
        line: usize,
    },
    Raise(Box<Raise>),
    Assert {
        cond: Sql,
        message: Option<Sql>,
        line: usize,
    },
    Perform {
        query: Sql,
        line: usize,
    },
    /// A SQL statement, with INTO targets if it had them.
    Sql {
        sql: Sql,
        into: Option<IntoTargets>,
        line: usize,
    },
    Execute {
        query: Sql,
        into: Option<IntoTargets>,
        using: Vec<Sql>,
        line: usize,
    },
    GetDiagnostics {
        items: Vec<(String, String)>,
        stacked: bool,
        line: usize,
    },
    Null,
    Block(Block),
    /// OPEN cursor-variable …
    Open {
        var: String,
        scroll: Option<bool>,
        source: OpenSource,
        line: usize,
    },
    /// FETCH … INTO targets, or MOVE (`into` is `None`).
    Fetch {
        var: String,
        direction: FetchDir,
        into: Option<IntoTargets>,
        line: usize,
    },
    Close {
        var: String,
        line: usize,
    },
    /// FOR record IN bound-cursor [(arguments)] LOOP.
    ForCursor {
        label: Option<String>,
        target: String,
        cursor: String,
        args: Option<Sql>,
        body: Vec<Stmt>,
        line: usize,
    },
    /// COMMIT or ROLLBACK [AND [NO] CHAIN]: ends the transaction and
    /// starts the next, where the call may (PL-TXN).
    Transaction {
        rollback: bool,
        chain: bool,
        line: usize,
    },
}

/// A query of FOR or RETURN QUERY: static SQL, or EXECUTE's string.
#[derive(Debug)]
pub(crate) enum Source {
    Static(Sql),
    Dynamic { query: Sql, using: Vec<Sql> },
}

#[derive(Debug)]
pub(crate) struct Raise {
    /// DEBUG, LOG, INFO, NOTICE, WARNING or EXCEPTION.
    pub level: String,
    /// The format string (`%` placeholders) and its arguments.
    pub message: Option<String>,
    pub args: Vec<Sql>,
    /// A condition name or `sqlstate:XXXXX` given instead of a message.
    pub condition: Option<String>,
    /// USING option = expr.
    pub options: Vec<(String, Sql)>,
    pub line: usize,
}
