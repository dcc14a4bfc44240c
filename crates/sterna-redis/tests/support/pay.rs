//! The `pay` tool's calls in process (a single-use tool asking `confirm`), shared by the
//! tests of single use on Redis: the first leg, and the retry with a state and the answer.

use serde_json::value::to_raw_value;
use serde_json::{Value, json};
use sterna::server::{RequestEnv, Server};
use sterna::types::jsonrpc::RequestId;

/// `tools/call pay` (2026-07-28): the first leg without `state`, else the retry with
/// `state` and the accepted answer; the result, or `{"error": {code, message}}`.
pub(crate) async fn call(server: &Server, state: Option<&str>) -> Value {
    let mut p = json!({
        "name": "pay",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        }
    });
    if let Some(s) = state {
        p["requestState"] = json!(s);
        p["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    }
    let p = to_raw_value(&p).unwrap();
    let r = server
        .handle(
            RequestId::Number(1),
            "tools/call",
            Some(&p),
            RequestEnv::new(),
        )
        .await
        .unwrap();
    match r.body {
        Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
        Err(e) => json!({"error": {"code": e.code.0, "message": e.message}}),
    }
}

/// A fresh state: the first leg's `requestState`.
pub(crate) async fn state(server: &Server) -> String {
    let r = call(server, None).await;
    r["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned()
}
