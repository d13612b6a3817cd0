//! PL/pgSQL's grammar, read by recursive descent over the body's tokens.
//! The statements are found by their first words; the SQL between them
//! (expressions up to THEN or LOOP or `;`, whole queries) is kept as the
//! body's text, to be parsed as SQL when it runs. Nesting is bounded by
//! `max_depth` (54001, as any statement's nesting is).

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::ast::*;
use super::lex::{tokens, Tok, Token};

/// Parses a body: one block, optionally labelled, and nothing after it
/// but a `;`.
pub(crate) fn parse(src: &str, max_depth: usize) -> Result<Block, SqlError> {
    let toks = tokens(src)?;
    let mut p =
        Parser { src, toks, pos: 0, depth: 0, max_depth, line_starts: line_starts(src), cursors: Vec::new() };
    let parsed = (|| {
        let options = p.options()?;
        let label = p.label()?;
        let mut block = p.block(label)?;
        block.options = options;
        p.eat_op(";");
        if let Some(t) = p.peek() {
            return Err(p.error_at(t.start));
        }
        Ok(block)
    })();
    // Where it failed, for the CONTEXT line (compile_context).
    parsed.map_err(|e| match e.context {
        None => SqlError::from(snapscale_values::ErrorData {
            context: Some(format!("line {}", p.line())),
            ..e.into_data()
        }),
        Some(_) => e,
    })
}

