//! TLS for measured and control connections, with rustls (no OpenSSL at run time).
//!
//! The client configuration is built once per set of [`TlsOptions`] and shared by every
//! connection. The handshake runs on the blocking socket during connection set-up, before
//! anything is measured, and is timed with the TCP connect. Afterwards [`TlsMio`] wraps
//! the non-blocking socket for the event loop: reads decrypt whatever records arrived,
//! writes encrypt into rustls' buffer and send what the socket takes; encrypted bytes the
//! socket did not take yet are reported by [`TlsMio::wants_write`] so the worker keeps
//! flushing them when the socket becomes writable.
//!
//! Failures are said in words a user can act on: an untrusted certificate (give
//! `--cacert`, or `--insecure`), a certificate for another name (`--sni`), a plain-TCP
//! server on the port (drop `--tls`), a missing client certificate.

use crate::config::TlsOptions;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

/// Built client configurations, keyed by the options they were built from.
static CONFIGS: Mutex<Vec<(TlsOptions, Arc<ClientConfig>)>> = Mutex::new(Vec::new());

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The rustls client configuration for `opts`, built on first use.
///
/// # Errors
/// A CA, certificate or key file that cannot be read or holds nothing usable, or a
/// protocol or cipher-suite choice rustls does not support, in words.
pub fn client_config(opts: &TlsOptions) -> io::Result<Arc<ClientConfig>> {
    if let Ok(cache) = CONFIGS.lock() {
        if let Some((_, c)) = cache.iter().find(|(o, _)| o == opts) {
            return Ok(Arc::clone(c));
        }
    }
    let config = Arc::new(build(opts)?);
    if let Ok(mut cache) = CONFIGS.lock() {
        cache.push((opts.clone(), Arc::clone(&config)));
    }
    Ok(config)
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn build(opts: &TlsOptions) -> io::Result<ClientConfig> {
    let mut provider = (*provider()).clone();
    if !opts.ciphersuites.is_empty() {
        let all = provider.cipher_suites.clone();
        let mut chosen = Vec::new();
        for name in &opts.ciphersuites {
            let want = name.trim().to_ascii_uppercase().replace('-', "_");
            match all
                .iter()
                .find(|s| format!("{:?}", s.suite()).eq_ignore_ascii_case(&want))
            {
                Some(s) => chosen.push(*s),
                None => {
                    let names: Vec<String> =
                        all.iter().map(|s| format!("{:?}", s.suite())).collect();
                    return Err(bad(format!(
                        "TLS cipher suite {name:?} is not one rustls offers; expected one of {}",
                        names.join(", ")
                    )));
                }
            }
        }
        provider.cipher_suites = chosen;
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = if opts.protocols.is_empty() {
        rustls::DEFAULT_VERSIONS.to_vec()
    } else {
        let mut v = Vec::new();
        for p in &opts.protocols {
            match p.trim().to_ascii_lowercase().trim_start_matches("tlsv").trim_start_matches("tls") {
                "1.2" => v.push(&rustls::version::TLS12),
                "1.3" => v.push(&rustls::version::TLS13),
                other => {
                    return Err(bad(format!(
                        "TLS protocol {other:?} is not supported; expected TLSv1.2 and/or TLSv1.3 (rustls offers no older versions)"
                    )))
                }
            }
        }
        v
    };
    let builder = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&versions)
        .map_err(|e| {
            bad(format!(
                "TLS protocols and cipher suites do not fit together: {e}"
            ))
        })?;
    let builder = if opts.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(self::provider())))
    } else {
        builder.with_root_certificates(roots(opts)?)
    };
    let mut config = match (&opts.cert, &opts.key) {
        (Some(cert), Some(key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                .map_err(|e| bad(format!("--cert {}: {e}", cert.display())))?
                .collect::<Result<_, _>>()
                .map_err(|e| bad(format!("--cert {}: {e}", cert.display())))?;
            if chain.is_empty() {
                return Err(bad(format!(
                    "--cert {}: expected a PEM certificate, found none",
                    cert.display()
                )));
            }
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                bad(format!(
                    "--key {}: expected a PEM private key: {e}",
                    key.display()
                ))
            })?;
            client_auth(builder, chain, key, cert)?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => {
            return Err(bad(
                "--cert and --key go together (a client certificate needs its key)".into(),
            ))
        }
    };
    config.enable_sni = true;
    Ok(config)
}

