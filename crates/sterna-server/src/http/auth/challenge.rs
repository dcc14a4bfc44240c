//! `WWW-Authenticate` challenges, `Bearer` (RFC 6750 §3) and `DPoP` (RFC 9449 §7.1), with
//! RFC 9728 §5.1's `resource_metadata`, and the answers that carry them.

use super::super::body::McpBody;
use super::super::respond::{json, plain};
use super::credentials::TokenScheme;
use http::header::WWW_AUTHENTICATE;
use http::{HeaderValue, Response, StatusCode};

/// The error codes of RFC 6750 and RFC 9449.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    InvalidRequest,
    InvalidToken,
    InsufficientScope,
    InvalidDpopProof,
    UseDpopNonce,
}

impl ErrorCode {
    fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
            Self::InvalidDpopProof => "invalid_dpop_proof",
            Self::UseDpopNonce => "use_dpop_nonce",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            Self::InvalidRequest => StatusCode::BAD_REQUEST,
            Self::InvalidToken | Self::InvalidDpopProof | Self::UseDpopNonce => {
                StatusCode::UNAUTHORIZED
            }
            Self::InsufficientScope => StatusCode::FORBIDDEN,
        }
    }
}

/// One challenge.
#[derive(Debug, Clone)]
pub(crate) struct Challenge<'a> {
    pub(crate) scheme: TokenScheme,
    pub(crate) realm: &'a str,
    pub(crate) error: Option<(ErrorCode, String)>,
    pub(crate) scope: Vec<&'a str>,
    pub(crate) resource_metadata: Option<&'a str>,
    /// The proof algorithms (`DPoP` challenges only).
    pub(crate) algs: Option<&'a str>,
}

impl Challenge<'_> {
    /// The header value: `<scheme> realm="…", error="…", error_description="…",
    /// scope="…", resource_metadata="…", algs="…"` (only the parameters that apply).
    pub(crate) fn header_value(&self) -> HeaderValue {
        let mut v = format!("{} realm=\"{}\"", self.scheme.name(), quoted(self.realm));
        if let Some((code, description)) = &self.error {
            v.push_str(&format!(", error=\"{}\"", code.as_str()));
            v.push_str(&format!(", error_description=\"{}\"", quoted(description)));
        }
        if !self.scope.is_empty() {
            v.push_str(&format!(", scope=\"{}\"", quoted(&self.scope.join(" "))));
        }
        if let Some(url) = self.resource_metadata {
            v.push_str(&format!(", resource_metadata=\"{}\"", quoted(url)));
        }
        if let Some(algs) = self.algs {
            v.push_str(&format!(", algs=\"{}\"", quoted(algs)));
        }
        HeaderValue::from_str(&v).expect("only visible ASCII and spaces remain")
    }

    /// The answer to a challenge alone.
    #[cfg(test)]
    pub(crate) fn response(&self) -> Response<McpBody> {
        respond(std::slice::from_ref(self))
    }
}

/// The answer carrying `challenges` (one `WWW-Authenticate` field each, in order): the
/// status and JSON body `{"error", "error_description"}` of the first one with an error,
/// else a bare 401 (no credentials).
pub(crate) fn respond(challenges: &[Challenge<'_>]) -> Response<McpBody> {
    let error = challenges.iter().find_map(|c| c.error.as_ref());
    let mut r = match error {
        None => plain(StatusCode::UNAUTHORIZED),
        Some((code, description)) => {
            let body = serde_json::json!({
                "error": code.as_str(),
                "error_description": description,
            });
            json(code.status(), body.to_string().into_bytes())
        }
    };
    for c in challenges {
        r.headers_mut().append(WWW_AUTHENTICATE, c.header_value());
    }
    r
}

/// The inside of a quoted-string: `"` and `\` escaped, anything but visible ASCII and
/// spaces dropped.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_quoted_and_escaped() {
        let c = Challenge {
            scheme: TokenScheme::Bearer,
            realm: "mcp",
            error: Some((ErrorCode::InsufficientScope, "needs \"more\"\n".into())),
            scope: vec!["a:read", "a:write"],
            resource_metadata: Some("https://x/.well-known/oauth-protected-resource/mcp"),
            algs: None,
        };
        assert_eq!(
            c.header_value(),
            "Bearer realm=\"mcp\", error=\"insufficient_scope\", error_description=\"needs \\\"more\\\"\", scope=\"a:read a:write\", resource_metadata=\"https://x/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(c.response().status(), StatusCode::FORBIDDEN);
        let bare = Challenge {
            scheme: TokenScheme::Bearer,
            realm: "mcp",
            error: None,
            scope: vec![],
            resource_metadata: None,
            algs: None,
        };
        assert_eq!(bare.header_value(), "Bearer realm=\"mcp\"");
    }

    #[test]
    fn dpop_challenges_name_their_algorithms_and_come_in_order() {
        let dpop = Challenge {
            scheme: TokenScheme::Dpop,
            realm: "mcp",
            error: Some((ErrorCode::UseDpopNonce, "nonce".into())),
            scope: vec![],
            resource_metadata: None,
            algs: Some("ES256 EdDSA"),
        };
        let bearer = Challenge {
            scheme: TokenScheme::Bearer,
            realm: "mcp",
            error: None,
            scope: vec![],
            resource_metadata: None,
            algs: None,
        };
        let r = respond(&[dpop, bearer]);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let values: Vec<_> = r.headers().get_all(WWW_AUTHENTICATE).iter().collect();
        assert_eq!(
            values,
            [
                "DPoP realm=\"mcp\", error=\"use_dpop_nonce\", error_description=\"nonce\", algs=\"ES256 EdDSA\"",
                "Bearer realm=\"mcp\""
            ]
        );
    }
}
