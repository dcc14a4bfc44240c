//! A scripted server: a transport that records every request and answers from a script.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use sterna::client::TransportError;
use sterna::client::transport::{NotificationSink, Outgoing, Transport};

type Script = dyn Fn(&Value, usize) -> Value + Send + Sync;

/// Answers each request with `script(request, index)` (the `result` or `error` member);
/// the `id` is filled in.
#[derive(Clone)]
pub struct Scripted {
    pub log: Arc<Mutex<Vec<(Outgoing, Value)>>>,
    script: Arc<Script>,
    headers: bool,
}

impl Scripted {
    pub fn new(script: impl Fn(&Value, usize) -> Value + Send + Sync + 'static) -> Self {
        Self {
            log: Arc::default(),
            script: Arc::new(script),
            headers: false,
        }
    }

    /// Behaves like HTTP: the client mirrors `x-mcp-header` arguments into headers.
    pub fn with_headers(mut self) -> Self {
        self.headers = true;
        self
    }

    pub fn requests(&self) -> Vec<Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(_, v)| v.clone())
            .collect()
    }
}

impl Transport for Scripted {
    fn request(
        &self,
        req: Outgoing,
        _sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>> {
        Box::pin(async move {
            let msg: Value = serde_json::from_slice(&req.body).unwrap();
            let n = {
                let mut log = self.log.lock().unwrap();
                log.push((req.clone(), msg.clone()));
                log.len() - 1
            };
            let answer = (self.script)(&msg, n);
            if answer.get("__broken").is_some() {
                return Err(TransportError::StreamBroken);
            }
            let mut reply = json!({"jsonrpc": "2.0", "id": msg["id"]});
            if answer.get("error").is_some() {
                reply["error"] = answer["error"].clone();
            } else {
                reply["result"] = answer;
            }
            Ok(reply.to_string().into_bytes())
        })
    }

    fn uses_headers(&self) -> bool {
        self.headers
    }
}

pub fn ask(key: &str, state: Option<&str>) -> Value {
    let mut r = json!({
        "resultType": "input_required",
        "inputRequests": {key: {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}}
    });
    if let Some(s) = state {
        r["requestState"] = json!(s);
    }
    r
}

pub fn done(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}
