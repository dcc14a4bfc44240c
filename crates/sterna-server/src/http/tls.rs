//! TLS terminated by [`HttpServer::tls`](super::HttpServer::tls): the acceptor, with the
//! ALPN protocols HTTP/2 and HTTP/1.1 offered unless the config names its own.

use std::sync::Arc;

/// The ALPN protocols offered when the config has none: `h2` first (when HTTP/2 is on),
/// then `http/1.1`.
fn protocols(http2: bool) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(2);
    if http2 {
        out.push(b"h2".to_vec());
    }
    out.push(b"http/1.1".to_vec());
    out
}

/// The acceptor for `config`; ALPN filled in when it names no protocol.
pub(crate) fn acceptor(
    config: &Arc<rustls::ServerConfig>,
    http2: bool,
) -> tokio_rustls::TlsAcceptor {
    if !config.alpn_protocols.is_empty() {
        return tokio_rustls::TlsAcceptor::from(config.clone());
    }
    let mut config = rustls::ServerConfig::clone(config);
    config.alpn_protocols = protocols(http2);
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

#[cfg(test)]
mod tests {
    #[test]
    fn h2_is_offered_first_and_only_when_on() {
        assert_eq!(
            super::protocols(true),
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        assert_eq!(super::protocols(false), [b"http/1.1".to_vec()]);
    }
}
