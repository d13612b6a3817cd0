//! What PL/pgSQL's compiler refuses before a body runs: a name assigned
//! to (or read INTO) that no block declares or that names a CONSTANT, a
//! RAISE whose `%` and arguments disagree, RETURN with a value in a
//! function returning void.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::ast::*;

/// Checks `block`, in which `names` (the parameters, FOUND) are declared.
pub(crate) fn check(block: &Block, names: &[String], void: bool) -> Result<(), SqlError> {
    let declared = names.iter().map(|n| (n.clone(), false)).collect();
    let mut c = Checker { scopes: vec![declared], labels: Vec::new(), void };
    c.block(block)
}

struct Checker {
    /// The names each block declares, and whether each is a CONSTANT.
    scopes: Vec<Vec<(String, bool)>>,
    labels: Vec<String>,
    void: bool,
}

fn unknown(name: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("\"{name}\" is not a known variable"))
}

fn compiling(e: SqlError, line: usize) -> SqlError {
    SqlError::from(snapscale_values::ErrorData { context: Some(format!("line {line}")), ..e.into_data() })
}

impl Checker {
    /// The innermost declaration `name` finds: whether it is a CONSTANT.
    fn declared(&self, name: &str) -> Option<bool> {
        self.scopes.iter().rev().find_map(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, c)| *c))
    }

    /// What assigning to `target` finds: `None` if nothing.
    fn find(&self, target: &str) -> Option<bool> {
        let base = target.split(['[', '.']).next().unwrap_or(target);
        if let Some(constant) = self.declared(base) {
            return Some(constant);
        }
        // label.variable
        match target.split_once('.') {
            Some((label, rest)) if self.labels.iter().any(|l| l == label) => {
                self.declared(rest.split(['[', '.']).next().unwrap_or(rest))
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

    fn block(&mut self, b: &Block) -> Result<(), SqlError> {
        self.labels.extend(b.label.clone());
        self.scopes.push(Vec::new());
        for d in &b.decls {
            self.scopes.last_mut().expect("a scope").push((d.name.clone(), d.constant));
        }
        self.stmts(&b.body)?;
        for h in &b.handlers {
            self.scopes.push(vec![("sqlstate".into(), false), ("sqlerrm".into(), false)]);
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

    fn looped(
        &mut self,
        label: &Option<String>,
        vars: Vec<(String, bool)>,
        body: &[Stmt],
    ) -> Result<(), SqlError> {
        self.labels.extend(label.clone());
        self.scopes.push(vars);
        let r = self.stmts(body);
        self.scopes.pop();
        if label.is_some() {
            self.labels.pop();
        }
        r
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), SqlError> {
        match s {
            Stmt::Assign { target, line, .. } => self.target(target, *line),
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
            Stmt::ForRange { label, var, body, .. } => self.looped(label, vec![(var.clone(), false)], body),
            Stmt::ForQuery { label, targets, body, line, .. } => {
                for t in targets {
                    self.target(t, *line)?;
                }
                self.looped(label, Vec::new(), body)
            }
            Stmt::ForEach { label, var, body, line, .. } => {
                self.target(var, *line)?;
                self.looped(label, Vec::new(), body)
            }
            Stmt::Return { expr: Some(_), .. } if self.void => Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                "RETURN cannot have a parameter in function returning void",
            )),
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
                self.looped(label, vec![(target.clone(), false)], body)
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
