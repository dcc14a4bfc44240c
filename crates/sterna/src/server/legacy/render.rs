//! Answers as a 2025 client reads them: results without `resultType`, caching hints or
//! the `serverInfo` stamp; error codes of the 2025 revisions.

use super::super::response::Response;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::tools::CallToolResult;

/// `-32002`, resource not found, as 2025-11-25 and earlier number it.
const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// A result with the 2026 decorations removed.
pub(crate) fn result(raw: &RawValue) -> Box<RawValue> {
    let Ok(mut v) = serde_json::from_str::<Map<String, Value>>(raw.get()) else {
        return raw.to_owned();
    };
    for key in ["resultType", "ttlMs", "cacheScope"] {
        v.remove(key);
    }
    if let Some(Value::Object(meta)) = v.get_mut("_meta") {
        meta.remove(sterna_types::meta::SERVER_INFO_KEY);
        if meta.is_empty() {
            v.remove("_meta");
        }
    }
    to_raw_value(&v).expect("results serialize")
}

/// An error with the code a 2025 client expects.
pub(crate) fn error(mut e: ErrorObject) -> ErrorObject {
    let not_found = e.code == ErrorCode::INVALID_PARAMS
        && e.message.starts_with("Resource not found")
        && e.data.as_ref().is_some_and(|d| d.get("uri").is_some());
    if not_found {
        e.code = RESOURCE_NOT_FOUND;
    }
    e
}

/// A whole response, made legacy.
pub(crate) fn response(r: Response) -> Response {
    let Response {
        id,
        body,
        early,
        input_required,
    } = r;
    let body = match body {
        Ok(raw) => Ok(result(&raw)),
        Err(e) => Err(error(e)),
    };
    Response {
        id,
        body,
        early,
        input_required,
    }
}

/// How a `tools/call` fails on legacy when it cannot go on (a capability the session did
/// not declare, a push the client refused, too many rounds): a tool error the model
/// reads. Prompts and resources get `-32603` with the message.
pub(crate) fn failure(tool: bool, id: RequestId, message: String) -> Response {
    if tool {
        let r = CallToolResult::error(message);
        Response::ok(id, result(&to_raw_value(&r).expect("results serialize")))
    } else {
        Response::error(Some(id), ErrorObject::internal(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decorations_go_and_content_stays() {
        let raw = RawValue::from_string(
            r#"{"resultType":"complete","ttlMs":5,"cacheScope":"public","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#.into(),
        )
        .unwrap();
        assert_eq!(result(&raw).get(), r#"{"content":[]}"#);
        let e = ErrorObject::invalid_params("Resource not found: x")
            .with_data(serde_json::json!({"uri": "x"}));
        assert_eq!(error(e).code, RESOURCE_NOT_FOUND);
    }
}