/// The client certificate and its key. An X.509 v1 certificate (what `openssl x509 -req`
/// makes without an extensions file, and what redis-server and redis-cli accept) cannot
/// be parsed by the certificate library, so rustls's own check that the key fits it
/// would refuse it as a mismatch: for a v1 certificate the key is checked against the
/// certificate's public key here instead, and the certificate is sent as it is.
fn client_auth(
    builder: rustls::ConfigBuilder<ClientConfig, rustls::client::WantsClientCert>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    cert_path: &std::path::Path,
) -> io::Result<ClientConfig> {
    let mismatch = |e: String| {
        bad(format!(
            "--cert/--key: the key does not fit the certificate {}: {e}",
            cert_path.display()
        ))
    };
    if chain.first().is_some_and(|c| x509_version(c) == Some(1)) {
        let signing = self::provider()
            .key_provider
            .load_private_key(key)
            .map_err(|e| mismatch(e.to_string()))?;
        let spki = signing.public_key();
        let fits = match (&spki, v1_spki(&chain[0])) {
            (Some(k), Some(c)) => k.as_ref() == c,
            // The key type gives no public key to compare: the server will tell.
            _ => true,
        };
        if !fits {
            return Err(mismatch("their public keys differ".into()));
        }
        let certified = rustls::sign::CertifiedKey::new(chain, signing);
        return Ok(builder
            .with_client_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified))));
    }
    builder
        .with_client_auth_cert(chain, key)
        .map_err(|e| mismatch(e.to_string()))
}

/// One DER element at the start of `der`: (tag, content, rest).
fn der_element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |a, &b| (a << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The X.509 version of a DER certificate (1, 2 or 3); `None` when it is not one.
fn x509_version(cert: &CertificateDer<'_>) -> Option<u8> {
    let (0x30, body, _) = der_element(cert.as_ref())? else {
        return None;
    };
    let (0x30, tbs, _) = der_element(body)? else {
        return None;
    };
    match der_element(tbs)? {
        // [0] EXPLICIT Version: INTEGER 0 (v1), 1 (v2) or 2 (v3).
        (0xa0, version, _) => match der_element(version)? {
            (0x02, [v], _) if *v <= 2 => Some(v + 1),
            _ => None,
        },
        // No version field: v1.
        (0x02, _, _) => Some(1),
        _ => None,
    }
}

/// The SubjectPublicKeyInfo (the whole DER element) of a v1 certificate: the seventh
/// field of its tbsCertificate (serial, signature, issuer, validity, subject, key).
fn v1_spki<'a>(cert: &'a CertificateDer<'a>) -> Option<&'a [u8]> {
    let (_, body, _) = der_element(cert.as_ref())?;
    let (_, mut tbs, _) = der_element(body)?;
    for _ in 0..5 {
        tbs = der_element(tbs)?.2;
    }
    let (tag, content, rest) = der_element(tbs)?;
    (tag == 0x30)
        .then(|| &tbs[..tbs.len() - rest.len()])
        .filter(|_| !content.is_empty())
}

/// A date in words (`2020-02-01`) from seconds since 1970 (UTC).
fn civil_date(unix_secs: u64) -> String {
    resplab_results::date::date_of_unix_secs(i64::try_from(unix_secs).unwrap_or(i64::MAX))
}

/// How to make a v3 certificate, for messages.
const MAKE_V3: &str = "make an X.509 v3 certificate instead, e.g. `openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -days 365 -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1')` (an extensions file makes it v3)";

/// The CA certificates to trust: `--cacert` and `--cacertdir` when given, else the
/// system's.
fn roots(opts: &TlsOptions) -> io::Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    let mut add_file = |path: &std::path::Path, flag: &str, strict: bool| -> io::Result<usize> {
        let mut n = 0;
        let iter = match CertificateDer::pem_file_iter(path) {
            Ok(i) => i,
            Err(e) if strict => return Err(bad(format!("{flag} {}: {e}", path.display()))),
            Err(_) => return Ok(0),
        };
        for c in iter {
            match c {
                Ok(c) => {
                    if store.add(c).is_ok() {
                        n += 1;
                    }
                }
                Err(e) if strict => return Err(bad(format!("{flag} {}: {e}", path.display()))),
                Err(_) => {}
            }
        }
        Ok(n)
    };
    let mut given = false;
    if let Some(f) = &opts.ca_file {
        given = true;
        if add_file(f, "--cacert", true)? == 0 {
            return Err(bad(format!(
                "--cacert {}: expected PEM CA certificates, found none",
                f.display()
            )));
        }
    }
    if let Some(d) = &opts.ca_dir {
        given = true;
        let entries =
            std::fs::read_dir(d).map_err(|e| bad(format!("--cacertdir {}: {e}", d.display())))?;
        let mut n = 0;
        for e in entries.flatten() {
            if e.path().is_file() {
                n += add_file(&e.path(), "--cacertdir", false)?;
            }
        }
        if n == 0 {
            return Err(bad(format!(
                "--cacertdir {}: expected PEM CA certificates in it, found none",
                d.display()
            )));
        }
    }
    if !given {
        let found = rustls_native_certs::load_native_certs();
        for c in found.certs {
            let _ = store.add(c);
        }
        if store.is_empty() {
            return Err(bad(
                "no CA certificates found on this system to verify the server with; give --cacert FILE (or --insecure to skip verification)".into(),
            ));
        }
    }
    Ok(store)
}

