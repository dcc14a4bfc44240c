//! The messages of a 2025-11-25 client in the benchmarks, and the checks of what the
//! server sends back: `initialize`, a `tools/call` answered by a pushed
//! `elicitation/create`, the answer to that push, and the call's result.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The protocol version the legacy modes speak.
pub const VERSION: &str = "2025-11-25";

/// The `initialize` request (a client that answers form elicitations).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"sterna-bench","version":"1"}}}"#;

/// The notification that completes the handshake.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The region every push flow picks, and the result the tool then returns.
pub const PUSH_EXPECT: &str = "Created orders in eu-west-1";

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

fn unexpected(expected: &'static str, got: &[u8]) -> CheckError {
    let mut got = String::from_utf8_lossy(got).into_owned();
    if got.len() > 300 {
        let mut cut = 300;
        while !got.is_char_boundary(cut) {
            cut -= 1;
        }
        got.truncate(cut);
    }
    CheckError::Unexpected { expected, got }
}

/// Reads `msg` as a `T` borrowing from it (no tree of values is built: the checks run on
/// every message of a benchmark, in the load generator's share of the CPU). Bytes that are
/// not JSON are a `Json` error; JSON of another shape is `Unexpected`.
fn parse<'a, T: Deserialize<'a>>(msg: &'a [u8], expected: &'static str) -> Result<T, CheckError> {
    serde_json::from_slice(msg).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => unexpected(expected, msg),
        _ => CheckError::Json(e),
    })
}

/// Whether a key is present, whatever its value (`null` included, which an `Option`
/// would read as absent); `#[serde(default)]` makes an absent key `Present(false)`.
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// A JSON-RPC request id: a string or an integer, kept as its JSON text.
fn request_id(raw: &RawValue) -> Option<&str> {
    let t = raw.get();
    let digits = t.strip_prefix('-').unwrap_or(t);
    let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    (t.starts_with('"') || integer).then_some(t)
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

#[derive(Deserialize)]
struct Initialized<'a> {
    id: u64,
    #[serde(borrow)]
    result: VersionOf<'a>,
}

#[derive(Deserialize)]
struct VersionOf<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: Cow<'a, str>,
}

/// Checks the answer to `initialize`: the server speaks 2025-11-25.
pub fn check_initialize(msg: &[u8]) -> Result<(), CheckError> {
    const WHAT: &str = "an initialize result for 2025-11-25";
    let m: Initialized<'_> = parse(msg, WHAT)?;
    if m.id != 0 || m.result.protocol_version != VERSION {
        return Err(unexpected(WHAT, msg));
    }
    Ok(())
}

#[derive(Deserialize)]
struct Push<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, rename = "params")]
    _params: PushParams<'a>,
}

/// Read only to check their shape: `message` is a string, the schema asks for `region`.
#[derive(Deserialize)]
struct PushParams<'a> {
    #[serde(borrow, rename = "message")]
    _message: Cow<'a, str>,
    #[serde(rename = "requestedSchema")]
    _requested_schema: Schema,
}

#[derive(Deserialize)]
struct Schema {
    #[serde(rename = "properties")]
    _properties: Properties,
}

#[derive(Deserialize)]
struct Properties {
    #[serde(rename = "region")]
    _region: Object,
}

/// Any JSON object (and nothing else: not an array, as a derived struct would take).
struct Object;

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Object;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Object, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Object)
            }
        }
        d.deserialize_map(V)
    }
}

/// Checks a pushed question (an `elicitation/create` request asking for `region`) and
/// returns the client's answer to it, as the body to POST.
pub fn answer_push(msg: &[u8]) -> Result<String, CheckError> {
    const WHAT: &str = "an elicitation/create request for a region";
    let p: Push<'_> = parse(msg, WHAT)?;
    let id = request_id(p.id).filter(|_| p.method == "elicitation/create");
    let Some(id) = id else {
        return Err(unexpected(WHAT, msg));
    };
    Ok(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"region":"eu-west-1"}}}}}}"#
    ))
}

#[derive(Deserialize)]
struct Response<'a> {
    id: u64,
    #[serde(borrow)]
    result: ToolResult<'a>,
}

#[derive(Deserialize)]
struct ToolResult<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
    /// Members of 2026-07-28 results that must never reach a 2025-11-25 client.
    #[serde(default, rename = "resultType")]
    result_type: Present,
    #[serde(default, rename = "inputRequests")]
    input_requests: Present,
    #[serde(default, rename = "requestState")]
    request_state: Present,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// Whether `texts`, joined, read `expect` (compared piece by piece, without joining them).
pub fn texts_are<'a>(texts: impl IntoIterator<Item = &'a str>, expect: &str) -> bool {
    let mut rest = expect;
    for t in texts {
        match rest.strip_prefix(t) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// Checks the response to call `id`: a tool result (not an error, no 2026-only member)
/// whose text is `expect`.
pub fn check_result(msg: &[u8], id: u64, expect: &str) -> Result<(), CheckError> {
    const WHAT: &str = "the tool's result";
    let m: Response<'_> = parse(msg, WHAT)?;
    let r = &m.result;
    let modern = r.result_type.0 || r.input_requests.0 || r.request_state.0;
    let texts = r.content.iter().filter_map(|b| b.text.as_deref());
    if m.id != id || r.is_error == Some(true) || modern || !texts_are(texts, expect) {
        return Err(unexpected(WHAT, msg));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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
    fn a_push_is_checked_for_its_shape_not_only_parsed() {
        let with = |id: &str, region: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{{"message":"?","requestedSchema":{{"properties":{{"region":{region}}}}}}}}}"#
            )
        };
        assert!(answer_push(with("-3", "{}").as_bytes()).is_ok());
        for (id, region) in [
            ("1.5", "{}"),
            ("null", "{}"),
            ("[1]", "{}"),
            ("1", "[]"),
            ("1", "\"x\""),
        ] {
            let err = answer_push(with(id, region).as_bytes()).unwrap_err();
            assert!(
                matches!(err, CheckError::Unexpected { .. }),
                "{id} {region}: {err}"
            );
        }
        let twice = br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"elicitation/create","params":{"message":"?","requestedSchema":{"properties":{"region":{}}}}}"#;
        assert!(answer_push(twice).is_err());
        assert!(matches!(answer_push(b"{\"id\":"), Err(CheckError::Json(_))));
    }

    #[test]
    fn a_result_is_refused_for_any_modern_member_even_null_and_its_text_may_be_split() {
        let split = br#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"hel"},{"type":"image"},{"type":"text","text":"lo"}]}}"#;
        check_result(split, 4, "hello").unwrap();
        assert!(check_result(split, 4, "hello!").is_err());
        let null_state = br#"{"jsonrpc":"2.0","id":4,"result":{"requestState":null,"content":[{"type":"text","text":"hello"}]}}"#;
        assert!(check_result(null_state, 4, "hello").is_err());
        let not_a_list = br#"{"jsonrpc":"2.0","id":4,"result":{"content":{"text":"hello"}}}"#;
        assert!(check_result(not_a_list, 4, "hello").is_err());
        let string_id =
            br#"{"jsonrpc":"2.0","id":"4","result":{"content":[{"type":"text","text":"hello"}]}}"#;
        assert!(check_result(string_id, 4, "hello").is_err());
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
