//! PL/pgSQL's cursors: OPEN, FETCH, MOVE, CLOSE and FOR over a bound
//! cursor, over the session's cursors ([`crate::portals`], whose rows an
//! OPEN computes: PORTAL-ROWS).
//!
//! A cursor variable holds its portal's name. A bound cursor's variable
//! starts out holding its own name; one that is NULL when opened gets a
//! name of PostgreSQL's `<unnamed portal N>` form, which OPEN stores in it
//! (a FOR loop gives the NULL back when it closes the cursor). A bound
//! cursor's arguments are evaluated as one select list, `arg AS param,
//! …`, as PostgreSQL evaluates them, and its query then runs with its
//! parameters as variables of a frame of their own. That query is
//! prepared once per place that opens it: its variables are found by the
//! frames of that place.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use super::{Flow, Frame, Interp, Name, Var};
use crate::output::Output;
use crate::plpgsql::ast::{CursorDecl, FetchCount, FetchDir, FetchKind, IntoTargets, OpenSource, Sql, Stmt};
use crate::portals::{Count, CursorOptions, Direction};

/// The cache key of the query a bound cursor runs when opened at the
/// statement whose `line` field this is (no SQL text of the body is at
/// that address: `key_of`'s keys stay apart).
fn site_key(line: &usize) -> usize {
    (line as *const usize as usize) * 2
}

