//! Outcomes as a 2025 client reads them: typed views of each result without
//! `resultType`, caching hints or the `serverInfo` stamp (the core never stamps them for
//! this era), and the error codes of the 2025 revisions.

use crate::server::outcome::{Completed, Failure, Outcome, Payload};
use crate::server::response::Response;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};
use sterna_types::completion::Completion;
use sterna_types::content::{ContentBlock, ResourceContents};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::ResultMeta;
use sterna_types::prompts::PromptMessage;
use sterna_types::tools::CallToolResult;

/// `-32002`, resource not found, as 2025-11-25 and earlier number it.
const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// `_meta` as the handler set it (the 2026 stamps are never added on this era).
fn meta(m: &Option<ResultMeta>) -> Option<&ResultMeta> {
    m.as_ref().filter(|m| !m.is_empty())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolResult<'a> {
    content: &'a [ContentBlock],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a ResultMeta>,
}

#[derive(Serialize)]
struct PromptResult<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    messages: &'a [PromptMessage],
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a ResultMeta>,
}

#[derive(Serialize)]
struct ReadResult<'a> {
    contents: &'a [ResourceContents],
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a ResultMeta>,
}

#[derive(Serialize)]
struct CompletionResult<'a> {
    completion: &'a Completion,
}

fn render<T: Serialize>(t: &T) -> Box<RawValue> {
    to_raw_value(t).expect("results serialize")
}

/// A tool result as 2025 sends it.
pub(crate) fn tool(t: &CallToolResult) -> Box<RawValue> {
    render(&ToolResult {
        content: &t.content,
        structured_content: t.structured_content.as_ref(),
        is_error: t.is_error,
        meta: meta(&t.meta),
    })
}

/// A completed result as 2025 sends it.
pub(crate) fn completed(c: &Completed) -> Box<RawValue> {
    match &c.payload {
        Payload::Tool(t) => tool(t),
        Payload::Prompt(p) => render(&PromptResult {
            description: p.description.as_deref(),
            messages: &p.messages,
            meta: meta(&p.meta),
        }),
        Payload::Resource(r) => render(&ReadResult {
            contents: &r.contents,
            meta: meta(&r.meta),
        }),
        Payload::Completion(completion) => render(&CompletionResult { completion }),
        Payload::Ext(ext) => render(&ext.members),
    }
}

/// An error with the code a 2025 client expects.
pub(crate) fn failure(f: Failure) -> ErrorObject {
    match f {
        Failure::ResourceNotFound(uri) => {
            ErrorObject::new(RESOURCE_NOT_FOUND, format!("Resource not found: {uri}"))
                .with_data(serde_json::json!({ "uri": uri }))
        }
        Failure::Rpc(e) => e,
    }
}

/// A finished outcome, as the legacy client gets it (questions are the push loop's).
pub(crate) fn outcome(id: RequestId, o: Outcome) -> Response {
    let body = match o {
        Outcome::Complete(c) => Ok(completed(&c)),
        Outcome::Failed(f) => Err(failure(f)),
        Outcome::InputRequired(_) => {
            tracing::error!("questions reached the 2025 rendering");
            Err(ErrorObject::internal("Internal error"))
        }
    };
    Response::with(id, body)
}

/// How a `tools/call` fails on legacy when it cannot go on (a capability the session did
/// not declare, a push the client refused, too many rounds): a tool error the model
/// reads. Prompts and resources get `-32603` with the message.
pub(crate) fn cannot_go_on(tool: bool, id: RequestId, message: String) -> Response {
    if tool {
        Response::ok(id, self::tool(&CallToolResult::error(message)))
    } else {
        Response::error(Some(id), ErrorObject::internal(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use sterna_types::meta::Implementation;

    #[test]
    fn no_2026_decorations_and_the_2025_codes() {
        let mut t = CallToolResult::text("hi");
        t.meta = Some(ResultMeta::default());
        assert_eq!(
            tool(&t).get(),
            r#"{"content":[{"type":"text","text":"hi"}]}"#
        );
        let mut stamped = ResultMeta::default();
        stamped.other.insert("k".into(), Value::from(1));
        t.meta = Some(stamped);
        assert_eq!(
            tool(&t).get(),
            r#"{"content":[{"type":"text","text":"hi"}],"_meta":{"k":1}}"#
        );
        let e = failure(Failure::ResourceNotFound("x".into()));
        assert_eq!(e.code, RESOURCE_NOT_FOUND);
        assert_eq!(e.data.unwrap()["uri"], "x");
        let _ = Arc::new(Implementation::new("s", "1"));
    }
}
