//! One client connection: startup and authentication (through pgwire's
//! handlers), then our own message loop over pgwire's codec.
//!
//! The loop is ours, not pgwire's `process_socket`, because the protocol's
//! state is the SQL session's: the ReadyForQuery status byte comes from the
//! transaction block (so ROLLBACK TO in a failed block reports 'T' again),
//! COPY is a sub-protocol of a running statement, errors in the extended
//! protocol discard messages until Sync, and an idle session must still
//! answer the invalidation queue's catch-up requests.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::{BufMut, BytesMut};
use futures::{Sink, SinkExt, StreamExt};
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramAuth};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata, AuthSource,
    DefaultServerParameterProvider, LoginInfo, Password, StartupHandler,
};
use pgwire::api::{ClientInfo, PgWireConnectionState};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::data::{DataRow, FieldDescription, NoData, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{BindComplete, CloseComplete, ParseComplete, PortalSuspended};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse, ReadyForQuery, TransactionStatus,
};
use pgwire::messages::startup::SecretKey;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::server::negotiate_tls;
use snapscale_sql::wire::{decode_param, encode_binary};
use snapscale_sql::{Cancel, Column, Conn, Database, Output, Prepared, SqlError, SqlType, Value};
use snapscale_txn::Session;
use tokio::net::TcpStream;
use tracing::debug;

use crate::settings::{Settings, SERVER_VERSION};

/// The SCRAM handler shared by every connection (its per-connection state
/// lives in the client's metadata).
pub type Scram = SASLAuthStartupHandler<DefaultServerParameterProvider>;

/// Builds the SCRAM handler for `password`, salted once per server start
/// (PBKDF2 is deliberately slow: not once per connection).
pub fn scram(password: &str) -> std::io::Result<Arc<Scram>> {
    let mut salt = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut salt)?;
    let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
    let mut scram = ScramAuth::new(Arc::new(FixedPassword { salt: salt.to_vec(), salted }));
    scram.set_iterations(SCRAM_ITERATIONS);
    Ok(Arc::new(SASLAuthStartupHandler::new(Arc::new(parameters())).with_scram(scram)))
}

const SCRAM_ITERATIONS: usize = 4096;

/// How long a client may take to start up.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// One password for every role (roles arrive with a catalog of roles).
#[derive(Debug)]
struct FixedPassword {
    salt: Vec<u8>,
    salted: Vec<u8>,
}

// async_trait's expansion must match pgwire's trait signature, which
// elides LoginInfo's lifetime; writing `'_` breaks the match.
#[allow(elided_lifetimes_in_paths)]
#[async_trait]
impl AuthSource for FixedPassword {
    async fn get_password(&self, _login: &LoginInfo) -> PgWireResult<Password> {
        Ok(Password::new(Some(self.salt.clone()), self.salted.clone()))
    }
}

/// ParameterStatus sent after authentication.
fn parameters() -> DefaultServerParameterProvider {
    let mut params = DefaultServerParameterProvider::default();
    params.server_version = SERVER_VERSION.to_owned();
    params
}

/// What every connection shares.
pub struct Shared {
    pub db: Arc<Database>,
    pub settings: Settings,
    /// `Some` under auth_method = scram-sha-256.
    pub scram: Option<Arc<Scram>>,
    /// Cancel keys of live connections: pid → (secret, handle).
    cancels: Mutex<HashMap<i32, (i32, Arc<Cancel>)>>,
    random: RandomState,
}

impl Shared {
    pub fn new(db: Arc<Database>, settings: Settings, scram: Option<Arc<Scram>>) -> Shared {
        Shared { db, settings, scram, cancels: Mutex::new(HashMap::new()), random: RandomState::new() }
    }

    fn cancels(&self) -> std::sync::MutexGuard<'_, HashMap<i32, (i32, Arc<Cancel>)>> {
        self.cancels.lock().expect("cancel registry poisoned")
    }

    /// A CancelRequest: wakes the statement of the connection with this
    /// key, if the secret matches (otherwise silently nothing, as in
    /// PostgreSQL).
    fn cancel(&self, pid: i32, secret: &SecretKey) {
        if let Some((s, cancel)) = self.cancels().get(&pid) {
            // A cancel connection decodes the key as bytes.
            if SecretKey::I32(*s).eq_value(secret) {
                cancel.request();
            }
        }
    }
}

