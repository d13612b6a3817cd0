//! One client connection: startup (`startup.rs`), then our own message loop
//! over the validated frontend messages of `frontend.rs`.
//!
//! The loop is ours, not pgwire's `process_socket`, because the protocol's
//! state is the SQL session's: the ReadyForQuery status byte comes from the
//! transaction block (so ROLLBACK TO in a failed block reports 'T' again),
//! COPY is a sub-protocol of a running statement, errors in the extended
//! protocol discard messages until Sync, and an idle session must still
//! answer the invalidation queue's catch-up requests.
//!
//! A panic while a message is handled is caught here (PANIC-CONTAINED in
//! the README): the client gets XX000, the session's transaction is
//! abandoned, and the connection goes on. Whatever ends the connection, the
//! `Conn` it owns is dropped, and its `Drop` releases its transaction, locks,
//! temporary tables and invalidation slot, and then its proc-array slot.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use snapscale_sql::guc::Settings;
use snapscale_sql::wire::decode_param;
use snapscale_sql::{Conn, Output, Prepared, Row, SqlError, SqlState, Value};
use tokio::net::TcpStream;
use tracing::error;

use crate::backend::{
    self, declared_type, formats, Bare, CommandComplete, CopyData, CopyResponse, DataRow, Formats, Message,
    ParameterDescription, ParameterStatus, ReadyForQuery, RowDescription,
};
use crate::frontend::{Bind, Frontend, Refused, Target};
use crate::named::Named;
use crate::replication::WalSender;
use crate::shared::{terminated, Shared, TERMINATED};
use crate::startup::{start, Role};
use crate::transport::Transport;

/// A connection's cancel key, registered for its life (removed on every
/// exit path, as the drop of this guard).
struct CancelKey {
    shared: Arc<Shared>,
    pid: i32,
}

impl Drop for CancelKey {
    fn drop(&mut self) {
        self.shared.forget_cancel(self.pid);
    }
}

/// Serves one accepted socket until the client leaves.
/// `peers`: how many connections the serving thread has (SYNC-HERE), for
/// a connection a worker serves.
pub async fn serve(
    socket: TcpStream,
    shared: Arc<Shared>,
    peers: Option<Arc<std::sync::atomic::AtomicUsize>>,
) -> std::io::Result<()> {
    let peer = socket.peer_addr().ok();
    let secret = shared.new_secret();
    // pgwire decodes the startup messages; a panic there ends this
    // connection only (the session it attached is dropped with it).
    let started = match AssertUnwindSafe(start(socket, &shared, secret)).catch_unwind().await {
        Ok(started) => started?,
        Err(panic) => {
            error!(panic = %panic_message(&*panic), "startup panicked; the connection is closed");
            return Ok(());
        }
    };
    let Some(started) = started else { return Ok(()) };
    let ssl = match &started.io {
        pgwire::tokio::server::MaybeTls::Tls(tls) => Some(crate::tls::status(tls.get_ref().1)),
        _ => None,
    };
    let transport = Transport::new(started.io, started.input, shared.settings.max_message_size);
    let backend = match started.role {
        Role::Client(backend) => backend,
        Role::WalSender(_slot) => return WalSender::new(shared, transport).run().await,
    };
    let settings = started.settings;
    let pid = backend.pid();
    let app = settings.session.application_name.clone();
    let mut conn = Conn::new(Arc::clone(&shared.db), backend, settings);
    conn.share_thread(peers);
    conn.report_connected(snapscale_sql::ClientInfo {
        application_name: app,
        client_addr: peer.map(|p| p.ip().to_string()),
        client_port: peer.map(|p| i32::from(p.port())),
        ssl,
    });
    let cancel = conn.cancel_handle();
    shared.register_cancel(pid, started.secret, Arc::clone(&cancel));
    let _key = CancelKey { shared: Arc::clone(&shared), pid };
    // What the startup's ParameterStatus messages said (auth::parameters).
    let reported = reported(conn.gucs());
    let reported_at = conn.settings_generation();
    let mut protocol = Protocol {
        cancel,
        transport,
        conn,
        statements: Named::new(),
        portals: Named::new(),
        skipping: false,
        reported,
        reported_at,
    };
    protocol.run().await
}

