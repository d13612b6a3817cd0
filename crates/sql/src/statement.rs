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
        Ok((name, data_types, Ast { statement: Some(statement), stack: self.stack, lock_strengths }))
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
