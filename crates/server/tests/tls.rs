//! TLS as clients see it: `ssl = on` answers the SSLRequest, a driver
//! that verifies the certificate and host name connects, one that trusts
//! another CA is refused, plain connections still work, a reload takes a
//! renewed certificate, client certificates are checked against
//! `ssl_ca_file`, and bad files stop the server with PostgreSQL's words.
//! psql (libpq) with `sslmode=verify-full` where psql is installed.

mod wire;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use snapscale_server::{Server, Settings};
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_rustls::rustls::{self, pki_types::pem::PemObject, ClientConfig, RootCertStore};

/// A CA that signs certificates.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        Ca { issuer: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap() }
    }

    /// A certificate for `names` (host names or addresses, or a client's
    /// common name) and its key, as PEM.
    fn sign(&self, names: &[&str], common_name: &str) -> (String, String) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(DnType::CommonName, common_name);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn pem(&self) -> String {
        self.issuer.pem()
    }
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("snapscale-tls-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes a key readable by its owner only (the server refuses others).
fn write_key(path: &Path, pem: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, pem).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Server files for a certificate of `ca` for localhost, in `dir`.
fn server_files(dir: &Path, ca: &Ca) {
    let (cert, key) = ca.sign(&["localhost", "127.0.0.1"], "localhost");
    std::fs::write(dir.join("server.crt"), cert).unwrap();
    write_key(&dir.join("server.key"), &key);
}

fn tls_settings(dir: &Path) -> impl FnOnce(&mut Settings) + '_ {
    move |s: &mut Settings| {
        s.data_directory = dir.join("data");
        s.tls.enabled = true;
        s.tls.cert_file = dir.join("server.crt");
        s.tls.key_file = dir.join("server.key");
    }
}

/// A client that trusts `ca` (and presents `client`, if given).
fn client(ca: &str, client: Option<&(String, String)>) -> MakeRustlsConnect {
    let mut roots = RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => builder
            .with_client_auth_cert(
                rustls::pki_types::CertificateDer::pem_slice_iter(cert.as_bytes())
                    .map(|c| c.unwrap())
                    .collect(),
                rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap(),
    };
    MakeRustlsConnect::new(config)
}

/// Connects with TLS required (the driver refuses a server that answers
/// `N`), checking the host name `localhost` against the certificate.
async fn connect_tls(
    port: u16,
    tls: MakeRustlsConnect,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, conn) = tokio_postgres::Config::new()
        .host("localhost")
        .port(port)
        .user("postgres")
        .ssl_mode(tokio_postgres::config::SslMode::Require)
        .connect(tls)
        .await?;
    tokio::spawn(conn);
    Ok(client)
}

async fn show_ssl(client: &tokio_postgres::Client) -> String {
    client.query_one("SHOW ssl", &[]).await.unwrap().get(0)
}

async fn bind(configure: impl FnOnce(&mut Settings)) -> std::io::Result<Server> {
    let mut settings = Settings { port: 0, ..Settings::default() };
    configure(&mut settings);
    Server::bind(settings).await
}