/// The text of a panic's payload.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// A bound portal.
struct Portal {
    statement: Arc<Prepared>,
    params: Vec<Value>,
    /// Result formats per column.
    formats: Formats,
    /// Rows not yet sent (a suspended portal) and the tag to send after.
    pending: Option<(VecDeque<Row>, String)>,
}

struct Protocol {
    /// The connection's cancel handle: a shutdown terminates through it
    /// (`Shared::terminate_all`).
    cancel: Arc<snapscale_sql::Cancel>,
    transport: Transport,
    conn: Conn<Settings>,
    statements: Named<Arc<Prepared>>,
    portals: Named<Portal>,
    /// After an error in the extended protocol: discard until Sync.
    skipping: bool,
    /// The reported settings' values the client was last told of, and
    /// the session's settings generation they were read at.
    reported: Vec<(&'static str, String)>,
    reported_at: u64,
}

/// The settings PostgreSQL reports with ParameterStatus whenever they
/// change (GUC_REPORT), with their current values.
fn reported(settings: &Settings) -> Vec<(&'static str, String)> {
    let show = |name: &str| settings.show(name).unwrap_or_default();
    vec![
        ("application_name", settings.session.application_name.clone()),
        ("DateStyle", show("datestyle")),
        ("TimeZone", show("timezone")),
        ("IntervalStyle", show("intervalstyle")),
        ("client_encoding", show("client_encoding")),
        ("standard_conforming_strings", show("standard_conforming_strings")),
    ]
}

/// Message types of the extended protocol (an error in one of them starts
/// the discard until Sync).
fn is_extended_type(ty: u8) -> bool {
    matches!(ty, b'P' | b'B' | b'D' | b'E' | b'C' | b'H' | b'S')
}

impl Protocol {
    async fn send(&mut self, m: impl Message) -> std::io::Result<()> {
        self.transport.send(m).await
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        self.transport.flush().await
    }

