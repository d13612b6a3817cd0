//! A session's cursors (PostgreSQL's portals): those SQL's DECLARE opens
//! and PL/pgSQL's OPEN opens, in one name space, as in PostgreSQL (a
//! function can return a refcursor that the caller then FETCHes from).
//!
//! PORTAL-ROWS: a cursor's rows are computed when it is opened, under the
//! snapshot of the statement that opened it, and kept; FETCH and MOVE then
//! move over them. That gives the rows PostgreSQL's cursor gives (its
//! executor reads under the same snapshot) and makes every cursor
//! scrollable at no cost, but an error of a later row is raised by the
//! DECLARE or OPEN, not by the FETCH that reaches it, and the rows take
//! memory until the cursor closes (the executor materialises a query's
//! rows anyway).
//!
//! PORTAL-POSITION: the position follows PostgreSQL's portal bookkeeping
//! (at the start, at the end, and the count of the current row), and
//! every FETCH or MOVE is the same sequence of forward and backward runs
//! PostgreSQL's makes, so that counts, command tags and the rows
//! returned agree in every corner (FETCH 0, ABSOLUTE past either end,
//! MOVE BACKWARD ALL). A NO SCROLL cursor refuses a backward run as
//! PostgreSQL does; a cursor declared with neither SCROLL nor NO SCROLL
//! scrolls when its plan is one PostgreSQL's executor could run backward
//! ([`backward_capable`]).
//!
//! PORTAL-LIFETIME: a cursor belongs to the subtransaction level that
//! opened it. Rolling that level back closes it; releasing the level hands
//! it to the parent. A transaction's end closes its cursors, except WITH
//! HOLD ones at a commit, which stay until closed or until the session
//! ends.

use std::collections::HashMap;
use std::sync::Arc;

use snapscale_engine::catalog::Row;
use snapscale_engine::Tid;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use crate::plan::physical::{Node, Query};
use crate::plan::Column;
use crate::plan::SetOpKind;
pub(crate) use crate::statement::{Count, CursorOptions, Direction, FetchStatement};

/// One open cursor.
pub(crate) struct Portal {
    pub columns: Arc<[Column]>,
    rows: Vec<Row>,
    /// PORTAL-POSITION: PostgreSQL's atStart, atEnd and portalPos, and
    /// where the executor stands (0: before the first row, `rows.len() +
    /// 1`: after the last).
    at_start: bool,
    at_end: bool,
    position: u64,
    cursor: usize,
    pub scroll: bool,
    pub hold: bool,
    pub binary: bool,
    /// A PL/pgSQL FOR loop reads it: a commit inside the loop keeps it
    /// (PostgreSQL pins such a portal and makes it holdable).
    pinned: bool,
    /// The subtransaction depth that opened it; 0 once held past its
    /// transaction's commit.
    level: usize,
    /// The text of the query string that declared it (pg_cursors).
    pub statement: Arc<str>,
    /// What WHERE CURRENT OF may reach through it.
    target: CursorTarget,
    /// When it was declared (pg_cursors.creation_time).
    pub created: i64,
}

/// The session's cursors, by name.
#[derive(Default)]
pub(crate) struct Portals {
    open: HashMap<String, Portal>,
    /// The last number given to an unnamed cursor.
    unnamed: u64,
    /// Cursors opened or closed since pg_cursors' copy was made.
    changed: bool,
}

