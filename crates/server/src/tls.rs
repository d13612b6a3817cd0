//! TLS: the acceptor that answers an SSLRequest, built from the `ssl_*`
//! settings (rustls, through tokio-rustls, which pgwire's negotiation
//! takes). It is built at start, where a bad certificate or key stops the
//! server, and again at each reload, where a bad one is logged and the
//! previous acceptor kept, as PostgreSQL keeps its previous SSL context.
//!
//! rustls speaks TLS 1.2 and 1.3 only: a `ssl_min_protocol_version` below
//! TLSv1.2 accepts what rustls has, and a maximum below TLSv1.2 leaves
//! nothing to offer (the server refuses it as a configuration error).
//!
//! With `ssl_ca_file`, a client may present a certificate, which is
//! verified against those CAs (a client presenting none is still let in:
//! requiring one is a host rule's `clientcert`, with the host rules).

use std::io;
use std::path::Path;
use std::sync::Arc;

use snapscale_sql::guc::{Settings, TlsSettings, TlsVersion};
use snapscale_sql::SslStatus;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig, SupportedProtocolVersion};
use tokio_rustls::TlsAcceptor;

/// A built TLS configuration.
pub struct Tls {
    pub acceptor: TlsAcceptor,
    /// The certificate chain as read (PEM), for SCRAM's channel binding.
    pub certificate: Vec<u8>,
}

/// The acceptor for `settings`, or `None` with `ssl = off`. The error is
/// PostgreSQL's wording for the file or setting at fault.
pub fn acceptor(settings: &Settings) -> io::Result<Option<Tls>> {
    let tls = &settings.tls;
    if !tls.enabled {
        return Ok(None);
    }
    let dir = &settings.data_directory;
    let versions = versions(tls)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| config_error(format!("could not set SSL protocol version range: {e}")))?;
    let builder = match &tls.ca_file {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let path = TlsSettings::resolve(ca, dir);
            let mut roots = RootCertStore::empty();
            let pem = std::fs::read(&path).map_err(|e| {
                config_error(format!(
                    "could not load root certificate file \"{}\": {}",
                    path.display(),
                    os_message(&e)
                ))
            })?;
            for cert in parse_certificates(&pem, &path, "root certificate")? {
                roots.add(cert).map_err(|e| {
                    config_error(format!("could not load root certificate file \"{}\": {e}", ca.display()))
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| {
                    config_error(format!("could not load root certificate file \"{}\": {e}", ca.display()))
                })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let cert_path = TlsSettings::resolve(&tls.cert_file, dir);
    let certificate = std::fs::read(&cert_path).map_err(|e| {
        config_error(format!(
            "could not load server certificate file \"{}\": {}",
            cert_path.display(),
            os_message(&e)
        ))
    })?;
    let chain = parse_certificates(&certificate, &cert_path, "server certificate")?;
    let key_path = TlsSettings::resolve(&tls.key_file, dir);
    let key = read_key(&key_path, dir)?;
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| config_error(format!("check of private key failed: {e}")))?;
    // What a client asking for direct TLS (without an SSLRequest first)
    // names: pgwire checks it; a client naming nothing is let in.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(Some(Tls { acceptor: TlsAcceptor::from(Arc::new(config)), certificate }))
}

/// The protocol versions between the minimum and maximum that rustls has.
fn versions(tls: &TlsSettings) -> io::Result<Vec<&'static SupportedProtocolVersion>> {
    if let Some(max) = tls.max_protocol {
        if max < tls.min_protocol {
            return Err(config_error(
                "could not set SSL protocol version range: \"ssl_max_protocol_version\" cannot be lower than \
                 \"ssl_min_protocol_version\""
                    .into(),
            ));
        }
    }
    let allowed = |v: TlsVersion| v >= tls.min_protocol && tls.max_protocol.is_none_or(|max| v <= max);
    let mut versions = Vec::new();
    if allowed(TlsVersion::V1_2) {
        versions.push(&rustls::version::TLS12);
    }
    if allowed(TlsVersion::V1_3) {
        versions.push(&rustls::version::TLS13);
    }
    if versions.is_empty() {
        return Err(config_error(format!(
            "could not set SSL protocol version range: \"ssl_max_protocol_version\" is {}, and this server \
             speaks TLSv1.2 and TLSv1.3 only",
            tls.max_protocol.map_or("", TlsVersion::name)
        )));
    }
    Ok(versions)
}

/// Every certificate in `pem`, read from `path`.
fn parse_certificates(pem: &[u8], path: &Path, what: &str) -> io::Result<Vec<CertificateDer<'static>>> {
    let fail = |e: String| config_error(format!("could not load {what} file \"{}\": {e}", path.display()));
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(e.to_string()))?;
    if certs.is_empty() {
        return Err(fail("no certificate found".into()));
    }
    Ok(certs)
}