    /// Sends an ErrorResponse at once: PostgreSQL flushes every error, so a
    /// client waiting after Flush (or before its Sync) sees it.
    async fn send_error(&mut self, e: &SqlError) -> std::io::Result<()> {
        self.send_notices().await?;
        if e.code == SqlState::ADMIN_SHUTDOWN && self.cancel.is_terminating() {
            // The statement stopped because the server is shutting down:
            // the connection ends with this error, as FATAL.
            self.send(backend::fatal(e)).await?;
            self.flush().await?;
            return Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, TERMINATED));
        }
        self.send(backend::error(e)).await?;
        self.flush().await
    }

    /// Ends the connection because the server is shutting down, as
    /// PostgreSQL's fast shutdown does: FATAL 57P01, then the socket closes.
    async fn terminated(&mut self) -> std::io::Result<()> {
        let _ = self.send(backend::fatal(&terminated())).await;
        let _ = self.flush().await;
        Ok(())
    }

    async fn send_notices(&mut self) -> std::io::Result<()> {
        for n in self.conn.take_notices() {
            if self.conn.gucs().session.client.sends(n.severity) {
                self.send(backend::NoticeResponse(&n)).await?;
            }
        }
        Ok(())
    }

    async fn ready(&mut self) -> std::io::Result<()> {
        // Changed reported settings go out before ReadyForQuery, as
        // PostgreSQL sends them (after SET, or a rollback that undid one).
        if self.conn.settings_generation() != self.reported_at {
            self.reported_at = self.conn.settings_generation();
            let now = reported(self.conn.gucs());
            for (i, (name, value)) in now.iter().enumerate() {
                if self.reported[i].1 != *value {
                    self.send(ParameterStatus(name, value)).await?;
                }
            }
            self.reported = now;
        }
        self.conn.report_idle();
        let status = match self.conn.status() {
            s @ (b'I' | b'T') => s,
            _ => b'E',
        };
        self.send(ReadyForQuery(status)).await?;
        self.flush().await
    }

    async fn run(&mut self) -> std::io::Result<()> {
        loop {
            // A shutdown is seen here: between messages, and after the
            // wait below, which `Cancel::terminate` ends through the
            // catch-up branch (no branch of its own: this wait is on every
            // statement's path).
            if self.cancel.is_terminating() {
                return self.terminated().await;
            }
            let message = tokio::select! {
                // Messages first; no random choice between the branches.
                biased;
                m = self.transport.read() => m?,
                // An idle session still reads the invalidation queue when it
                // falls behind, so writers never wait for it (and is woken
                // here by a shutdown: see the top of the loop).
                () = self.conn.catchup_requested() => {
                    self.conn.catch_up();
                    continue;
                }
            };
            let message = match message {
                None | Some(Ok(Frontend::Terminate)) => return Ok(()),
                Some(Ok(m)) => m,
                Some(Err(Refused::Fatal(e))) => {
                    // The stream is no longer at a message boundary.
                    let _ = self.send(backend::fatal(&e)).await;
                    let _ = self.flush().await;
                    return Ok(());
                }
                Some(Err(Refused::Error { ty, error })) => {
                    self.malformed(ty, &error).await?;
                    continue;
                }
            };
            let extended = message.is_extended();
            match AssertUnwindSafe(self.message(message)).catch_unwind().await {
                Ok(result) => result?,
                Err(panic) => self.recover(panic_message(&*panic), extended).await?,
            }
        }
    }

    /// A message whose frame was whole but whose body was not: an error,
    /// as if it had failed, and the stream goes on.
    async fn malformed(&mut self, ty: u8, e: &SqlError) -> std::io::Result<()> {
        if self.skipping && is_extended_type(ty) && ty != b'S' {
            return Ok(());
        }
        self.conn.fail();
        self.send_error(e).await?;
        if is_extended_type(ty) {
            self.skipping = true;
            Ok(())
        } else {
            self.ready().await
        }
    }

    /// PANIC-CONTAINED: a panic costs the statement and its transaction,
    /// never the connection or the server.
    async fn recover(&mut self, what: String, extended: bool) -> std::io::Result<()> {
        error!(panic = %what, "a statement panicked; its transaction is aborted");
        self.conn.abandon();
        // Portals belong to the transaction that just ended.
        self.portals.clear();
        self.send_error(&SqlError::new(SqlState::INTERNAL_ERROR, format!("internal error: {what}"))).await?;
        if extended {
            self.skipping = true;
            Ok(())
        } else {
            self.ready().await
        }
    }

    async fn message(&mut self, message: Frontend) -> std::io::Result<()> {
        if self.skipping && message.is_extended() && message != Frontend::Sync {
            return Ok(());
        }
        match message {
            Frontend::Query(q) => self.simple_query(&q).await,
            Frontend::Parse { name, query, param_types } => {
                let r = off_the_worker(query.len(), || self.parse(name, &query, &param_types));
                self.extended(r.map(|()| backend::PARSE_COMPLETE)).await
            }
            Frontend::Bind(b) => {
                let r = self.bind(b);
                self.extended(r.map(|()| backend::BIND_COMPLETE)).await
            }
            Frontend::Describe { target, name } => match self.describe(target, &name).await? {
                Ok(()) => Ok(()),
                Err(e) => self.extended(Err(e)).await,
            },
            Frontend::Execute { portal, max_rows } => {
                let r = self.execute(&portal, max_rows).await?;
                if let Err(e) = r {
                    self.send_error(&e).await?;
                    self.skipping = true;
                }
                Ok(())
            }
            Frontend::Sync => {
                self.skipping = false;
                if let Err(e) = self.conn.sync().await {
                    self.send_error(&e).await?;
                }
                self.ready().await
            }
            Frontend::Close { target, name } => {
                match target {
                    Target::Statement => self.statements.remove(&name).map(drop),
                    Target::Portal => self.portals.remove(&name).map(drop),
                };
                self.send(backend::CLOSE_COMPLETE).await
            }
            Frontend::Flush => self.flush().await,
            // COPY messages outside a COPY are ignored, as PostgreSQL does.
            Frontend::CopyData(_) | Frontend::CopyDone | Frontend::CopyFail(_) => Ok(()),
            Frontend::FunctionCall => {
                self.conn.fail();
                self.send_error(&SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "fast-path function calls are not supported",
                ))
                .await?;
                self.ready().await
            }
            Frontend::Terminate => Ok(()),
        }
    }

    /// Sends an extended-protocol reply, or the error (and then discards
    /// messages until Sync).
    async fn extended(&mut self, r: Result<Bare, SqlError>) -> std::io::Result<()> {
        match r {
            Ok(m) => self.send(m).await,
            Err(e) => {
                // Any error aborts the transaction (or fails the block).
                self.conn.fail();
                self.send_error(&e).await?;
                self.skipping = true;
                Ok(())
            }
        }
    }

    fn parse(&mut self, name: String, sql: &str, oids: &[u32]) -> Result<(), SqlError> {
        let mut declared = Vec::with_capacity(oids.len());
        for &oid in oids {
            declared.push(match declared_type(oid) {
                Ok(ty) => ty,
                // Not a builtin: an enum of the catalog (psycopg sends a
                // registered enum's oid), or still not supported.
                Err(e) => Some(self.conn.declared_user_type(oid)?.ok_or(e)?),
            });
        }
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let prepared = self.conn.prepare_sql(sql, &declared)?;
        self.statements.insert(name, prepared);
        Ok(())
    }

    /// Bind, checked in PostgreSQL's order: the statement, the parameter
    /// formats against the parameters, the parameters against the
    /// statement, the format codes, the values, the result formats.
    fn bind(&mut self, b: Bind) -> Result<(), SqlError> {
        let name = b.statement;
        let statement = self.statements.get(&name).cloned().ok_or_else(|| {
            SqlError::new(
                SqlState::INVALID_SQL_STATEMENT_NAME,
                format!("prepared statement \"{name}\" does not exist"),
            )
        })?;
        let n = b.params.len();
        let binary = formats(&b.param_formats, n, || {
            format!("bind message has {} parameter formats but {n} parameters", b.param_formats.len())
        });
        let types = statement.param_types();
        if n != types.len() {
            return Err(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {n} parameters, but prepared statement \"{name}\" requires {}",
                    types.len()
                ),
            ));
        }
        let binary = binary?;
        let zone = self.conn.style();
        let params = b
            .params
            .iter()
            .zip(types)
            .enumerate()
            .map(|(i, (p, &ty))| decode_param(ty, binary.binary(i), p.as_deref(), zone))
            .collect::<Result<Vec<_>, _>>()?;
        let columns = statement.columns().map_or(0, |c| c.len());
        let result_formats = formats(&b.result_formats, columns, || {
            format!(
                "bind message has {} result formats but query has {columns} columns",
                b.result_formats.len()
            )
        })?;
        if !b.portal.is_empty() && self.portals.contains_key(&b.portal) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{}\" already exists", b.portal),
            ));
        }
        self.portals.insert(b.portal, Portal { statement, params, formats: result_formats, pending: None });
        Ok(())
    }

    /// Describe: ParameterDescription (of a statement) and RowDescription
    /// or NoData, sent; or the error, for the caller to send.
    async fn describe(&mut self, target: Target, name: &str) -> std::io::Result<Result<(), SqlError>> {
        let (statement, formats) = match target {
            Target::Statement => {
                let Some(statement) = self.statements.get(name).cloned() else {
                    return Ok(Err(SqlError::new(
                        SqlState::INVALID_SQL_STATEMENT_NAME,
                        format!("prepared statement \"{name}\" does not exist"),
                    )));
                };
                self.transport.send(ParameterDescription(statement.param_types())).await?;
                // A statement's columns are described in text: its result
                // formats come with Bind.
                (statement, Formats::Text)
            }
            Target::Portal => match self.portals.get(name) {
                None => {
                    return Ok(Err(SqlError::new(
                        SqlState::INVALID_CURSOR_NAME,
                        format!("portal \"{name}\" does not exist"),
                    )))
                }
                Some(portal) => (Arc::clone(&portal.statement), portal.formats.clone()),
            },
        };
        match statement.columns() {
            Some(columns) => self.transport.send(RowDescription { columns, formats: &formats }).await?,
            None => self.transport.send(backend::NO_DATA).await?,
        }
        Ok(Ok(()))
    }

    async fn execute(&mut self, name: &str, max_rows: i32) -> std::io::Result<Result<(), SqlError>> {
        let Some(portal) = self.portals.get_mut(name) else {
            return Ok(Err(SqlError::new(
                SqlState::INVALID_CURSOR_NAME,
                format!("portal \"{name}\" does not exist"),
            )));
        };
        let statement = Arc::clone(&portal.statement);
        let (rows, tag) = match portal.pending.take() {
            Some(p) => p,
            None => {
                // The parameters stay with the portal (it may run again).
                let out = streaming(&mut self.conn, &mut self.transport, |conn| {
                    conn.execute(&statement, &portal.params)
                })
                .await?;
                self.send_notices().await?;
                match out {
                    Err(e) => return Ok(Err(e)),
                    Ok(Output::Rows { rows, tag, .. }) => (rows.into(), tag),
                    Ok(Output::Command(tag)) if tag.is_empty() => {
                        self.send(backend::EMPTY_QUERY).await?;
                        return Ok(Ok(()));
                    }
                    Ok(Output::Command(tag)) => (VecDeque::new(), tag),
                    // A simple Query message's part: never a portal's.
                    Ok(Output::Silent) => return Ok(Ok(())),
                    Ok(copy @ (Output::CopyIn { .. } | Output::CopyOut { .. })) => {
                        return self.copy(copy, true).await
                    }
                    Ok(out @ (Output::Deallocate(_) | Output::DiscardAll | Output::Prepared { .. })) => {
                        match self.release(out) {
                            Ok(tag) => (VecDeque::new(), tag),
                            Err(e) => return Ok(Err(e)),
                        }
                    }
                    Ok(Output::ExecuteNamed { .. }) => {
                        return Ok(Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            "EXECUTE through the extended protocol is not supported yet: send it as a simple Query",
                        )))
                    }
                }
            }
        };
        let mut rows: VecDeque<Row> = rows;
        if !rows.is_empty() {
            let limit = if max_rows > 0 { max_rows as usize } else { usize::MAX };
            let columns = statement.columns().map_or(&[][..], |c| &c[..]);
            // The portal's formats (it is still there: only `release`,
            // which returns no rows, drops portals).
            let formats = self.portals.get(name).map(|p| p.formats.clone()).unwrap_or_default();
            let zone = self.conn.style();
            let mut sent = 0;
            while sent < limit {
                let Some(row) = rows.pop_front() else { break };
                self.transport.send(DataRow { columns, formats: &formats, row: &row, zone }).await?;
                sent += 1;
            }
        }
        if !rows.is_empty() {
            if let Some(p) = self.portals.get_mut(name) {
                p.pending = Some((rows, tag));
            }
            self.send(backend::PORTAL_SUSPENDED).await?;
            return Ok(Ok(()));
        }
        self.send(CommandComplete(&tag)).await?;
        Ok(Ok(()))
    }

    async fn simple_query(&mut self, sql: &str) -> std::io::Result<()> {
        // Named portals do not survive a simple Query's transaction; the
        // unnamed statement and portal are replaced, as in PostgreSQL.
        self.statements.remove("");
        self.portals.remove("");
        self.conn.report_query(&Arc::from(sql));
        let parsed = match off_the_worker(sql.len(), || self.conn.parse(sql)) {
            Ok(p) => p,
            Err(e) => {
                self.conn.fail();
                self.send_error(&e).await?;
                return self.ready().await;
            }
        };
        if parsed.is_empty() {
            self.send(backend::EMPTY_QUERY).await?;
            return self.ready().await;
        }
        self.conn.set_multi_statement(parsed.len() > 1);
        let count = parsed.len();
        for (k, statement) in parsed.into_iter().enumerate() {
            let mut out =
                streaming(&mut self.conn, &mut self.transport, |conn| conn.execute_parsed(statement)).await?;
            // PostgreSQL ends the message's implicit transaction before it
            // completes the last statement: deferred foreign-key checks
            // that fail there fail the statement, with no CommandComplete.
            if k + 1 == count && out.is_ok() {
                if let Err(e) = self.conn.commit_deferred_checks().await {
                    out = Err(e);
                }
            }
            self.send_notices().await?;
            let out = match out {
                Ok(Output::ExecuteNamed { name, args }) => self.execute_named(&name, &args).await?,
                other => other,
            };
            let result = match out {
                Ok(Output::Rows { columns, rows, tag }) => {
                    self.send(RowDescription { columns: &columns, formats: &Formats::Text }).await?;
                    let zone = self.conn.style();
                    for row in &rows {
                        self.send(DataRow { columns: &columns, formats: &Formats::Text, row, zone }).await?;
                    }
                    self.send(CommandComplete(&tag)).await?;
                    Ok(())
                }
                Ok(Output::Command(tag)) => {
                    self.send(CommandComplete(&tag)).await?;
                    Ok(())
                }
                // Part of a statement whose tag comes later (an element of
                // CREATE SCHEMA).
                Ok(Output::Silent) => Ok(()),
                Ok(out @ (Output::Deallocate(_) | Output::DiscardAll | Output::Prepared { .. })) => {
                    match self.release(out) {
                        Ok(tag) => {
                            self.send(CommandComplete(&tag)).await?;
                            Ok(())
                        }
                        Err(e) => Err(e),
                    }
                }
                Ok(copy @ (Output::CopyIn { .. } | Output::CopyOut { .. })) => self.copy(copy, false).await?,
                // PREPARE refuses to prepare EXECUTE, so running one never
                // yields another.
                Ok(Output::ExecuteNamed { .. }) => {
                    Err(SqlError::new(SqlState::INTERNAL_ERROR, "EXECUTE produced EXECUTE"))
                }
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                // PostgreSQL stops at the first error of a Query message.
                self.send_error(&e).await?;
                break;
            }
        }
        self.conn.set_multi_statement(false);
        if let Err(e) = self.conn.sync().await {
            self.send_error(&e).await?;
        }
        self.ready().await
    }

    /// EXECUTE name (args): the named statement run with the arguments
    /// decoded as its parameter types, as PostgreSQL's EXECUTE does.
    async fn execute_named(
        &mut self,
        name: &str,
        args: &[Option<String>],
    ) -> std::io::Result<Result<Output, SqlError>> {
        let checked = match self.statements.get(name) {
            None => Err(SqlError::new(
                SqlState::INVALID_SQL_STATEMENT_NAME,
                format!("prepared statement \"{name}\" does not exist"),
            )),
            Some(statement) if statement.param_types().len() != args.len() => Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("wrong number of parameters for prepared statement \"{name}\""),
            )
            .with_detail(format!(
                "Expected {} parameters but got {}.",
                statement.param_types().len(),
                args.len()
            ))),
            Some(statement) => {
                let statement = Arc::clone(statement);
                let zone = self.conn.style();
                statement
                    .param_types()
                    .iter()
                    .zip(args)
                    .map(|(&ty, a)| decode_param(ty, false, a.as_deref().map(str::as_bytes), zone))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|params| (statement, params))
            }
        };
        let (statement, params) = match checked {
            Ok(ok) => ok,
            Err(e) => {
                self.conn.fail();
                return Ok(Err(e));
            }
        };
        let out =
            streaming(&mut self.conn, &mut self.transport, |conn| conn.execute(&statement, &params)).await?;
        self.send_notices().await?;
        Ok(out)
    }

    /// PREPARE, DEALLOCATE and DISCARD ALL: the prepared statements (and,
    /// for DISCARD ALL, the portals) are this layer's. Returns the tag.
    fn release(&mut self, out: Output) -> Result<String, SqlError> {
        match out {
            Output::Prepared { name, statement } => {
                if self.statements.contains_key(&name) {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_PREPARED_STATEMENT,
                        format!("prepared statement \"{name}\" already exists"),
                    ));
                }
                self.statements.insert(name, statement);
                Ok("PREPARE".into())
            }
            Output::Deallocate(None) => {
                self.statements.clear();
                Ok("DEALLOCATE ALL".into())
            }
            Output::Deallocate(Some(name)) => match self.statements.remove(&name) {
                Some(_) => Ok("DEALLOCATE".into()),
                None => Err(SqlError::new(
                    SqlState::INVALID_SQL_STATEMENT_NAME,
                    format!("prepared statement \"{name}\" does not exist"),
                )),
            },
            _ => {
                self.statements.clear();
                self.portals.clear();
                Ok("DISCARD ALL".into())
            }
        }
    }

    /// Runs COPY's sub-protocol. Returns the statement's result.
    async fn copy(&mut self, out: Output, extended: bool) -> std::io::Result<Result<(), SqlError>> {
        match out {
            Output::CopyOut { columns, lines, tag, binary } => {
                self.send(CopyResponse { kind: b'H', binary, columns }).await?;
                for line in lines {
                    self.send(CopyData(&line)).await?;
                }
                self.send(backend::COPY_DONE).await?;
                self.send(CommandComplete(&tag)).await?;
                Ok(Ok(()))
            }
            Output::CopyIn { columns, binary } => {
                self.send(CopyResponse { kind: b'G', binary, columns }).await?;
                self.flush().await?;
                let mut failed: Option<SqlError> = None;
                loop {
                    // A shutdown is seen between messages (a client that
                    // streams without pause) and while waiting for one.
                    let read = if self.cancel.is_terminating() {
                        None
                    } else {
                        tokio::select! {
                            biased;
                            read = self.transport.read() => Some(read?),
                            () = self.cancel.terminated() => None,
                        }
                    };
                    let Some(read) = read else {
                        self.conn.copy_fail("the server is shutting down");
                        self.terminated().await?;
                        return Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, TERMINATED));
                    };
                    let message = match read {
                        Some(Ok(m)) => m,
                        Some(Err(Refused::Fatal(e))) => {
                            let _ = self.send(backend::fatal(&e)).await;
                            let _ = self.flush().await;
                            return Err(std::io::ErrorKind::InvalidData.into());
                        }
                        Some(Err(Refused::Error { error, .. })) => {
                            failed.get_or_insert(error);
                            continue;
                        }
                        None => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                    };
                    match message {
                        Frontend::CopyData(d) => {
                            if failed.is_none() {
                                if let Err(e) = self.conn.copy_data(&d).await {
                                    failed = Some(e);
                                }
                            }
                        }
                        Frontend::CopyDone => {
                            if let Some(e) = failed {
                                self.conn.copy_fail("bad data");
                                return Ok(Err(e));
                            }
                            let done = self.conn.copy_done().await;
                            // What the COPY's triggers raised goes before
                            // its completion, as a statement's notices do.
                            self.send_notices().await?;
                            return Ok(match done {
                                Ok(Output::Command(tag)) => {
                                    self.send(CommandComplete(&tag)).await?;
                                    Ok(())
                                }
                                Ok(_) => Ok(()),
                                Err(e) => Err(e),
                            });
                        }
                        Frontend::CopyFail(f) => {
                            return Ok(Err(failed.unwrap_or_else(|| self.conn.copy_fail(&f))));
                        }
                        // Flush and Sync are allowed during COPY (ignored).
                        Frontend::Flush | Frontend::Sync if extended => {}
                        Frontend::Terminate => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                        _ => {
                            let e = SqlError::new(
                                SqlState::PROTOCOL_VIOLATION,
                                "unexpected message type during COPY from stdin",
                            );
                            let _ = self.conn.copy_fail("protocol violation");
                            return Ok(Err(e));
                        }
                    }
                }
            }
            _ => Ok(Ok(())),
        }
    }
}

