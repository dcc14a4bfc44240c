//! Target `forwarded`: the client a trusted proxy names, in `X-Forwarded-For` and in RFC
//! 7239 `Forwarded`.

/// Whatever a client writes in the header, its proxy's appended entry decides: with
/// `data` (a header line the client sent) followed by what the proxy appends, the client
/// read is the one the proxy named, or the request is refused; never another address.
/// The same holds when the proxy appends a line of its own. Nothing panics.
pub(crate) fn run(data: &[u8]) {
    #[cfg(feature = "http")]
    for header in [
        crate::http::ForwardedHeader::XForwardedFor,
        crate::http::ForwardedHeader::Forwarded,
    ] {
        named_by_the_proxy(header, data);
    }
    #[cfg(not(feature = "http"))]
    let _ = data;
}

#[cfg(feature = "http")]
fn named_by_the_proxy(header: crate::http::ForwardedHeader, data: &[u8]) {
    use crate::http::{ForwardedHeader, TrustedProxies};
    use http::{HeaderMap, HeaderValue};
    use std::net::SocketAddr;
    let proxies = "10.0.0.0/8".parse::<TrustedProxies>().unwrap();
    let proxies = proxies.reading(header);
    let peer: SocketAddr = "10.0.0.1:40000".parse().unwrap();
    let named: SocketAddr = "198.51.100.7:0".parse().unwrap();
    let appended = match header {
        ForwardedHeader::XForwardedFor => "198.51.100.7",
        _ => "for=\"198.51.100.7:4711\";proto=https",
    };
    // On the client's own line, as nginx appends (`$proxy_add_x_forwarded_for`).
    let mut line = data.to_vec();
    line.extend_from_slice(b", ");
    line.extend_from_slice(appended.as_bytes());
    if let Ok(value) = HeaderValue::from_bytes(&line) {
        let mut headers = HeaderMap::new();
        headers.insert(header.name(), value);
        if let Ok(client) = proxies.client(peer, &headers) {
            assert_eq!(client, named, "{header:?}: the client named itself");
        }
    }
    // On a line of the proxy's own, after the client's.
    if let Ok(value) = HeaderValue::from_bytes(data) {
        let mut headers = HeaderMap::new();
        headers.append(header.name(), value);
        headers.append(header.name(), HeaderValue::from_static(appended));
        let client = proxies.client(peer, &headers);
        assert_eq!(
            client,
            Ok(named),
            "{header:?}: a line of its own is read alone"
        );
    }
}
