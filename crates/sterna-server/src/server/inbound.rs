//! The classify step every transport shares: what kind of message arrived?
//!
//! HTTP reads a whole body at once and uses [`classify`], which decodes the usual requests
//! and their params in one pass. Byte streams hand each request to its own task, so they
//! use [`classify_envelope`] (the envelope once; params are decoded later, once) and
//! [`Inbound::into_owned_request`].

use super::request::{Params, ParamsSeed};
use serde_json::value::RawValue;
use std::borrow::Cow;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::{Incoming, Malformed, RawMessage, RequestId};

/// A request's params: still raw, or decoded by the one-pass reader.
pub(crate) enum Body<'a> {
    Raw(Option<&'a RawValue>),
    Decoded(Params<'a>),
}

/// A message as the server reads it.
pub(crate) enum Inbound<'a> {
    /// A request: an id and a method.
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Body<'a>,
    },
    /// A notification.
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A response from the peer (with the id it answers, when known).
    Response {
        id: Option<RequestId>,
        outcome: Result<&'a RawValue, ErrorObject>,
    },
    /// Not a JSON-RPC message (answered with the error, and the id when one was read).
    Malformed(Malformed),
}

/// A request taken out of its line, for a task of its own.
#[derive(Debug)]
pub(crate) struct OwnedRequest {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) params: Option<Box<RawValue>>,
}

impl OwnedRequest {
    /// The params, for [`Server::prepare`](super::core::Server::prepare).
    pub(crate) fn body(&self) -> Body<'_> {
        Body::Raw(self.params.as_deref())
    }
}

/// Classifies a message, decoding the usual requests with their params in one pass.
pub(crate) fn classify(bytes: &[u8]) -> Inbound<'_> {
    if let Some((id, method, params)) = RawMessage::parse_request_with(bytes, ParamsSeed::fast) {
        return Inbound::Request {
            id,
            method,
            params: Body::Decoded(params),
        };
    }
    classify_envelope(bytes)
}

/// Classifies a message by its envelope only; request params stay raw.
pub(crate) fn classify_envelope(bytes: &[u8]) -> Inbound<'_> {
    match RawMessage::parse(bytes) {
        Err(m) => Inbound::Malformed(m),
        Ok(Incoming::Request { id, method, params }) => Inbound::Request {
            id,
            method,
            params: Body::Raw(params),
        },
        Ok(Incoming::Notification { method, params }) => Inbound::Notification { method, params },
        Ok(Incoming::Result { id, result }) => Inbound::Response {
            id: Some(id),
            outcome: Ok(result),
        },
        Ok(Incoming::Error { id, error }) => Inbound::Response {
            id,
            outcome: Err(error),
        },
    }
}

impl Inbound<'_> {
    /// The request, owned; `None` for other messages and for params already decoded
    /// (use [`classify_envelope`] when the request must outlive its bytes).
    pub(crate) fn into_owned_request(self) -> Option<OwnedRequest> {
        match self {
            Inbound::Request {
                id,
                method,
                params: Body::Raw(params),
            } => Some(OwnedRequest {
                id,
                method: method.into_owned(),
                params: params.map(ToOwned::to_owned),
            }),
            _ => None,
        }
    }
}

/// Whether a request's params carry the 2026-07-28 claim: a `_meta` with
/// `io.modelcontextprotocol/protocolVersion`. Requests without it belong to a legacy
/// (2025-11-25) session.
pub(crate) fn has_modern_claim(params: Option<&RawValue>) -> bool {
    // One pass: `_meta` is read into `Meta` as the params are read (nothing else kept).
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta", default)]
        meta: Option<Meta>,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
        version: Option<serde::de::IgnoredAny>,
    }
    let Some(raw) = params else { return false };
    let text = raw.get();
    // Without an escape, a key reads as it is written: params that never write
    // `protocolVersion` cannot claim (most 2025 requests), with no parse.
    if !text.contains('\\') && !text.contains("protocolVersion") {
        return false;
    }
    serde_json::from_str::<Params>(text).is_ok_and(|p| p.meta.is_some_and(|m| m.version.is_some()))
}

#[cfg(test)]
mod tests {
    use super::has_modern_claim;
    use serde_json::value::RawValue;

    fn claims(params: &str) -> bool {
        let raw = RawValue::from_string(params.to_owned()).unwrap();
        has_modern_claim(Some(&raw))
    }

    #[test]
    fn only_a_meta_naming_a_protocol_version_claims_2026() {
        let v = "io.modelcontextprotocol/protocolVersion";
        assert!(claims(&format!(
            r#"{{"name":"x","_meta":{{"{v}":"2026-07-28"}}}}"#
        )));
        assert!(claims(&format!(
            r#"{{"_meta":{{"a":[1,{{}}],"{v}":7}},"z":1}}"#
        )));
        assert!(!has_modern_claim(None));
        assert!(!claims(r#"{"name":"x"}"#));
        assert!(!claims(r#"{"_meta":{"progressToken":1}}"#));
        assert!(!claims(&format!(r#"{{"_meta":{{"{v}":null}}}}"#)));
        assert!(!claims(&format!(
            r#"{{"arguments":{{"_meta":{{"{v}":"2026-07-28"}}}}}}"#
        )));
        // A key written with escapes claims as well as one written plainly.
        assert!(claims(
            r#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}"#
        ));
        assert!(claims(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersio\u006e":"2026-07-28"}}"#
        ));
        assert!(!claims(r#"{"_meta":{"protocolVersion":"2026-07-28"}}"#));
        // Unreadable or twice-said claims are no claim (the era that serves it refuses it).
        assert!(!claims(r#"{"_meta":5}"#));
        assert!(!claims(&format!(r#"{{"_meta":{{"{v}":"a","{v}":"b"}}}}"#)));
        assert!(!claims(&format!(
            r#"{{"_meta":{{}},"_meta":{{"{v}":"a"}}}}"#
        )));
    }
}