/// Startup: attaches the proc-array session, then authenticates.
struct Startup<'a> {
    shared: &'a Shared,
    session: Mutex<Option<Session>>,
    application_name: Mutex<Option<String>>,
    secret: i32,
}

#[async_trait]
impl StartupHandler for Startup<'_> {
    async fn on_startup<C>(&self, client: &mut C, message: PgWireFrontendMessage) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let PgWireFrontendMessage::Startup(ref startup) = message else {
            // The SCRAM exchange's password messages.
            return match &self.shared.scram {
                Some(scram) => scram.on_startup(client, message).await,
                None => Ok(()),
            };
        };
        // One proc-array slot for the connection's whole life, as a
        // PostgreSQL backend holds its PGPROC (DESIGN.md decision 2).
        let session = self.shared.db.engine.attach().map_err(|e| {
            PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                e.sqlstate().into(),
                e.to_string(),
            )))
        })?;
        client.set_pid_and_secret_key(session.slot() as i32 + 1, SecretKey::I32(self.secret));
        *self.application_name.lock().expect("startup state") =
            startup.parameters.get("application_name").cloned();
        *self.session.lock().expect("startup state") = Some(session);
        if let Some(scram) = &self.shared.scram {
            // SCRAM-SHA-256: the handler negotiates, authenticates (28P01
            // on a wrong password) and then sends ParameterStatus.
            return scram.on_startup(client, message).await;
        }
        protocol_negotiation(client, startup).await?;
        save_startup_parameters_to_metadata(client, startup);
        finish_authentication(client, &parameters()).await
    }
}

fn error_response(severity: &str, e: &SqlError) -> PgWireBackendMessage {
    let mut fields = vec![
        (b'S', severity.to_owned()),
        (b'V', severity.to_owned()),
        (b'C', e.code.to_owned()),
        (b'M', e.message.clone()),
    ];
    if let Some(d) = &e.detail {
        fields.push((b'D', d.clone()));
    }
    PgWireBackendMessage::ErrorResponse(ErrorResponse::new(fields))
}

/// Serves one accepted socket until the client leaves.
pub async fn serve(socket: TcpStream, shared: Arc<Shared>) -> std::io::Result<()> {
    let Some(mut framed) = negotiate_tls(socket, None).await? else { return Ok(()) };
    let secret = (shared.random.hash_one(std::time::Instant::now()) >> 1) as i32;
    let startup =
        Startup { shared: &shared, session: Mutex::new(None), application_name: Mutex::new(None), secret };
    let deadline = tokio::time::sleep(STARTUP_TIMEOUT);
    tokio::pin!(deadline);
    while !matches!(framed.state(), PgWireConnectionState::ReadyForQuery) {
        let message = tokio::select! {
            () = &mut deadline => return Ok(()),
            m = framed.next() => m,
        };
        let message = match message {
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                debug!(error = %e, "startup message rejected");
                return Ok(());
            }
            None => return Ok(()),
        };
        if let PgWireFrontendMessage::CancelRequest(c) = &message {
            shared.cancel(c.pid, &c.secret_key);
            return Ok(());
        }
        if let Err(e) = startup.on_startup(&mut framed, message).await {
            // pgwire's error keeps its SQLSTATE (28P01, 53300, ...).
            let _ = framed.send(PgWireBackendMessage::ErrorResponse(ErrorInfo::from(e).into())).await;
            return Ok(());
        }
    }
    let Some(session) = startup.session.lock().expect("startup state").take() else { return Ok(()) };
    let mut settings = shared.settings.clone();
    if let Some(app) = startup.application_name.lock().expect("startup state").take() {
        settings.application_name = app;
    }
    let pid = session.slot() as i32 + 1;
    let conn = Conn::new(Arc::clone(&shared.db), session, settings);
    shared.cancels().insert(pid, (secret, conn.cancel_handle()));
    let mut protocol =
        Protocol { framed, conn, statements: HashMap::new(), portals: HashMap::new(), skipping: false };
    let result = protocol.run().await;
    shared.cancels().remove(&pid);
    protocol.conn.close().await;
    result
}

