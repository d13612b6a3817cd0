//! A statement as sqlparser parsed it, dropped where its depth allows.

use sqlparser::ast::Statement;

use crate::stack::BigStack;

/// One statement as sqlparser parsed it. A statement whose source was
/// long enough to hold a chain that sqlparser's recursive drop could not
/// take apart on the thread's own stack is dropped on a stack of its own
/// (see crate::stack).
pub struct Ast {
    pub(crate) statement: Option<Box<Statement>>,
    pub(crate) stack: BigStack,
    /// The strengths of its locking clauses in the order they are written,
    /// when one of them is `FOR KEY SHARE` or `FOR NO KEY UPDATE`, which
    /// sqlparser reads as `FOR SHARE` and `FOR UPDATE` (lock_syntax.rs).
    pub(crate) lock_strengths: Option<Vec<snapscale_engine::RowLockMode>>,
    /// What the pre-parser read that sqlparser cannot.
    pub(crate) pre: Box<PreParsed>,
    /// Where the statement's text is in the query string, for the
    /// positions of errors found after parsing; `None` when the text
    /// sqlparser read was rewritten (its locations are not the user's).
    pub(crate) origin: Option<std::sync::Arc<Origin>>,
}

/// The clauses of a statement the pre-parser read, which sqlparser's
/// grammar lacks (each file of `parse/` named beside its field).
#[derive(Clone, Debug, Default)]
pub(crate) struct PreParsed {
    /// CREATE TABLE name (a, b, …) AS: the column names, which sqlparser
    /// does not read (create_as_syntax.rs).
    pub(crate) ctas_columns: Option<Vec<String>>,
    /// CREATE VIEW … WITH [CASCADED | LOCAL] CHECK OPTION, which sqlparser
    /// does not read (view_syntax.rs).
    pub(crate) check_option: Option<snapscale_engine::catalog::CheckOption>,
    /// INSERT … OVERRIDING {SYSTEM | USER} VALUE (overriding_syntax.rs).
    pub(crate) overriding: Option<Overriding>,
    /// CREATE MATERIALIZED VIEW … WITH [NO] DATA: whether DATA (view_syntax.rs).
    pub(crate) matview_data: Option<bool>,
    /// ALTER TABLE's identity actions, by their markers (identity_syntax.rs).
    pub(crate) identity_actions: Option<std::sync::Arc<[Vec<IdentityStep>]>>,
    /// DROP INDEX CONCURRENTLY (index_syntax.rs).
    pub(crate) concurrently: bool,
    /// INSERT … ON CONFLICT's target where sqlparser cannot read it
    /// (conflict_syntax.rs).
    pub(crate) conflict_target: Option<ConflictTarget>,
    /// CREATE TABLE's LIKE elements (like_syntax.rs).
    pub(crate) table_likes: Option<Vec<TableLike>>,
    /// CREATE TABLE / INDEX / VIEW / MATERIALIZED VIEW … WITH (storage
    /// parameters), in PostgreSQL's grammar (reloptions_syntax.rs).
    pub(crate) storage_params: Option<Vec<StorageParam>>,
    /// Foreign keys' ON DELETE SET NULL / DEFAULT (columns)
    /// (fk_action_syntax.rs).
    pub(crate) fk_set_columns: Option<Vec<SetColumns>>,
    /// ALTER VIEW (`Some(false)`) or ALTER MATERIALIZED VIEW (`Some(true)`),
    /// read as ALTER TABLE (view_syntax.rs).
    pub(crate) altered_view: Option<bool>,
    /// CREATE PROCEDURE, read as CREATE FUNCTION (procedure_syntax.rs).
    pub(crate) procedure: bool,
    /// DECLARE name … CURSOR … FOR: the header before the query
    /// (cursor_syntax.rs).
    pub(crate) declare: Option<Box<DeclareCursor>>,
    /// UPDATE or DELETE … WHERE CURRENT OF name: the cursor
    /// (cursor_syntax.rs).
    pub(crate) current_of: Option<String>,
    /// ALTER / DROP written with PROCEDURE or ROUTINE, read as FUNCTION
    /// (procedure_syntax.rs).
    pub(crate) routine_word: Option<RoutineWord>,
    /// CREATE FUNCTION / PROCEDURE … BEGIN ATOMIC … END: the text of the
    /// body's statements (procedure_syntax.rs).
    pub(crate) atomic_body: Option<String>,
    /// A CREATE or ALTER FUNCTION's attributes sqlparser lacks
    /// (procedure_syntax.rs).
    pub(crate) routine_attributes: Option<RoutineAttributes>,
}

