//! A raw JSON-RPC line client over an in-memory duplex, validating every message the
//! server sends against `schema.json`.

use serde_json::{Value, json};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;
use sterna::server::Server;
use sterna::server::transport::{StreamOptions, duplex};
use sterna::server::{Principal, RequestEnv};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

pub struct Wire {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
    next_id: i64,
    /// Notifications received while waiting for responses.
    pub notifications: Vec<Value>,
    /// Responses of other ids received while waiting (concurrent requests).
    pub stash: Vec<Value>,
}

pub fn caps_all() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}})
}

pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
    })
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let dir = std::env::var("STERNA_SHARED_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
        let path = dir.join("mcp-schema/2026-07-28/schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("the official schema is required at {}: {e}", path.display())
        });
        serde_json::from_str(&text).unwrap()
    })
}

/// Validates `instance` against `$defs/<def>` of the official schema.
pub fn assert_valid(def: &str, instance: &Value) {
    let validator = jsonschema::validator_for(&json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": schema()["$defs"],
        "$ref": format!("#/$defs/{def}"),
    }))
    .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {def}: {errors:?}\n{instance:#}"
    );
}

/// Validates a message from the server by its shape and the method it answers.
pub fn validate_message(method: &str, msg: &Value) {
    if msg.get("method").is_some() {
        let def = match msg["method"].as_str().unwrap() {
            "notifications/progress" => "ProgressNotification",
            "notifications/message" => "LoggingMessageNotification",
            "notifications/tools/list_changed" => "ToolListChangedNotification",
            "notifications/prompts/list_changed" => "PromptListChangedNotification",
            "notifications/resources/list_changed" => "ResourceListChangedNotification",
            "notifications/resources/updated" => "ResourceUpdatedNotification",
            "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
            other => panic!("unexpected notification {other}"),
        };
        return assert_valid(def, msg);
    }
    if msg.get("error").is_some() {
        return assert_valid("JSONRPCErrorResponse", msg);
    }
    let result = &msg["result"];
    assert!(
        result["resultType"].is_string(),
        "every result carries resultType: {msg}"
    );
    assert!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string(),
        "every result carries serverInfo: {msg}"
    );
    let def = match method {
        "tools/call" => "CallToolResultResponse",
        "prompts/get" => "GetPromptResultResponse",
        "resources/read" => "ReadResourceResultResponse",
        "tools/list" => "ListToolsResultResponse",
        "prompts/list" => "ListPromptsResultResponse",
        "resources/list" => "ListResourcesResultResponse",
        "resources/templates/list" => "ListResourceTemplatesResultResponse",
        "server/discover" => "DiscoverResultResponse",
        "completion/complete" => "CompleteResultResponse",
        // Extension methods: the generic result (resultType required).
        "skills/list" | "skills/get" | "resources/directory/read" => "JSONRPCResultResponse",
        other => panic!("no schema mapping for {other}"),
    };
    assert_valid(def, msg);
    // The unions are weak (digest §10 A10): check the precise member too.
    let precise = match (method, result["resultType"].as_str()) {
        (_, Some("input_required")) => "InputRequiredResult",
        ("tools/call", _) => "CallToolResult",
        ("prompts/get", _) => "GetPromptResult",
        ("resources/read", _) => "ReadResourceResult",
        _ => return,
    };
    assert_valid(precise, result);
    if precise == "InputRequiredResult" {
        assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none());
        assert!(result.get("inputRequests").is_some() || result.get("requestState").is_some());
    }
}

impl Wire {
    pub fn new(server: &Server) -> Self {
        Self::with_env(server, RequestEnv::new())
    }

    pub fn as_principal(server: &Server, principal: &str) -> Self {
        Self::with_env(
            server,
            RequestEnv::new().principal(Principal::new(principal)),
        )
    }

