//! The statements a session runs itself, without a plan: transaction
//! control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO) and
//! settings (SET, SHOW).

use std::sync::Arc;

use snapscale_engine::IsolationLevel;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, Expr as AstExpr, Set, Statement, TransactionIsolationLevel, TransactionMode};

use super::{aborted_block, Block, Conn, Gucs, Savepoint};
use crate::output::Output;
use crate::plan::Column;

/// Statements the session runs itself.
pub(crate) fn is_control(s: &Statement) -> bool {
    matches!(
        s,
        Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::Savepoint { .. }
            | Statement::ReleaseSavepoint { .. }
            | Statement::ShowVariable { .. }
            | Statement::Set(_)
            | Statement::Reset(_)
            | Statement::Deallocate { .. }
            | Statement::Discard { .. }
            | Statement::Close { .. }
            | Statement::UNLISTEN { .. }
    )
}

/// The column `SHOW name` returns (PostgreSQL names it after the setting).
pub(crate) fn show_column(variable: &[ast::Ident]) -> String {
    let name = show_name(variable);
    // PostgreSQL names the column as the setting is spelled in its
    // documentation, whatever case the SHOW used.
    match name.as_str() {
        "transaction isolation level" => "transaction_isolation".to_owned(),
        "timezone" | "time zone" => "TimeZone".to_owned(),
        "datestyle" => "DateStyle".to_owned(),
        "intervalstyle" => "IntervalStyle".to_owned(),
        _ => name,
    }
}

/// The setting SET and RESET name: a custom one's parts joined by dots,
/// each unquoted (PostgreSQL folds the case of unquoted parts only, but
/// looks settings up without regard to case).
fn setting_name(name: &ast::ObjectName) -> String {
    let parts = name.0.iter().map(|part| match part.as_ident() {
        Some(ident) => ident.value.to_ascii_lowercase(),
        None => part.to_string().to_ascii_lowercase(),
    });
    parts.collect::<Vec<_>>().join(".")
}

/// The setting SHOW names: the parser hands over its words, which are
/// either one of SQL's phrases (`TRANSACTION ISOLATION LEVEL`, `TIME
/// ZONE`) or the parts of a custom setting's dotted name (`app.user_id`).
fn show_name(variable: &[ast::Ident]) -> String {
    let words: Vec<String> = variable.iter().map(|i| i.value.to_ascii_lowercase()).collect();
    let phrase = words.join(" ");
    match phrase.as_str() {
        "transaction isolation level" | "time zone" | "session authorization" => phrase,
        _ => words.join("."),
    }
}

impl<G: Gucs> Conn<G> {
    pub(crate) async fn control(&mut self, s: &Statement) -> Result<Output, SqlError> {
        let ends_block = matches!(s, Statement::Commit { .. } | Statement::Rollback { savepoint: None, .. });
        let rolls_back_to = matches!(s, Statement::Rollback { savepoint: Some(_), .. });
        if self.block == Block::Failed && !ends_block && !rolls_back_to {
            return Err(aborted_block());
        }
        let changes_settings =
            matches!(s, Statement::Set(_) | Statement::Reset(_) | Statement::Discard { .. });
        if changes_settings && self.block != Block::Idle {
            self.save_settings();
        }
        let out = match s {
            Statement::StartTransaction { modes, begin, .. } => self.begin(modes, *begin),
            Statement::Commit { .. } => self.commit().await,
            Statement::Rollback { savepoint: None, .. } => Ok(self.rollback()),
            Statement::Rollback { savepoint: Some(name), .. } => self.rollback_to(&name.value),
            Statement::Savepoint { name } => self.savepoint(&name.value),
            Statement::ReleaseSavepoint { name } => self.release(&name.value),
            Statement::ShowVariable { variable } => self.show(variable),
            Statement::Set(set) => self.set(set),
            Statement::Reset(r) => self.reset(&r.reset),
            Statement::Deallocate { name, .. } => {
                // The prepared statements live in the protocol layer, which
                // acts on this output.
                let all = name.value.eq_ignore_ascii_case("all") && name.quote_style.is_none();
                Ok(Output::Deallocate(if all { None } else { Some(name.value.clone()) }))
            }
            Statement::Discard { object_type } => self.discard(*object_type),
            Statement::Close { cursor: ast::CloseCursor::All } => {
                self.portals.close_all();
                Ok(Output::Command("CLOSE CURSOR ALL".into()))
            }
            Statement::Close { cursor: ast::CloseCursor::Specific { name } } => {
                self.portals.close(&crate::bind::ident(name)).map(|()| Output::Command("CLOSE CURSOR".into()))
            }
            // There is no LISTEN here: ending every listen has nothing to
            // do (connection poolers send it when they reset a session).
            Statement::UNLISTEN { .. } => Ok(Output::Command("UNLISTEN".into())),
            other => Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{other} is not supported"))),
        };
        self.configure();
        if changes_settings {
            self.refresh_session_view();
        }
        out
    }