/// A bound portal.
struct Portal {
    statement: Arc<Prepared>,
    params: Vec<Value>,
    /// Result formats per column (true = binary).
    binary: Vec<bool>,
    /// Rows not yet sent (a suspended portal) and the tag to send after.
    pending: Option<(VecDeque<Vec<Value>>, String)>,
}

type Framed = tokio_util::codec::Framed<
    pgwire::tokio::server::MaybeTls,
    pgwire::tokio::server::PgWireMessageServerCodec<()>,
>;

struct Protocol {
    framed: Framed,
    conn: Conn<Settings>,
    statements: HashMap<String, Arc<Prepared>>,
    portals: HashMap<String, Portal>,
    /// After an error in the extended protocol: discard until Sync.
    skipping: bool,
}

fn status(conn: &Conn<Settings>) -> TransactionStatus {
    match conn.status() {
        b'I' => TransactionStatus::Idle,
        b'T' => TransactionStatus::Transaction,
        _ => TransactionStatus::Error,
    }
}

fn type_size(ty: SqlType) -> i16 {
    match ty {
        SqlType::Bool => 1,
        SqlType::Int2 => 2,
        SqlType::Int4 | SqlType::Date => 4,
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp => 8,
        SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) => -1,
    }
}

fn type_modifier(ty: SqlType) -> i32 {
    match ty {
        SqlType::Varchar(Some(n)) | SqlType::Char(n) => n as i32 + 4,
        _ => -1,
    }
}

fn row_description(columns: &[Column], binary: &[bool]) -> PgWireBackendMessage {
    let fields = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            FieldDescription::new(
                c.name.clone(),
                0,
                0,
                c.ty.oid(),
                type_size(c.ty),
                type_modifier(c.ty),
                i16::from(binary.get(i).copied().unwrap_or(false)),
            )
        })
        .collect();
    PgWireBackendMessage::RowDescription(RowDescription::new(fields))
}

fn data_row(columns: &[Column], binary: &[bool], row: &[Value]) -> PgWireBackendMessage {
    let mut data = BytesMut::new();
    for (i, v) in row.iter().enumerate() {
        let bytes = if binary.get(i).copied().unwrap_or(false) {
            encode_binary(columns[i].ty, v)
        } else {
            v.to_text().map(String::into_bytes)
        };
        match bytes {
            None => data.put_i32(-1),
            Some(b) => {
                data.put_i32(b.len() as i32);
                data.put_slice(&b);
            }
        }
    }
    PgWireBackendMessage::DataRow(DataRow::new(data, row.len() as i16))
}

/// Result formats from Bind's codes: none = all text, one = all, else per
/// column.
fn formats(codes: &[i16], n: usize) -> Vec<bool> {
    match codes {
        [] => vec![false; n],
        [one] => vec![*one == 1; n],
        many => many.iter().map(|c| *c == 1).collect(),
    }
}

fn oid_type(oid: u32) -> Result<Option<SqlType>, SqlError> {
    Ok(Some(match oid {
        0 => return Ok(None),
        16 => SqlType::Bool,
        20 => SqlType::Int8,
        21 => SqlType::Int2,
        23 => SqlType::Int4,
        25 => SqlType::Text,
        701 => SqlType::Float8,
        1042 => SqlType::Char(1),
        1043 => SqlType::Varchar(None),
        1082 => SqlType::Date,
        1114 => SqlType::Timestamp,
        // unknown: infer from context.
        705 => return Ok(None),
        other => return Err(SqlError::new("0A000", format!("parameter type oid {other} is not supported"))),
    }))
}

impl Protocol {
    async fn send(&mut self, m: PgWireBackendMessage) -> std::io::Result<()> {
        self.framed.feed(m).await.map_err(std::io::Error::other)
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        SinkExt::<PgWireBackendMessage>::flush(&mut self.framed).await.map_err(std::io::Error::other)
    }