impl Interp<'_, '_> {
    /// The variable a cursor statement names, which must be a cursor.
    fn cursor_var(&self, var: &str) -> Result<usize, SqlError> {
        let k = self.lookup(var).ok_or_else(|| super::not_variable(var))?;
        if self.vars[k].ty != SqlType::Refcursor {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("variable \"{var}\" must be of type cursor or refcursor"),
            ));
        }
        Ok(k)
    }

    /// The portal variable `k` names, or a new name if it is NULL (true).
    fn portal_name(&mut self, k: usize) -> (String, bool) {
        match &self.vars[k].value {
            Value::Null => (self.spi.portals.unnamed(), true),
            // A refcursor variable holds text.
            v => (v.to_text().unwrap_or_default(), false),
        }
    }

    /// The open portal a cursor variable names.
    fn opened(&self, var: &str) -> Result<String, SqlError> {
        let k = self.cursor_var(var)?;
        match &self.vars[k].value {
            Value::Null => Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                format!("cursor variable \"{var}\" is null"),
            )),
            v => Ok(v.to_text().unwrap_or_default()),
        }
    }

    fn not_in_use(&self, name: &str) -> Result<(), SqlError> {
        if self.spi.portals.contains(name) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already in use"),
            ));
        }
        Ok(())
    }

    /// OPEN.
    pub(super) async fn open(
        &mut self,
        var: &str,
        scroll: Option<bool>,
        source: &OpenSource,
        line: &usize,
    ) -> Result<(), SqlError> {
        let k = self.cursor_var(var)?;
        let (name, generated) = self.portal_name(k);
        self.not_in_use(&name)?;
        let slot = crate::exec::TidSlot::default();
        let (out, scrollable, text, key) = match source {
            OpenSource::Query(sql) => {
                self.spi.capture = Some(Arc::clone(&slot));
                let out = self.execute(sql).await;
                self.spi.capture = None;
                let key = super::key_of(sql, 0);
                (out?, self.scrollable(key), sql.text.clone(), Some(key))
            }
            OpenSource::Execute { query, using } => {
                let (out, scrollable, text, _) = self.run_dynamic_plan(query, using, false).await?;
                (out, scrollable, text, None)
            }
            OpenSource::Bound(args) => {
                let decl = self.vars[k].cursor.clone().ok_or_else(|| {
                    SqlError::new(SqlState::SYNTAX_ERROR, format!("cursor \"{var}\" is not a bound cursor"))
                })?;
                let out = self.bound_rows(&decl, args.as_ref(), site_key(line), &slot).await;
                let scrollable = decl.scroll.unwrap_or_else(|| self.scrollable(site_key(line)));
                (out?, scrollable, decl.query.text.clone(), Some(site_key(line)))
            }
        };
        let rows = match &out {
            Output::Rows { rows, .. } => rows.len(),
            _ => 0,
        };
        self.open_portal(&name, out, scroll.unwrap_or(scrollable), &text)?;
        self.set_target(&name, key, &slot, rows);
        if generated {
            self.store(k, Value::Text(name), SqlType::Refcursor)?;
        }
        Ok(())
    }

    /// Keeps a query's rows as portal `name`.
    fn open_portal(&mut self, name: &str, out: Output, scroll: bool, text: &str) -> Result<(), SqlError> {
        let (columns, rows) = match out {
            Output::Rows { columns, rows, .. } => (columns, rows),
            Output::Command(tag) => {
                let what = tag.split(' ').next().unwrap_or_default().to_owned();
                return Err(SqlError::new(
                    SqlState::INVALID_CURSOR_DEFINITION,
                    format!("cannot open {what} query as cursor"),
                ));
            }
            _ => {
                return Err(SqlError::new(SqlState::INVALID_CURSOR_DEFINITION, "cannot open query as cursor"))
            }
        };
        let options = CursorOptions { scroll: Some(scroll), hold: false, binary: false };
        let depth = self.spi.xact.depth();
        self.spi.portals.open(name, columns, rows, scroll, options, depth, Arc::from(text))
    }

    /// What WHERE CURRENT OF may reach through portal `name`, opened by the
    /// query kept under `key`, which left its rows' tids in `slot`.
    fn set_target(&mut self, name: &str, key: Option<usize>, slot: &crate::exec::TidSlot, rows: usize) {
        let captured = slot.lock().expect("cursor tids poisoned").take();
        let query =
            key.and_then(|k| self.cache.get(&k)).and_then(|c| c.planned.as_ref()).and_then(|p| p.query());
        if let Some(q) = query {
            let target = crate::portals::CursorTarget::of(q, captured, rows);
            self.spi.portals.set_target(name, target);
        }
    }

    /// Whether the plan kept under `key` could run backward (what a cursor
    /// declared neither SCROLL nor NO SCROLL allows).
    fn scrollable(&self, key: usize) -> bool {
        self.cache.get(&key).and_then(|c| c.planned.as_ref()).is_some_and(|p| p.scrollable())
    }

    /// A bound cursor's rows: its arguments evaluated, then its query run
    /// with its parameters as variables, leaving its rows' tids in `slot`.
    async fn bound_rows(
        &mut self,
        decl: &CursorDecl,
        args: Option<&Sql>,
        site: usize,
        slot: &crate::exec::TidSlot,
    ) -> Result<Output, SqlError> {
        let values = match args {
            Some(args) => self.select_list(args).await?,
            None => Vec::new(),
        };
        let mark = self.vars.len();
        let mut names = Vec::with_capacity(values.len());
        for ((param, ty_text), (v, from)) in decl.params.iter().zip(values) {
            let ty = SqlType::from_name(ty_text.trim(), None).unwrap_or(from);
            let value = self.convert(v, from, ty)?;
            names.push((Name::Owned(param.clone()), self.vars.len()));
            self.vars.push(Var {
                name: Name::Owned(param.clone()),
                ty,
                value,
                constant: false,
                not_null: false,
                record: None,
                is_record: false,
                fixed: false,
                domain: None,
                cursor: None,
            });
        }
        self.frames.push(Frame { label: None, function: false, names });
        self.spi.capture = Some(Arc::clone(slot));
        let out = self.execute_keyed(site, &decl.query, str::to_owned).await;
        self.spi.capture = None;
        self.frames.pop();
        self.vars.truncate(mark);
        out
    }

    /// The values of a select list (`a AS x, b AS y`), named as PostgreSQL
    /// names it when it fails: `SQL expression "…"`.
    async fn select_list(&mut self, list: &Sql) -> Result<Vec<(Value, SqlType)>, SqlError> {
        let out = self
            .execute_keyed(super::key_of(list, 0), list, |t| format!("SELECT {t}"))
            .await
            .map_err(|e| strip_statement_context(e, list))?;
        let Output::Rows { columns, rows, .. } = out else { return Ok(Vec::new()) };
        let row = rows.into_iter().next();
        Ok(columns
            .iter()
            .enumerate()
            .map(|(i, c)| (row.as_ref().map_or(Value::Null, |r| r[i].clone()), c.ty))
            .collect())
    }

    /// FETCH … INTO (`into`) or MOVE.
    pub(super) async fn fetch(
        &mut self,
        var: &str,
        dir: &FetchDir,
        into: Option<&IntoTargets>,
    ) -> Result<(), SqlError> {
        let name = self.opened(var)?;
        let count = match &dir.count {
            FetchCount::Rows(n) => Count::Rows(*n),
            FetchCount::All => Count::All,
            FetchCount::Expr(e) => {
                let (v, from) = self.value(e).await?;
                match self.convert(v, from, SqlType::Int8)? {
                    Value::Int(n) => Count::Rows(n),
                    _ => {
                        return Err(SqlError::new(
                            SqlState::NULL_VALUE_NOT_ALLOWED,
                            "relative or absolute cursor position is null",
                        ))
                    }
                }
            }
        };
        let direction = match (dir.kind, count) {
            (FetchKind::Forward, c) => Direction::Forward(c),
            (FetchKind::Backward, c) => Direction::Backward(c),
            (FetchKind::Absolute, Count::Rows(n)) => Direction::Absolute(n),
            (FetchKind::Relative, Count::Rows(n)) => Direction::Relative(n),
            (_, Count::All) => Direction::Forward(Count::All),
        };
        let portal = self.spi.portals.portal(&name)?;
        let columns: Vec<(String, SqlType)> = portal.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
        let (rows, n) = portal.fetch(direction, into.is_some())?;
        if let Some(into) = into {
            self.assign_row(&into.targets, &columns, rows.first().cloned())?;
        }
        self.set_found(n > 0, n as usize);
        Ok(())
    }

    /// CLOSE.
    pub(super) fn close(&mut self, var: &str) -> Result<(), SqlError> {
        let name = self.opened(var)?;
        self.spi.portals.close(&name)
    }

    /// FOR record IN bound-cursor [(arguments)] LOOP: the cursor opened,
    /// read a row per turn, and closed when the loop ends.
    pub(super) async fn for_cursor(
        &mut self,
        label: &Option<String>,
        target: &str,
        cursor: &str,
        args: Option<&Sql>,
        body: &[Stmt],
        line: &usize,
    ) -> Result<Flow, SqlError> {
        let (k, name, generated) = self
            .open_for_loop(cursor, args, line)
            .await
            .map_err(|e| self.in_context(e, *line, "FOR over cursor"))?;
        // The loop's record is a variable of its own block.
        let mark = self.vars.len();
        self.vars.push(Var {
            name: Name::Owned(target.to_owned()),
            ty: SqlType::Record(snapscale_values::Rec::Anonymous),
            value: Value::Null,
            constant: false,
            not_null: false,
            record: None,
            is_record: true,
            fixed: false,
            domain: None,
            cursor: None,
        });
        self.frames.push(Frame {
            label: label.clone().map(Name::Owned),
            function: false,
            names: vec![(Name::Owned(target.to_owned()), mark)],
        });
        let ran = self.cursor_turns(label, target, &name, body).await;
        self.frames.pop();
        self.vars.truncate(mark);
        let _ = self.spi.portals.close(&name);
        if generated {
            self.vars[k].value = Value::Null;
        }
        let (flow, any) = ran?;
        self.set_found(any, 0);
        Ok(flow)
    }

    /// Opens a FOR loop's bound cursor: its variable, its portal's name and
    /// whether that name was made for it.
    async fn open_for_loop(
        &mut self,
        cursor: &str,
        args: Option<&Sql>,
        line: &usize,
    ) -> Result<(usize, String, bool), SqlError> {
        let k = self.cursor_var(cursor)?;
        let Some(decl) = self.vars[k].cursor.clone() else {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cursor FOR loop must use a bound cursor variable",
            ));
        };
        let (name, generated) = self.portal_name(k);
        self.not_in_use(&name)?;
        let slot = crate::exec::TidSlot::default();
        let out = self.bound_rows(&decl, args, site_key(line), &slot).await?;
        let rows = match &out {
            Output::Rows { rows, .. } => rows.len(),
            _ => 0,
        };
        let scroll = decl.scroll.unwrap_or_else(|| self.scrollable(site_key(line)));
        self.open_portal(&name, out, scroll, &decl.query.text)?;
        self.set_target(&name, Some(site_key(line)), &slot, rows);
        // A COMMIT in the loop keeps it open (PostgreSQL pins it).
        self.spi.portals.pin(&name);
        if generated {
            self.vars[k].value = Value::Text(name.clone());
        }
        Ok((k, name, generated))
    }

    /// The turns of a cursor loop: the flow it ended with, and whether it
    /// had a row.
    async fn cursor_turns(
        &mut self,
        label: &Option<String>,
        target: &str,
        name: &str,
        body: &[Stmt],
    ) -> Result<(Flow, bool), SqlError> {
        let mut any = false;
        loop {
            self.spi.xact.check_cancel()?;
            let portal = self.spi.portals.portal(name)?;
            let columns: Vec<(String, SqlType)> =
                portal.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
            let (rows, _) = portal.fetch(Direction::Forward(Count::Rows(1)), true)?;
            let Some(row) = rows.into_iter().next() else { return Ok((Flow::Next, any)) };
            any = true;
            self.assign_row(std::slice::from_ref(&target.to_owned()), &columns, Some(row))?;
            if let Some(flow) = self.loop_turn(label, body).await? {
                return Ok((flow, any));
            }
        }
    }
}

/// An argument list's error as PostgreSQL reports it: the expression
/// without the SELECT it ran as.
fn strip_statement_context(e: SqlError, list: &Sql) -> SqlError {
    let statement = format!("SQL statement \"SELECT {}\"", list.text);
    let mut d = e.into_data();
    if let Some(c) = d.context.take() {
        let c = c.replace(&statement, &format!("SQL expression \"{}\"", list.text));
        d.context = Some(c);
    }
    if let Some(q) = d.internal.as_mut() {
        if let Some(rest) = q.query.strip_prefix("SELECT ") {
            q.query = rest.to_owned();
            q.position = q.position.saturating_sub(7);
        }
    }
    SqlError::from(d)
}
