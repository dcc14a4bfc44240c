//! Failures explained: what happened, down to the underlying cause (connection refused by
//! host:port, a DNS failure, the certificate problem of a TLS error, a timeout, the
//! stdio server's exit), and what to try for the common mistakes (a wrong path, a page
//! that is not MCP, a server that wants a token).

use crate::place::Target;
use std::error::Error;
use std::sync::OnceLock;
use sterna::client::{ClientError, TransportError};

/// The server this process talks to (set once, when it connects).
static TARGET: OnceLock<Target> = OnceLock::new();

/// Remembers the target, for the explanations.
pub(crate) fn set_target(t: &Target) {
    let _ = TARGET.set(t.clone());
}

/// A client error, explained: one line of what happened, then `hint:` lines.
pub(crate) fn client(e: &ClientError) -> String {
    let target = TARGET.get();
    match e {
        ClientError::Transport(t) => transport(t, target),
        ClientError::Server(o) => match &o.data {
            Some(d) => format!("server error: {o}\n  data: {d}"),
            None => format!("server error: {o}"),
        },
        other => other.to_string(),
    }
}

fn url_of(target: Option<&Target>) -> Option<&str> {
    match target {
        Some(Target::Http { url, .. }) => Some(url),
        _ => None,
    }
}

/// `host:port` of the target URL.
fn host_port(target: Option<&Target>) -> String {
    let Some(uri) = url_of(target).and_then(|u| u.parse::<http::Uri>().ok()) else {
        return "the server".into();
    };
    let host = uri.host().unwrap_or("?");
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    format!("{host}:{port}")
}

fn transport(t: &TransportError, target: Option<&Target>) -> String {
    match t {
        TransportError::Http { status, body } => http_status(*status, body, target),
        TransportError::Connection(e) => connection(e.as_ref(), target),
        TransportError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => format!(
            "{e}\n  hint: nothing came back from {} in time: is it an MCP server, and does it \
             answer? `--wire` shows what was sent and what (if anything) came back",
            target.map_or_else(|| "the server".into(), Target::label)
        ),
        TransportError::Closed | TransportError::StreamBroken
            if matches!(target, Some(Target::Stdio { .. })) =>
        {
            match crate::exited::last_exit() {
                Some(status) => format!(
                    "the server process exited ({status}) before answering\n  hint: what it \
                     printed on stderr is above (the `server│` lines)"
                ),
                None => "the server closed its output (stdout) before answering\n  hint: its \
                         stderr, if it wrote any, is above (the `server│` lines)"
                    .into(),
            }
        }
        TransportError::StreamBroken => format!(
            "{} closed the connection before answering (`--wire` shows the exchange)",
            host_port(target)
        ),
        TransportError::Auth(e) => format!(
            "authorization: {}\n  hint: give a token with --header 'Authorization: Bearer …' \
             (that also turns OAuth off), or --no-oauth to send requests without one",
            chain(e.as_ref())
        ),
        other => other.to_string(),
    }
}

/// Every cause of `e`, joined (`client error (Connect): tcp connect error: Connection
/// refused`), looking inside I/O errors too (their `source` skips the error they wrap).
fn causes<'a>(e: &'a (dyn Error + 'static)) -> Vec<&'a (dyn Error + 'static)> {
    let mut out = vec![e];
    let mut cur = e;
    loop {
        let next = match cur
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn Error + 'static)),
            None => cur.source(),
        };
        match next {
            Some(n) => {
                out.push(n);
                cur = n;
            }
            None => return out,
        }
    }
}

