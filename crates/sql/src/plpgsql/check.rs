//! What PL/pgSQL's compiler refuses before a body runs: a name assigned
//! to (or read INTO) that no block declares or that names a CONSTANT, a
//! RAISE whose `%` and arguments disagree, RETURN with a value where the
//! function returns none (or without one where it must), a cursor FOR
//! loop over an unbound cursor; and what plpgsql.extra_warnings and
//! plpgsql.extra_errors ask it to report (shadowed_variables).

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::ast::*;

/// What a function's RETURN may carry, as PostgreSQL's make_return_stmt
/// decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Returns {
    /// A value (RETURN expr).
    Value,
    /// Nothing: a function returning void (or a DO block).
    Void,
    /// Nothing: a procedure.
    Procedure,
    /// A set (RETURN NEXT / QUERY give its rows).
    Set,
    /// Its OUT parameters' values.
    Out,
}

impl Returns {
    /// What `def`'s RETURN carries.
    pub(crate) fn of(def: &snapscale_engine::routines::RoutineDef) -> Returns {
        if def.returns_set {
            Returns::Set
        } else if def.kind == snapscale_engine::routines::RoutineKind::Procedure
            && def.output_columns().is_empty()
        {
            Returns::Procedure
        } else if def.returns == snapscale_values::SqlType::Void && def.output_columns().is_empty() {
            Returns::Void
        } else if !def.output_columns().is_empty() {
            Returns::Out
        } else {
            Returns::Value
        }
    }
}

/// plpgsql.extra_warnings / extra_errors: the checks each asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Extra {
    pub warnings: u8,
    pub errors: u8,
}

impl Extra {
    pub(crate) const SHADOWED_VARIABLES: u8 = 1;
    pub(crate) const TOO_MANY_ROWS: u8 = 2;
    pub(crate) const STRICT_MULTI_ASSIGNMENT: u8 = 4;

    /// The checks a setting's value names (`all`, `none`, a list).
    pub(crate) fn bits(value: &str) -> u8 {
        let mut bits = 0;
        for item in value.split(',').map(|w| w.trim().to_ascii_lowercase()) {
            bits |= match item.as_str() {
                "all" => Self::SHADOWED_VARIABLES | Self::TOO_MANY_ROWS | Self::STRICT_MULTI_ASSIGNMENT,
                "shadowed_variables" => Self::SHADOWED_VARIABLES,
                "too_many_rows" => Self::TOO_MANY_ROWS,
                "strict_multi_assignment" => Self::STRICT_MULTI_ASSIGNMENT,
                _ => 0,
            };
        }
        bits
    }

    /// The checks of the settings `show` gives (SHOW's values).
    pub(crate) fn from_settings(show: impl Fn(&str) -> Option<String>) -> Extra {
        Extra {
            warnings: show("plpgsql.extra_warnings").map_or(0, |v| Extra::bits(&v)),
            errors: show("plpgsql.extra_errors").map_or(0, |v| Extra::bits(&v)),
        }
    }
}

/// Checks `block` (the body `src`), in which `names` (the parameters,
/// FOUND) are declared. The warnings it has (a shadowed variable, when
/// plpgsql.extra_warnings asks), each placed in the body.
pub(crate) fn check(
    block: &Block,
    names: &[String],
    returns: Returns,
    src: &str,
    extra: Extra,
) -> Result<Vec<SqlError>, SqlError> {
    let declared = names.iter().map(|n| Declared::of(n.clone())).collect();
    let mut c =
        Checker { scopes: vec![declared], labels: Vec::new(), returns, src, extra, warnings: Vec::new() };
    c.block(block)?;
    Ok(c.warnings)
}

/// A name a block declares.
struct Declared {
    name: String,
    constant: bool,
    /// Declared as a refcursor (unbound: a bound one is `cursor`).
    refcursor: bool,
}

impl Declared {
    fn of(name: String) -> Declared {
        Declared { name, constant: false, refcursor: false }
    }
}

struct Checker<'a> {
    /// The names each block declares.
    scopes: Vec<Vec<Declared>>,
    labels: Vec<String>,
    returns: Returns,
    src: &'a str,
    extra: Extra,
    warnings: Vec<SqlError>,
}

fn unknown(name: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("\"{name}\" is not a known variable"))
}

fn compiling(e: SqlError, line: usize) -> SqlError {
    SqlError::from(snapscale_values::ErrorData { context: Some(format!("line {line}")), ..e.into_data() })
}

