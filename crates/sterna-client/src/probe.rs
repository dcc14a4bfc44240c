//! The era probe: a modern `server/discover`, and the verdict its answer gives (see
//! [`era`](super::era) for the rules).

use super::envelope::{Message, WithMeta};
use super::era::Verdict;
use super::error::{ClientError, TransportError};
use super::transport::{ProbeReply, StreamTransport};
use serde_json::Map;
use std::time::Duration;
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::discover::DiscoverResult;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};
use sterna_types::legacy::is_legacy;
use sterna_types::meta::Implementation;
use sterna_types::version::{LATEST, MODERN_VERSIONS};

/// The probe's id: a string, so it takes no id from the client's own sequence.
pub(crate) fn probe_id() -> RequestId {
    RequestId::String("sterna-era-probe".into())
}

/// The probe request: `server/discover` at the newest modern version.
pub(crate) fn discover_request(
    caps: &ClientCapabilities,
    info: Option<&Implementation>,
) -> Vec<u8> {
    serde_json::to_vec(&Message {
        jsonrpc: "2.0",
        id: &probe_id(),
        method: "server/discover",
        params: WithMeta {
            params: &Map::new(),
            version: LATEST,
            caps,
            info,
        },
    })
    .expect("requests serialize")
}

/// The newest modern version this client speaks among `supported`.
fn common_modern(supported: &[String]) -> Option<String> {
    MODERN_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s == *v))
        .map(|v| (*v).to_owned())
}

/// Judges a version list (of a `DiscoverResult` or a `-32022`).
fn judge_versions(supported: Vec<String>) -> Result<Verdict, ClientError> {
    if let Some(v) = common_modern(&supported) {
        return Ok(Verdict::Modern(v));
    }
    if supported.iter().any(|v| is_legacy(v)) {
        return Ok(Verdict::Legacy("the server lists only legacy versions"));
    }
    Err(ClientError::Incompatible { supported })
}

fn judge_error(e: &ErrorObject) -> Result<Verdict, ClientError> {
    match e.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported: Option<Vec<String>> = e
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(|s| serde_json::from_value(s.clone()).ok());
            match supported {
                Some(list) if !list.is_empty() => judge_versions(list),
                _ => Ok(Verdict::Legacy("-32022 without a usable supported list")),
            }
        }
        ErrorCode::HEADER_MISMATCH | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            Ok(Verdict::Modern(LATEST.to_owned()))
        }
        code => {
            tracing::debug!(%code, message = %e.message, "server/discover failed");
            Ok(Verdict::Legacy(
                "server/discover was answered with an error",
            ))
        }
    }
}

/// Judges the message that answered the probe.
pub(crate) fn judge_answer(message: &[u8]) -> Result<Verdict, ClientError> {
    match RawMessage::parse(message) {
        Ok(Incoming::Result { result, .. }) => {
            match serde_json::from_str::<DiscoverResult>(result.get()) {
                Ok(d) => judge_versions(d.supported_versions),
                Err(_) => Ok(Verdict::Legacy("the answer is not a DiscoverResult")),
            }
        }
        Ok(Incoming::Error { error, .. }) => judge_error(&error),
        _ => Ok(Verdict::Legacy("the answer is not a JSON-RPC response")),
    }
}

/// Judges an HTTP answer: its status, and the JSON-RPC message its body carried.
#[cfg_attr(not(feature = "http"), allow(dead_code, reason = "an HTTP answer"))]
pub(crate) fn judge_http(
    status: u16,
    message: Option<&[u8]>,
    body: impl FnOnce() -> String,
) -> Result<Verdict, ClientError> {
    match (status, message) {
        (401 | 403, _) | (500..=599, _) => Err(ClientError::Transport(TransportError::Http {
            status,
            body: body(),
        })),
        (_, Some(m)) => judge_answer(m),
        (200..=299, None) => Ok(Verdict::Legacy("server/discover got no JSON-RPC answer")),
        (400..=499, None) => Ok(Verdict::Legacy("server/discover got a bare 4xx")),
        _ => Err(ClientError::Transport(TransportError::Http {
            status,
            body: body(),
        })),
    }
}

