//! URL handling for OAuth. Identifiers (issuers, resources) stay the strings they came
//! as: these helpers build well-known URLs and compare origins, but never re-serialize an
//! identifier (a parser would add a trailing `/` to `http://host:1234`).

use http::Uri;

/// The parts of an absolute `http(s)` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts {
    pub(crate) scheme: String,
    pub(crate) authority: String,
    /// The path as written (may be empty).
    pub(crate) path: String,
    pub(crate) query: Option<String>,
}

/// Splits an absolute `http` or `https` URL (a fragment is dropped).
pub(crate) fn parts(url: &str) -> Option<Parts> {
    let url = url.split('#').next().unwrap_or(url);
    let (scheme, rest) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q.to_owned())),
        None => (tail, None),
    };
    // Validate what http accepts.
    url.parse::<Uri>().ok()?;
    Some(Parts {
        scheme: scheme.to_ascii_lowercase(),
        authority: authority.to_owned(),
        path: path.to_owned(),
        query,
    })
}

/// Where to look for protected-resource metadata when the challenge names none
/// (RFC 9728 §3.1, in the order MCP gives): the path-inserted URL, then the root.
pub(crate) fn resource_metadata_urls(mcp_url: &str) -> Vec<String> {
    let Some(p) = parts(mcp_url) else {
        return Vec::new();
    };
    let base = format!(
        "{}://{}/.well-known/oauth-protected-resource",
        p.scheme, p.authority
    );
    let path = p.path.strip_suffix('/').unwrap_or(&p.path);
    let mut out = Vec::new();
    if !path.is_empty() {
        let query = p.query.map(|q| format!("?{q}")).unwrap_or_default();
        out.push(format!("{base}{path}{query}"));
    }
    out.push(base);
    out
}

/// Where to look for an authorization server's metadata (RFC 8414 §3.1 and OpenID
/// Connect Discovery, in the order MCP gives). An issuer with a path is never looked up
/// at the root.
pub(crate) fn server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(p) = parts(issuer) else {
        return Vec::new();
    };
    let origin = format!("{}://{}", p.scheme, p.authority);
    let path = p.path.strip_suffix('/').unwrap_or(&p.path);
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

fn default_port(scheme: &str) -> &'static str {
    if scheme == "https" { "443" } else { "80" }
}

/// `host:port` in lowercase with the scheme's default port made explicit.
fn normal_authority(p: &Parts) -> String {
    let a = p.authority.to_ascii_lowercase();
    let has_port = match a.rfind(':') {
        Some(i) => !a[i..].contains(']'),
        None => false,
    };
    if has_port {
        a
    } else {
        format!("{a}:{}", default_port(&p.scheme))
    }
}

/// Whether a protected resource identifier covers the MCP endpoint: same origin, and its
/// path a prefix of the endpoint's path on a segment boundary (the rule of the reference
/// SDKs and draft-ietf-oauth-rfc9728bis; RFC 9728 §3.3 alone would demand equality).
pub(crate) fn resource_covers(resource: &str, mcp_url: &str) -> bool {
    let (Some(r), Some(m)) = (parts(resource), parts(mcp_url)) else {
        return false;
    };
    if r.scheme != m.scheme || normal_authority(&r) != normal_authority(&m) {
        return false;
    }
    let rp = r.path.strip_suffix('/').unwrap_or(&r.path);
    let mp = m.path.strip_suffix('/').unwrap_or(&m.path);
    rp.is_empty() || mp == rp || mp.starts_with(&format!("{rp}/"))
}

/// Whether sending credentials to `url` is acceptable: HTTPS, or a loopback host.
pub(crate) fn is_secure_or_loopback(url: &str) -> bool {
    let Some(p) = parts(url) else {
        return false;
    };
    p.scheme == "https" || is_loopback_authority(&p.authority)
}

/// `scheme://host:port` of `url`, lowercase, default port explicit (empty if unusable).
pub(crate) fn origin(url: &str) -> String {
    parts(url)
        .map(|p| format!("{}://{}", p.scheme, normal_authority(&p)))
        .unwrap_or_default()
}

/// Whether `url`'s host is `localhost` or a loopback address.
pub(crate) fn is_loopback(url: &str) -> bool {
    parts(url).is_some_and(|p| is_loopback_authority(&p.authority))
}