    fn begin(&mut self, modes: &[TransactionMode], begin: bool) -> Result<Output, SqlError> {
        let mut isolation = self.gucs.default_isolation();
        let mut read_write = false;
        for mode in modes {
            match mode {
                TransactionMode::IsolationLevel(level) => isolation = self::isolation(level)?,
                TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) => read_write = true,
                TransactionMode::AccessMode(ast::TransactionAccessMode::ReadOnly) => {}
            }
        }
        let tag = if begin { "BEGIN" } else { "START TRANSACTION" };
        match self.block {
            Block::Open | Block::Failed => {
                self.xact
                    .warning(SqlState::ACTIVE_SQL_TRANSACTION, "there is already a transaction in progress");
            }
            Block::Implicit => {
                // BEGIN inside a multi-statement Query turns its implicit
                // transaction into a block, as in PostgreSQL.
                self.block = Block::Open;
            }
            Block::Idle => {
                // PostgreSQL starts the block and then fails setting
                // transaction_read_only, which ends the block again: the
                // session is left idle, not in a failed block.
                if read_write {
                    self.refuse_read_write()?;
                }
                self.begin_transaction(isolation)?;
                self.block = Block::Open;
                return Ok(Output::Command(tag.into()));
            }
        }
        if read_write {
            self.refuse_read_write()?;
        }
        Ok(Output::Command(tag.into()))
    }

    /// Making the transaction read-write (BEGIN READ WRITE, SET
    /// TRANSACTION READ WRITE, SET transaction_read_only = off): nothing to
    /// do on a primary, where every transaction is read-write; on a hot
    /// standby, where every transaction is read-only, the errors of
    /// PostgreSQL's check_transaction_read_only, in its order.
    fn refuse_read_write(&self) -> Result<(), SqlError> {
        if !self.xact.db.in_recovery() {
            return Ok(());
        }
        let in_block = matches!(self.block, Block::Open | Block::Failed | Block::Implicit);
        if in_block && !self.savepoints.is_empty() {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "cannot set transaction read-write mode inside a read-only transaction",
            ));
        }
        if in_block && self.queried {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "transaction read-write mode must be set before any query",
            ));
        }
        Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "cannot set transaction read-write mode during recovery",
        ))
    }

    async fn commit(&mut self) -> Result<Output, SqlError> {
        match self.block {
            Block::Idle => {
                self.xact.warning(SqlState::NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress");
                Ok(Output::Command("COMMIT".into()))
            }
            Block::Failed => Ok(self.rollback()),
            Block::Open | Block::Implicit => {
                self.block = Block::Idle;
                self.commit_transaction().await?;
                Ok(Output::Command("COMMIT".into()))
            }
        }
    }

    fn rollback(&mut self) -> Output {
        if self.block == Block::Idle {
            self.xact.warning(SqlState::NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress");
        } else {
            self.abort_transaction();
            self.block = Block::Idle;
        }
        Output::Command("ROLLBACK".into())
    }

    fn require_block(&self, what: &str) -> Result<(), SqlError> {
        if matches!(self.block, Block::Idle | Block::Implicit) {
            return Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                format!("{what} can only be used in transaction blocks"),
            ));
        }
        Ok(())
    }

    /// SET is transactional: before the first change in a transaction,
    /// and in each savepoint level, the settings are kept for an abort or
    /// a ROLLBACK TO. Levels that already kept theirs saw the change that
    /// made them do so, and so did every level outside them: the walk
    /// outwards stops at the first one that has its copy.
    fn save_settings(&mut self) {
        if self.saved_gucs.is_none() {
            self.saved_gucs = Some(self.gucs.clone());
        }
        for sp in self.savepoints.iter_mut().rev() {
            if sp.settings.is_some() {
                break;
            }
            sp.settings = Some((self.gucs.clone(), self.local_settings.clone()));
        }
    }

    fn savepoint(&mut self, name: &str) -> Result<Output, SqlError> {
        self.require_block("SAVEPOINT")?;
        self.xact.savepoint()?;
        let deferred = (self.pending.len(), self.deferral.clone());
        self.savepoints.push(Savepoint { name: name.to_owned(), settings: None, deferred });
        Ok(Output::Command("SAVEPOINT".into()))
    }

    fn find_savepoint(&self, name: &str) -> Result<usize, SqlError> {
        self.savepoints.iter().rposition(|sp| sp.name == name).ok_or_else(|| {
            SqlError::new(
                SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                format!("savepoint \"{name}\" does not exist"),
            )
        })
    }

    fn release(&mut self, name: &str) -> Result<Output, SqlError> {
        self.require_block("RELEASE SAVEPOINT")?;
        let at = self.find_savepoint(name)?;
        while self.savepoints.len() > at {
            let depth = self.xact.depth();
            self.xact.release()?;
            self.portals.released(depth);
            self.savepoints.pop();
        }
        Ok(Output::Command("RELEASE".into()))
    }

    fn rollback_to(&mut self, name: &str) -> Result<Output, SqlError> {
        self.require_block("ROLLBACK TO SAVEPOINT")?;
        if self.savepoints.is_empty() && self.block == Block::Failed {
            return Err(SqlError::new(
                SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                format!("savepoint \"{name}\" does not exist"),
            ));
        }
        let at = self.find_savepoint(name)?;
        let settings = self.savepoints[at].settings.take();
        let (pending, deferral) = self.savepoints[at].deferred.clone();
        self.pending.truncate(pending);
        self.deferral = deferral;
        while self.savepoints.len() > at {
            let depth = self.xact.depth();
            self.xact.rollback_level()?;
            self.portals.rolled_back(depth);
            self.savepoints.pop();
        }
        if let Some((gucs, local)) = settings {
            self.gucs = gucs;
            self.local_settings = local;
            self.configure();
            self.refresh_session_view();
        }
        // The savepoint stays, re-opened, as in PostgreSQL.
        self.xact.savepoint()?;
        let deferred = (self.pending.len(), self.deferral.clone());
        self.savepoints.push(Savepoint { name: name.to_owned(), settings: None, deferred });
        self.block = Block::Open;
        self.copy = None;
        Ok(Output::Command("ROLLBACK".into()))
    }

    fn show(&mut self, variable: &[ast::Ident]) -> Result<Output, SqlError> {
        let name = show_name(variable);
        let value = match name.as_str() {
            "transaction isolation level" | "transaction_isolation" => {
                let level = self.xact.isolation().unwrap_or(self.gucs.default_isolation());
                match level {
                    IsolationLevel::ReadCommitted => "read committed".to_owned(),
                    IsolationLevel::RepeatableRead => "repeatable read".to_owned(),
                }
            }
            _ => self.gucs.show(&name)?,
        };
        Ok(Output::Rows {
            columns: Arc::from(vec![Column { name: show_column(variable), ty: SqlType::Text }]),
            rows: vec![Arc::from(vec![Value::Text(value)])],
            tag: "SHOW".into(),
        })
    }

    fn set(&mut self, set: &Set) -> Result<Output, SqlError> {
        match set {
            Set::SingleAssignment { variable, values, scope, .. } => {
                let name = setting_name(variable);
                if *scope == Some(ast::ContextModifier::Local) {
                    self.assign_local(&name, values)?
                } else {
                    self.assign(&name, values)?
                }
            }
            Set::MultipleAssignments { assignments } => {
                for a in assignments {
                    self.assign(&setting_name(&a.name), std::slice::from_ref(&a.value))?;
                }
            }
            Set::SetTimeZone { value, local: true } => {
                self.assign_local("timezone", std::slice::from_ref(value))?
            }
            Set::SetTimeZone { value, local: false } => {
                self.assign("timezone", std::slice::from_ref(value))?
            }
            Set::SetNames { charset_name, collation_name: None } => {
                self.gucs.set("client_encoding", &charset_name.value)?
            }
            Set::SetTransaction { modes, snapshot: None, session } => {
                self.set_transaction(modes, *session)?
            }
            other => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("{other} is not supported yet"),
                ))
            }
        }
        Ok(Output::Command("SET".into()))
    }

    /// A statement that called set_config() succeeded: its calls take
    /// effect as SET and SET LOCAL would (transactional, restored at the
    /// end of the transaction for is_local). The values were checked when
    /// the calls were made.
    pub(crate) fn keep_set_config(&mut self, calls: Vec<(String, String, bool)>) -> Result<(), SqlError> {
        if self.block != Block::Idle {
            self.save_settings();
        }
        for (name, value, local) in calls {
            if local {
                let session_value = self.gucs.show(&name).unwrap_or_default();
                self.gucs.set(&name, &value)?;
                if !self.local_settings.iter().any(|(n, _)| *n == name) {
                    self.local_settings.push((name, session_value));
                }
            } else {
                self.gucs.set(&name, &value)?;
                if let Some(i) = self.local_settings.iter().position(|(n, _)| *n == name) {
                    self.local_settings[i].1 = value;
                }
            }
        }
        Ok(())
    }

    /// SET name = value(s) for the session.
    fn assign(&mut self, name: &str, values: &[AstExpr]) -> Result<(), SqlError> {
        self.apply_value(name, values)?;
        // A session-level SET after SET LOCAL in the same transaction is
        // what the end of the transaction goes back to.
        if let Some(i) = self.local_settings.iter().position(|(n, _)| n == name) {
            self.local_settings[i].1 = self.gucs.show(name)?;
        }
        Ok(())
    }

    /// SET LOCAL: until the end of the transaction, then back to the
    /// session's value. Outside a transaction block it warns and does
    /// nothing, as in PostgreSQL (the statement's own transaction would
    /// end at once).
    fn assign_local(&mut self, name: &str, values: &[AstExpr]) -> Result<(), SqlError> {
        if self.block == Block::Idle && !self.multi_statement {
            self.xact.warning(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "SET LOCAL can only be used in transaction blocks",
            );
            if name == "transaction_read_only" {
                // PostgreSQL still runs the setting's check.
                return self.apply_value(name, values);
            }
            return Ok(());
        }
        let session_value = self.gucs.show(name)?;
        self.apply_value(name, values)?;
        if !self.local_settings.iter().any(|(n, _)| n == name) {
            self.local_settings.push((name.to_owned(), session_value));
        }
        Ok(())
    }

    /// Sets `name` to values as PostgreSQL joins them (a list such as
    /// search_path's with ", "); DEFAULT is the start-up value.
    fn apply_value(&mut self, name: &str, values: &[AstExpr]) -> Result<(), SqlError> {
        let text = |e: &AstExpr| match e {
            AstExpr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::Number(s, _) => s.clone(),
                other => other.to_string(),
            },
            AstExpr::Identifier(ident) => ident.value.clone(),
            other => other.to_string(),
        };
        let value = values.iter().map(text).collect::<Vec<_>>().join(", ");
        if value.eq_ignore_ascii_case("default") && values.len() == 1 {
            return self.reset_one(name);
        }
        if name == "transaction_read_only" {
            match snapscale_values::pg_bool(&value) {
                // As SET TRANSACTION READ WRITE (PostgreSQL's check hook).
                Some(false) => return self.refuse_read_write(),
                // Every transaction on a standby is read-only already.
                Some(true) if self.xact.db.in_recovery() => return Ok(()),
                _ => {}
            }
        }
        self.gucs.set(name, &value)
    }

    /// SET [SESSION CHARACTERISTICS AS] TRANSACTION: the isolation level
    /// of this transaction (before its first query) or of later ones.
    fn set_transaction(&mut self, modes: &[TransactionMode], session: bool) -> Result<(), SqlError> {
        for mode in modes {
            match mode {
                TransactionMode::IsolationLevel(level) => {
                    let level = isolation(level)?;
                    if session {
                        let name = match level {
                            IsolationLevel::ReadCommitted => "read committed",
                            IsolationLevel::RepeatableRead => "repeatable read",
                        };
                        self.gucs.set("default_transaction_isolation", name)?;
                    } else if matches!(self.block, Block::Idle | Block::Implicit) {
                        self.xact.warning(
                            SqlState::NO_ACTIVE_SQL_TRANSACTION,
                            "SET TRANSACTION can only be used in transaction blocks",
                        );
                    } else if self.queried {
                        return Err(SqlError::new(
                            SqlState::ACTIVE_SQL_TRANSACTION,
                            "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                        ));
                    } else if self.xact.isolation() != Some(level) {
                        // Nothing ran in it yet: no snapshot, no xid, no
                        // lock. Begin it again at the asked level.
                        self.xact.abort();
                        self.xact.begin(level)?;
                    }
                }
                // SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE
                // sets default_transaction_read_only, which PostgreSQL
                // accepts on a standby too.
                TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) if session => {}
                TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) => {
                    let warned = modes.iter().any(|m| matches!(m, TransactionMode::IsolationLevel(_)));
                    if matches!(self.block, Block::Idle | Block::Implicit) && !warned {
                        self.xact.warning(
                            SqlState::NO_ACTIVE_SQL_TRANSACTION,
                            "SET TRANSACTION can only be used in transaction blocks",
                        );
                    }
                    self.refuse_read_write()?;
                }
                other => {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("SET TRANSACTION {other} is not supported yet"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// RESET name / RESET ALL: back to the session's start-up values.
    fn reset(&mut self, r: &ast::Reset) -> Result<Output, SqlError> {
        match r {
            ast::Reset::ALL => self.reset_all(),
            ast::Reset::ConfigurationParameter(name) => self.reset_one(&setting_name(name))?,
            ast::Reset::SessionAuthorization => {}
        }
        Ok(Output::Command("RESET".into()))
    }

    fn reset_one(&mut self, name: &str) -> Result<(), SqlError> {
        if name == "transaction_read_only" {
            // Back to default_transaction_read_only (or recovery's "on"):
            // what the transaction already has.
            return Ok(());
        }
        let value = match self.initial_gucs.show(name) {
            Ok(value) => value,
            // A custom setting's value at connection is empty.
            Err(_) if name.contains('.') => String::new(),
            Err(e) => return Err(e),
        };
        self.gucs.set(name, &value)
    }

    fn reset_all(&mut self) {
        self.gucs = self.initial_gucs.clone();
    }

    /// DISCARD: ALL and TEMP drop this session's temporary tables, ALL
    /// also resets the settings, releases the session's advisory locks
    /// (PostgreSQL's DISCARD ALL runs `pg_advisory_unlock_all()`) and
    /// deallocates every prepared statement (the protocol layer does that
    /// part); PLANS and SEQUENCES have
    /// nothing to drop (plans are re-made when the catalog changes; there
    /// are no sequences).
    fn discard(&mut self, what: ast::DiscardObject) -> Result<Output, SqlError> {
        use ast::DiscardObject as D;
        let tag = match what {
            D::ALL => "DISCARD ALL",
            D::TEMP => "DISCARD TEMP",
            D::PLANS => return Ok(Output::Command("DISCARD PLANS".into())),
            D::SEQUENCES => {
                self.xact.sequences.lock().expect("session sequences poisoned").clear();
                return Ok(Output::Command("DISCARD SEQUENCES".into()));
            }
        };
        // A query of several statements is one implicit block, as in
        // PostgreSQL: DISCARD ALL is refused there too.
        if what == D::ALL && (self.block != Block::Idle || self.multi_statement) {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "DISCARD ALL cannot run inside a transaction block",
            ));
        }
        if self.block == Block::Idle {
            self.xact.drop_temp_tables()?;
        } else {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "DISCARD TEMP inside a transaction block is not supported yet",
            ));
        }
        if what == D::ALL {
            self.portals.close_all();
            self.xact.sequences.lock().expect("session sequences poisoned").clear();
            self.xact.advisory.unlock_all();
            self.reset_all();
            return Ok(Output::DiscardAll);
        }
        Ok(Output::Command(tag.into()))
    }
}

/// PostgreSQL's isolation levels as snapscale runs them: READ UNCOMMITTED
/// is READ COMMITTED (as in PostgreSQL), SERIALIZABLE is refused.
fn isolation(level: &TransactionIsolationLevel) -> Result<IsolationLevel, SqlError> {
    Ok(match level {
        TransactionIsolationLevel::ReadUncommitted | TransactionIsolationLevel::ReadCommitted => {
            IsolationLevel::ReadCommitted
        }
        TransactionIsolationLevel::RepeatableRead => IsolationLevel::RepeatableRead,
        TransactionIsolationLevel::Serializable => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "SERIALIZABLE isolation is not supported yet",
            ))
        }
        other => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("isolation level {other} is not supported"),
            ))
        }
    })
}
