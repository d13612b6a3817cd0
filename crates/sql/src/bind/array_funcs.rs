//! The polymorphic array functions: their result type follows their
//! arguments' (PostgreSQL's anycompatiblearray / anycompatible), so they
//! are bound by name here rather than from the fixed signatures of
//! builtins.rs.

use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType};

use super::coerce::common_type;
use super::{not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Expr, Func};

/// How an argument takes part in the element type's resolution.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// An array of the element type.
    Array,
    /// The element type itself.
    Elem,
    /// An integer (not polymorphic).
    Int,
    /// An array of integers (not polymorphic).
    IntArray,
}

use Role::{Array as A, Elem as E, Int as I, IntArray as IA};

/// What the function returns.
#[derive(Clone, Copy)]
enum Returns {
    Array,
    Int,
    IntArray,
}

/// (name, argument roles, result, function).
const SIGNATURES: &[(&str, &[Role], Returns, Func)] = &[
    ("array_append", &[A, E], Returns::Array, Func::ArrayAppend),
    ("array_prepend", &[E, A], Returns::Array, Func::ArrayPrepend),
    ("array_cat", &[A, A], Returns::Array, Func::ArrayCat),
    ("array_position", &[A, E], Returns::Int, Func::ArrayPosition),
    ("array_position", &[A, E, I], Returns::Int, Func::ArrayPosition),
    ("array_positions", &[A, E], Returns::IntArray, Func::ArrayPositions),
    ("array_remove", &[A, E], Returns::Array, Func::ArrayRemove),
    ("array_replace", &[A, E, E], Returns::Array, Func::ArrayReplace),
    ("array_fill", &[E, IA], Returns::Array, Func::ArrayFill),
    ("array_fill", &[E, IA, IA], Returns::Array, Func::ArrayFill),
    ("trim_array", &[A, I], Returns::Array, Func::TrimArray),
    ("width_bucket", &[E, A], Returns::Int, Func::WidthBucketArray),
];

impl<R: Resolver> Binder<'_, R> {
    /// A polymorphic array function, or `None` when `name` with this many
    /// arguments is not one.
    pub(super) fn array_function(
        &mut self,
        name: &str,
        args: &mut Vec<Typed>,
    ) -> Result<Option<Typed>, SqlError> {
        let Some(&(_, roles, returns, func)) =
            SIGNATURES.iter().find(|(n, roles, ..)| *n == name && roles.len() == args.len())
        else {
            return Ok(None);
        };
        let int_array = SqlType::Array(Elem::Int4);
        // The element type: the common type of the element arguments and
        // the arrays' element types; an argument of a type that is not an
        // array where one is wanted does not match.
        let mut elems = Vec::new();
        for (t, role) in args.iter().zip(roles) {
            match (role, t.ty) {
                (A, Some(ty)) => match ty.elem() {
                    Some(e) if matches!(ty, SqlType::Array(_)) => elems.push(Some(e)),
                    _ => return Err(super::function::no_such_function(name, args)),
                },
                (E, Some(ty)) if matches!(ty, SqlType::Array(_)) && name != "width_bucket" => {
                    return Err(super::function::no_such_function(name, args))
                }
                (E, ty) => elems.push(ty),
                _ => {}
            }
        }
        if elems.iter().all(Option::is_none) {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                "could not determine polymorphic type because input has type unknown",
            ));
        }
        let elem = common_type(elems.into_iter(), name)
            .map_err(|_| super::function::no_such_function(name, args))?;
        if name == "width_bucket" && !super::coerce::comparable(elem, elem) {
            return Err(super::function::no_such_function(name, args));
        }
        let array = Elem::of(elem)
            .map(SqlType::Array)
            .ok_or_else(|| not_supported(format!("arrays of {}", elem.name())))?;
        let mut bound = Vec::with_capacity(args.len());
        for (t, role) in std::mem::take(args).into_iter().zip(roles) {
            let ty = match role {
                A => array,
                E => elem,
                I => SqlType::Int4,
                IA => int_array,
            };
            bound.push(self.coerce(t, ty, Coercion::Implicit, name)?);
        }
        let ty = match returns {
            Returns::Array => array,
            Returns::Int => SqlType::Int4,
            Returns::IntArray => int_array,
        };
        Ok(Some(Typed { e: Expr::Func(func, bound), ty: Some(ty) }))
    }
}