impl Portals {
    /// Opens cursor `name` over `rows` (42P03 if the name is taken).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        &mut self,
        name: &str,
        columns: Arc<[Column]>,
        rows: Vec<Row>,
        scroll: bool,
        options: CursorOptions,
        level: usize,
        statement: Arc<str>,
    ) -> Result<(), SqlError> {
        if self.open.contains_key(name) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already exists"),
            ));
        }
        let portal = Portal {
            columns,
            rows,
            at_start: true,
            at_end: false,
            position: 0,
            cursor: 0,
            scroll,
            hold: options.hold,
            binary: options.binary,
            pinned: false,
            target: CursorTarget::default(),
            level,
            statement,
            created: snapscale_values::now_micros(),
        };
        self.open.insert(name.to_owned(), portal);
        self.changed = true;
        Ok(())
    }

    /// A name no open cursor has, as PostgreSQL names a PL/pgSQL cursor
    /// opened without one.
    pub(crate) fn unnamed(&mut self) -> String {
        loop {
            self.unnamed += 1;
            let name = format!("<unnamed portal {}>", self.unnamed);
            if !self.open.contains_key(&name) {
                return name;
            }
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.open.contains_key(name)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Portal> {
        self.open.get(name)
    }

    /// Cursor `name`, or 34000.
    pub(crate) fn portal(&mut self, name: &str) -> Result<&mut Portal, SqlError> {
        self.open.get_mut(name).ok_or_else(|| missing(name))
    }

    /// What WHERE CURRENT OF may reach through cursor `name`.
    pub(crate) fn set_target(&mut self, name: &str, target: CursorTarget) {
        if let Some(p) = self.open.get_mut(name) {
            p.target = target;
        }
    }

    /// Marks cursor `name` read by a FOR loop (see `Portal::pinned`).
    pub(crate) fn pin(&mut self, name: &str) {
        if let Some(p) = self.open.get_mut(name) {
            p.pinned = true;
        }
    }

    /// CLOSE name (34000 if there is none).
    pub(crate) fn close(&mut self, name: &str) -> Result<(), SqlError> {
        self.changed = true;
        self.open.remove(name).map(|_| ()).ok_or_else(|| missing(name))
    }

    /// CLOSE ALL.
    pub(crate) fn close_all(&mut self) {
        self.changed |= !self.open.is_empty();
        self.open.clear();
    }

    /// Copies the open cursors to where pg_cursors reads them, if they
    /// changed since the last copy.
    pub(crate) fn publish(&mut self, xact: &mut snapscale_engine::xact::Xact) {
        if !std::mem::take(&mut self.changed) {
            return;
        }
        xact.open_cursors = self
            .open
            .iter()
            .map(|(name, p)| snapscale_engine::session_view::OpenCursor {
                name: name.clone(),
                statement: Arc::clone(&p.statement),
                holdable: p.hold,
                binary: p.binary,
                scrollable: p.scroll,
                created: p.created,
            })
            .collect();
    }

    /// The subtransaction at `depth` was released into its parent.
    pub(crate) fn released(&mut self, depth: usize) {
        for p in self.open.values_mut() {
            if p.level >= depth {
                p.level = depth - 1;
            }
        }
    }

    /// The subtransaction at `depth` was rolled back: its cursors close.
    pub(crate) fn rolled_back(&mut self, depth: usize) {
        self.retain(|p| p.level < depth);
    }

    fn retain(&mut self, keep: impl Fn(&Portal) -> bool) {
        let before = self.open.len();
        self.open.retain(|_, p| keep(p));
        self.changed |= self.open.len() != before;
    }

    /// The transaction committed: its WITH HOLD cursors stay, others close.
    pub(crate) fn committed(&mut self) {
        self.retain(|p| p.hold || p.pinned);
        for p in self.open.values_mut() {
            p.level = 0;
        }
    }

    /// The transaction aborted: only cursors held from earlier
    /// transactions stay.
    pub(crate) fn aborted(&mut self) {
        self.retain(|p| p.level == 0);
    }
}

fn missing(name: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_CURSOR_NAME, format!("cursor \"{name}\" does not exist"))
}

fn forward_only() -> SqlError {
    SqlError::new(SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE, "cursor can only scan forward")
        .with_hint("Declare it with SCROLL option to enable backward scan.")
}

/// What WHERE CURRENT OF may reach through a cursor: the tables its query
/// locks (FOR UPDATE / SHARE), and, when it is a simply updatable scan of
/// one table, that table's oid and its rows' tids, one per row.
#[derive(Default)]
pub(crate) struct CursorTarget {
    locked: Vec<u32>,
    scan: Option<(u32, Vec<Tid>)>,
}

impl CursorTarget {
    /// The target of a cursor over `q`, whose run left `scan` (its rows'
    /// tids, if it is a scan of one table) and gave `rows` rows.
    pub(crate) fn of(q: &Query, scan: Option<(u32, Vec<Tid>)>, rows: usize) -> CursorTarget {
        let mut locked = Vec::new();
        locked_tables(&q.root, &mut locked);
        CursorTarget { locked, scan: scan.filter(|(_, tids)| tids.len() == rows) }
    }
}