    fn with_env(server: &Server, env: RequestEnv) -> Self {
        let stream = duplex(
            server.clone(),
            StreamOptions {
                env,
                ..StreamOptions::default()
            },
        );
        let (r, w) = tokio::io::split(stream);
        Self {
            lines: BufReader::new(r).lines(),
            writer: w,
            next_id: 1,
            notifications: Vec::new(),
            stash: Vec::new(),
        }
    }

    pub fn next_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    pub async fn send(&mut self, msg: &Value) {
        self.send_raw(&msg.to_string()).await;
    }

    /// The next message, or `None` when nothing arrives within `wait`.
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.lines.next_line()).await {
            Err(_) => None,
            Ok(line) => {
                let line = line.unwrap().expect("the server closed the stream");
                Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad JSON {line}: {e}")))
            }
        }
    }

    /// The next line as sent (key order kept), within 10 s.
    pub async fn recv_raw(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("no message from the server within 10 s")
            .unwrap()
            .expect("the server closed the stream")
    }

    pub async fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(10))
            .await
            .expect("no message from the server within 10 s")
    }

    /// Waits for the response to `id`, keeping notifications and other responses aside.
    pub async fn response_to(&mut self, id: &Value, method: &str) -> Value {
        if let Some(i) = self.stash.iter().position(|m| &m["id"] == id) {
            return self.stash.remove(i);
        }
        loop {
            let msg = self.recv().await;
            validate_message(method, &msg);
            if msg.get("method").is_some() {
                self.notifications.push(msg);
            } else if &msg["id"] == id {
                return msg;
            } else {
                self.stash.push(msg);
            }
        }
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        self.request_with_id(id, method, params).await
    }

    pub async fn request_with_id(&mut self, id: i64, method: &str, params: Value) -> Value {
        let id = json!(id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response_to(&id, method).await
    }

    /// `tools/call` with all capabilities declared; `extra` is merged into params.
    pub async fn call(&mut self, tool: &str, args: Value, extra: Value) -> Value {
        self.call_with_caps(tool, args, extra, caps_all()).await
    }

    pub async fn call_with_caps(
        &mut self,
        tool: &str,
        args: Value,
        extra: Value,
        caps: Value,
    ) -> Value {
        let mut params = json!({"name": tool, "arguments": args, "_meta": meta(caps)});
        if let Value::Object(extra) = extra {
            for (k, v) in extra {
                params[k] = v;
            }
        }
        self.request("tools/call", params).await
    }
}

impl Wire {
    /// Both legs: the first call (which must ask), then the retry with `answers` and the
    /// state it returned.
    pub async fn answer(&mut self, tool: &str, args: Value, answers: Value) -> Value {
        self.answer_with_caps(tool, args, answers, caps_all()).await
    }

    pub async fn answer_with_caps(
        &mut self,
        tool: &str,
        args: Value,
        answers: Value,
        caps: Value,
    ) -> Value {
        let first = self
            .call_with_caps(tool, args.clone(), json!({}), caps.clone())
            .await;
        let (_, state) = input_required(&first);
        let mut extra = json!({"inputResponses": answers});
        if let Some(s) = state {
            extra["requestState"] = json!(s);
        }
        self.call_with_caps(tool, args, extra, caps).await
    }
}

/// `{"action":"accept","content":…}`.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The result of a response that must be a success.
pub fn result(resp: &Value) -> &Value {
    assert!(resp.get("error").is_none(), "unexpected error: {resp}");
    &resp["result"]
}

/// The text of a complete tool result.
pub fn text(resp: &Value) -> String {
    let r = result(resp);
    assert_eq!(r["resultType"], "complete", "{resp}");
    r["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts an `input_required` result and returns its question keys and state.
pub fn input_required(resp: &Value) -> (Vec<String>, Option<String>) {
    let r = result(resp);
    assert_eq!(r["resultType"], "input_required", "{resp}");
    let keys = r["inputRequests"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    (keys, r["requestState"].as_str().map(str::to_owned))
}

pub fn error_code(resp: &Value) -> i64 {
    resp["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {resp}"))
}
