//! Errors of the SQL layer, each with PostgreSQL's SQLSTATE and wording.

use std::fmt;

use snapscale_sqlstate::SqlState;

/// An error a statement reports to the client: its fields ([`ErrorData`])
/// behind one pointer, so that a `Result<T, SqlError>` is hardly larger
/// than a `T` (every evaluation step returns one; an error is the rare
/// case, and its allocation is nothing beside the formatting of its
/// message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError(Box<ErrorData>);

/// An error's fields (read through [`SqlError`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorData {
    /// PostgreSQL's SQLSTATE.
    pub code: SqlState,
    /// The primary message, worded as PostgreSQL words it.
    pub message: String,
    /// PostgreSQL's DETAIL line, if any.
    pub detail: Option<String>,
    /// PostgreSQL's HINT line, if any.
    pub hint: Option<String>,
    /// PostgreSQL's CONTEXT line (ErrorResponse's W field): where in its
    /// input the error arose (`JSON data, line 1: …`).
    pub context: Option<String>,
    /// The schema, table, column, data type and constraint the error is
    /// about, as PostgreSQL fills ErrorResponse's s, t, c, d and n fields
    /// (drivers report the violated constraint's name from them).
    pub object: Option<Box<ErrorObject>>,
    /// Where in the query string the error is (1-based, in characters):
    /// ErrorResponse's P field, which psql shows as `LINE n:` and a caret.
    pub position: Option<u32>,
    /// The query a function ran (not the client's) and the place in it:
    /// ErrorResponse's q and p fields, which psql shows as `LINE n:`, a
    /// caret and `QUERY:` (a PL/pgSQL statement's parse error).
    pub internal: Option<Box<InternalQuery>>,
    /// A SQLSTATE PostgreSQL defines no condition for (PL/pgSQL's `RAISE
    /// … USING ERRCODE = 'U9999'`: any five of `0-9A-Z`), sent and
    /// matched instead of `code`'s ([`ErrorData::sqlstate`]).
    pub custom_code: Option<[u8; 5]>,
}

/// A function's query an error is in (see [`ErrorData::internal`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalQuery {
    pub query: String,
    /// 1-based, in characters.
    pub position: u32,
}

/// What an error is about (see [`ErrorData::object`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorObject {
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    /// The data type (a domain whose constraint failed).
    pub datatype: Option<String>,
    pub constraint: Option<String>,
}

impl ErrorData {
    /// The five-character SQLSTATE the client is sent: the custom code,
    /// if the error has one, else its condition's.
    pub fn sqlstate(&self) -> &str {
        match &self.custom_code {
            Some(c) => std::str::from_utf8(c).unwrap_or(self.code.code()),
            None => self.code.code(),
        }
    }
}

impl std::ops::Deref for SqlError {
    type Target = ErrorData;
    fn deref(&self) -> &ErrorData {
        &self.0
    }
}

impl std::ops::DerefMut for SqlError {
    fn deref_mut(&mut self) -> &mut ErrorData {
        &mut self.0
    }
}

impl From<ErrorData> for SqlError {
    fn from(data: ErrorData) -> SqlError {
        SqlError(Box::new(data))
    }
}

impl SqlError {
    /// An error with `code` and `message`.
    pub fn new(code: SqlState, message: impl Into<String>) -> SqlError {
        SqlError::from(ErrorData {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            context: None,
            object: None,
            position: None,
            internal: None,
            custom_code: None,
        })
    }

    /// Its fields, to make another error of them
    /// (`ErrorData { context, ..e.into_data() }`).
    pub fn into_data(self) -> ErrorData {
        *self.0
    }

    /// Adds a DETAIL line.
    pub fn with_detail(mut self, detail: impl Into<String>) -> SqlError {
        self.detail = Some(detail.into());
        self
    }

    /// Adds a HINT line.
    pub fn with_hint(mut self, hint: impl Into<String>) -> SqlError {
        self.hint = Some(hint.into());
        self
    }

    /// Places the error at 1-based character `position` of the query.
    pub fn at_position(mut self, position: usize) -> SqlError {
        // A query string is at most 1 GB: its positions fit.
        self.position = u32::try_from(position).ok();
        self
    }

    /// Names the table (and its schema) the error is about.
    pub fn on_table(mut self, schema: &str, table: &str) -> SqlError {
        let o = self.object.get_or_insert_with(Box::default);
        o.schema = Some(schema.to_owned());
        o.table = Some(table.to_owned());
        self
    }

    /// Names the column the error is about.
    pub fn on_column(mut self, column: &str) -> SqlError {
        self.object.get_or_insert_with(Box::default).column = Some(column.to_owned());
        self
    }

    /// Names the data type (and its schema) the error is about, as
    /// PostgreSQL's errdatatype does for a domain's violated constraint.
    pub fn on_datatype(mut self, schema: &str, datatype: &str) -> SqlError {
        let o = self.object.get_or_insert_with(Box::default);
        o.schema = Some(schema.to_owned());
        o.datatype = Some(datatype.to_owned());
        self
    }

    /// Names the constraint the error is about.
    pub fn on_constraint(mut self, constraint: &str) -> SqlError {
        self.object.get_or_insert_with(Box::default).constraint = Some(constraint.to_owned());
        self
    }

    /// 22P02 invalid_text_representation.
    pub fn invalid_input(type_name: &str, input: &str) -> SqlError {
        SqlError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {type_name}: \"{input}\""),
        )
    }

    /// 22003 numeric_value_out_of_range, for input.
    pub fn out_of_range_input(type_name: &str, input: &str) -> SqlError {
        SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{input}\" is out of range for type {type_name}"),
        )
    }

    /// 22003 numeric_value_out_of_range, for arithmetic.
    pub fn out_of_range(type_name: &str) -> SqlError {
        SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("{type_name} out of range"))
    }

    /// 22012 division_by_zero.
    pub fn division_by_zero() -> SqlError {
        SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SqlError {}
