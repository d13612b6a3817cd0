//! The string functions' signatures (implementations in
//! `expr/scalar/text.rs`), bound as `builtins.rs` binds its own.

use snapscale_values::SqlType;

use super::builtins::{s, Builtin, INT4, TEXT};
use crate::expr::scalar;

pub(super) static STRINGS: &[Builtin] = &[s("repeat", &[TEXT, INT4], SqlType::Text, scalar::REPEAT)];