/// Runs `f`, the parse of a statement of `len` bytes. A long statement's
/// parse is synchronous work of up to seconds (sqlparser may parse some
/// levels of a failing statement again; see snapscale_sql's nesting.rs):
/// it runs with this runtime worker's other tasks handed to another thread,
/// so that a few such statements at once cannot stop the server from
/// serving everyone else.
fn off_the_worker<R>(len: usize, f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi_thread = Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if len > snapscale_sql::stack::BIG_STATEMENT && multi_thread {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// Runs a statement (`run` on the session), sending the notices it
/// raises while it waits (NOTICE-STREAM in the engine's xact/notices.rs):
/// a statement blocked on a lock has already said what it did before.
/// client_min_messages is read as the statement starts; the notices
/// raised after its last wait go with its result (`send_notices`). The
/// statement always runs to its end: if the client is gone, the error
/// comes after, so nothing is dropped half done.
async fn streaming<'a, F, T>(
    conn: &'a mut Conn<Settings>,
    transport: &mut Transport,
    run: impl FnOnce(&'a mut Conn<Settings>) -> F,
) -> std::io::Result<T>
where
    F: std::future::Future<Output = T> + 'a,
{
    let queue = conn.notice_queue();
    let client = conn.gucs().session.client.message_filter();
    let statement = run(conn);
    tokio::pin!(statement);
    let mut failed = None;
    loop {
        tokio::select! {
            biased;
            out = &mut statement => return failed.map_or(Ok(out), Err),
            () = queue.ready(), if failed.is_none() => {
                let mut sent = false;
                for n in queue.take() {
                    if client.sends(n.severity) {
                        if let Err(e) = transport.send(backend::NoticeResponse(&n)).await {
                            failed = Some(e);
                            break;
                        }
                        sent = true;
                    }
                }
                if sent && failed.is_none() {
                    if let Err(e) = transport.flush().await {
                        failed = Some(e);
                    }
                }
            }
        }
    }
}
