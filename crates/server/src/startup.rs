//! Startup and authentication, through pgwire's handlers: the SSL request
//! (TLS where `ssl = on`: crate::tls), the startup packet, SCRAM-SHA-256 or trust, the
//! proc-array slot, BackendKeyData and ParameterStatus. What follows the
//! startup is our own protocol loop (`connection.rs`), so the socket and
//! whatever the client already sent after its startup packet are handed
//! over as they are.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::BytesMut;
use futures::{Sink, SinkExt, StreamExt};
use pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata, StartupHandler,
};
use pgwire::api::{ClientInfo, PgWireConnectionState};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::startup::SecretKey;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::server::{negotiate_tls, MaybeTls};
use snapscale_sql::guc::{session_settings, Settings};
use snapscale_sql::{Backend, SqlState};
use tokio::net::TcpStream;
use tracing::debug;

use crate::auth::parameters;
use crate::shared::Shared;

/// How long a client may take to start up.
pub(crate) const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

fn fatal(code: SqlState, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("FATAL".into(), code.code().into(), message.into())))
}

/// Startup: checks the packet, attaches the backend (its proc-array slot), then
/// authenticates.
struct Startup<'a> {
    shared: &'a Shared,
    backend: Mutex<Option<Backend>>,
    /// A replication connection's place among `max_wal_senders`.
    replication: Mutex<Option<crate::shared::SenderSlot>>,
    /// The user the startup packet named (for messages).
    user: Mutex<String>,
    /// The session's settings: the server's, as the startup packet's
    /// parameters changed them.
    settings: Mutex<Option<Settings>>,
    secret: i32,
    /// The SCRAM handler as of this connection's start: one for the whole
    /// exchange, whatever a reload does meanwhile.
    scram: Option<Arc<crate::auth::Scram>>,
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
            return match &self.scram {
                Some(scram) => scram.on_startup(client, message).await,
                None => Ok(()),
            };
        };
        if startup.parameters.get("user").is_none_or(|u| u.is_empty()) {
            return Err(fatal(
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                "no PostgreSQL user name specified in startup packet",
            ));
        }
        *self.user.lock().expect("startup state") =
            startup.parameters.get("user").cloned().unwrap_or_default();
        let mut session = session_settings(&self.shared.settings, &startup.parameters).map_err(|e| {
            let e = e.into_data();
            let mut info = ErrorInfo::new("FATAL".into(), e.code.code().into(), e.message);
            info.hint = e.hint;
            PgWireError::UserError(Box::new(info))
        })?;
        // SHOW ssl and its kin answer as of the last reload.
        session.tls = self.shared.tls_settings();
        match replication_mode(startup.parameters.get("replication").map(String::as_str))? {
            true => {
                // A WAL sender runs no transactions: it counts against
                // max_wal_senders, not max_connections.
                let slot = self.shared.sender_slot().ok_or_else(|| {
                    fatal(
                        SqlState::TOO_MANY_CONNECTIONS,
                        format!(
                            "number of requested standby connections exceeds max_wal_senders (currently {})",
                            self.shared.settings.max_wal_senders
                        ),
                    )
                })?;
                client.set_pid_and_secret_key(0, SecretKey::I32(self.secret));
                *self.replication.lock().expect("startup state") = Some(slot);
            }
            false => {
                // One proc-array slot for the connection's whole life, as a
                // PostgreSQL backend holds its PGPROC.
                let backend = self.shared.db.attach().map_err(|e| fatal(e.code, e.into_data().message))?;
                client.set_pid_and_secret_key(backend.pid(), SecretKey::I32(self.secret));
                *self.backend.lock().expect("startup state") = Some(backend);
            }
        }
        let reported = parameters(&session);
        *self.settings.lock().expect("startup state") = Some(session);
        if let Some(scram) = &self.scram {
            // SCRAM-SHA-256: the handler negotiates, authenticates (28P01
            // on a wrong password) and then sends ParameterStatus (as
            // auth::SessionParameters computes it).
            return scram.on_startup(client, message).await;
        }
        protocol_negotiation(client, startup).await?;
        save_startup_parameters_to_metadata(client, startup);
        finish_authentication(client, &reported).await
    }
}