/// How a stdio probe ended.
pub(crate) enum StreamVerdict {
    Judged(Verdict),
    /// The server closed the stream (it died on the probe).
    Died,
}

/// Probes over a byte stream: silence means legacy, a closed stream a dead server.
pub(crate) async fn probe_stream(
    stream: &StreamTransport,
    request: Vec<u8>,
    wait: Duration,
) -> Result<StreamVerdict, ClientError> {
    match stream.probe(probe_id(), request, wait).await {
        ProbeReply::Answer(m) => judge_answer(&m).map(StreamVerdict::Judged),
        ProbeReply::Silent => Ok(StreamVerdict::Judged(Verdict::Legacy(
            "no answer to server/discover in time",
        ))),
        ProbeReply::Closed => Ok(StreamVerdict::Died),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn answer(body: Value) -> Result<Verdict, ClientError> {
        let mut m = json!({"jsonrpc": "2.0", "id": "sterna-era-probe"});
        m.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        judge_answer(m.to_string().as_bytes())
    }

    fn discover(versions: Value) -> Value {
        json!({"result": {"resultType": "complete", "supportedVersions": versions, "capabilities": {}, "ttlMs": 0, "cacheScope": "private"}})
    }

    #[test]
    fn modern_only_on_a_discover_result_or_a_recognised_modern_error() {
        let modern = Verdict::Modern("2026-07-28".into());
        assert_eq!(
            answer(discover(json!(["2026-07-28", "2025-11-25"]))).unwrap(),
            modern
        );
        let e = |data: Value| json!({"error": {"code": -32022, "message": "no", "data": data}});
        assert_eq!(
            answer(e(json!({"supported": ["2026-07-28"]}))).unwrap(),
            modern
        );
        assert_eq!(
            answer(json!({"error": {"code": -32020, "message": "x"}})).unwrap(),
            modern
        );
        // Without its cache hints (a server that forgot them) it is still a discover result:
        // it names the versions, and the hints default to the most careful (no caching).
        let bare = json!({"result": {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}});
        assert_eq!(answer(bare).unwrap(), modern);
        assert!(matches!(
            answer(e(json!({"supported": ["2027-01-01"]}))),
            Err(ClientError::Incompatible { .. })
        ));
        // Everything else is legacy, whatever the code.
        for legacy in [
            discover(json!(["2025-11-25"])),
            json!({"result": {}}),
            json!({"result": "garbage"}),
            e(json!({"supported": ["2025-11-25"]})),
            e(json!({})),
            json!({"error": {"code": -32601, "message": "Method not found"}}),
            json!({"error": {"code": -32000, "message": "Bad Request: Server not initialized"}}),
            json!({"error": {"code": -32602, "message": "x"}}),
            json!({"error": {"code": 12345, "message": "x"}}),
        ] {
            assert!(
                matches!(answer(legacy.clone()), Ok(Verdict::Legacy(_))),
                "{legacy}"
            );
        }
        assert!(matches!(judge_answer(b"not json"), Ok(Verdict::Legacy(_))));
    }

    #[test]
    fn http_statuses() {
        let err = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}}"#;
        let legacy_err = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;
        let text = || "body".to_owned();
        assert!(matches!(
            judge_http(400, None, text),
            Ok(Verdict::Legacy(_))
        ));
        assert!(matches!(
            judge_http(404, None, text),
            Ok(Verdict::Legacy(_))
        ));
        assert!(matches!(
            judge_http(405, None, text),
            Ok(Verdict::Legacy(_))
        ));
        assert!(matches!(
            judge_http(400, Some(legacy_err), text),
            Ok(Verdict::Legacy(_))
        ));
        assert_eq!(
            judge_http(400, Some(err), text).unwrap(),
            Verdict::Modern("2026-07-28".into())
        );
        for status in [401, 403, 500, 503] {
            let r = judge_http(status, Some(legacy_err), text);
            assert!(
                matches!(r, Err(ClientError::Transport(TransportError::Http { status: s, .. })) if s == status),
                "{status}"
            );
        }
    }
}
