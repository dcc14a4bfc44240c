//! `WWW-Authenticate: Bearer …` challenges (RFC 6750 §3, RFC 9728 §5.1) and the answers
//! that carry them.

use super::super::body::McpBody;
use super::super::respond::{json, plain};
use http::header::WWW_AUTHENTICATE;
use http::{HeaderValue, Response, StatusCode};

/// The RFC 6750 error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    InvalidRequest,
    InvalidToken,
    InsufficientScope,
}

impl ErrorCode {
    fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            Self::InvalidRequest => StatusCode::BAD_REQUEST,
            Self::InvalidToken => StatusCode::UNAUTHORIZED,
            Self::InsufficientScope => StatusCode::FORBIDDEN,
        }
    }
}

/// One `Bearer` challenge.
#[derive(Debug, Clone)]
pub(crate) struct Challenge<'a> {
    pub(crate) realm: &'a str,
    pub(crate) error: Option<(ErrorCode, String)>,
    pub(crate) scope: Vec<&'a str>,
    pub(crate) resource_metadata: Option<&'a str>,
}

impl Challenge<'_> {
    /// The header value: `Bearer realm="…", error="…", error_description="…",
    /// scope="…", resource_metadata="…"` (only the parameters that apply).
    pub(crate) fn header_value(&self) -> HeaderValue {
        let mut v = format!("Bearer realm=\"{}\"", quoted(self.realm));
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
        HeaderValue::from_str(&v).expect("only visible ASCII and spaces remain")
    }

    /// The answer: 401 without an error (no credentials), else the error's status with
    /// a JSON body `{"error", "error_description"}`.
    pub(crate) fn response(&self) -> Response<McpBody> {
        let mut r = match &self.error {
            None => plain(StatusCode::UNAUTHORIZED),
            Some((code, description)) => {
                let body = serde_json::json!({
                    "error": code.as_str(),
                    "error_description": description,
                });
                json(code.status(), body.to_string().into_bytes())
            }
        };
        r.headers_mut()
            .insert(WWW_AUTHENTICATE, self.header_value());
        r
    }
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
            realm: "mcp",
            error: Some((ErrorCode::InsufficientScope, "needs \"more\"\n".into())),
            scope: vec!["a:read", "a:write"],
            resource_metadata: Some("https://x/.well-known/oauth-protected-resource/mcp"),
        };
        assert_eq!(
            c.header_value(),
            "Bearer realm=\"mcp\", error=\"insufficient_scope\", error_description=\"needs \\\"more\\\"\", scope=\"a:read a:write\", resource_metadata=\"https://x/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(c.response().status(), StatusCode::FORBIDDEN);
        let bare = Challenge {
            realm: "mcp",
            error: None,
            scope: vec![],
            resource_metadata: None,
        };
        assert_eq!(bare.header_value(), "Bearer realm=\"mcp\"");
    }
}
