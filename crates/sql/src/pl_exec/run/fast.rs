//! The interpreter's synchronous path (PL-FAST in the crate's README): a
//! statement whose every expression has a current simple plan (PL-CACHE)
//! runs here, without the statement dispatcher's future. A statement list
//! runs here until a statement needs the statement path; from there on
//! the async path takes over, and it tries this path again statement by
//! statement.

use super::*;
use crate::expr::Expr;

/// What running statements synchronously left.
pub(super) enum Sync<'a> {
    /// They ran to their end (`Flow::Next`), or one of them ended the list.
    Done(Flow),
    /// Left to run, in order, each list from its first statement: the
    /// first list's first statement needs the statement path (nothing of
    /// it ran). An IF whose branch stopped leaves that branch's rest
    /// before the rest of the list the IF is in.
    Pending(Vec<&'a [Stmt]>),
}

impl<'s, 'c> Interp<'s, 'c> {
    /// Runs `list`, each statement synchronously where it can be, else
    /// through the statement path (boxed: the dispatcher's future is
    /// large, and recursive through nested bodies).
    pub(super) async fn run_list(&mut self, list: &[Stmt]) -> Result<Flow, SqlError> {
        match self.sync_list(list)? {
            Sync::Done(flow) => Ok(flow),
            Sync::Pending(work) => self.run_pending(work).await,
        }
    }