/// A DECLARE CURSOR's header (cursor_syntax.rs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeclareCursor {
    pub name: String,
    pub options: CursorOptions,
}

/// How a cursor was declared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CursorOptions {
    /// SCROLL (`Some(true)`), NO SCROLL (`Some(false)`), or neither.
    pub scroll: Option<bool>,
    pub hold: bool,
    pub binary: bool,
}

/// One element of a storage parameter list, as written
/// (reloptions_syntax.rs).
#[derive(Clone, Debug, PartialEq)]
pub struct StorageParam {
    pub namespace: Option<String>,
    pub name: String,
    /// `None`: the name alone (`true` for a boolean).
    pub value: Option<String>,
}

impl StorageParam {
    /// An element, as the tests write one.
    #[cfg(test)]
    pub(crate) fn of(namespace: Option<&str>, name: &str, value: Option<&str>) -> StorageParam {
        StorageParam {
            namespace: namespace.map(str::to_owned),
            name: name.into(),
            value: value.map(str::to_owned),
        }
    }
}

/// One foreign key's ON DELETE SET column list (fk_action_syntax.rs).
#[derive(Clone, Debug, PartialEq)]
pub struct SetColumns {
    /// Line and column where the referenced table's name starts.
    pub table_at: (u64, u64),
    pub columns: Vec<String>,
}

/// One step of an ALTER TABLE … ALTER COLUMN identity action
/// (identity_syntax.rs).
#[derive(Debug, Clone)]
pub(crate) enum IdentityStep {
    /// SET GENERATED ALWAYS (`true`) or BY DEFAULT.
    Generated(bool),
    /// SET options and RESTART, as ALTER SEQUENCE reads them.
    Options(Box<SequenceChangesOwned>),
    /// DROP IDENTITY [IF EXISTS].
    Drop { if_exists: bool },
}

/// The sequence changes of an identity action.
#[derive(Debug, Clone)]
pub(crate) struct SequenceChangesOwned {
    pub options: Vec<sqlparser::ast::SequenceOptions>,
    pub restart: Option<Option<sqlparser::ast::Expr>>,
}

/// What a LIKE element copies beside names, types and NOT NULL
/// (PostgreSQL's TableLikeOption bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LikeOptions {
    pub defaults: bool,
    pub generated: bool,
    pub identity: bool,
    pub constraints: bool,
    pub indexes: bool,
}

/// One LIKE element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TableLike {
    pub source: sqlparser::ast::ObjectName,
    /// The number of column definitions written before it.
    pub position: usize,
    pub options: LikeOptions,
}

/// An ON CONFLICT inference target as written: each element's expression
/// text (COLLATE and operator class left out), and the WHERE's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConflictTarget {
    pub elements: Vec<String>,
    pub predicate: Option<String>,
    /// An element names a collation or operator class no index here has
    /// (every index has its columns' defaults): nothing can match.
    pub other_decoration: bool,
}

/// INSERT … OVERRIDING SYSTEM VALUE or OVERRIDING USER VALUE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overriding {
    System,
    User,
}

/// The text a statement was parsed from, and how many characters of the
/// query string come before it: an error's position (ErrorResponse's P
/// field, 1-based in characters) is counted from the start of the whole
/// query string, and sqlparser's locations from the start of the piece.
#[derive(Debug)]
pub struct Origin {
    pub(crate) text: String,
    pub(crate) chars_before: usize,
}