#[tokio::test]
async fn verified_tls_connects_and_plain_still_works() {
    let dir = dir("verified");
    let (ca, other) = (Ca::new("snapscale test CA"), Ca::new("someone else"));
    server_files(&dir, &ca);
    let server = wire::serve(bind(tls_settings(&dir)).await.unwrap());
    let port = server.addr.port();
    let c = connect_tls(port, client(&ca.pem(), None)).await.expect("TLS with the right CA");
    assert_eq!(show_ssl(&c).await, "on");
    let refused = connect_tls(port, client(&other.pem(), None)).await;
    assert!(refused.is_err(), "a client that trusts another CA must not connect");
    // Without TLS, as ssl = on allows when no host rule demands it.
    let (plain, conn) =
        tokio_postgres::connect(&format!("host=127.0.0.1 port={port} user=postgres"), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(conn);
    let row = plain
        .query_one("SELECT ssl, client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])
        .await
        .unwrap();
    assert!(!row.get::<_, bool>(0), "the plain connection is not TLS");
    assert_eq!(row.get::<_, Option<&str>>(1), None);
    let row = c
        .query_one("SELECT ssl, client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0), "the verified connection is TLS");
    assert_eq!(row.get::<_, Option<&str>>(1), None, "it presented no certificate");
    // SET cannot change it: a reload does.
    let e = c.batch_execute("SET ssl = off").await.unwrap_err();
    assert_eq!(e.code().unwrap().code(), "55P02");
    assert_eq!(e.as_db_error().unwrap().message(), "parameter \"ssl\" cannot be changed now");
}

#[tokio::test]
async fn ssl_off_refuses_the_ssl_request() {
    let dir = dir("off");
    let ca = Ca::new("snapscale test CA");
    let server = wire::serve(bind(|s| s.data_directory = dir.join("data")).await.unwrap());
    let refused = connect_tls(server.addr.port(), client(&ca.pem(), None)).await;
    assert!(refused.is_err(), "sslmode=require against ssl = off must fail");
}

#[tokio::test]
async fn a_reload_takes_a_renewed_certificate_and_keeps_the_old_on_a_bad_one() {
    let dir = dir("reload");
    let (old, new) = (Ca::new("old CA"), Ca::new("new CA"));
    server_files(&dir, &old);
    let server = bind(tls_settings(&dir)).await.unwrap();
    let reload = server.reloader();
    let server = wire::serve(server);
    let port = server.addr.port();
    connect_tls(port, client(&old.pem(), None)).await.expect("the first certificate");
    server_files(&dir, &new);
    reload().expect("a good reload");
    connect_tls(port, client(&new.pem(), None)).await.expect("the renewed certificate");
    assert!(connect_tls(port, client(&old.pem(), None)).await.is_err(), "the old certificate is gone");
    // A broken key: the reload fails and the renewed certificate stays.
    write_key(&dir.join("server.key"), "not a key");
    let e = reload().unwrap_err().to_string();
    assert!(e.starts_with("could not load private key file"), "{e}");
    let c = connect_tls(port, client(&new.pem(), None)).await.expect("the previous acceptor stays");
    // pg_reload_conf() asks for the same reload (done by the server's
    // reload loop, soon after).
    let third = Ca::new("third CA");
    server_files(&dir, &third);
    assert!(c.query_one("SELECT pg_reload_conf()", &[]).await.unwrap().get::<_, bool>(0));
    let mut tries = 0;
    while connect_tls(port, client(&third.pem(), None)).await.is_err() {
        tries += 1;
        assert!(tries < 100, "pg_reload_conf() did not reload within 10 s");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn client_certificates_are_verified_against_ssl_ca_file() {
    let dir = dir("client");
    let (ca, clients, strangers) = (Ca::new("server CA"), Ca::new("client CA"), Ca::new("stranger CA"));
    server_files(&dir, &ca);
    std::fs::write(dir.join("root.crt"), clients.pem()).unwrap();
    let settings = tls_settings(&dir);
    let server = wire::serve(
        bind(|s| {
            settings(s);
            // Relative: in the data directory, as PostgreSQL reads it.
            s.tls.ca_file = Some(PathBuf::from("../root.crt"));
        })
        .await
        .unwrap(),
    );
    let port = server.addr.port();
    let good = clients.sign(&[], "postgres");
    let c = connect_tls(port, client(&ca.pem(), Some(&good))).await.expect("a client certificate of the CA");
    let row = c
        .query_one(
            "SELECT ssl, version, bits, client_dn, issuer_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, &str>(1), "TLSv1.3");
    assert!(row.get::<_, i32>(2) >= 128);
    assert_eq!(row.get::<_, &str>(3), "CN=postgres");
    assert_eq!(row.get::<_, &str>(4), "CN=client CA");
    connect_tls(port, client(&ca.pem(), None)).await.expect("no certificate: host rules decide");
    let bad = strangers.sign(&[], "postgres");
    assert!(
        connect_tls(port, client(&ca.pem(), Some(&bad))).await.is_err(),
        "a certificate of another CA is refused in the handshake"
    );
}

#[tokio::test]
async fn bad_files_stop_the_server_with_postgresql_words() {
    let dir = dir("bad");
    let ca = Ca::new("snapscale test CA");
    let e = bind(tls_settings(&dir)).await.err().expect("no certificate").to_string();
    assert_eq!(
        e,
        format!(
            "could not load server certificate file \"{}\": No such file or directory",
            dir.join("server.crt").display()
        )
    );
    server_files(&dir, &ca);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("server.key"), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let e = bind(tls_settings(&dir)).await.err().expect("a readable key").to_string();
    assert!(e.contains("has group or world access"), "{e}");
    let (_, other_key) = ca.sign(&["localhost"], "localhost");
    write_key(&dir.join("server.key"), &other_key);
    let e = bind(tls_settings(&dir)).await.err().expect("a key of another certificate").to_string();
    assert!(e.starts_with("check of private key failed"), "{e}");
    server_files(&dir, &ca);
    let settings = tls_settings(&dir);
    let e = bind(|s| {
        settings(s);
        s.tls.min_protocol = snapscale_sql::guc::TlsVersion::V1_3;
        s.tls.max_protocol = Some(snapscale_sql::guc::TlsVersion::V1_2);
    })
    .await
    .err()
    .expect("max below min")
    .to_string();
    assert!(
        e.contains("\"ssl_max_protocol_version\" cannot be lower than \"ssl_min_protocol_version\""),
        "{e}"
    );
}

/// libpq: `sslmode=verify-full` checks the chain and the host name.
#[tokio::test]
async fn psql_verify_full() {
    if std::process::Command::new("psql").arg("--version").output().is_err() {
        eprintln!("skipped: psql is not installed");
        return;
    }
    let dir = dir("psql");
    let ca = Ca::new("snapscale test CA");
    server_files(&dir, &ca);
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    let server = wire::serve(bind(tls_settings(&dir)).await.unwrap());
    let port = server.addr.port();
    let run = move |mode: &str| {
        let conninfo = format!(
            "host=localhost port={port} user=postgres sslmode={mode} sslrootcert={}",
            dir.join("ca.crt").display()
        );
        std::process::Command::new("psql")
            .args(["-X", "-A", "-t", "-c", "SHOW ssl", &conninfo])
            .env_remove("PGSSLMODE")
            .output()
            .unwrap()
    };
    let out = tokio::task::spawn_blocking(move || run("verify-full")).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "on");
}

/// SCRAM over TLS offers SCRAM-SHA-256-PLUS, bound to the certificate (a
/// driver requiring channel binding gets it); over a plain connection it
/// is not offered (libpq refuses a server that offers it there).
#[tokio::test]
async fn scram_binds_to_the_certificate_over_tls_only() {
    let dir = dir("scram");
    let ca = Ca::new("snapscale test CA");
    server_files(&dir, &ca);
    let settings = tls_settings(&dir);
    let server = wire::serve(
        bind(|s| {
            settings(s);
            s.auth_method = snapscale_server::AuthMethod::ScramSha256;
            s.password = Some("sekrit".into());
        })
        .await
        .unwrap(),
    );
    let port = server.addr.port();
    let config = |binding, ssl| {
        let mut c = tokio_postgres::Config::new();
        c.host("localhost")
            .port(port)
            .user("postgres")
            .password("sekrit")
            .channel_binding(binding)
            .ssl_mode(ssl);
        c
    };
    use tokio_postgres::config::{ChannelBinding, SslMode};
    let (bound, conn) = config(ChannelBinding::Require, SslMode::Require)
        .connect(client(&ca.pem(), None))
        .await
        .expect("PLUS over TLS");
    tokio::spawn(conn);
    assert_eq!(show_ssl(&bound).await, "on");
    let (plain, conn) = config(ChannelBinding::Prefer, SslMode::Disable)
        .connect(tokio_postgres::NoTls)
        .await
        .expect("plain SCRAM while TLS is on");
    tokio::spawn(conn);
    assert_eq!(plain.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0), 1);
    let e = config(ChannelBinding::Require, SslMode::Disable).connect(tokio_postgres::NoTls).await.err();
    assert!(e.is_some(), "channel binding cannot be had without TLS");
}
