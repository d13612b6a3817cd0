//! The one SQLSTATE type every snapscale crate reports errors with, from
//! the lowest (the transaction core, the lock manager, the WAL device) up
//! to the wire.
//!
//! Each crate's error enum maps its variants to a [`SqlState`]; nothing
//! carries a code as a string, and nothing turns a string back into a
//! code. The string is made once, where the ErrorResponse is encoded
//! ([`SqlState::code`]).
//!
//! The enum and its table are generated from PostgreSQL's errcodes.txt by
//! `scripts/gen-sqlstate.py`.

mod codes;
mod state;

pub use state::SqlState;

impl SqlState {
    /// The five-character code, as sent in an ErrorResponse's C field.
    pub fn code(self) -> &'static str {
        codes::CODES[self as usize].1
    }

    /// The state whose code is `code`, if PostgreSQL defines one (a test,
    /// or a peer's ErrorResponse, names states by code).
    pub fn from_code(code: &str) -> Option<SqlState> {
        codes::CODES.iter().find(|(_, c)| *c == code).map(|(s, _)| *s)
    }

    /// The states a condition name stands for (PL/pgSQL's `WHEN
    /// division_by_zero`): one, or two for the name PostgreSQL gives both a
    /// warning and an error.
    pub fn named(name: &str) -> impl Iterator<Item = SqlState> + '_ {
        codes::NAMES.iter().filter(move |(n, _)| *n == name).map(|(_, s)| *s)
    }

    /// The class: the code's first two characters (`23` for every
    /// integrity constraint violation).
    pub fn class(self) -> &'static str {
        &self.code()[..2]
    }
}

impl std::fmt::Display for SqlState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// Tests compare a state with the code they expect.
impl PartialEq<&str> for SqlState {
    fn eq(&self, other: &&str) -> bool {
        self.code() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_enums_order_and_each_code_is_one_state() {
        for (i, (state, code)) in codes::CODES.iter().enumerate() {
            assert_eq!(*state as usize, i, "{code}");
            assert_eq!(code.len(), 5);
            assert_eq!(SqlState::from_code(code), Some(*state), "{code} is given twice");
        }
    }

    #[test]
    fn codes_classes_and_names() {
        assert_eq!(SqlState::UNIQUE_VIOLATION.code(), "23505");
        assert_eq!(SqlState::UNIQUE_VIOLATION.class(), "23");
        assert_eq!(SqlState::INTERNAL_ERROR.to_string(), "XX000");
        assert_eq!(SqlState::from_code("40P01"), Some(SqlState::DEADLOCK_DETECTED));
        assert_eq!(SqlState::from_code("ZZZZZ"), None);
        assert!(SqlState::SERIALIZATION_FAILURE == "40001");
        assert_eq!(std::mem::size_of::<SqlState>(), 2);
    }
}
