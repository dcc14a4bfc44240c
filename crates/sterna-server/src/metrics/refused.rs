//! Requests refused before routing: one span each (`mcp.refused`, target
//! `sterna::refused`, with the reason and the HTTP status) and a counter by reason. The
//! span costs one interest check when no subscriber wants it.

use super::REFUSED;

/// Why a request was refused before it reached its method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A foreign `Origin` or `Host` (403).
    Origin,
    /// A POST that is not `application/json` (415).
    ContentType,
    /// A POST that accepts neither JSON nor SSE (406).
    Accept,
    /// A body over the limit (413).
    BodyTooLarge,
    /// The body did not arrive in time (408).
    BodyTimeout,
    /// No answer in time (504, from the timeout layer).
    Timeout,
    /// The body broke off (400).
    MalformedBody,
    /// A method the endpoint does not answer (405).
    MethodNotAllowed,
    /// Another path than the endpoint's (404).
    NotFound,
    /// `MCP-Protocol-Version` or the routing headers do not fit the body (400).
    BadHeaders,
    /// No credentials (401).
    Unauthenticated,
    /// Credentials refused (401).
    InvalidToken,
    /// A scope missing (403).
    InsufficientScope,
    /// The authenticator's upstream is down (503).
    AuthUnavailable,
    /// A client over its share of a store (429).
    QuotaExceeded,
}

impl Refusal {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Origin => "origin",
            Self::ContentType => "content_type",
            Self::Accept => "accept",
            Self::BodyTooLarge => "body_too_large",
            Self::BodyTimeout => "body_timeout",
            Self::Timeout => "timeout",
            Self::MalformedBody => "malformed_body",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotFound => "not_found",
            Self::BadHeaders => "bad_headers",
            Self::Unauthenticated => "unauthenticated",
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
            Self::AuthUnavailable => "auth_unavailable",
            Self::QuotaExceeded => "quota_exceeded",
        }
    }
}

/// Records a refusal: its span (when a subscriber wants it) and its counter.
pub(crate) fn refused(reason: Refusal, status: u16) {
    let span = tracing::info_span!(
        target: "sterna::refused",
        "mcp.refused",
        otel.name = "refused",
        otel.kind = "server",
        mcp.refused.reason = reason.as_str(),
        http.response.status_code = status,
    );
    drop(span.entered());
    metrics::counter!(REFUSED, "reason" => reason.as_str()).increment(1);
}