/// A startup error as PostgreSQL words it. pgwire's SCRAM handler names
/// the user of the SCRAM exchange, which libpq and every driver send
/// empty (PostgreSQL ignores it): a wrong password names the startup
/// packet's user instead, on normal and replication connections alike.
/// pgwire's other messages start with a capital letter, PostgreSQL's
/// never do.
fn postgres_message(e: PgWireError, user: &str) -> ErrorInfo {
    let fatal = |code: SqlState, message: String| ErrorInfo::new("FATAL".into(), code.code().into(), message);
    match e {
        PgWireError::InvalidPassword(_) => {
            fatal(SqlState::INVALID_PASSWORD, format!("password authentication failed for user \"{user}\""))
        }
        PgWireError::InvalidScramMessage(detail) => {
            let mut info = fatal(SqlState::PROTOCOL_VIOLATION, "malformed SCRAM message".into());
            info.detail = Some(detail);
            info
        }
        PgWireError::UnsupportedSASLAuthMethod(_) => fatal(
            SqlState::PROTOCOL_VIOLATION,
            "client selected an invalid SASL authentication mechanism".into(),
        ),
        other => {
            let mut info = ErrorInfo::from(other);
            let mut chars = info.message.chars();
            if let (Some(first), Some(second)) = (chars.next(), chars.next()) {
                if first.is_ascii_uppercase() && second.is_ascii_lowercase() {
                    info.message.replace_range(..1, &first.to_ascii_lowercase().to_string());
                }
            }
            info
        }
    }
}

/// The `replication` startup parameter: physical replication (true) or a
/// normal connection; logical replication (`database`) is refused.
fn replication_mode(value: Option<&str>) -> PgWireResult<bool> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("false" | "off" | "no" | "0") => Ok(false),
        Some("true" | "on" | "yes" | "1") => Ok(true),
        Some("database") => {
            Err(fatal(SqlState::FEATURE_NOT_SUPPORTED, "logical replication is not supported"))
        }
        Some(other) => Err(fatal(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"replication\": \"{other}\""),
        )),
    }
}

/// Who a started connection is.
pub enum Role {
    /// A client: its proc-array slot.
    Client(Backend),
    /// A standby's WAL receiver.
    WalSender(crate::shared::SenderSlot),
}

/// A connection that finished its startup.
pub struct Started {
    pub io: MaybeTls,
    /// What the client sent after its startup packet, already read.
    pub input: BytesMut,
    pub role: Role,
    /// The session's settings (the startup packet's user, database,
    /// application_name and settings applied).
    pub settings: Settings,
    pub secret: i32,
}

/// Runs the startup exchange on `socket`; `None` if the connection ended
/// there (a cancel request, a failed authentication, a bad packet, a
/// timeout), after telling the client why where PostgreSQL would.
pub async fn start(socket: TcpStream, shared: &Shared, secret: i32) -> std::io::Result<Option<Started>> {
    let Some(mut framed) = negotiate_tls::<()>(socket, shared.tls_acceptor()).await? else { return Ok(None) };
    let startup = Startup {
        shared,
        backend: Mutex::new(None),
        replication: Mutex::new(None),
        user: Mutex::new(String::new()),
        settings: Mutex::new(None),
        secret,
        scram: shared.scram(framed.is_secure()),
    };
    let deadline = tokio::time::sleep(STARTUP_TIMEOUT);
    tokio::pin!(deadline);
    while !matches!(framed.state(), PgWireConnectionState::ReadyForQuery) {
        let message = tokio::select! {
            () = &mut deadline => return Ok(None),
            m = framed.next() => m,
        };
        let message = match message {
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                // An impossible length or protocol version: PostgreSQL
                // logs it and closes the connection without a reply.
                debug!(error = %e, "startup message rejected");
                return Ok(None);
            }
            None => return Ok(None),
        };
        if let PgWireFrontendMessage::CancelRequest(c) = &message {
            shared.cancel(c.pid, &c.secret_key);
            return Ok(None);
        }
        if let Err(e) = startup.on_startup(&mut framed, message).await {
            // pgwire's error keeps its SQLSTATE (28000, 28P01, 53300, ...).
            let user = startup.user.lock().expect("startup state").clone();
            let info = postgres_message(e, &user);
            let _ = framed.send(PgWireBackendMessage::ErrorResponse(info.into())).await;
            return Ok(None);
        }
    }
    let role = match (
        startup.backend.lock().expect("startup state").take(),
        startup.replication.lock().expect("startup state").take(),
    ) {
        (Some(backend), _) => Role::Client(backend),
        (None, Some(slot)) => Role::WalSender(slot),
        (None, None) => return Ok(None),
    };
    let Some(settings) = startup.settings.lock().expect("startup state").take() else { return Ok(None) };
    SinkExt::<PgWireBackendMessage>::flush(&mut framed).await.map_err(std::io::Error::other)?;
    let parts = framed.into_parts();
    Ok(Some(Started { io: parts.io, input: parts.read_buf, role, settings, secret }))
}