/// The private key at `path`, after PostgreSQL's check that no one but
/// its owner (the server's user, or root) can read it.
fn read_key(path: &Path, data_directory: &Path) -> io::Result<PrivateKeyDer<'static>> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| {
        config_error(format!("could not access private key file \"{}\": {}", path.display(), os_message(&e)))
    })?;
    if !meta.is_file() {
        return Err(config_error(format!("private key file \"{}\" is not a regular file", path.display())));
    }
    // The server's user is the data directory's owner (it created it).
    let server_user = std::fs::metadata(data_directory).map(|m| m.uid()).unwrap_or(meta.uid());
    let mode = meta.mode() & 0o777;
    let too_open = match meta.uid() {
        uid if uid == server_user => mode & 0o077 != 0,
        0 => mode & 0o037 != 0,
        _ => {
            return Err(config_error(format!(
                "private key file \"{}\" must be owned by the database user or root",
                path.display()
            )))
        }
    };
    if too_open {
        return Err(config_error(format!(
            "private key file \"{}\" has group or world access (permissions u=rw (0600) or less if owned by the \
             database user, or u=rw,g=r (0640) or less if owned by root)",
            path.display()
        )));
    }
    PrivateKeyDer::from_pem_file(path)
        .map_err(|e| config_error(format!("could not load private key file \"{}\": {e}", path.display())))
}

fn os_message(e: &io::Error) -> String {
    // "No such file or directory (os error 2)" as PostgreSQL prints it.
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

fn config_error(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// What pg_stat_ssl shows of a TLS connection.
pub fn status(conn: &rustls::ServerConnection) -> SslStatus {
    let version = match conn.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
        _ => "TLSv1.2",
    };
    let (cipher, bits) = conn.negotiated_cipher_suite().map_or(("", 0), |s| openssl_name(s.suite()));
    let client = conn.peer_certificates().and_then(|chain| chain.first());
    let parsed = client.and_then(|der| x509_certificate::X509Certificate::from_der(der.as_ref()).ok());
    SslStatus {
        version: version.into(),
        cipher: cipher.into(),
        bits,
        client_dn: parsed.as_ref().map(|c| rfc2253(c.subject_name())),
        client_serial: parsed.as_ref().map(|c| decimal(c.serial_number_asn1().as_slice())),
        issuer_dn: parsed.as_ref().map(|c| rfc2253(c.issuer_name())),
    }
}

/// A cipher suite as OpenSSL names it, which is what PostgreSQL shows,
/// and its key length.
fn openssl_name(suite: rustls::CipherSuite) -> (&'static str, i32) {
    use rustls::CipherSuite as S;
    match suite {
        S::TLS13_AES_256_GCM_SHA384 => ("TLS_AES_256_GCM_SHA384", 256),
        S::TLS13_AES_128_GCM_SHA256 => ("TLS_AES_128_GCM_SHA256", 128),
        S::TLS13_CHACHA20_POLY1305_SHA256 => ("TLS_CHACHA20_POLY1305_SHA256", 256),
        S::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => ("ECDHE-ECDSA-AES256-GCM-SHA384", 256),
        S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => ("ECDHE-ECDSA-AES128-GCM-SHA256", 128),
        S::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => ("ECDHE-ECDSA-CHACHA20-POLY1305", 256),
        S::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => ("ECDHE-RSA-AES256-GCM-SHA384", 256),
        S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => ("ECDHE-RSA-AES128-GCM-SHA256", 128),
        S::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => ("ECDHE-RSA-CHACHA20-POLY1305", 256),
        _ => ("", 0),
    }
}

/// A distinguished name as RFC 2253 writes it (most specific part first,
/// OpenSSL's short attribute names), as PostgreSQL shows it.
fn rfc2253(name: &x509_certificate::rfc3280::Name) -> String {
    let rdns: Vec<String> = name
        .iter_rdn()
        .map(|rdn| {
            rdn.iter()
                .map(|atv| {
                    let oid = atv.typ.to_string();
                    let key = match oid.as_str() {
                        "2.5.4.3" => "CN",
                        "2.5.4.6" => "C",
                        "2.5.4.7" => "L",
                        "2.5.4.8" => "ST",
                        "2.5.4.9" => "street",
                        "2.5.4.10" => "O",
                        "2.5.4.11" => "OU",
                        "0.9.2342.19200300.100.1.1" => "UID",
                        "0.9.2342.19200300.100.1.25" => "DC",
                        "1.2.840.113549.1.9.1" => "emailAddress",
                        other => other,
                    };
                    format!("{key}={}", escape_dn_value(&atv.to_string().unwrap_or_default()))
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    rdns.into_iter().rev().collect::<Vec<_>>().join(",")
}

/// RFC 2253's escapes in an attribute value.
fn escape_dn_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let last = v.chars().count().saturating_sub(1);
    for (i, c) in v.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A certificate serial (big-endian, two's complement; serials are
/// positive) in decimal.
fn decimal(bytes: &[u8]) -> String {
    let mut digits: Vec<u8> = vec![0]; // little-endian base 10
    for &b in bytes {
        let mut carry = u32::from(b);
        for d in digits.iter_mut() {
            let v = u32::from(*d) * 256 + carry;
            *d = (v % 10) as u8;
            carry = v / 10;
        }
        while carry > 0 {
            digits.push((carry % 10) as u8);
            carry /= 10;
        }
    }
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    digits.iter().rev().map(|d| char::from(b'0' + d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serials_in_decimal() {
        assert_eq!(decimal(&[0]), "0");
        assert_eq!(decimal(&[0x01, 0x00]), "256");
        assert_eq!(decimal(&[0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), u64::MAX.to_string());
        assert_eq!(decimal(&[0x01; 20]), "5731378969925109483151705226338364782964441345")
    }

    #[test]
    fn dn_values_are_escaped() {
        assert_eq!(escape_dn_value("a,b"), "a\\,b");
        assert_eq!(escape_dn_value(" x "), "\\ x\\ ");
        assert_eq!(escape_dn_value("#1"), "\\#1");
        assert_eq!(escape_dn_value("plain"), "plain");
    }
}
