//! User-defined aggregates (AGGREGATE-CALL in the crate's README): the
//! state the transition function carries from row to row, and the final
//! function's value of it, as PostgreSQL's advance_transition_function
//! and finalize_aggregate compute them.

use snapscale_values::{SqlError, Value};

use super::query::Run;
use crate::plan::UserAgg;

/// One group's (or window frame's) state of a user-defined aggregate.
#[derive(Clone, Debug)]
pub(super) struct UserState {
    value: Value,
    /// Whether the state holds a value yet: a strict transition function
    /// without an initial state takes its first row's argument as the
    /// state instead of being called.
    started: bool,
}

impl Run<'_, '_> {
    /// The state before any row: INITCOND, or NULL.
    pub(super) fn user_start(&self, u: &UserAgg) -> Result<UserState, SqlError> {
        let value = match &u.init {
            Some(e) => e.eval(&self.ctx(&[]))?,
            None => Value::Null,
        };
        Ok(UserState { value, started: u.init.is_some() })
    }

    /// One row's arguments into the state.
    pub(super) fn user_step(
        &self,
        u: &UserAgg,
        st: &mut UserState,
        args: Vec<Value>,
    ) -> Result<(), SqlError> {
        if u.trans_strict {
            // A strict function is not called with a NULL: the row is
            // skipped, and a NULL state stays NULL.
            if args.iter().any(|v| matches!(v, Value::Null)) {
                return Ok(());
            }
            if !st.started {
                st.value = args.into_iter().next().unwrap_or(Value::Null);
                st.started = true;
                return Ok(());
            }
            if matches!(st.value, Value::Null) {
                return Ok(());
            }
        }
        let mut row = Vec::with_capacity(args.len() + 1);
        row.push(std::mem::replace(&mut st.value, Value::Null));
        row.extend(args);
        st.value = u.trans.eval(&self.ctx(&row))?;
        st.started = true;
        Ok(())
    }

    /// The aggregate's value for a state: the final function's of it (NULL
    /// for its extra arguments), or the state itself.
    pub(super) fn user_finish(&self, u: &UserAgg, st: &UserState) -> Result<Value, SqlError> {
        let Some(f) = &u.finish else { return Ok(st.value.clone()) };
        if u.finish_strict && matches!(st.value, Value::Null) {
            return Ok(Value::Null);
        }
        let mut row = Vec::with_capacity(1 + u.extra);
        row.push(st.value.clone());
        row.extend(std::iter::repeat_n(Value::Null, u.extra));
        f.eval(&self.ctx(&row))
    }
}

/// Whether two argument lists are the same for DISTINCT (NULLs equal).
pub(super) fn same_arguments(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (x, y) => crate::expr::compare(x, y, false).is_ok_and(|o| o.is_eq()),
        })
}

/// Whether aggregate `b` can take aggregate `a`'s transition state: both
/// user-defined, fed the same rows (filter, order, DISTINCT) with the same
/// arguments, through the same transition from the same initial state.
pub(super) fn shares_state(a: &crate::plan::Aggregate, b: &crate::plan::Aggregate) -> bool {
    let (Some(x), Some(y)) = (&a.user, &b.user) else { return false };
    a.filter == b.filter
        && a.order == b.order
        && x.args == y.args
        && x.distinct == y.distinct
        && x.trans == y.trans
        && x.trans_strict == y.trans_strict
        && x.init == y.init
}