    async fn send_notices(&mut self) -> std::io::Result<()> {
        for n in self.conn.take_notices() {
            let fields = vec![
                (b'S', n.severity.to_owned()),
                (b'V', n.severity.to_owned()),
                (b'C', n.code.to_owned()),
                (b'M', n.message),
            ];
            self.send(PgWireBackendMessage::NoticeResponse(NoticeResponse::new(fields))).await?;
        }
        Ok(())
    }

    async fn ready(&mut self) -> std::io::Result<()> {
        let s = status(&self.conn);
        self.send(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(s))).await?;
        self.flush().await
    }

    async fn run(&mut self) -> std::io::Result<()> {
        let db = Arc::clone(&self.conn_db());
        let slot = self.conn.slot();
        loop {
            let message = tokio::select! {
                m = self.framed.next() => m,
                // An idle session still reads the invalidation queue when it
                // falls behind, so writers never wait for it.
                () = db.sinval.catchup_requested(slot) => {
                    self.conn.catch_up();
                    continue;
                }
            };
            let message = match message {
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    let err = SqlError::new("08P01", e.to_string());
                    let _ = self.send(error_response("FATAL", &err)).await;
                    let _ = self.flush().await;
                    return Ok(());
                }
                None => return Ok(()),
            };
            if matches!(message, PgWireFrontendMessage::Terminate(_)) {
                return Ok(());
            }
            self.message(message).await?;
        }
    }

    fn conn_db(&self) -> Arc<Database> {
        self.conn.database()
    }

    async fn message(&mut self, message: PgWireFrontendMessage) -> std::io::Result<()> {
        use PgWireFrontendMessage as F;
        if self.skipping && message.is_extended_query() && !matches!(message, F::Sync(_)) {
            return Ok(());
        }
        match message {
            F::Query(q) => self.simple_query(&q.query).await,
            F::Parse(p) => {
                let r = self.parse(p.name.unwrap_or_default(), &p.query, &p.type_oids);
                self.extended(r.map(|()| PgWireBackendMessage::ParseComplete(ParseComplete::new()))).await
            }
            F::Bind(b) => {
                let r = self.bind(b);
                self.extended(r.map(|()| PgWireBackendMessage::BindComplete(BindComplete::new()))).await
            }
            F::Describe(d) => {
                let r = self.describe(d.target_type, &d.name.unwrap_or_default()).await;
                let r = r.map(|m| m.unwrap_or_else(|| PgWireBackendMessage::NoData(NoData::new())));
                self.extended(r).await
            }
            F::Execute(e) => {
                let r = self.execute(&e.name.unwrap_or_default(), e.max_rows).await?;
                if let Err(e) = r {
                    self.send_notices().await?;
                    self.send(error_response("ERROR", &e)).await?;
                    self.skipping = true;
                }
                Ok(())
            }
            F::Sync(_) => {
                self.skipping = false;
                if let Err(e) = self.conn.sync().await {
                    self.send(error_response("ERROR", &e)).await?;
                }
                self.ready().await
            }
            F::Close(c) => {
                let name = c.name.unwrap_or_default();
                if c.target_type == b'S' {
                    self.statements.remove(&name);
                } else {
                    self.portals.remove(&name);
                }
                self.send(PgWireBackendMessage::CloseComplete(CloseComplete::new())).await
            }
            F::Flush(_) => self.flush().await,
            // COPY messages outside a COPY are ignored, as PostgreSQL does.
            F::CopyData(_) | F::CopyDone(_) | F::CopyFail(_) => Ok(()),
            _ => {
                let err = SqlError::new("08P01", "unexpected message");
                self.send(error_response("ERROR", &err)).await
            }
        }
    }

    /// Sends an extended-protocol reply, or the error (and then discards
    /// messages until Sync).
    async fn extended(&mut self, r: Result<PgWireBackendMessage, SqlError>) -> std::io::Result<()> {
        match r {
            Ok(m) => self.send(m).await,
            Err(e) => {
                // Any error aborts the transaction (or fails the block).
                self.conn.fail();
                self.send(error_response("ERROR", &e)).await?;
                self.skipping = true;
                Ok(())
            }
        }
    }

    fn parse(&mut self, name: String, sql: &str, oids: &[u32]) -> Result<(), SqlError> {
        let declared = oids.iter().map(|&o| oid_type(o)).collect::<Result<Vec<_>, _>>()?;
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(SqlError::new("42P05", format!("prepared statement \"{name}\" already exists")));
        }
        let prepared = self.conn.prepare_sql(sql, &declared)?;
        self.statements.insert(name, prepared);
        Ok(())
    }

    fn bind(&mut self, b: pgwire::messages::extendedquery::Bind) -> Result<(), SqlError> {
        let name = b.statement_name.unwrap_or_default();
        let statement =
            self.statements.get(&name).cloned().ok_or_else(|| {
                SqlError::new("26000", format!("prepared statement \"{name}\" does not exist"))
            })?;
        let types = statement.param_types();
        if b.parameters.len() != types.len() {
            return Err(SqlError::new(
                "08P01",
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{name}\" requires {}",
                    b.parameters.len(),
                    types.len()
                ),
            ));
        }
        let binary = formats(&b.parameter_format_codes, types.len());
        let params = b
            .parameters
            .iter()
            .zip(types)
            .zip(&binary)
            .map(|((p, &ty), &bin)| decode_param(ty, bin, p.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        let n = statement.columns().map_or(0, |c| c.len());
        let binary = formats(&b.result_column_format_codes, n);
        let portal = b.portal_name.unwrap_or_default();
        self.portals.insert(portal, Portal { statement, params, binary, pending: None });
        Ok(())
    }

    async fn describe(&mut self, target: u8, name: &str) -> Result<Option<PgWireBackendMessage>, SqlError> {
        if target == b'S' {
            let statement = self.statements.get(name).cloned().ok_or_else(|| {
                SqlError::new("26000", format!("prepared statement \"{name}\" does not exist"))
            })?;
            let types = statement.param_types().iter().map(|t| t.oid()).collect();
            self.send(PgWireBackendMessage::ParameterDescription(ParameterDescription::new(types)))
                .await
                .map_err(|e| SqlError::new("08006", e.to_string()))?;
            Ok(statement.columns().map(|c| row_description(c, &[])))
        } else {
            let portal = self
                .portals
                .get(name)
                .ok_or_else(|| SqlError::new("34000", format!("portal \"{name}\" does not exist")))?;
            Ok(portal.statement.columns().map(|c| row_description(c, &portal.binary)))
        }
    }

    async fn execute(&mut self, name: &str, max_rows: i32) -> std::io::Result<Result<(), SqlError>> {
        let Some(portal) = self.portals.get_mut(name) else {
            return Ok(Err(SqlError::new("34000", format!("portal \"{name}\" does not exist"))));
        };
        let statement = Arc::clone(&portal.statement);
        let binary = portal.binary.clone();
        let pending = portal.pending.take();
        let (rows, tag) = match pending {
            Some(p) => p,
            None => {
                let params = portal.params.clone();
                let out = self.conn.execute(&statement, &params).await;
                self.send_notices().await?;
                match out {
                    Err(e) => return Ok(Err(e)),
                    Ok(Output::Rows { rows, tag, .. }) => (rows.into(), tag),
                    Ok(Output::Command(tag)) if tag.is_empty() => {
                        self.send(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new()))
                            .await?;
                        return Ok(Ok(()));
                    }
                    Ok(Output::Command(tag)) => (VecDeque::new(), tag),
                    Ok(copy @ (Output::CopyIn { .. } | Output::CopyOut { .. })) => {
                        return self.copy(copy, true).await
                    }
                }
            }
        };
        let columns = statement.columns().cloned().unwrap_or_else(|| Arc::from(Vec::new()));
        let mut rows = rows;
        let limit = if max_rows > 0 { max_rows as usize } else { usize::MAX };
        let mut sent = 0;
        while sent < limit {
            let Some(row) = rows.pop_front() else { break };
            self.send(data_row(&columns, &binary, &row)).await?;
            sent += 1;
        }
        if !rows.is_empty() {
            if let Some(p) = self.portals.get_mut(name) {
                p.pending = Some((rows, tag));
            }
            self.send(PgWireBackendMessage::PortalSuspended(PortalSuspended::new())).await?;
            return Ok(Ok(()));
        }
        self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(tag))).await?;
        Ok(Ok(()))
    }

    async fn simple_query(&mut self, sql: &str) -> std::io::Result<()> {
        // Named portals do not survive a simple Query's transaction; the
        // unnamed statement and portal are replaced, as in PostgreSQL.
        self.statements.remove("");
        self.portals.remove("");
        let parsed = match self.conn.parse(sql) {
            Ok(p) => p,
            Err(e) => {
                self.conn.fail();
                self.send(error_response("ERROR", &e)).await?;
                return self.ready().await;
            }
        };
        if parsed.is_empty() {
            self.send(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new())).await?;
            return self.ready().await;
        }
        for statement in parsed {
            let out = self.conn.execute_parsed(statement).await;
            self.send_notices().await?;
            let result = match out {
                Ok(Output::Rows { columns, rows, tag }) => {
                    self.send(row_description(&columns, &[])).await?;
                    for row in &rows {
                        self.send(data_row(&columns, &[], row)).await?;
                    }
                    self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(tag))).await?;
                    Ok(())
                }
                Ok(Output::Command(tag)) => {
                    self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(tag))).await?;
                    Ok(())
                }
                Ok(copy @ (Output::CopyIn { .. } | Output::CopyOut { .. })) => self.copy(copy, false).await?,
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                // PostgreSQL stops at the first error of a Query message.
                self.send(error_response("ERROR", &e)).await?;
                break;
            }
        }
        if let Err(e) = self.conn.sync().await {
            self.send(error_response("ERROR", &e)).await?;
        }
        self.ready().await
    }

    /// Runs COPY's sub-protocol. Returns the statement's result.
    async fn copy(&mut self, out: Output, extended: bool) -> std::io::Result<Result<(), SqlError>> {
        match out {
            Output::CopyOut { columns, lines, tag } => {
                let formats = vec![0; columns];
                self.send(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(
                    0,
                    columns as i16,
                    formats,
                )))
                .await?;
                for line in lines {
                    self.send(PgWireBackendMessage::CopyData(CopyData::new(line.into()))).await?;
                }
                self.send(PgWireBackendMessage::CopyDone(CopyDone::new())).await?;
                self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(tag))).await?;
                Ok(Ok(()))
            }
            Output::CopyIn { columns } => {
                let formats = vec![0; columns];
                self.send(PgWireBackendMessage::CopyInResponse(CopyInResponse::new(
                    0,
                    columns as i16,
                    formats,
                )))
                .await?;
                self.flush().await?;
                let mut failed: Option<SqlError> = None;
                loop {
                    let message = match self.framed.next().await {
                        Some(Ok(m)) => m,
                        Some(Err(e)) => return Err(std::io::Error::other(e.to_string())),
                        None => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                    };
                    match message {
                        PgWireFrontendMessage::CopyData(d) => {
                            if failed.is_none() {
                                if let Err(e) = self.conn.copy_data(&d.data).await {
                                    failed = Some(e);
                                }
                            }
                        }
                        PgWireFrontendMessage::CopyDone(_) => {
                            if let Some(e) = failed {
                                return Ok(Err(e));
                            }
                            return Ok(match self.conn.copy_done().await {
                                Ok(Output::Command(tag)) => {
                                    self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(
                                        tag,
                                    )))
                                    .await?;
                                    Ok(())
                                }
                                Ok(_) => Ok(()),
                                Err(e) => Err(e),
                            });
                        }
                        PgWireFrontendMessage::CopyFail(f) => {
                            return Ok(Err(failed.unwrap_or_else(|| self.conn.copy_fail(&f.message))));
                        }
                        // Flush and Sync are allowed during COPY (ignored).
                        PgWireFrontendMessage::Flush(_) | PgWireFrontendMessage::Sync(_) if extended => {}
                        PgWireFrontendMessage::Terminate(_) => {
                            return Err(std::io::ErrorKind::UnexpectedEof.into());
                        }
                        _ => {
                            let e = SqlError::new("08P01", "unexpected message type during COPY from stdin");
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