impl Origin {
    /// The position of sqlparser's 1-based (line, column) in the query
    /// string; `None` for an unknown location (line 0).
    pub(crate) fn position(&self, line: u64, column: u64) -> Option<usize> {
        if line == 0 || column == 0 {
            return None;
        }
        let mut chars = 0;
        let mut lines = self.text.split_inclusive('\n');
        for _ in 1..line {
            chars += lines.next()?.chars().count();
        }
        Some(self.chars_before + chars + column as usize)
    }

    /// The position of the last `needle` before (line, column).
    pub(crate) fn position_before(&self, needle: &str, line: u64, column: u64) -> Option<usize> {
        let before = self.position(line, column)? - self.chars_before - 1;
        let byte = self.text.char_indices().nth(before).map_or(self.text.len(), |(i, _)| i);
        let at = self.text[..byte].rfind(needle)?;
        Some(self.chars_before + self.text[..at].chars().count() + 1)
    }
}

impl std::ops::Deref for Ast {
    type Target = Statement;

    fn deref(&self) -> &Statement {
        self.statement.as_ref().expect("only Drop takes the statement")
    }
}

impl Ast {
    /// PREPARE name [(types)] AS statement: its parts, the statement as an
    /// `Ast` of its own; any other statement comes back unchanged.
    pub(crate) fn into_prepare(
        mut self,
    ) -> Result<(sqlparser::ast::Ident, Vec<sqlparser::ast::DataType>, Ast), Ast> {
        if !matches!(self.statement.as_deref(), Some(Statement::Prepare { .. })) {
            return Err(self);
        }
        let Some(Statement::Prepare { name, data_types, statement }) = self.statement.take().map(|s| *s)
        else {
            unreachable!("checked above")
        };
        let lock_strengths = self.lock_strengths.take();
        let origin = self.origin.take();
        let pre = std::mem::take(&mut self.pre);
        Ok((
            name,
            data_types,
            Ast { statement: Some(statement), stack: self.stack, lock_strengths, origin, pre },
        ))
    }
}

impl Drop for Ast {
    fn drop(&mut self) {
        let statement = self.statement.take();
        self.stack.run(move || drop(statement));
    }
}

impl std::fmt::Debug for Ast {
    /// The statement's kind only: printing a deep tree recurses.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.to_string();
        let kind: Vec<&str> = text.split_whitespace().take(2).collect();
        write!(f, "Ast({} ...)", kind.join(" "))
    }
}

/// The word an ALTER or DROP named its routines with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoutineWord {
    Procedure,
    Routine,
}

/// The attributes of a CREATE or ALTER FUNCTION (PROCEDURE and ROUTINE
/// read as FUNCTION already) that the pre-parser reads.
#[derive(Clone, Debug, Default)]
pub(crate) struct RoutineAttributes {
    /// WINDOW (CREATE only).
    pub window: bool,
    /// LEAKPROOF or NOT LEAKPROOF (CREATE only; sqlparser reads ALTER's).
    pub leakproof: Option<bool>,
    /// Where the first attribute that only a function may have starts (a
    /// tokenizer location in the text sqlparser reads).
    pub function_only: Option<sqlparser::tokenizer::Location>,
}

/// How far a FETCH or MOVE goes (PostgreSQL's fetch directions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// FORWARD n (NEXT is FORWARD 1; a negative n goes backward).
    Forward(Count),
    /// BACKWARD n (PRIOR is BACKWARD 1).
    Backward(Count),
    /// ABSOLUTE n (FIRST is 1, LAST is -1).
    Absolute(i64),
    /// RELATIVE n.
    Relative(i64),
}

/// A count of rows, or ALL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    Rows(i64),
    All,
}

/// FETCH (rows wanted) or MOVE (only their number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchStatement {
    pub name: String,
    pub direction: Direction,
    pub is_move: bool,
}
