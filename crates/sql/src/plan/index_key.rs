//! An index's key parts and predicate compiled over its table's row (by
//! bind/index_keys.rs): the key function the engine's index calls, and
//! what the planner matches a query's expressions and WHERE against.

use snapscale_engine::index::{Index, KeyFunction};
use snapscale_values::{SqlError, Value};

use crate::expr::{Ctx, Expr};

/// An index's compiled key parts and predicate, over the table's row.
#[derive(Debug)]
pub(crate) struct CompiledKey {
    /// One per key part (a column is `Expr::Column`).
    pub parts: Vec<Expr>,
    pub predicate: Option<Expr>,
}

impl KeyFunction for CompiledKey {
    fn key(&self, row: &[Value]) -> Result<Option<Vec<Value>>, SqlError> {
        let cx = Ctx::detached(row);
        if let Some(p) = &self.predicate {
            if !crate::expr::passes(p, &cx)? {
                return Ok(None);
            }
        }
        self.parts.iter().map(|e| e.eval(&cx)).collect::<Result<_, _>>().map(Some)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled key of an index whose keys are computed.
pub(crate) fn compiled(index: &Index) -> Option<&CompiledKey> {
    index.key_function()?.as_any().downcast_ref()
}
