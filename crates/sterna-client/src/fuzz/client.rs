//! Target `jsonrpc_client`: bytes as a hostile server's every answer, read by a real
//! [`Client`] (results, `resultType` discrimination, `InputRequiredResult`, errors, list
//! pages, `x-mcp-header` annotations), and by [`RawMessage::parse`].
//!
//! Invariants: no panic; what decodes re-encodes stably (decode, encode, decode, encode
//! gives the same JSON); a pending call survives its own serialization; its questions
//! are answered and the call resumed without panicking.

use super::runtime;
use crate::transport::{NotificationSink, Outgoing, Transport};
use crate::{Call, CallResult, Client, Pending, Step, TransportError};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, json};
use sterna_types::elicitation::{ElicitFormParams, ElicitResult, ElicitUrlParams};
use sterna_types::jsonrpc::{Incoming, RawMessage};
use sterna_types::mrtr::Outcome;
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::roots::Root;
use sterna_types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use sterna_types::tools::CallToolResult;

/// Answers every request with the same bytes.
struct Canned {
    answer: Vec<u8>,
    headers: bool,
}

impl Transport for Canned {
    fn request(
        &self,
        _req: Outgoing,
        _sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>> {
        Box::pin(std::future::ready(Ok(self.answer.clone())))
    }

    fn uses_headers(&self) -> bool {
        self.headers
    }
}

fn answer_form(form: &ElicitFormParams) -> ElicitResult {
    let mut content = Map::new();
    for (name, _) in &form.requested_schema.properties {
        content.insert(name.clone(), json!("x"));
    }
    ElicitResult::accept(content)
}

fn client(data: &[u8], headers: bool) -> Client {
    Client::builder("fuzz", "1")
        .on_elicit(|f: ElicitFormParams| std::future::ready(answer_form(&f)))
        .on_elicit_url(|_: ElicitUrlParams| std::future::ready(ElicitResult::decline()))
        .on_sample(|_: CreateMessageRequestParams| async {
            Ok(CreateMessageResult::text("m", "hi"))
        })
        .roots(vec![Root::new("file:///w", "w")])
        .build(Canned {
            answer: data.to_vec(),
            headers,
        })
}

/// Decode, encode, decode, encode: the two encodings agree.
fn stable<T: Serialize + DeserializeOwned>(json: &str) {
    let Ok(first) = serde_json::from_str::<T>(json) else {
        return;
    };
    let once = serde_json::to_value(&first).expect("decoded values encode");
    let again: T = serde_json::from_value(once.clone()).expect("an encoding decodes");
    let twice = serde_json::to_value(&again).expect("decoded values encode");
    assert_eq!(once, twice, "re-encoding is not stable");
}

fn envelope(data: &[u8]) {
    match RawMessage::parse(data) {
        Ok(Incoming::Result { result, .. }) => {
            stable::<Outcome<CallToolResult>>(result.get());
            stable::<Outcome<GetPromptResult>>(result.get());
            stable::<Outcome<ReadResourceResult>>(result.get());
        }
        Ok(Incoming::Error { error, .. }) => {
            let v = serde_json::to_value(&error).expect("errors encode");
            let back: sterna_types::error::ErrorObject =
                serde_json::from_value(v.clone()).expect("an encoded error decodes");
            assert_eq!(serde_json::to_value(&back).expect("errors encode"), v);
        }
        _ => {}
    }
}

/// One round of `call`, and when it asks for input: serialize the pending call, answer
/// it, resume it (which reads the same answer again).
async fn round<T: CallResult + std::fmt::Debug>(c: &Client, call: Call<T>) {
    let Ok(Step::InputRequired(p)) = c.start(call).await else {
        return;
    };
    let saved = serde_json::to_vec(&p).expect("pending calls serialize");
    let back: Pending<T> = serde_json::from_slice(&saved).expect("pending calls deserialize");
    assert_eq!(
        serde_json::to_vec(&back).expect("pending calls serialize"),
        saved,
        "a pending call changed through its serialization"
    );
    if let Ok(answers) = c.fulfil(p.requests()).await {
        let _ = c.resume(p, answers).await;
    }
}

pub(crate) fn run(data: &[u8]) {
    envelope(data);
    runtime().block_on(async {
        let c = client(data, false);
        round(&c, Call::tool("t", json!({"a": 1}))).await;
        round(&client(data, false), Call::prompt("p", ())).await;
        round(&client(data, false), Call::resource("test://r")).await;
        let _ = client(data, false).discover().await;
        let _ = client(data, false).list_prompts().await;
        // With headers: the tool list teaches `x-mcp-header` annotations, then a call
        // mirrors arguments with them.
        let h = client(data, true);
        let _ = h.list_tools().await;
        let args = json!({"region": "é", "limit": 3, "verbose": true, "n": {"x": 1.5}});
        let _ = h.start(Call::tool("t", args)).await;
    });
}