/// The tables the LockRows operators of `node` lock.
fn locked_tables(node: &Node, out: &mut Vec<u32>) {
    match node {
        Node::LockRows { input, targets, .. } => {
            out.extend(targets.iter().map(|t| t.rel.entry.oid));
            locked_tables(input, out);
        }
        Node::Project { input, .. }
        | Node::Limit { input, .. }
        | Node::Sort { input, .. }
        | Node::Filter { input, .. } => locked_tables(input, out),
        _ => {}
    }
}

/// Where the rows of one run go: kept (FETCH) or only counted (MOVE, and
/// PostgreSQL's positioning runs).
enum Sink<'a> {
    Keep(&'a mut Vec<Row>),
    Count,
}

impl Portal {
    /// The version of `table`'s row this cursor `name` is on, for WHERE
    /// CURRENT OF, with PostgreSQL's errors where it names none.
    pub(crate) fn current_tid(&self, name: &str, table: (u32, &str)) -> Result<Tid, SqlError> {
        let state = |m: String| SqlError::new(SqlState::INVALID_CURSOR_STATE, m);
        let (oid, table) = table;
        if self.level == 0 {
            return Err(state(format!("cursor \"{name}\" is held from a previous transaction")));
        }
        let t = &self.target;
        if !t.locked.is_empty() {
            match t.locked.iter().filter(|&&o| o == oid).count() {
                0 => {
                    return Err(state(format!(
                        "cursor \"{name}\" does not have a FOR UPDATE/SHARE reference to table \"{table}\""
                    )))
                }
                1 => {}
                _ => {
                    return Err(state(format!(
                        "cursor \"{name}\" has multiple FOR UPDATE/SHARE references to table \"{table}\""
                    )))
                }
            }
        }
        let tids = match &t.scan {
            Some((o, tids)) if *o == oid => tids,
            // PostgreSQL finds a locked table's row in a join too.
            _ if !t.locked.is_empty() => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "WHERE CURRENT OF a cursor over a join is not supported",
                ))
            }
            _ => {
                return Err(state(format!(
                    "cursor \"{name}\" is not a simply updatable scan of table \"{table}\""
                )))
            }
        };
        if self.at_start || self.at_end || self.cursor == 0 || self.cursor > tids.len() {
            return Err(state(format!("cursor \"{name}\" is not positioned on a row")));
        }
        Ok(tids[self.cursor - 1])
    }

    /// FETCH or MOVE: the rows fetched (none for MOVE) and their number,
    /// as PostgreSQL's command tag counts them.
    pub(crate) fn fetch(&mut self, direction: Direction, keep: bool) -> Result<(Vec<Row>, u64), SqlError> {
        let mut out = Vec::new();
        let n = {
            let mut sink = if keep { Sink::Keep(&mut out) } else { Sink::Count };
            self.run_fetch(direction, &mut sink)?
        };
        Ok((out, n))
    }

    /// PORTAL-POSITION: a FETCH as PostgreSQL decomposes it.
    fn run_fetch(&mut self, direction: Direction, sink: &mut Sink<'_>) -> Result<u64, SqlError> {
        let (mut forward, mut count) = match direction {
            Direction::Forward(Count::All) => (true, None),
            Direction::Backward(Count::All) => (false, None),
            Direction::Forward(Count::Rows(n)) => (n >= 0, Some(n.unsigned_abs())),
            Direction::Backward(Count::Rows(n)) => (n < 0, Some(n.unsigned_abs())),
            Direction::Absolute(n) if n > 0 => {
                let n = n as u64;
                if n - 1 < self.position / 2 {
                    self.rewind()?;
                    if n > 1 {
                        self.run(true, Some(n - 1), &mut Sink::Count)?;
                    }
                } else {
                    let pos = self.position + u64::from(self.at_end);
                    if n <= pos {
                        self.run(false, Some(pos - n + 1), &mut Sink::Count)?;
                    } else if n > pos + 1 {
                        self.run(true, Some(n - pos - 1), &mut Sink::Count)?;
                    }
                }
                return self.run(true, Some(1), sink);
            }
            Direction::Absolute(n) if n < 0 => {
                self.run(true, None, &mut Sink::Count)?;
                if n < -1 {
                    self.run(false, Some(n.unsigned_abs() - 1), &mut Sink::Count)?;
                }
                return self.run(false, Some(1), sink);
            }
            Direction::Absolute(_) => {
                self.rewind()?;
                return self.run(true, Some(0), sink);
            }
            Direction::Relative(n) if n > 0 => {
                if n > 1 {
                    self.run(true, Some(n as u64 - 1), &mut Sink::Count)?;
                }
                return self.run(true, Some(1), sink);
            }
            Direction::Relative(n) if n < 0 => {
                if n < -1 {
                    self.run(false, Some(n.unsigned_abs() - 1), &mut Sink::Count)?;
                }
                return self.run(false, Some(1), sink);
            }
            Direction::Relative(_) => (true, Some(0)),
        };
        if count == Some(0) {
            // FETCH 0 fetches the current row again, if there is one.
            let on_row = !self.at_start && !self.at_end;
            if let Sink::Count = sink {
                return Ok(u64::from(on_row));
            }
            if on_row {
                self.run(false, Some(1), &mut Sink::Count)?;
                count = Some(1);
                forward = true;
            }
        }
        if !forward && count.is_none() {
            if let Sink::Count = sink {
                // MOVE BACKWARD ALL is a rewind.
                let mut moved = self.position;
                if moved > 0 && !self.at_end {
                    moved -= 1;
                }
                self.rewind()?;
                return Ok(moved);
            }
        }
        self.run(forward, count, sink)
    }

    /// Back to before the first row (a NO SCROLL cursor that moved refuses).
    fn rewind(&mut self) -> Result<(), SqlError> {
        if self.at_start && !self.at_end {
            return Ok(());
        }
        if !self.scroll {
            return Err(forward_only());
        }
        self.at_start = true;
        self.at_end = false;
        self.position = 0;
        self.cursor = 0;
        Ok(())
    }

    /// One run of the executor: up to `count` rows (`None`: all) forward
    /// or backward, with PostgreSQL's bookkeeping after it.
    fn run(&mut self, forward: bool, count: Option<u64>, sink: &mut Sink<'_>) -> Result<u64, SqlError> {
        if forward {
            let moves = !(self.at_end || count == Some(0));
            let done = if moves { self.step(true, count, sink) } else { 0 };
            if moves {
                if done > 0 {
                    self.at_start = false;
                }
                if count.is_none_or(|c| done < c) {
                    self.at_end = true;
                }
                self.position += done;
            }
            Ok(done)
        } else {
            if !self.scroll {
                return Err(forward_only());
            }
            let moves = !(self.at_start || count == Some(0));
            let done = if moves { self.step(false, count, sink) } else { 0 };
            if moves {
                if done > 0 && self.at_end {
                    self.at_end = false;
                    self.position += 1;
                }
                if count.is_none_or(|c| done < c) {
                    self.at_start = true;
                    self.position = 0;
                } else {
                    self.position -= done;
                }
            }
            Ok(done)
        }
    }

    /// The executor's part of a run: the rows it passes, in order.
    fn step(&mut self, forward: bool, count: Option<u64>, sink: &mut Sink<'_>) -> u64 {
        let n = self.rows.len();
        let mut done = 0;
        while count.is_none_or(|c| done < c) {
            if forward {
                if self.cursor >= n {
                    self.cursor = n + 1;
                    break;
                }
                self.cursor += 1;
            } else {
                if self.cursor <= 1 {
                    self.cursor = 0;
                    break;
                }
                self.cursor -= 1;
            }
            if let Sink::Keep(out) = sink {
                out.push(Arc::clone(&self.rows[self.cursor - 1]));
            }
            done += 1;
        }
        done
    }
}

