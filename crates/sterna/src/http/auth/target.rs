//! What a request body asks for, read with the server's own parser: the scope decision
//! and the server never disagree about which tool is called.

use super::scope::Target;
use crate::server::inbound::{Body, Inbound, classify};
use crate::server::request::Params;

/// The method and target (tool or prompt name, resource URI) of a JSON-RPC message;
/// `None` when it is not a request or notification the server would run.
pub(crate) fn target_of(bytes: &[u8]) -> Option<Target> {
    let (method, body) = match classify(bytes) {
        Inbound::Request { method, params, .. } => (method, params),
        Inbound::Notification { method, params } => (method, Body::Raw(params)),
        Inbound::Response { .. } | Inbound::Malformed(_) => return None,
    };
    let name = match body {
        Body::Decoded(p) => p.target().0.map(str::to_owned),
        Body::Raw(Some(raw)) if raw.get().trim_start().starts_with('{') => {
            let (params, _) = Params::read(&method, raw);
            params.ok().and_then(|p| p.target().0.map(str::to_owned))
        }
        Body::Raw(_) => None,
    };
    Some(Target {
        method: method.into_owned(),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_target_the_server_would_run() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"drop","arguments":{{}},{meta}}}}}"#
        );
        let t = target_of(call.as_bytes()).unwrap();
        assert_eq!(
            (t.method.as_str(), t.name.as_deref()),
            ("tools/call", Some("drop"))
        );
        let read =
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}"#;
        let t = target_of(read.as_bytes()).unwrap();
        assert_eq!(t.name.as_deref(), Some("file:///x"), "read without _meta");
        let list =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{meta}}}}}"#);
        assert_eq!(target_of(list.as_bytes()).unwrap().name, None);
        assert!(target_of(b"not json").is_none());
    }
}