    /// Runs what [`sync_list`](Self::sync_list) left.
    pub(super) async fn run_pending(&mut self, mut work: Vec<&[Stmt]>) -> Result<Flow, SqlError> {
        let mut i = 0;
        'lists: while i < work.len() {
            let slice = work[i];
            i += 1;
            for (j, s) in slice.iter().enumerate() {
                let flow = match self.sync_stmt(s) {
                    Some(Ok(Sync::Done(flow))) => flow,
                    Some(Ok(Sync::Pending(mut rest))) => {
                        rest.push(&slice[j + 1..]);
                        rest.extend_from_slice(&work[i..]);
                        work = rest;
                        i = 0;
                        continue 'lists;
                    }
                    Some(Err(e)) => return Err(e),
                    None => self.stmt_boxed(s).await?,
                };
                if !matches!(flow, Flow::Next) {
                    return Ok(flow);
                }
            }
        }
        Ok(Flow::Next)
    }

    fn stmt_boxed<'a>(&'a mut self, s: &'a Stmt) -> Fut<'a, Flow> {
        Box::pin(self.stmt(s))
    }

    /// Runs `list` synchronously as far as it can.
    pub(super) fn sync_list<'a>(&mut self, list: &'a [Stmt]) -> Result<Sync<'a>, SqlError> {
        for (i, s) in list.iter().enumerate() {
            match self.sync_stmt(s) {
                None => return Ok(Sync::Pending(vec![&list[i..]])),
                Some(Err(e)) => return Err(e),
                Some(Ok(Sync::Done(Flow::Next))) => {}
                Some(Ok(Sync::Done(flow))) => return Ok(Sync::Done(flow)),
                Some(Ok(Sync::Pending(mut rest))) => {
                    rest.push(&list[i + 1..]);
                    return Ok(Sync::Pending(rest));
                }
            }
        }
        Ok(Sync::Done(Flow::Next))
    }

    /// Runs `s` synchronously when all it evaluates is a simple expression
    /// with a current plan. `None`: nothing of it ran (it is checked
    /// before anything is evaluated); run it through the statement path.
    /// Errors carry the CONTEXT line the statement path would give them.
    fn sync_stmt<'a>(&mut self, s: &'a Stmt) -> Option<Result<Sync<'a>, SqlError>> {
        let done = |flow| Sync::Done(flow);
        match s {
            Stmt::Null => Some(Ok(done(Flow::Next))),
            Stmt::Assign { target, expr, line } => {
                // The target as found at this place before (`assign`).
                let &k = self.targets.get(&key_of(expr, 2))?;
                if let Some(r) = self.try_int_in_place(k, expr) {
                    return Some(match r {
                        Ok(()) => Ok(done(Flow::Next)),
                        Err(err) => {
                            let err = self.simple_error(err, expr, Query::Assignment(target));
                            Err(self.in_context(err, *line, "assignment"))
                        }
                    });
                }
                let (r, ty) = self.try_simple_value(expr)?;
                let stored = match r {
                    Ok(v) if self.vars[k].is_record => self.store_record(k, v, expr),
                    Ok(v) => self.store(k, v, ty),
                    Err(err) => Err(self.simple_error(err, expr, Query::Assignment(target))),
                };
                Some(match stored {
                    Ok(()) => Ok(done(Flow::Next)),
                    Err(e) => Err(self.in_context(e, *line, "assignment")),
                })
            }
            Stmt::If { branches, otherwise, line } => {
                // Checked before the first is evaluated: nothing may run
                // twice when a later one sends the IF the statement path.
                if !branches.iter().skip(1).all(|(cond, _)| self.simple_ready(cond)) {
                    return None;
                }
                for (cond, body) in branches {
                    match self.try_truth(cond)? {
                        Ok(Some(true)) => return Some(self.sync_list(body)),
                        Ok(_) => {}
                        Err(e) => return Some(Err(self.in_context(e, *line, "IF"))),
                    }
                }
                Some(match otherwise {
                    Some(body) => self.sync_list(body),
                    None => Ok(done(Flow::Next)),
                })
            }
            Stmt::Exit { next, label, when, line } => {
                if let Some(cond) = when {
                    match self.try_truth(cond)? {
                        Ok(Some(true)) => {}
                        Ok(_) => return Some(Ok(done(Flow::Next))),
                        Err(e) => {
                            let kind = if *next { "CONTINUE" } else { "EXIT" };
                            return Some(Err(self.in_context(e, *line, kind)));
                        }
                    }
                }
                Some(Ok(done(if *next { Flow::Continue(label.clone()) } else { Flow::Exit(label.clone()) })))
            }
            Stmt::Return { expr, line, .. } => {
                if let Some(e) = expr {
                    // RETURN expr in a void function: the statement path's error.
                    if self.returns == SqlType::Void {
                        return None;
                    }
                    match self.try_simple(e, Query::Expression)? {
                        Ok((v, from)) => match self.return_value(v, from, e, *line) {
                            Ok(v) => self.result = v,
                            Err(err) => return Some(Err(err)),
                        },
                        Err(err) => return Some(Err(self.in_context(err, *line, "RETURN"))),
                    }
                }
                self.returned = true;
                Some(Ok(done(Flow::Return)))
            }
            _ => None,
        }
    }

    /// Whether `e` was compiled to a simple expression whose plan is still
    /// current: made in this catalog generation, for the variables' types
    /// as they are.
    pub(super) fn simple_ready(&self, e: &Sql) -> bool {
        self.cache.get(&key_of(e, 0)).is_some_and(|c| self.current_simple(c).is_some())
    }

    /// `c`'s simple expression and its type, if its plan is current.
    fn current_simple<'a>(&self, c: &'a Compiled) -> Option<(&'a Expr, SqlType)> {
        let planned = c.planned.as_ref()?;
        let simple = planned.simple()?;
        let current = planned.generation() == self.spi.xact.catalog_generation()
            && c.sources.len() == c.declared.len()
            && c.sources.iter().zip(&c.declared).all(|(s, d)| self.type_of(*s) == *d);
        current.then_some(simple)
    }

    /// The value of `e` when it was compiled to a simple expression whose
    /// plan is current, evaluated on the spot: in its quick shape over the
    /// variables where it has one, else with their values as parameters.
    /// `None` (nothing evaluated) when it must take the statement path.
    pub(super) fn try_simple(&self, e: &Sql, q: Query<'_>) -> Option<Result<(Value, SqlType), SqlError>> {
        let (r, ty) = self.try_simple_value(e)?;
        Some(match r {
            Ok(v) => Ok((v, ty)),
            Err(err) => Err(self.simple_error(err, e, q)),
        })
    }

    /// An error of simple expression `e` at run time: PostgreSQL names no
    /// query for it, unless the expression is constant (then PostgreSQL
    /// computed it while planning, in SPI: PL-SPI-ERRORS).
    fn simple_error(&self, err: SqlError, e: &Sql, q: Query<'_>) -> SqlError {
        let constant = self.cache.get(&key_of(e, 0)).is_some_and(|c| c.sources.is_empty());
        if constant {
            spi_error(err, &e.text, "SELECT ".len(), q)
        } else {
            unnamed_error(err)
        }
    }

    /// [`try_simple`](Self::try_simple)'s value and type apart (the value
    /// moved as little as can be: a loop's turn is a few of these) and
    /// its error without the QUERY context.
    fn try_simple_value(&self, e: &Sql) -> Option<(Result<Value, SqlError>, SqlType)> {
        let c = self.cache.get(&key_of(e, 0))?;
        let (expr, ty) = self.current_simple(c)?;
        let quick = c.planned.as_ref().and_then(|p| p.quick());
        if let Some(r) = quick
            .and_then(|q| q.eval(|i| self.borrow(*c.sources.get(i)?), self.spi.xact.session_style().zone))
        {
            return Some((r, ty));
        }
        let mut params = self.scratch.take();
        let r = fill_params(&self.vars, &c.sources, &mut params)
            .and_then(|()| crate::exec::evaluate_simple(self.spi.xact, self.spi.limits, expr, &params));
        params.clear();
        self.scratch.set(params);
        Some((r, ty))
    }

    /// `k := expr` where `expr` is integer arithmetic on two integers and
    /// `k` an integer variable of its type with nothing to check: the
    /// result written over the old one (what `store` would do, without a
    /// value made and moved). `None`: nothing done.
    fn try_int_in_place(&mut self, k: usize, e: &Sql) -> Option<Result<(), SqlError>> {
        let c = self.cache.get(&key_of(e, 0))?;
        let (_, ty) = self.current_simple(c)?;
        let var = self.vars.get(k)?;
        if ty != var.ty || var.constant || var.is_record || !matches!(var.value, Value::Int(_)) {
            return None;
        }
        let quick = c.planned.as_ref()?.quick()?;
        let r = quick.int(|i| self.borrow(*c.sources.get(i)?))?;
        Some(r.map(|n| {
            if let Value::Int(x) = &mut self.vars[k].value {
                *x = n;
            }
        }))
    }

    /// A ready condition's truth (NULL: `None`); `None` as
    /// [`try_simple`](Self::try_simple)'s.
    fn try_truth(&self, cond: &Sql) -> Option<Result<Option<bool>, SqlError>> {
        Some(self.try_simple(cond, Query::Expression)?.and_then(|(v, ty)| self.truth_of(v, ty)))
    }

    /// A scalar variable's or a record field's value where it is (`None`
    /// for a whole record, whose value is made).
    fn borrow(&self, s: Src) -> Option<&Value> {
        match s {
            Src::Var(k) => {
                let var = self.vars.get(k)?;
                (!var.is_record).then_some(&var.value)
            }
            Src::Field(k, f) => self.vars.get(k)?.record.as_ref()?.values.get(f),
        }
    }
}