/// Whether PostgreSQL's executor could run this plan backward
/// (ExecSupportsBackwardScan, on the operator PostgreSQL would have where
/// snapscale's plan has this one): what a cursor declared with neither
/// SCROLL nor NO SCROLL allows.
pub(crate) fn backward_capable(node: &Node) -> bool {
    match node {
        Node::Scan(_)
        | Node::Computed { .. }
        | Node::Values(_)
        | Node::Function { .. }
        | Node::Sort { .. } => true,
        Node::SetOp { op: SetOpKind::Union, all: true, left, right } => {
            backward_capable(left) && backward_capable(right)
        }
        Node::Filter { input, .. } | Node::Project { input, .. } | Node::Limit { input, .. } => {
            backward_capable(input)
        }
        // A cursor that locks its rows reads forward only, as PostgreSQL's
        // FOR UPDATE cursors do (they cannot re-lock a row read before).
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapscale_values::Value;

    fn portal(n: i64, scroll: bool) -> Portal {
        let mut p = Portals::default();
        let rows = (1..=n).map(|i| Arc::from(vec![Value::Int(i)])).collect();
        let columns: Arc<[Column]> = Arc::from(vec![]);
        p.open("c", columns, rows, scroll, CursorOptions::default(), 1, Arc::from("")).unwrap();
        p.open.remove("c").unwrap()
    }

    fn ints(rows: &[Row]) -> Vec<i64> {
        rows.iter()
            .map(|r| match r[0] {
                Value::Int(i) => i,
                _ => unreachable!(),
            })
            .collect()
    }

    fn fetch(p: &mut Portal, d: Direction) -> Vec<i64> {
        ints(&p.fetch(d, true).unwrap().0)
    }

    #[test]
    fn forward_then_backward_as_postgresql() {
        let mut p = portal(5, true);
        assert_eq!(fetch(&mut p, Direction::Forward(Count::Rows(2))), [1, 2]);
        assert_eq!(fetch(&mut p, Direction::Backward(Count::Rows(1))), [1]);
        assert_eq!(fetch(&mut p, Direction::Forward(Count::All)), [2, 3, 4, 5]);
        assert_eq!(fetch(&mut p, Direction::Forward(Count::Rows(1))), Vec::<i64>::new());
        assert_eq!(fetch(&mut p, Direction::Backward(Count::Rows(1))), [5]);
        assert_eq!(fetch(&mut p, Direction::Relative(0)), [5]);
        assert_eq!(fetch(&mut p, Direction::Backward(Count::All)), [4, 3, 2, 1]);
        assert_eq!(fetch(&mut p, Direction::Relative(0)), Vec::<i64>::new());
    }

    #[test]
    fn absolute_positions() {
        let mut p = portal(5, true);
        assert_eq!(fetch(&mut p, Direction::Absolute(-1)), [5]);
        assert_eq!(fetch(&mut p, Direction::Absolute(2)), [2]);
        assert_eq!(fetch(&mut p, Direction::Absolute(7)), Vec::<i64>::new());
        assert_eq!(fetch(&mut p, Direction::Backward(Count::Rows(1))), [5]);
        assert_eq!(fetch(&mut p, Direction::Absolute(-7)), Vec::<i64>::new());
        assert_eq!(fetch(&mut p, Direction::Forward(Count::Rows(1))), [1]);
        assert_eq!(fetch(&mut p, Direction::Absolute(0)), Vec::<i64>::new());
        assert_eq!(fetch(&mut p, Direction::Relative(3)), [3]);
    }

    #[test]
    fn move_counts() {
        let mut p = portal(5, true);
        assert_eq!(p.fetch(Direction::Forward(Count::Rows(2)), false).unwrap().1, 2);
        assert_eq!(p.fetch(Direction::Relative(0), false).unwrap().1, 1);
        assert_eq!(p.fetch(Direction::Forward(Count::All), false).unwrap().1, 3);
        assert_eq!(p.fetch(Direction::Backward(Count::All), false).unwrap().1, 5);
        assert_eq!(fetch(&mut p, Direction::Forward(Count::Rows(1))), [1]);
    }

    #[test]
    fn no_scroll_refuses_going_back_only_once_moved() {
        let mut p = portal(5, false);
        assert_eq!(fetch(&mut p, Direction::Absolute(0)), Vec::<i64>::new());
        assert_eq!(fetch(&mut p, Direction::Forward(Count::Rows(1))), [1]);
        assert_eq!(fetch(&mut p, Direction::Absolute(2)), [2]);
        let e = p.fetch(Direction::Absolute(1), true).unwrap_err();
        assert_eq!(e.code, SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE);
        assert!(p.fetch(Direction::Backward(Count::Rows(1)), true).is_err());
    }
}