/// The name the certificate must carry: `--sni` when given, else the host.
fn server_name(opts: &TlsOptions, host: &str) -> io::Result<ServerName<'static>> {
    let name = opts.sni.as_deref().unwrap_or(host);
    ServerName::try_from(name.to_string()).map_err(|_| {
        bad(format!(
            "TLS: {name:?} is not a valid server name for --sni"
        ))
    })
}

/// Runs the TLS handshake on a connected blocking socket (its timeouts apply).
///
/// # Errors
/// The handshake failed; the message says why in a user's words.
pub(crate) fn handshake(
    opts: &TlsOptions,
    host: &str,
    mut sock: TcpStream,
) -> io::Result<rustls::StreamOwned<ClientConnection, TcpStream>> {
    let config = client_config(opts)?;
    let name = server_name(opts, host)?;
    let mut conn =
        ClientConnection::new(config, name).map_err(|e| io::Error::other(format!("TLS: {e}")))?;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(&mut sock) {
            return Err(explain(e, opts, host));
        }
    }
    Ok(rustls::StreamOwned::new(conn, sock))
}

/// A TLS error met after the handshake (TLS 1.3 servers judge the client certificate
/// then), in the same words as during it; other errors pass unchanged.
pub(crate) fn explain_later(e: io::Error) -> io::Error {
    let is_tls = e
        .get_ref()
        .is_some_and(|i| i.downcast_ref::<rustls::Error>().is_some());
    if is_tls {
        explain(e, &TlsOptions::default(), "")
    } else {
        e
    }
}

/// A handshake error in words a user can act on.
fn explain(e: io::Error, opts: &TlsOptions, host: &str) -> io::Error {
    let inner = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<rustls::Error>())
        .cloned();
    let name = opts.sni.as_deref().unwrap_or(host);
    let text = match inner {
        Some(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
        | Some(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext { .. })) => {
            format!("TLS: the server's certificate is not valid for the name {name:?}; connect by the name it was issued for, or give that name with --sni")
        }
        Some(rustls::Error::InvalidCertificate(c)) => certificate_problem(&c),
        Some(rustls::Error::InvalidMessage(_)) | Some(rustls::Error::InappropriateMessage { .. }) => {
            "TLS: the server did not answer the TLS handshake with TLS: this looks like a plain-TCP port; drop --tls (use redis://) or use the server's TLS port".to_string()
        }
        Some(rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired)) => {
            "TLS: the server requires a client certificate: give --cert and --key".to_string()
        }
        Some(rustls::Error::AlertReceived(a)) => format!(
            "TLS: the server refused the handshake ({a:?}){}",
            if opts.cert.is_none() {
                "; if it requires client certificates, give --cert and --key"
            } else {
                ""
            }
        ),
        Some(other) => format!("TLS handshake failed: {other}"),
        None => match e.kind() {
            io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => {
                "TLS: the server closed the connection during the handshake (a plain-TCP port, or a server that requires a client certificate: --cert and --key)".to_string()
            }
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                "TLS: no answer to the handshake in time: something accepts connections there but does not speak TLS (a plain-TCP port? drop --tls, use redis://, or use the server's TLS port)".to_string()
            }
            _ => format!("TLS handshake failed: {e}"),
        },
    };
    io::Error::other(text)
}

