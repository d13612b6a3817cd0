//! Polymorphic parameters (anyelement, anyarray, anynonarray, anyenum and
//! the anycompatible family), resolved per call as PostgreSQL resolves
//! them: every anyelement-family parameter stands for one type, which the
//! arguments give exactly (an anyarray argument through its element type);
//! the anycompatible family stands for the common type of its arguments.
//! The call then binds a copy of the function with the resolved types in
//! place (`concrete`), so its body is bound, planned and run as a
//! function of those types.

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::routines::RoutineDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, Poly, SqlError, SqlType};

/// What a call resolved its function's polymorphic types to.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Resolved {
    /// The anyelement family's type.
    pub any: Option<SqlType>,
    /// The anycompatible family's type.
    pub compatible: Option<SqlType>,
}

/// Whether `def` takes or returns a polymorphic type.
pub(super) fn is_polymorphic(def: &RoutineDef) -> bool {
    def.args.iter().any(|a| matches!(a.ty, SqlType::Poly(_)))
        || matches!(def.returns, SqlType::Poly(_))
        || def.table_columns.iter().any(|(_, t)| matches!(t, SqlType::Poly(_)))
}

/// The types `params` stand for given arguments of types `args` (`None`
/// for an unknown literal); `None` if the arguments do not fit them.
pub(super) fn resolve(params: &[SqlType], args: &[Option<SqlType>]) -> Option<Resolved> {
    let mut any: Option<SqlType> = None;
    let mut compatible: Vec<SqlType> = Vec::new();
    for (p, a) in params.iter().zip(args) {
        let (SqlType::Poly(p), Some(a)) = (p, a) else { continue };
        let element = if p.is_array() {
            match a {
                SqlType::Array(e) => e.ty(),
                _ => return None,
            }
        } else {
            *a
        };
        if p.compatible() {
            compatible.push(element);
        } else {
            match any {
                Some(t) if t != element => return None,
                _ => any = Some(element),
            }
        }
    }
    let compatible = match compatible.is_empty() {
        true => None,
        false => Some(super::coerce::common_type(compatible.into_iter().map(Some), "anycompatible").ok()?),
    };
    // Parameters whose arguments are all unknown literals: text, for the
    // anycompatible family (PostgreSQL cannot tell for anyelement).
    let compatible = compatible.or_else(|| {
        params.iter().any(|p| matches!(p, SqlType::Poly(k) if k.compatible())).then_some(SqlType::Text)
    });
    let resolved = Resolved { any, compatible };
    for p in params {
        let SqlType::Poly(k) = p else { continue };
        let t = if k.compatible() { resolved.compatible } else { resolved.any };
        match (k, t) {
            (_, None) => return None,
            (Poly::AnyNonArray | Poly::AnyCompatibleNonArray, Some(SqlType::Array(_))) => return None,
            (Poly::AnyEnum, Some(t)) if !matches!(t, SqlType::Enum(_)) => return None,
            (k, Some(t)) if k.is_array() && Elem::of(t).is_none() => return None,
            _ => {}
        }
    }
    Some(resolved)
}

/// `ty` with the resolved types in place of polymorphic ones.
pub(super) fn concrete_type(ty: SqlType, r: Resolved) -> Result<SqlType, SqlError> {
    let SqlType::Poly(k) = ty else { return Ok(ty) };
    let t = if k.compatible() { r.compatible } else { r.any };
    let Some(t) = t else {
        return Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            "could not determine polymorphic type because input has type unknown",
        ));
    };
    if !k.is_array() {
        return Ok(t);
    }
    Elem::of(t).map(SqlType::Array).ok_or_else(|| {
        SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("could not find array type for data type {}", t.name()),
        )
    })
}

/// A copy of function `entry` with its polymorphic types resolved.
pub(super) fn concrete(entry: &Arc<RelEntry>, r: Resolved) -> Result<Arc<RelEntry>, SqlError> {
    let def = entry.routine.as_ref().expect("a routine row");
    let mut def = def.clone();
    for a in &mut def.args {
        a.ty = concrete_type(a.ty, r)?;
    }
    def.returns = concrete_type(def.returns, r)?;
    for (_, t) in &mut def.table_columns {
        *t = concrete_type(*t, r)?;
    }
    // An aggregate's state stands for what its arguments do.
    if let Some(a) = def.aggregate.as_mut() {
        a.state = concrete_type(a.state, r)?;
        if let Some(m) = a.mstate.as_mut() {
            *m = concrete_type(*m, r)?;
        }
    }
    Ok(Arc::new(RelEntry { routine: Some(def), ..(**entry).clone() }))
}

/// PostgreSQL's check of a polymorphic result at CREATE FUNCTION: the
/// result's family must be among the inputs.
pub(super) fn check_result(def: &RoutineDef) -> Result<(), SqlError> {
    let outputs =
        std::iter::once(def.returns).chain(def.args.iter().filter(|a| a.mode.is_output()).map(|a| a.ty));
    let inputs: Vec<Poly> = def
        .args
        .iter()
        .filter(|a| a.mode.is_input())
        .filter_map(|a| match a.ty {
            SqlType::Poly(p) => Some(p),
            _ => None,
        })
        .collect();
    for t in outputs.chain(def.table_columns.iter().map(|(_, t)| *t)) {
        let SqlType::Poly(k) = t else { continue };
        if inputs.iter().any(|i| i.compatible() == k.compatible()) {
            continue;
        }
        let detail = if k.compatible() {
            format!("A result of type {} requires at least one input of type anycompatible, anycompatiblearray, anycompatiblenonarray, anycompatiblerange, or anycompatiblemultirange.", k.name())
        } else {
            format!("A result of type {} requires at least one input of type anyelement, anyarray, anynonarray, anyenum, anyrange, or anymultirange.", k.name())
        };
        return Err(SqlError::new(
            SqlState::INVALID_FUNCTION_DEFINITION,
            "cannot determine result data type",
        )
        .with_detail(detail));
    }
    Ok(())
}
