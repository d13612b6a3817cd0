//! Authentication: the SCRAM-SHA-256 handler (pgwire's), over one password
//! salted once per server start, and the ParameterStatus values sent after
//! authentication.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramAuth};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{
    AuthSource, DefaultServerParameterProvider, LoginInfo, Password, ServerParameterProvider,
};
use pgwire::api::ClientInfo;
use pgwire::error::PgWireResult;
use snapscale_sql::guc::{session_settings, Settings, SERVER_VERSION};

/// The SCRAM handler shared by every connection (its per-connection state
/// lives in the client's metadata).
pub type Scram = SASLAuthStartupHandler<SessionParameters>;

/// ParameterStatus for a connection: the server's settings as the startup
/// packet (kept in the client's metadata) changed them.
pub struct SessionParameters {
    base: Settings,
}

impl ServerParameterProvider for SessionParameters {
    fn server_parameters<C: ClientInfo>(&self, client: &C) -> Option<HashMap<String, String>> {
        // A bad startup value was refused before authentication began.
        let session = session_settings(&self.base, client.metadata()).unwrap_or_else(|_| self.base.clone());
        parameters(&session).server_parameters(client)
    }
}

/// The password, salted once per server start (PBKDF2 is deliberately
/// slow: not once per connection, nor again at a reload).
#[derive(Debug)]
pub struct Secret(Arc<FixedPassword>);

impl Secret {
    pub fn new(password: &str) -> std::io::Result<Secret> {
        let mut salt = [0u8; 16];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut salt)?;
        let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
        Ok(Secret(Arc::new(FixedPassword { salt: salt.to_vec(), salted })))
    }
}

/// The SCRAM handler over `secret`. With the server's certificate chain
/// (PEM, leaf first) it also offers SCRAM-SHA-256-PLUS, whose channel
/// binding (tls-server-end-point) ties the exchange to this certificate,
/// so that a man in the middle holding another cannot relay it.
pub fn scram(
    secret: &Secret,
    settings: &Settings,
    certificate: Option<&[u8]>,
) -> std::io::Result<Arc<Scram>> {
    let source: Arc<FixedPassword> = Arc::clone(&secret.0);
    let mut scram = ScramAuth::new(source);
    scram.set_iterations(SCRAM_ITERATIONS);
    if let Some(pem) = certificate {
        scram.configure_certificate(pem).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("could not use the server certificate for channel binding: {e}"),
            )
        })?;
    }
    let provider = SessionParameters { base: settings.clone() };
    Ok(Arc::new(SASLAuthStartupHandler::new(Arc::new(provider)).with_scram(scram)))
}

const SCRAM_ITERATIONS: usize = 4096;

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
pub(crate) fn parameters(settings: &Settings) -> DefaultServerParameterProvider {
    let mut params = DefaultServerParameterProvider::default();
    params.server_version = SERVER_VERSION.to_owned();
    // As SHOW answers (snapscale_sql::guc::ClientSettings), so that
    // ParameterStatus after a SET starts from what the client was told.
    params.time_zone = settings.session.client.time_zone.clone();
    params.date_style = settings.session.client.style().show_datestyle();
    params.search_path = settings.session.client.search_path.clone();
    params.in_hot_standby = settings.primary_conninfo.is_some();
    params.default_transaction_read_only = settings.primary_conninfo.is_some();
    params
}
