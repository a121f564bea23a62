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
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                bad(format!(
                    "--cert/--key: the key does not fit the certificate: {e}"
                ))
            })?
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
        Some(rustls::Error::InvalidCertificate(c)) => format!(
            "TLS: the server's certificate is not trusted ({c:?}); give --cacert with the CA that signed it, or --insecure to skip verification (then the result says so)"
        ),
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
