//! What PL/pgSQL's compiler refuses before a body runs: a name assigned
//! to (or read INTO) that no block declares, a RAISE whose `%` and
//! arguments disagree, RETURN with a value in a function returning void.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::ast::*;

/// Checks `block`, in which `names` (the parameters, FOUND) are declared.
pub(crate) fn check(block: &Block, names: &[String], void: bool) -> Result<(), SqlError> {
    let mut c = Checker { scopes: vec![names.to_vec()], labels: Vec::new(), void };
    c.block(block)
}

struct Checker {
    scopes: Vec<Vec<String>>,
    labels: Vec<String>,
    void: bool,
}

fn unknown(name: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("\"{name}\" is not a known variable"))
}

fn compiling(e: SqlError, line: usize) -> SqlError {
    SqlError { context: Some(format!("line {line}")), ..e }
}

impl Checker {
    fn known(&self, target: &str) -> bool {
        let base = target.split(['[', '.']).next().unwrap_or(target);
        if self.scopes.iter().any(|s| s.iter().any(|n| n == base)) {
            return true;
        }
        // label.variable
        match target.split_once('.') {
            Some((label, rest)) if self.labels.iter().any(|l| l == label) => {
                let var = rest.split(['[', '.']).next().unwrap_or(rest);
                self.scopes.iter().any(|s| s.iter().any(|n| n == var))
            }
            _ => false,
        }
    }

    fn target(&self, t: &str) -> Result<(), SqlError> {
        if self.known(t) {
            Ok(())
        } else {
            Err(unknown(t.split(['[', '.']).next().unwrap_or(t)))
        }
    }

    fn block(&mut self, b: &Block) -> Result<(), SqlError> {
        self.labels.extend(b.label.clone());
        self.scopes.push(Vec::new());
        for d in &b.decls {
            self.scopes.last_mut().expect("a scope").push(d.name.clone());
        }
        self.stmts(&b.body)?;
        for h in &b.handlers {
            self.scopes.push(vec!["sqlstate".into(), "sqlerrm".into()]);
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

    fn looped(&mut self, label: &Option<String>, vars: Vec<String>, body: &[Stmt]) -> Result<(), SqlError> {
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
            Stmt::Assign { target, .. } => self.target(target),
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
            Stmt::ForRange { label, var, body, .. } => self.looped(label, vec![var.clone()], body),
            Stmt::ForQuery { label, targets, body, .. } => {
                for t in targets {
                    self.target(t)?;
                }
                self.looped(label, Vec::new(), body)
            }
            Stmt::ForEach { label, var, body, .. } => {
                self.target(var)?;
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
            Stmt::Sql { into: Some(into), .. } | Stmt::Execute { into: Some(into), .. } => {
                for t in &into.targets {
                    self.target(t)?;
                }
                Ok(())
            }
            Stmt::GetDiagnostics { items, .. } => {
                for (t, _) in items {
                    self.target(t)?;
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