fn is_loopback_authority(authority: &str) -> bool {
    let host = match authority.rsplit_once(':') {
        Some((h, port)) if !port.contains(']') => h,
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `url` without its query and fragment (a DPoP `htu`).
pub(crate) fn without_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// `url` with `pairs` appended to its query, form-urlencoded.
pub(crate) fn with_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        ser.append_pair(k, v);
    }
    let q = ser.finish();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{q}")
}

/// The decoded query parameters of `url`.
pub(crate) fn query_pairs(url: &str) -> Vec<(String, String)> {
    let url = url.split('#').next().unwrap_or(url);
    match url.split_once('?') {
        Some((_, q)) => form_urlencoded::parse(q.as_bytes()).into_owned().collect(),
        None => Vec::new(),
    }
}

/// Resolves a `Location` against the URL it answered.
pub(crate) fn resolve(base: &str, location: &str) -> Option<String> {
    if parts(location).is_some() {
        return Some(location.to_owned());
    }
    let b = parts(base)?;
    if let Some(rest) = location.strip_prefix("//") {
        return Some(format!("{}://{rest}", b.scheme));
    }
    if location.starts_with('/') {
        return Some(format!("{}://{}{location}", b.scheme, b.authority));
    }
    let dir = b.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    Some(format!("{}://{}{dir}/{location}", b.scheme, b.authority))
}

/// Whether `url` is the redirect URI (same scheme, authority and path; any query).
pub(crate) fn is_redirect_to(url: &str, redirect_uri: &str) -> bool {
    match (parts(url), parts(redirect_uri)) {
        (Some(u), Some(r)) => {
            u.scheme == r.scheme && normal_authority(&u) == normal_authority(&r) && u.path == r.path
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_order() {
        assert_eq!(
            resource_metadata_urls("https://example.com/public/mcp"),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls("http://localhost:1234"),
            ["http://localhost:1234/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            resource_metadata_urls("http://h/mcp/?x=1")[0],
            "http://h/.well-known/oauth-protected-resource/mcp?x=1"
        );
    }

    #[test]
    fn server_metadata_order() {
        assert_eq!(
            server_metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_urls("http://localhost:9"),
            [
                "http://localhost:9/.well-known/oauth-authorization-server",
                "http://localhost:9/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_urls("https://a.example/")[0],
            "https://a.example/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn resource_coverage() {
        let mcp = "http://localhost:3000/mcp";
        assert!(resource_covers("http://localhost:3000/mcp", mcp));
        assert!(resource_covers("http://localhost:3000", mcp));
        assert!(resource_covers("http://LOCALHOST:3000/", mcp));
        assert!(resource_covers("https://h/", "https://h:443/a/b"));
        assert!(!resource_covers("http://localhost:3000/mc", mcp));
        assert!(!resource_covers("https://evil.example.com/mcp", mcp));
        assert!(!resource_covers("http://localhost:3001/mcp", mcp));
        assert!(!resource_covers("https://localhost:3000/mcp", mcp));
    }

    #[test]
    fn loopback_and_https() {
        assert!(is_secure_or_loopback("https://as.example.com/token"));
        assert!(is_secure_or_loopback("http://localhost:8/token"));
        assert!(is_secure_or_loopback("http://127.0.0.1/token"));
        assert!(is_secure_or_loopback("http://[::1]:8/token"));
        assert!(!is_secure_or_loopback("http://as.example.com/token"));
    }

    #[test]
    fn queries_and_locations() {
        let u = with_query(
            "http://a/authorize",
            &[("scope", "a b"), ("resource", "http://r:1")],
        );
        assert_eq!(
            u,
            "http://a/authorize?scope=a+b&resource=http%3A%2F%2Fr%3A1"
        );
        assert_eq!(
            query_pairs("http://cb/x?code=c&iss=http%3A%2F%2Fa%2F#f"),
            [
                ("code".to_owned(), "c".to_owned()),
                ("iss".to_owned(), "http://a/".to_owned())
            ]
        );
        assert_eq!(resolve("http://a:1/x/y", "/z?q").unwrap(), "http://a:1/z?q");
        assert_eq!(resolve("http://a:1/x/y", "z").unwrap(), "http://a:1/x/z");
        assert_eq!(resolve("http://a/x", "https://b/c").unwrap(), "https://b/c");
        assert!(is_redirect_to(
            "http://localhost:3000/callback?code=1",
            "http://localhost:3000/callback"
        ));
        assert!(!is_redirect_to(
            "http://localhost:3000/other",
            "http://localhost:3000/callback"
        ));
        assert_eq!(without_query("http://a/b?c#d"), "http://a/b");
    }
}