/// Why the server's certificate was refused, in words that point at the real cause.
fn certificate_problem(c: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    let skip = "or --insecure to skip verification (then the result says so)";
    match c {
        C::ExpiredContext { not_after, .. } => format!(
            "TLS: the server's certificate expired on {} (UTC); renew it, {skip}",
            civil_date(not_after.as_secs())
        ),
        C::Expired => format!("TLS: the server's certificate has expired; renew it, {skip}"),
        C::NotValidYetContext { not_before, .. } => format!(
            "TLS: the server's certificate is not valid before {} (UTC): check this machine's clock or the certificate's dates, {skip}",
            civil_date(not_before.as_secs())
        ),
        C::NotValidYet => format!(
            "TLS: the server's certificate is not valid yet: check this machine's clock or the certificate's dates, {skip}"
        ),
        C::UnknownIssuer => format!(
            "TLS: the server's certificate is not trusted: no CA given with --cacert/--cacertdir (or of the system's, when none is given) signed it; give --cacert with the CA that signed it, {skip}"
        ),
        C::BadSignature => format!(
            "TLS: the server's certificate does not carry a valid signature of its issuer; give --cacert with the CA that signed it, {skip}"
        ),
        C::Revoked => format!("TLS: the server's certificate has been revoked, {skip}"),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => format!(
            "TLS: the server's certificate is not issued for server authentication (its extended key usage lacks serverAuth), {skip}"
        ),
        C::Other(e) if e.to_string().contains("UnsupportedCertVersion") => format!(
            "TLS: the server's certificate is an X.509 v1 certificate, which the TLS library cannot verify: {MAKE_V3}; {skip}"
        ),
        C::BadEncoding => format!(
            "TLS: the server's certificate could not be read (malformed DER); {skip}"
        ),
        other => format!("TLS: the server's certificate was refused: {other}; {skip}"),
    }
}

/// Accepts any certificate (`--insecure`), still checking the handshake's signatures.
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A TLS session over a non-blocking socket, for the event loop.
#[derive(Debug)]
pub(crate) struct TlsMio {
    pub conn: ClientConnection,
    pub sock: mio::net::TcpStream,
}

impl TlsMio {
    /// Encrypted bytes are waiting for the socket.
    #[inline]
    pub(crate) fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Sends buffered encrypted bytes until the socket would block.
    fn send_pending(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Read for TlsMio {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(&mut self.sock) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    self.conn.process_new_packets().map_err(|e| {
                        io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}"))
                    })?;
                    // Alerts or key updates may need an answer.
                    match self.send_pending() {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Write for TlsMio {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Records from an earlier write go first; while they wait, take nothing more.
        self.send_pending()?;
        let n = self.conn.writer().write(buf)?;
        match self.send_pending() {
            Ok(()) => {}
            // Accepted and encrypted; the rest goes out when the socket is writable.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_dates_read_as_utc_days() {
        assert_eq!(civil_date(951_782_400), "2000-02-29");
        // Past the end of i64 seconds: the last representable day, not a panic.
        assert_eq!(civil_date(u64::MAX), civil_date(i64::MAX as u64));
    }

    #[test]
    fn x509_versions_from_der() {
        // SEQUENCE { SEQUENCE { [0] { INTEGER 2 }, INTEGER 1 } }: a v3 header.
        let v3 = CertificateDer::from(vec![
            0x30, 0x09, 0x30, 0x07, 0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x00,
        ]);
        assert_eq!(x509_version(&v3), Some(3));
        // No [0] version: v1.
        let v1 = CertificateDer::from(vec![0x30, 0x04, 0x30, 0x02, 0x02, 0x00]);
        assert_eq!(x509_version(&v1), Some(1));
        for junk in [vec![], vec![0x30], vec![0x30, 0x05, 0x30], vec![0x04, 0x00]] {
            assert_eq!(x509_version(&CertificateDer::from(junk)), None);
        }
    }
}