fn chain(e: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in causes(e) {
        let s = c.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ")
}

fn connection(e: &(dyn Error + Send + Sync + 'static), target: Option<&Target>) -> String {
    let all = causes(e);
    let at = host_port(target);
    let io_kind = all
        .iter()
        .find_map(|c| c.downcast_ref::<std::io::Error>().map(std::io::Error::kind));
    if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
        return format!(
            "connection refused by {at}: nothing listens there\n  hint: is the server \
             running, and on this port?"
        );
    }
    if let Some(tls) = all.iter().find_map(|c| c.downcast_ref::<rustls::Error>()) {
        return tls_error(tls, &at);
    }
    // hyper's connector names DNS failures only in its message ("dns error"): its error
    // type is private.
    if all.iter().any(|c| c.to_string() == "dns error") {
        let host = at.rsplit_once(':').map_or(at.as_str(), |(h, _)| h);
        let why = all.last().map(|c| c.to_string()).unwrap_or_default();
        return format!(
            "cannot resolve the host name {host} (DNS): {why}\n  hint: is the host name in \
             the URL right?"
        );
    }
    if io_kind == Some(std::io::ErrorKind::TimedOut) {
        return format!("connecting to {at} timed out: {}", chain(e));
    }
    format!("cannot connect to {at}: {}", chain(e))
}

fn tls_error(e: &rustls::Error, at: &str) -> String {
    use rustls::CertificateError as C;
    let hint = match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            "the certificate is signed by an authority this machine does not trust (self-signed, \
             or a private CA): SSL_CERT_FILE=ca.pem makes sterna trust that CA, instead of the \
             system's"
        }
        rustls::Error::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            "the server's certificate has expired"
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => "the certificate is for another host name: use the name it was issued for",
        rustls::Error::InvalidCertificate(_) => {
            "the server's certificate was refused: is it the right server? (SSL_CERT_FILE=ca.pem \
             makes sterna trust a private CA, instead of the system's)"
        }
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "the server does not speak TLS on this port: try http:// instead of https://?"
        }
        _ => "",
    };
    let head = format!("TLS with {at} failed: {e}");
    if hint.is_empty() {
        head
    } else {
        format!("{head}\n  hint: {hint}")
    }
}

/// The body of an answer that was not JSON-RPC, in one line.
pub(crate) fn summary(body: &str) -> String {
    let t = body.trim();
    if t.is_empty() {
        return "an empty body".into();
    }
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<body")
    {
        let title = lower
            .find("<title>")
            .and_then(|a| lower[a..].find("</title>").map(|b| &t[a + 7..a + b]))
            .map(|x| format!(" titled {:?}", x.trim()))
            .unwrap_or_default();
        return format!("an HTML page{title}, not JSON-RPC");
    }
    let line = t.lines().next().unwrap_or("");
    let cut: String = line.chars().take(160).collect();
    let more = if cut.len() < t.len() { "…" } else { "" };
    match serde_json::from_str::<serde_json::Value>(t) {
        Ok(_) => format!("JSON that is not a JSON-RPC response: {cut}{more}"),
        Err(_) => format!("{cut}{more} (not JSON)"),
    }
}

fn http_status(status: u16, body: &str, target: Option<&Target>) -> String {
    let url = url_of(target).unwrap_or("the server");
    let head = format!("HTTP {status} from {url}: {}", summary(body));
    let on_mcp_path = url.trim_end_matches('/').ends_with("/mcp");
    let hint = match status {
        404 if on_mcp_path => "the server has no MCP endpoint at this path (`--wire` shows the \
            exchange)"
            .to_owned(),
        404 => "is the endpoint path /mcp? Most servers answer at http://HOST:PORT/mcp".to_owned(),
        401 => "the server wants authorization: without --no-oauth sterna logs in with OAuth \
            when the server offers it; or give a token with --header 'Authorization: Bearer …'"
            .to_owned(),
        403 => {
            "the request was refused: does the token have the rights (scopes) it needs?".to_owned()
        }
        405 => "this URL does not take POST: not a Streamable HTTP endpoint (a 2024-11-05 \
            HTTP+SSE server's /sse URL is not supported)"
            .to_owned(),
        406 | 415 => "the server refused JSON-RPC over POST: is it an MCP endpoint?".to_owned(),
        501 => "the server does not implement POST: not an MCP server (a static file server?)"
            .to_owned(),
        500..=599 => "the server failed: its own logs should say why".to_owned(),
        _ => String::new(),
    };
    if hint.is_empty() {
        head
    } else {
        format!("{head}\n  hint: {hint}")
    }
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn bodies_in_one_line() {
        let page = "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head>\n<body>…</body></html>";
        assert_eq!(
            summary(page),
            "an HTML page titled \"Error response\", not JSON-RPC"
        );
        assert_eq!(summary(""), "an empty body");
        assert_eq!(summary("Not Found\nmore"), "Not Found… (not JSON)");
        assert!(summary(r#"{"a":1}"#).starts_with("JSON that is not"));
    }
}
