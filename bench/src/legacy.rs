//! The messages of a 2025-11-25 client in the benchmarks, and the checks of what the
//! server sends back: `initialize`, a `tools/call` answered by a pushed
//! `elicitation/create`, the answer to that push, and the call's result.

use serde_json::Value;
use std::fmt;

/// The protocol version the legacy modes speak.
pub const VERSION: &str = "2025-11-25";

/// The `initialize` request (a client that answers form elicitations).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"sterna-bench","version":"1"}}}"#;

/// The notification that completes the handshake.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The region every push flow picks, and the result the tool then returns.
pub const PUSH_EXPECT: &str = "Created orders in eu-west-1";

/// Members of 2026-07-28 results that must never reach a 2025-11-25 client.
const MODERN_ONLY: [&str; 3] = ["resultType", "inputRequests", "requestState"];

/// A message that is not what the flow expects.
#[derive(Debug)]
#[non_exhaustive]
pub enum CheckError {
    /// Not JSON.
    Json(serde_json::Error),
    /// JSON, but not the expected message.
    Unexpected {
        /// What the flow waited for.
        expected: &'static str,
        /// The message received (cut to 300 bytes).
        got: String,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(e) => write!(f, "bad JSON: {e}"),
            Self::Unexpected { expected, got } => write!(f, "expected {expected}, got {got}"),
        }
    }
}

impl std::error::Error for CheckError {}

fn unexpected(expected: &'static str, got: &Value) -> CheckError {
    let mut got = got.to_string();
    if got.len() > 300 {
        let mut cut = 300;
        while !got.is_char_boundary(cut) {
            cut -= 1;
        }
        got.truncate(cut);
    }
    CheckError::Unexpected { expected, got }
}

fn parse(msg: &[u8]) -> Result<Value, CheckError> {
    serde_json::from_slice(msg).map_err(CheckError::Json)
}

/// A `tools/call` as a 2025-11-25 client sends it.
pub fn tool_call(id: u64, name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    )
}

/// The `provision_database` call of a push flow.
pub fn push_call(id: u64) -> String {
    tool_call(id, "provision_database", r#"{"name":"orders"}"#)
}

/// The `echo` call of the in-session echo.
pub fn echo_call(id: u64) -> String {
    tool_call(id, "echo", r#"{"text":"hello"}"#)
}

/// Checks the answer to `initialize`: the server speaks 2025-11-25.
pub fn check_initialize(msg: &[u8]) -> Result<(), CheckError> {
    let v = parse(msg)?;
    if v["id"] != 0 || v["result"]["protocolVersion"] != VERSION {
        return Err(unexpected("an initialize result for 2025-11-25", &v));
    }
    Ok(())
}

/// Checks a pushed question (an `elicitation/create` request asking for `region`) and
/// returns the client's answer to it, as the body to POST.
pub fn answer_push(msg: &[u8]) -> Result<String, CheckError> {
    let v = parse(msg)?;
    let id = &v["id"];
    let asks_region = v["params"]["requestedSchema"]["properties"]["region"].is_object();
    if v["method"] != "elicitation/create"
        || !(id.is_string() || id.is_u64() || id.is_i64())
        || !v["params"]["message"].is_string()
        || !asks_region
    {
        return Err(unexpected("an elicitation/create request for a region", &v));
    }
    Ok(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"region":"eu-west-1"}}}}}}"#
    ))
}

/// Checks the response to call `id`: a tool result (not an error, no 2026-only member)
/// whose text is `expect`.
pub fn check_result(msg: &[u8], id: u64, expect: &str) -> Result<(), CheckError> {
    let v = parse(msg)?;
    let r = &v["result"];
    let text: String = r["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_default();
    let modern = MODERN_ONLY.iter().any(|k| r.get(k).is_some());
    if v["id"] != id || r["isError"] == true || modern || text != expect {
        return Err(unexpected("the tool's result", &v));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_is_answered_with_its_own_id() {
        let push = br#"{"jsonrpc":"2.0","id":"s-7","method":"elicitation/create","params":{"message":"Which region?","requestedSchema":{"type":"object","properties":{"region":{"type":"string"}}}}}"#;
        let answer: Value = serde_json::from_str(&answer_push(push).unwrap()).unwrap();
        assert_eq!(answer["id"], "s-7");
        assert_eq!(answer["result"]["content"]["region"], "eu-west-1");
    }

    #[test]
    fn a_push_that_asks_something_else_or_is_no_request_is_refused() {
        let other = br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"?","requestedSchema":{"properties":{"size":{}}}}}"#;
        assert!(answer_push(other).is_err());
        let note = br#"{"jsonrpc":"2.0","method":"elicitation/create","params":{"message":"?","requestedSchema":{"properties":{"region":{}}}}}"#;
        assert!(answer_push(note).is_err());
        assert!(answer_push(b"not json").is_err());
    }

    #[test]
    fn a_result_must_match_its_id_and_text_and_carry_nothing_modern() {
        let ok =
            br#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"hello"}]}}"#;
        check_result(ok, 4, "hello").unwrap();
        assert!(check_result(ok, 5, "hello").is_err());
        assert!(check_result(ok, 4, "bye").is_err());
        let modern = br#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}]}}"#;
        assert!(check_result(modern, 4, "hello").is_err());
        let failed = br#"{"jsonrpc":"2.0","id":4,"result":{"isError":true,"content":[{"type":"text","text":"hello"}]}}"#;
        assert!(check_result(failed, 4, "hello").is_err());
        let error = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"no"}}"#;
        assert!(check_result(error, 4, "hello").is_err());
    }

    #[test]
    fn initialize_must_settle_on_2025_11_25() {
        check_initialize(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#)
            .unwrap();
        assert!(
            check_initialize(
                br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#
            )
            .is_err()
        );
    }
}