impl Checker<'_> {
    /// `e` placed at byte `at` of the body.
    fn placed(&self, e: SqlError, at: usize) -> SqlError {
        let position = self.src[..at.min(self.src.len())].chars().count() + 1;
        e.at_position(position)
    }

    /// The innermost declaration `name` finds.
    fn declared(&self, name: &str) -> Option<&Declared> {
        self.scopes.iter().rev().find_map(|s| s.iter().rev().find(|d| d.name == name))
    }

    /// What assigning to `target` finds: whether it is a CONSTANT, `None`
    /// if nothing.
    fn find(&self, target: &str) -> Option<bool> {
        let base = target.split(['[', '.']).next().unwrap_or(target);
        if let Some(d) = self.declared(base) {
            return Some(d.constant);
        }
        // label.variable
        match target.split_once('.') {
            Some((label, rest)) if self.labels.iter().any(|l| l == label) => {
                self.declared(rest.split(['[', '.']).next().unwrap_or(rest)).map(|d| d.constant)
            }
            _ => None,
        }
    }

    fn target(&self, t: &str, line: usize) -> Result<(), SqlError> {
        match self.find(t) {
            Some(false) => Ok(()),
            Some(true) => Err(compiling(
                SqlError::new(
                    SqlState::ERROR_IN_ASSIGNMENT,
                    format!("variable \"{}\" is declared CONSTANT", t.split(['[', '.']).next().unwrap_or(t)),
                ),
                line,
            )),
            None => Err(unknown(t.split(['[', '.']).next().unwrap_or(t))),
        }
    }

    /// Declares `name` (at byte `at`) in the innermost scope: refused if
    /// the scope has it, reported (plpgsql.extra_*) if it hides another.
    fn declare(&mut self, d: Declared, at: usize) -> Result<(), SqlError> {
        let scope = self.scopes.last().expect("a scope");
        if scope.iter().any(|x| x.name == d.name) {
            let end = at + d.name.len().max(1);
            let near = self.src.get(at..end.min(self.src.len())).unwrap_or(&d.name);
            return Err(self.placed(
                SqlError::new(SqlState::SYNTAX_ERROR, format!("duplicate declaration at or near \"{near}\"")),
                at,
            ));
        }
        let shadows = Extra::SHADOWED_VARIABLES;
        if (self.extra.warnings | self.extra.errors) & shadows != 0 && self.declared(&d.name).is_some() {
            let e = self.placed(
                SqlError::new(
                    SqlState::DUPLICATE_ALIAS,
                    format!("variable \"{}\" shadows a previously defined variable", d.name),
                ),
                at,
            );
            if self.extra.errors & shadows != 0 {
                return Err(e);
            }
            self.warnings.push(e);
        }
        self.scopes.last_mut().expect("a scope").push(d);
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Result<(), SqlError> {
        self.labels.extend(b.label.clone());
        self.scopes.push(Vec::new());
        for d in &b.decls {
            let constant = match &d.alias {
                Some(target) => match self.find(target) {
                    Some(c) => c,
                    None => {
                        return Err(self.placed(
                            SqlError::new(
                                SqlState::UNDEFINED_OBJECT,
                                format!("variable \"{target}\" does not exist"),
                            ),
                            d.at,
                        ))
                    }
                },
                None => d.constant,
            };
            if let Some(c) = &d.cursor {
                // A bound cursor's parameters are declared around its
                // query, in a scope of their own.
                self.scopes.push(Vec::new());
                for ((p, _), at) in c.params.iter().zip(&c.params_at) {
                    self.declare(Declared::of(p.clone()), *at)?;
                }
                self.scopes.pop();
            }
            let refcursor = d.cursor.is_none() && d.ty.trim().eq_ignore_ascii_case("refcursor");
            self.declare(Declared { name: d.name.clone(), constant, refcursor }, d.at)?;
        }
        self.stmts(&b.body)?;
        for h in &b.handlers {
            self.scopes.push(vec![Declared::of("sqlstate".into()), Declared::of("sqlerrm".into())]);
            self.stmts(&h.body)?;
            self.scopes.pop();
        }
        self.scopes.pop();
        if b.label.is_some() {
            self.labels.pop();
        }
        Ok(())
    }

    fn stmts(&mut self, list: &[Stmt]) -> Result<(), SqlError> {
        for s in list {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn looped(&mut self, label: &Option<String>, vars: Vec<Declared>, body: &[Stmt]) -> Result<(), SqlError> {
        self.labels.extend(label.clone());
        self.scopes.push(vars);
        let r = self.stmts(body);
        self.scopes.pop();
        if label.is_some() {
            self.labels.pop();
        }
        r
    }

    /// RETURN [expr] as the function's result allows it.
    fn check_return(&self, expr: &Option<Sql>, at: usize) -> Result<(), SqlError> {
        let mismatch = |message: &str| self.placed(SqlError::new(SqlState::DATATYPE_MISMATCH, message), at);
        match (self.returns, expr) {
            (Returns::Set, Some(_)) => {
                Err(mismatch("RETURN cannot have a parameter in function returning set")
                    .with_hint("Use RETURN NEXT or RETURN QUERY."))
            }
            (Returns::Void, Some(_)) => {
                Err(mismatch("RETURN cannot have a parameter in function returning void"))
            }
            (Returns::Procedure, Some(_)) => Err(mismatch("RETURN cannot have a parameter in a procedure")),
            (Returns::Out, Some(_)) => {
                Err(mismatch("RETURN cannot have a parameter in function with OUT parameters"))
            }
            (Returns::Value, None) => {
                Err(self
                    .placed(SqlError::new(SqlState::SYNTAX_ERROR, "missing expression at or near \";\""), at))
            }
            _ => Ok(()),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), SqlError> {
        match s {
            Stmt::Assign { target, line, .. } | Stmt::AssignElem { target, line, .. } => {
                self.target(target, *line)
            }
            Stmt::If { branches, otherwise, .. } => {
                for (_, body) in branches {
                    self.stmts(body)?;
                }
                otherwise.as_deref().map_or(Ok(()), |b| self.stmts(b))
            }
            Stmt::Case { whens, otherwise, .. } => {
                for (_, body) in whens {
                    self.stmts(body)?;
                }
                otherwise.as_deref().map_or(Ok(()), |b| self.stmts(b))
            }
            Stmt::Loop { label, body, .. } | Stmt::While { label, body, .. } => {
                self.looped(label, Vec::new(), body)
            }
            Stmt::ForRange { label, var, body, .. } => {
                self.looped(label, vec![Declared::of(var.clone())], body)
            }
            Stmt::ForQuery { label, targets, body, line, query } => {
                // FOR r IN c LOOP over a refcursor variable that is not a
                // bound cursor.
                if let Source::Static(q) = query {
                    let name = q.text.trim();
                    if self.declared(&name.to_lowercase()).is_some_and(|d| d.refcursor) {
                        return Err(self.placed(
                            SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                "cursor FOR loop must use a bound cursor variable",
                            ),
                            q.at,
                        ));
                    }
                }
                // Its query's syntax, as PostgreSQL's compiler checks it.
                if let Source::Static(q) = query {
                    if let Err(e) = crate::parse::parse(&q.text, crate::stack::DEFAULT_MAX_STACK_DEPTH) {
                        if let Some(p) = e.position {
                            let offset = q
                                .text
                                .char_indices()
                                .nth((p as usize).saturating_sub(1))
                                .map_or(q.text.len(), |(b, _)| b);
                            let at = q.at + offset;
                            return Err(self.placed(
                                SqlError::from(snapscale_values::ErrorData {
                                    position: None,
                                    ..e.into_data()
                                }),
                                at,
                            ));
                        }
                    }
                }
                for t in targets {
                    self.target(t, *line)?;
                }
                self.looped(label, Vec::new(), body)
            }
            Stmt::ForEach { label, targets, body, line, .. } => {
                for var in targets {
                    self.target(var, *line)?;
                }
                self.looped(label, Vec::new(), body)
            }
            Stmt::Return { expr, at, .. } => self.check_return(expr, *at),
            Stmt::Raise(r) => {
                if let Some(fmt) = &r.message {
                    let wanted = placeholders(fmt);
                    if wanted > r.args.len() {
                        return Err(compiling(
                            SqlError::new(SqlState::SYNTAX_ERROR, "too few parameters specified for RAISE"),
                            r.line,
                        ));
                    }
                    if wanted < r.args.len() {
                        return Err(compiling(
                            SqlError::new(SqlState::SYNTAX_ERROR, "too many parameters specified for RAISE"),
                            r.line,
                        ));
                    }
                }
                Ok(())
            }
            Stmt::ForCursor { label, target, body, .. } => {
                // The loop's record is declared by the loop.
                self.looped(label, vec![Declared::of(target.clone())], body)
            }
            Stmt::Sql { into: Some(into), line, .. }
            | Stmt::Execute { into: Some(into), line, .. }
            | Stmt::Fetch { into: Some(into), line, .. } => {
                for t in &into.targets {
                    self.target(t, *line)?;
                }
                Ok(())
            }
            Stmt::GetDiagnostics { items, line, .. } => {
                for (t, _) in items {
                    self.target(t, *line)?;
                }
                Ok(())
            }
            Stmt::Block(b) => self.block(b),
            _ => Ok(()),
        }
    }
}

/// How many `%` a RAISE format has (`%%` is a literal one).
fn placeholders(fmt: &str) -> usize {
    let mut n = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '%' {
            if chars.peek() == Some(&'%') {
                chars.next();
            } else {
                n += 1;
            }
        }
    }
    n
}