fn line_starts(src: &str) -> Vec<usize> {
    std::iter::once(0).chain(src.match_indices('\n').map(|(k, _)| k + 1)).collect()
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    max_depth: usize,
    line_starts: Vec<usize>,
    /// The bound cursors declared where the parser is, innermost last:
    /// their names and parameters' names (an OPEN's arguments are
    /// matched to them as it is read, as PostgreSQL does).
    cursors: Vec<(String, Vec<String>)>,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, k: usize) -> Option<&Token> {
        self.toks.get(self.pos + k)
    }

    fn is_word(&self, w: &str) -> bool {
        self.peek().is_some_and(|t| t.is_word(w))
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_op(&mut self, o: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_op(o)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn line_of(&self, at: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= at)
    }

    fn line(&self) -> usize {
        self.peek().map_or_else(|| self.line_starts.len(), |t| self.line_of(t.start))
    }

    /// PostgreSQL's syntax error at the token starting at byte `at`.
    fn error_at(&self, at: usize) -> SqlError {
        let end = self.toks.iter().find(|t| t.start == at).map_or(self.src.len(), |t| t.end);
        let e = SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{}\"", &self.src[at..end]),
        );
        self.placed(e, at)
    }

    /// `e` placed at byte `at` of the body: its position counts the
    /// body's characters (compile_context moves it into the statement
    /// that holds the body).
    fn placed(&self, e: SqlError, at: usize) -> SqlError {
        let position = self.src[..at.min(self.src.len())].chars().count() + 1;
        e.at_position(position)
    }

    /// `e` placed at the current token.
    fn placed_here(&self, e: SqlError) -> SqlError {
        match self.peek() {
            Some(t) => self.placed(e, t.start),
            None => e,
        }
    }

    fn error_here(&self) -> SqlError {
        match self.peek() {
            Some(t) => self.error_at(t.start),
            None => SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"),
        }
    }

    fn expect_word(&mut self, w: &str) -> Result<(), SqlError> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn expect_op(&mut self, o: &str) -> Result<(), SqlError> {
        if self.eat_op(o) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    /// A name: a word or a quoted name.
    fn name(&mut self) -> Result<String, SqlError> {
        match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) => {
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error_here()),
        }
    }

    /// The compiler options before the body: `#option dump`,
    /// `#print_strict_params on|off`, `#variable_conflict
    /// error|use_variable|use_column`.
    fn options(&mut self) -> Result<Options, SqlError> {
        let mut options = Options::default();
        while self.eat_op("#") {
            let name = self.name()?;
            let at = self.peek().map_or(self.src.len(), |t| t.start);
            let value = self.name()?;
            match (name.as_str(), value.as_str()) {
                ("option", "dump") => {}
                ("print_strict_params", "on") => options.print_strict_params = Some(true),
                ("print_strict_params", "off") => options.print_strict_params = Some(false),
                ("variable_conflict", "error") => options.variable_conflict = Some(Conflict::Error),
                ("variable_conflict", "use_variable") => {
                    options.variable_conflict = Some(Conflict::UseVariable)
                }
                ("variable_conflict", "use_column") => options.variable_conflict = Some(Conflict::UseColumn),
                _ => return Err(self.error_at(at)),
            }
        }
        Ok(options)
    }

    /// `<<label>>`, if one is here.
    fn label(&mut self) -> Result<Option<String>, SqlError> {
        if !self.eat_op("<<") {
            return Ok(None);
        }
        let name = self.name()?;
        self.expect_op(">>")?;
        Ok(Some(name))
    }

    /// The text of tokens `from..to` (exclusive).
    fn text(&self, from: usize, to: usize) -> Sql {
        let (start, end) = match (self.toks.get(from), to.checked_sub(1).and_then(|t| self.toks.get(t))) {
            (Some(a), Some(b)) if from < to => (a.start, b.end),
            _ => (0, 0),
        };
        Sql { text: self.src[start..end].to_owned(), at: start }
    }

    /// SQL up to (not including) a token at nesting depth 0 that `stop`
    /// accepts: parentheses, brackets and CASE … END nest.
    fn until(&mut self, stop: impl Fn(&Token) -> bool) -> Result<Sql, SqlError> {
        let from = self.pos;
        let mut depth = 0usize;
        let mut cases = 0usize;
        while let Some(t) = self.peek() {
            if depth == 0 && cases == 0 && stop(t) {
                break;
            }
            match &t.tok {
                Tok::Op(o) if o == "(" || o == "[" => depth += 1,
                Tok::Op(o) if (o == ")" || o == "]") && depth > 0 => depth -= 1,
                Tok::Word(w) if w == "case" => cases += 1,
                Tok::Word(w) if w == "end" && cases > 0 => cases -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        if self.peek().is_none() {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"));
        }
        if self.pos == from {
            return Err(self.error_here());
        }
        Ok(self.text(from, self.pos))
    }

    fn until_semicolon(&mut self) -> Result<Sql, SqlError> {
        let sql = self.until(|t| t.is_op(";"))?;
        self.expect_op(";")?;
        Ok(sql)
    }

    fn until_word(&mut self, words: &[&str]) -> Result<Sql, SqlError> {
        self.until(|t| words.iter().any(|w| t.is_word(w)))
    }

    fn nest(&mut self) -> Result<(), SqlError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(crate::stack::too_deep(self.max_depth * 1024));
        }
        Ok(())
    }

    /// [DECLARE …] BEGIN … [EXCEPTION …] END [label]
    fn block(&mut self, label: Option<String>) -> Result<Block, SqlError> {
        self.nest()?;
        let visible = self.cursors.len();
        let block = self.block_inner(label);
        self.cursors.truncate(visible);
        block
    }

    fn block_inner(&mut self, label: Option<String>) -> Result<Block, SqlError> {
        let line = self.line();
        let mut decls = Vec::new();
        if self.eat_word("declare") {
            while !self.is_word("begin") {
                if self.peek().is_none() {
                    return Err(self.error_here());
                }
                // DECLARE may be repeated.
                if self.eat_word("declare") {
                    continue;
                }
                decls.push(self.decl()?);
            }
        }
        self.expect_word("begin")?;
        let body = self.stmts(&["end", "exception"])?;
        let mut handlers = Vec::new();
        if self.eat_word("exception") {
            while self.eat_word("when") {
                let mut conditions = Vec::new();
                loop {
                    if self.eat_word("sqlstate") {
                        let t = self.peek().cloned().ok_or_else(|| self.error_here())?;
                        if t.tok != Tok::Str {
                            return Err(self.error_here());
                        }
                        self.pos += 1;
                        let code = self.src[t.start + 1..t.end - 1].to_owned();
                        conditions.push(format!("sqlstate:{code}"));
                    } else {
                        conditions.push(self.name()?);
                    }
                    if !self.eat_word("or") {
                        break;
                    }
                }
                self.expect_word("then")?;
                let body = self.stmts(&["when", "end"])?;
                handlers.push(Handler { conditions, body });
            }
            if handlers.is_empty() {
                return Err(self.error_here());
            }
        }
        self.expect_word("end")?;
        self.end_label(&label)?;
        self.depth -= 1;
        Ok(Block { options: Options::default(), line, label, decls, body, handlers })
    }

    /// An END's optional label, which must match the opening one.
    fn end_label(&mut self, label: &Option<String>) -> Result<(), SqlError> {
        if let Some(Tok::Word(w) | Tok::Quoted(w)) = self.peek().map(|t| t.tok.clone()) {
            if !self.peek_at(0).is_some_and(|t| t.is_op(";")) {
                match label {
                    Some(l) if *l == w => self.pos += 1,
                    Some(l) => {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("end label \"{w}\" differs from block's label \"{l}\""),
                        ))
                    }
                    None => {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("end label \"{w}\" specified for unlabeled block"),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// name [CONSTANT] type [COLLATE c] [NOT NULL] [{DEFAULT | := | =} expr];
    fn decl(&mut self) -> Result<Decl, SqlError> {
        let at = self.peek().map_or(self.src.len(), |t| t.start);
        let name = self.name()?;
        if self.is_word("alias") && self.peek_at(1).is_some_and(|t| t.is_word("for")) {
            self.pos += 2;
            // A name, `$n`, or `label.name`.
            let target = match self.peek().map(|t| t.tok.clone()) {
                Some(Tok::Param) => {
                    let t = self.peek().expect("a token");
                    let p = self.src[t.start..t.end].to_owned();
                    self.pos += 1;
                    p
                }
                _ => {
                    let mut n = self.name()?;
                    while self.eat_op(".") {
                        n = format!("{n}.{}", self.name()?);
                    }
                    n
                }
            };
            self.expect_op(";")?;
            return Ok(Decl {
                name,
                ty: String::new(),
                constant: false,
                not_null: false,
                default: None,
                cursor: None,
                alias: Some(target),
                at,
            });
        }
        let constant = self.eat_word("constant");
        if self.is_word("cursor") || (self.is_word("no") || self.is_word("scroll")) {
            return self.cursor_decl(name, at);
        }
        let ty = self.until(|t| {
            t.is_op(";")
                || t.is_op(":=")
                || t.is_op("=")
                || t.is_word("default")
                || t.is_word("not")
                || t.is_word("collate")
        })?;
        if self.eat_word("collate") {
            self.name()?;
        }
        let not_null = if self.eat_word("not") {
            self.expect_word("null")?;
            true
        } else {
            false
        };
        let default = if self.eat_op(":=") || self.eat_op("=") || self.eat_word("default") {
            Some(self.until_semicolon()?)
        } else {
            self.expect_op(";")?;
            None
        };
        Ok(Decl { name, ty: ty.text, constant, not_null, default, cursor: None, alias: None, at })
    }

    /// `[NO] SCROLL CURSOR [(name type, …)] {FOR | IS} query;`.
    fn cursor_decl(&mut self, name: String, at: usize) -> Result<Decl, SqlError> {
        let scroll = if self.eat_word("no") {
            self.expect_word("scroll")?;
            Some(false)
        } else if self.eat_word("scroll") {
            Some(true)
        } else {
            None
        };
        self.expect_word("cursor")?;
        let mut params = Vec::new();
        let mut params_at = Vec::new();
        if self.eat_op("(") {
            loop {
                params_at.push(self.peek().map_or(self.src.len(), |t| t.start));
                let param = self.name()?;
                let ty = self.until(|t| t.is_op(",") || t.is_op(")"))?;
                params.push((param, ty.text));
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(")")?;
        }
        if !self.eat_word("for") {
            self.expect_word("is")?;
        }
        let query = self.until_semicolon()?;
        self.cursors.push((name.clone(), params.iter().map(|(n, _)| n.clone()).collect()));
        let cursor = Some(std::sync::Arc::new(CursorDecl { scroll, params, params_at, query }));
        Ok(Decl {
            name,
            ty: "refcursor".into(),
            constant: false,
            not_null: false,
            default: None,
            cursor,
            alias: None,
            at,
        })
    }

    /// A bound cursor's arguments, if `(` follows: `[name {:= | =>}] expr,
    /// …)`, checked against its parameters and written as one select list
    /// in their order (`expr AS name, …`).
    fn cursor_args(&mut self, cursor: &str) -> Result<Option<Sql>, SqlError> {
        let params = self.cursors.iter().rev().find(|(n, _)| n == cursor).map(|(_, p)| p.clone());
        let Some(params) = params else {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("variable \"{cursor}\" must be of type cursor or refcursor"),
            ));
        };
        if !self.is_op_here("(") {
            if params.is_empty() {
                return Ok(None);
            }
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("cursor \"{cursor}\" has arguments")));
        }
        if params.is_empty() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("cursor \"{cursor}\" has no arguments"),
            ));
        }
        self.pos += 1;
        let mut args: Vec<Option<String>> = vec![None; params.len()];
        let mut i = 0;
        loop {
            let named = match (self.peek().map(|t| t.tok.clone()), self.peek_at(1)) {
                (Some(Tok::Word(w) | Tok::Quoted(w)), Some(t)) if t.is_op(":=") || t.is_op("=>") => Some(w),
                _ => None,
            };
            let arg_start = self.pos;
            let at = match &named {
                Some(w) => {
                    self.pos += 2;
                    params.iter().position(|p| p == w).ok_or_else(|| {
                        self.placed(
                            SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                format!("cursor \"{cursor}\" has no argument named \"{w}\""),
                            ),
                            self.toks[arg_start].start,
                        )
                    })?
                }
                None => i,
            };
            if at >= params.len() {
                return Err(self.placed_here(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("too many arguments for cursor \"{cursor}\""),
                )));
            }
            if args[at].is_some() {
                return Err(self.placed(
                    SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!(
                            "value for parameter \"{}\" of cursor \"{cursor}\" specified more than once",
                            params[at]
                        ),
                    ),
                    self.toks[arg_start].start,
                ));
            }
            let e = self.until(|t| t.is_op(",") || t.is_op(")"))?;
            args[at] = Some(e.text);
            i += 1;
            if !self.eat_op(",") {
                break;
            }
        }
        if args.iter().any(Option::is_none) {
            return Err(self.placed_here(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("not enough arguments for cursor \"{cursor}\""),
            )));
        }
        self.expect_op(")")?;
        let list = args
            .into_iter()
            .zip(&params)
            .map(|(a, p)| format!("{} AS {p}", a.unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Some(Sql { text: list, at: 0 }))
    }

    fn is_op_here(&self, o: &str) -> bool {
        self.peek().is_some_and(|t| t.is_op(o))
    }

    /// The direction of a FETCH or MOVE, and its FROM or IN, if written.
    fn fetch_direction(&mut self) -> Result<FetchDir, SqlError> {
        let one = |kind| FetchDir { kind, count: FetchCount::Rows(1) };
        let from = |t: &Token| t.is_word("from") || t.is_word("in");
        let dir = if self.eat_word("next") {
            one(FetchKind::Forward)
        } else if self.eat_word("prior") {
            one(FetchKind::Backward)
        } else if self.eat_word("first") {
            FetchDir { kind: FetchKind::Absolute, count: FetchCount::Rows(1) }
        } else if self.eat_word("last") {
            FetchDir { kind: FetchKind::Absolute, count: FetchCount::Rows(-1) }
        } else if self.is_word("absolute") || self.is_word("relative") {
            let kind = if self.eat_word("absolute") { FetchKind::Absolute } else { FetchKind::Relative };
            self.eat_word("relative");
            FetchDir { kind, count: FetchCount::Expr(self.until(from)?) }
        } else if self.is_word("forward") || self.is_word("backward") {
            let kind = if self.eat_word("forward") { FetchKind::Forward } else { FetchKind::Backward };
            self.eat_word("backward");
            if self.eat_word("all") {
                FetchDir { kind, count: FetchCount::All }
            } else if self.peek().is_some_and(from) {
                one(kind)
            } else {
                FetchDir { kind, count: FetchCount::Expr(self.until(from)?) }
            }
        } else if self.eat_word("all") {
            FetchDir { kind: FetchKind::Forward, count: FetchCount::All }
        } else if self.peek().is_some_and(|t| !matches!(t.tok, Tok::Word(_) | Tok::Quoted(_))) {
            // A count alone: FETCH n FROM c.
            FetchDir { kind: FetchKind::Forward, count: FetchCount::Expr(self.until(from)?) }
        } else {
            return Ok(one(FetchKind::Forward));
        };
        if !(self.eat_word("from") || self.eat_word("in")) {
            return Err(self.error_here());
        }
        Ok(dir)
    }

    /// Statements up to one of `stops` (not consumed).
    fn stmts(&mut self, stops: &[&str]) -> Result<Vec<Stmt>, SqlError> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input")),
                Some(t) if stops.iter().any(|s| t.is_word(s)) => {
                    // `END IF`, `END LOOP` and `END CASE` close what they
                    // name; a bare END closes a block.
                    return Ok(out);
                }
                Some(_) => out.push(self.stmt()?),
            }
        }
    }

    fn stmt(&mut self) -> Result<Stmt, SqlError> {
        let line = self.line();
        let label = self.label()?;
        let Some(first) = self.peek().cloned() else { return Err(self.error_here()) };
        let word = match &first.tok {
            Tok::Word(w) => w.clone(),
            Tok::Param | Tok::Quoted(_) if label.is_none() => return self.assignment(line),
            _ if label.is_none() => return Err(self.error_here()),
            _ => String::new(),
        };
        // A word followed by `:=` or `[` is a variable, even one named as
        // a keyword is (PostgreSQL's rule for the start of a statement).
        if label.is_none() && self.peek_at(1).is_some_and(|t| t.is_op(":=") || t.is_op("[")) {
            return self.assignment(line);
        }
        match word.as_str() {
            "declare" | "begin" => {
                let block = self.block(label)?;
                self.expect_op(";")?;
                return Ok(Stmt::Block(block));
            }
            "loop" => {
                self.pos += 1;
                let body = self.loop_body(&label)?;
                return Ok(Stmt::Loop { label, body });
            }
            "while" => {
                self.pos += 1;
                let cond = self.until_word(&["loop"])?;
                self.expect_word("loop")?;
                let body = self.loop_body(&label)?;
                return Ok(Stmt::While { label, cond, body, line });
            }
            "for" => return self.for_loop(label, line),
            "foreach" => {
                self.pos += 1;
                let mut targets = vec![self.name()?];
                while self.eat_op(",") {
                    targets.push(self.name()?);
                }
                let slice = if self.eat_word("slice") {
                    match self.peek().cloned() {
                        Some(t) if t.tok == Tok::Number => {
                            self.pos += 1;
                            self.src[t.start..t.end].parse::<usize>().map_err(|_| self.error_at(t.start))?
                        }
                        _ => return Err(self.error_here()),
                    }
                } else {
                    0
                };
                self.expect_word("in")?;
                self.expect_word("array")?;
                let array = self.until_word(&["loop"])?;
                self.expect_word("loop")?;
                let body = self.loop_body(&label)?;
                return Ok(Stmt::ForEach { label, targets, slice, array, body, line });
            }
            _ if label.is_some() => return Err(self.error_here()),
            _ => {}
        }
        match word.as_str() {
            "if" => {
                self.pos += 1;
                self.nest()?;
                let mut branches = Vec::new();
                let cond = self.until_word(&["then"])?;
                self.expect_word("then")?;
                let body = self.stmts(&["elsif", "elseif", "else", "end"])?;
                branches.push((cond, body));
                let mut otherwise = None;
                loop {
                    if self.eat_word("elsif") || self.eat_word("elseif") {
                        let cond = self.until_word(&["then"])?;
                        self.expect_word("then")?;
                        let body = self.stmts(&["elsif", "elseif", "else", "end"])?;
                        branches.push((cond, body));
                    } else if self.eat_word("else") {
                        otherwise = Some(self.stmts(&["end"])?);
                    } else {
                        break;
                    }
                }
                self.expect_word("end")?;
                self.expect_word("if")?;
                self.expect_op(";")?;
                self.depth -= 1;
                Ok(Stmt::If { branches, otherwise, line })
            }
            "case" => {
                self.pos += 1;
                self.nest()?;
                let subject = if self.is_word("when") { None } else { Some(self.until_word(&["when"])?) };
                let mut whens = Vec::new();
                while self.eat_word("when") {
                    let cond = self.until_word(&["then"])?;
                    self.expect_word("then")?;
                    let body = self.stmts(&["when", "else", "end"])?;
                    whens.push((cond, body));
                }
                let otherwise = if self.eat_word("else") { Some(self.stmts(&["end"])?) } else { None };
                self.expect_word("end")?;
                self.expect_word("case")?;
                self.expect_op(";")?;
                self.depth -= 1;
                Ok(Stmt::Case { subject, whens, otherwise, line })
            }
            "exit" | "continue" => {
                self.pos += 1;
                let label = match self.peek().map(|t| t.tok.clone()) {
                    Some(Tok::Word(w)) if w != "when" => {
                        self.pos += 1;
                        Some(w)
                    }
                    Some(Tok::Quoted(w)) => {
                        self.pos += 1;
                        Some(w)
                    }
                    _ => None,
                };
                let when = if self.eat_word("when") { Some(self.until(|t| t.is_op(";"))?) } else { None };
                self.expect_op(";")?;
                Ok(Stmt::Exit { next: word == "continue", label, when, line })
            }
            "return" => {
                self.pos += 1;
                if self.eat_word("next") {
                    let expr = if self.eat_op(";") { None } else { Some(self.until_semicolon()?) };
                    return Ok(Stmt::ReturnNext { expr, line });
                }
                if self.eat_word("query") {
                    let query = self.source()?;
                    self.expect_op(";")?;
                    return Ok(Stmt::ReturnQuery { query, line });
                }
                let at = self.peek().map_or(self.src.len(), |t| t.start);
                let expr = if self.eat_op(";") { None } else { Some(self.until_semicolon()?) };
                Ok(Stmt::Return { expr, line, at })
            }
            "raise" => {
                self.pos += 1;
                self.raise(line)
            }
            "assert" => {
                self.pos += 1;
                let cond = self.until(|t| t.is_op(";") || t.is_op(","))?;
                let message = if self.eat_op(",") { Some(self.until(|t| t.is_op(";"))?) } else { None };
                self.expect_op(";")?;
                Ok(Stmt::Assert { cond, message, line })
            }
            "perform" => {
                self.pos += 1;
                let query = self.until_semicolon()?;
                Ok(Stmt::Perform { query, line })
            }
            "execute" => {
                self.pos += 1;
                let query = self.until(|t| t.is_op(";") || t.is_word("into") || t.is_word("using"))?;
                let mut into = None;
                let mut using = Vec::new();
                loop {
                    if self.eat_word("into") {
                        into = Some(self.read_into()?);
                    } else if self.eat_word("using") {
                        using = self.expr_list(|t| t.is_op(";") || t.is_word("into"))?;
                    } else {
                        break;
                    }
                }
                self.expect_op(";")?;
                Ok(Stmt::Execute { query, into, using, line })
            }
            "get" => {
                self.pos += 1;
                let stacked = self.eat_word("stacked");
                self.eat_word("current");
                self.expect_word("diagnostics")?;
                let mut items = Vec::new();
                loop {
                    let target = self.name()?;
                    if !self.eat_op(":=") {
                        self.expect_op("=")?;
                    }
                    let item = self.name()?;
                    items.push((target, item));
                    if !self.eat_op(",") {
                        break;
                    }
                }
                self.expect_op(";")?;
                Ok(Stmt::GetDiagnostics { items, stacked, line })
            }
            "null" if self.peek_at(1).is_some_and(|t| t.is_op(";")) => {
                self.pos += 2;
                Ok(Stmt::Null)
            }
            "open" => {
                self.pos += 1;
                let var = self.name()?;
                let scroll = if self.eat_word("no") {
                    self.expect_word("scroll")?;
                    Some(false)
                } else if self.eat_word("scroll") {
                    Some(true)
                } else {
                    None
                };
                let source = if self.eat_word("for") {
                    if self.eat_word("execute") {
                        let query = self.until(|t| t.is_op(";") || t.is_word("using"))?;
                        let using = if self.eat_word("using") {
                            self.expr_list(|t| t.is_op(";"))?
                        } else {
                            Vec::new()
                        };
                        OpenSource::Execute { query, using }
                    } else {
                        OpenSource::Query(self.until(|t| t.is_op(";"))?)
                    }
                } else if self.cursors.iter().any(|(n, _)| *n == var) {
                    OpenSource::Bound(self.cursor_args(&var)?)
                } else {
                    return Err(self.error_here());
                };
                self.expect_op(";")?;
                Ok(Stmt::Open { var, scroll, source, line })
            }
            "fetch" | "move" => {
                self.pos += 1;
                let direction = self.fetch_direction()?;
                let var = self.name()?;
                let into = if word == "fetch" {
                    self.expect_word("into")?;
                    let into = self.read_into()?;
                    let many = match &direction.count {
                        FetchCount::All => true,
                        FetchCount::Rows(n) => {
                            matches!(direction.kind, FetchKind::Forward | FetchKind::Backward) && *n != 1
                        }
                        FetchCount::Expr(_) => {
                            matches!(direction.kind, FetchKind::Forward | FetchKind::Backward)
                        }
                    };
                    if many {
                        return Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            "FETCH statement cannot return multiple rows",
                        ));
                    }
                    Some(into)
                } else {
                    None
                };
                self.expect_op(";")?;
                Ok(Stmt::Fetch { var, direction, into, line })
            }
            "close" => {
                self.pos += 1;
                let var = self.name()?;
                self.expect_op(";")?;
                Ok(Stmt::Close { var, line })
            }
            "commit" | "rollback" => {
                self.pos += 1;
                let chain = if self.eat_word("and") {
                    let no = self.eat_word("no");
                    self.expect_word("chain")?;
                    !no
                } else {
                    false
                };
                self.expect_op(";")?;
                Ok(Stmt::Transaction { rollback: word == "rollback", chain, line })
            }
            _ if is_sql_start(&word) && !self.peek_at(1).is_some_and(|t| t.is_op(":=") || t.is_op("=")) => {
                self.sql_statement(line)
            }
            _ => self.assignment(line),
        }
    }

    /// An assignment: `target [.field] [[subscript]…] {:= | =} expr;`.
    fn assignment(&mut self, line: usize) -> Result<Stmt, SqlError> {
        let from = self.pos;
        let shown = self.until(|t| t.is_op(":=") || t.is_op("=") || t.is_op(";"))?;
        let end = self.pos;
        if !(self.eat_op(":=") || self.eat_op("=")) {
            return Err(self.error_at(self.toks[from].start));
        }
        let expr = self.until_semicolon()?;
        // The target's name (`v`, `r.f`, `label.v`, `$1`) and subscripts.
        let mut target = String::new();
        let mut subscripts = Vec::new();
        let mut k = from;
        while k < end {
            let t = &self.toks[k];
            if t.is_op("[") {
                let mut depth = 0usize;
                let mut j = k + 1;
                while j < end {
                    let u = &self.toks[j];
                    if u.is_op("[") {
                        depth += 1;
                    } else if u.is_op("]") {
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    j += 1;
                }
                if j >= end || j == k + 1 {
                    return Err(self.error_at(t.start));
                }
                subscripts.push(self.text(k + 1, j));
                k = j + 1;
                continue;
            }
            if !subscripts.is_empty() {
                return Err(self.error_at(t.start));
            }
            match &t.tok {
                Tok::Word(w) | Tok::Quoted(w) => target.push_str(w),
                Tok::Param => target.push_str(&self.src[t.start..t.end]),
                Tok::Op(o) if o == "." => target.push('.'),
                _ => return Err(self.error_at(t.start)),
            }
            k += 1;
        }
        if subscripts.is_empty() {
            return Ok(Stmt::Assign { target, expr, line });
        }
        Ok(Stmt::AssignElem { target, shown: shown.text, subscripts, expr, line })
    }

    /// A loop's statements, `END LOOP [label];`.
    fn loop_body(&mut self, label: &Option<String>) -> Result<Vec<Stmt>, SqlError> {
        self.nest()?;
        let body = self.stmts(&["end"])?;
        self.expect_word("end")?;
        self.expect_word("loop")?;
        self.end_label(label)?;
        self.expect_op(";")?;
        self.depth -= 1;
        Ok(body)
    }

    /// FOR var IN [REVERSE] a .. b [BY s] LOOP, or FOR targets IN query
    /// LOOP.
    fn for_loop(&mut self, label: Option<String>, line: usize) -> Result<Stmt, SqlError> {
        self.pos += 1;
        let mut targets = vec![self.name()?];
        while self.eat_op(",") {
            targets.push(self.name()?);
        }
        self.expect_word("in")?;
        // A range has `..` before LOOP, at depth 0.
        let mut depth = 0usize;
        let mut range = false;
        for t in &self.toks[self.pos..] {
            match &t.tok {
                Tok::Op(o) if o == "(" || o == "[" => depth += 1,
                Tok::Op(o) if o == ")" || o == "]" => depth = depth.saturating_sub(1),
                Tok::Op(o) if o == ".." && depth == 0 => {
                    range = true;
                    break;
                }
                Tok::Word(w) if w == "loop" && depth == 0 => break,
                _ => {}
            }
        }
        if range {
            if targets.len() != 1 {
                return Err(self.error_here());
            }
            let var = targets.remove(0);
            let reverse = self.eat_word("reverse");
            let from = self.until(|t| t.is_op(".."))?;
            self.expect_op("..")?;
            let to = self.until_word(&["by", "loop"])?;
            let by = if self.eat_word("by") { Some(self.until_word(&["loop"])?) } else { None };
            self.expect_word("loop")?;
            let body = self.loop_body(&label)?;
            return Ok(Stmt::ForRange { label, var, reverse, from, to, by, body, line });
        }
        // FOR r IN cursor [(arguments)] LOOP: a bound cursor's name where
        // a query would start.
        let cursor = match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Word(w) | Tok::Quoted(w)) if self.cursors.iter().any(|(n, _)| *n == w) => {
                let next = self.peek_at(1);
                next.is_some_and(|t| t.is_word("loop") || t.is_op("(")).then_some(w)
            }
            _ => None,
        };
        if let Some(cursor) = cursor {
            if targets.len() != 1 {
                return Err(self.error_here());
            }
            self.pos += 1;
            let args = self.cursor_args(&cursor)?;
            self.expect_word("loop")?;
            let body = self.loop_body(&label)?;
            let target = targets.remove(0);
            return Ok(Stmt::ForCursor { label, target, cursor, args, body, line });
        }
        let query = if self.eat_word("execute") {
            let query = self.until_word(&["using", "loop"])?;
            let using =
                if self.eat_word("using") { self.expr_list(|t| t.is_word("loop"))? } else { Vec::new() };
            Source::Dynamic { query, using }
        } else {
            Source::Static(self.until_word(&["loop"])?)
        };
        self.expect_word("loop")?;
        let body = self.loop_body(&label)?;
        Ok(Stmt::ForQuery { label, targets, query, body, line })
    }

    /// RETURN QUERY's query: static, or EXECUTE expr [USING …].
    fn source(&mut self) -> Result<Source, SqlError> {
        if self.eat_word("execute") {
            let query = self.until(|t| t.is_op(";") || t.is_word("using"))?;
            let using = if self.eat_word("using") { self.expr_list(|t| t.is_op(";"))? } else { Vec::new() };
            return Ok(Source::Dynamic { query, using });
        }
        Ok(Source::Static(self.until(|t| t.is_op(";"))?))
    }

    /// Expressions separated by commas, up to `stop`.
    fn expr_list(&mut self, stop: impl Fn(&Token) -> bool) -> Result<Vec<Sql>, SqlError> {
        let mut out = Vec::new();
        loop {
            out.push(self.until(|t| t.is_op(",") || stop(t))?);
            if !self.eat_op(",") {
                return Ok(out);
            }
        }
    }

    /// INTO [STRICT] target, …
    fn read_into(&mut self) -> Result<IntoTargets, SqlError> {
        let strict = self.eat_word("strict");
        let mut targets = Vec::new();
        loop {
            let mut name = self.name()?;
            while self.eat_op(".") {
                name = format!("{name}.{}", self.name()?);
            }
            targets.push(name);
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(IntoTargets { strict, targets })
    }

    /// A SQL statement; a SELECT's INTO (after its select list) or a
    /// RETURNING's INTO taken out of it.
    fn sql_statement(&mut self, line: usize) -> Result<Stmt, SqlError> {
        let from = self.pos;
        let mut depth = 0usize;
        let mut into_at = None;
        let mut select_seen = false;
        while let Some(t) = self.peek() {
            if depth == 0 && t.is_op(";") {
                break;
            }
            match &t.tok {
                Tok::Op(o) if o == "(" || o == "[" => depth += 1,
                Tok::Op(o) if o == ")" || o == "]" => depth = depth.saturating_sub(1),
                Tok::Word(w) if depth == 0 && (w == "select" || w == "returning") => select_seen = true,
                // INSERT INTO's INTO is the statement's own.
                Tok::Word(w) if depth == 0 && w == "into" && select_seen && into_at.is_none() => {
                    into_at = Some(self.pos)
                }
                _ => {}
            }
            self.pos += 1;
        }
        let end = self.pos;
        self.expect_op(";")?;
        let Some(at) = into_at else {
            return Ok(Stmt::Sql { sql: self.text(from, end), into: None, line });
        };
        // The targets, then the rest of the statement.
        self.pos = at + 1;
        let into = self.read_into()?;
        let after = self.pos;
        self.pos = end + 1;
        // The INTO clause blanked, as PostgreSQL does, so that a place in
        // the statement is where it was in the source (an error's
        // position, PL-SPI-ERRORS).
        let mut sql = self.text(from, end);
        let base = self.toks[from].start;
        let (cut_from, cut_to) = (self.toks[at].start - base, self.toks[after - 1].end - base);
        let blank = " ".repeat(sql.text[cut_from..cut_to].chars().count());
        sql.text.replace_range(cut_from..cut_to, &blank);
        Ok(Stmt::Sql { sql, into: Some(into), line })
    }

    /// RAISE [level] [format [, args]] [USING …];
    fn raise(&mut self, line: usize) -> Result<Stmt, SqlError> {
        let mut level = "exception".to_owned();
        for l in ["debug", "log", "info", "notice", "warning", "exception"] {
            if self.eat_word(l) {
                level = l.to_owned();
                break;
            }
        }
        let mut message = None;
        let mut args = Vec::new();
        let mut condition = None;
        match self.peek().cloned() {
            Some(Token { tok: Tok::Str, start, end }) => {
                self.pos += 1;
                message = Some(unquote(&self.src[start..end]));
                while self.eat_op(",") {
                    args.push(self.until(|t| t.is_op(",") || t.is_op(";") || t.is_word("using"))?);
                }
            }
            Some(t) if t.is_word("sqlstate") => {
                self.pos += 1;
                let t = self.peek().cloned().ok_or_else(|| self.error_here())?;
                if t.tok != Tok::Str {
                    return Err(self.error_here());
                }
                self.pos += 1;
                condition = Some(format!("sqlstate:{}", &self.src[t.start + 1..t.end - 1]));
            }
            Some(Token { tok: Tok::Word(w), .. }) if w != "using" => {
                self.pos += 1;
                condition = Some(w);
            }
            _ => {}
        }
        let mut options = Vec::new();
        if self.eat_word("using") {
            loop {
                let name = self.name()?;
                if !self.eat_op(":=") {
                    self.expect_op("=")?;
                }
                let value = self.until(|t| t.is_op(",") || t.is_op(";"))?;
                options.push((name, value));
                if !self.eat_op(",") {
                    break;
                }
            }
        }
        self.expect_op(";")?;
        Ok(Stmt::Raise(Box::new(Raise { level, message, args, condition, options, line })))
    }
}

/// Words that start a SQL statement in a body.
fn is_sql_start(w: &str) -> bool {
    matches!(
        w,
        "select"
            | "insert"
            | "update"
            | "delete"
            | "with"
            | "values"
            | "table"
            | "merge"
            | "create"
            | "drop"
            | "alter"
            | "truncate"
            | "lock"
            | "comment"
            | "grant"
            | "revoke"
            | "analyze"
            | "vacuum"
            | "notify"
            | "listen"
            | "set"
            | "reset"
            | "refresh"
            | "reindex"
            | "copy"
            | "savepoint"
            | "release"
            | "call"
            | "do"
    )
}

/// A string literal's value ('' doubled; E'' escapes are left to SQL, and
/// a RAISE format is a plain literal in practice).
fn unquote(lit: &str) -> String {
    if let Some(rest) = lit.strip_prefix('$') {
        let tag_end = rest.find('$').map_or(0, |k| k + 2);
        let tag = &lit[..tag_end];
        return lit[tag_end..lit.len() - tag.len()].to_owned();
    }
    let inner = lit.trim_start_matches(['e', 'E']);
    inner[1..inner.len() - 1].replace("''", "'")
}
