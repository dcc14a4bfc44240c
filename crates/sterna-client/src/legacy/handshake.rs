//! The `initialize` handshake: what the client sends (2025-11-25, the capabilities its
//! handlers allow, its identity; no 2026-07-28 `_meta`, no version header) and which
//! answers it accepts.

use crate::error::{ClientError, ProtocolViolation};
use serde_json::{Value, json};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::jsonrpc::RequestId;
use sterna_types::legacy::{
    InitializeParams, InitializeResult, V2025_03_26, V2025_06_18, V2025_11_25,
};
use sterna_types::meta::Implementation;

/// The revisions this client accepts in the answer to `initialize`, newest first.
pub(crate) const ACCEPTED: &[&str] = &[V2025_11_25, V2025_06_18, V2025_03_26];

/// Who the client is and what it can do, for `initialize`.
#[derive(Debug, Clone)]
pub(crate) struct Hello {
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) info: Implementation,
}

impl Hello {
    /// The `initialize` request.
    pub(crate) fn request(&self, id: &RequestId) -> Vec<u8> {
        let params = InitializeParams {
            protocol_version: V2025_11_25.to_owned(),
            capabilities: self.capabilities.clone(),
            client_info: self.info.clone(),
            meta: None,
        };
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "initialize",
            "params": params,
        }))
        .expect("initialize serializes")
    }
}

/// `notifications/initialized`.
pub(crate) fn initialized() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()
}

/// The server's answer, if its revision is one this client speaks.
pub(crate) fn accept(result: Value) -> Result<InitializeResult, ClientError> {
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !ACCEPTED.contains(&version.as_str()) {
        return Err(ClientError::Incompatible {
            supported: vec![version],
        });
    }
    serde_json::from_value(result).map_err(|source| {
        ProtocolViolation::Malformed {
            method: "initialize".into(),
            source,
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_legacy_revisions_are_accepted_and_nothing_else() {
        for v in ACCEPTED {
            let r = accept(
                json!({"protocolVersion": v, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
            );
            assert_eq!(r.unwrap().protocol_version, *v);
        }
        for v in ["2026-07-28", "2024-11-05", ""] {
            let r = accept(
                json!({"protocolVersion": v, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
            );
            assert!(matches!(r, Err(ClientError::Incompatible { .. })), "{v}");
        }
        let hello = Hello {
            capabilities: ClientCapabilities::default(),
            info: Implementation::new("c", "1"),
        };
        let msg: Value = serde_json::from_slice(&hello.request(&RequestId::Number(1))).unwrap();
        assert_eq!(msg["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(msg["params"]["clientInfo"]["name"], "c");
        assert!(msg["params"].get("_meta").is_none());
    }
}
