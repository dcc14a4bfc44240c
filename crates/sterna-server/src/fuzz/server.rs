//! Target `jsonrpc_server`: bytes into a real [`Server`] through
//! [`Server::handle_message`] (the one-pass reading HTTP uses) and through the envelope
//! reading byte streams use, on twin servers sharing keys.
//!
//! Invariants: every request with an id gets exactly one response carrying that id, and
//! it is valid JSON-RPC; both readings give the same answer (`requestState` values aside,
//! as their nonces differ); when the first leg asks for input, the same message is sent
//! again with the state each server issued, under the same invariants.

use super::runtime;
use crate::mrtr::{Elicitation, form};
use crate::server::inbound::classify_envelope;
use crate::server::{Context, NoArgs, Prompt, RequestEnv, ResourceTemplate, Tool};
use crate::state::StateKeys;
use crate::{HandlerError, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Mutex;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};

/// Every kind of form field: string formats, enums, numbers, a multi-select.
#[derive(Deserialize, JsonSchema)]
#[expect(dead_code, reason = "the fields are only decoded")]
pub(crate) struct Booking {
    #[schemars(extend("format" = "date"))]
    day: String,
    #[schemars(extend("format" = "date-time"))]
    at: String,
    #[schemars(extend("format" = "email"))]
    email: String,
    #[schemars(extend("format" = "uri"))]
    site: Option<String>,
    #[schemars(range(min = 1, max = 8))]
    seats: u8,
    #[schemars(range(min = 0.5, max = 99.5))]
    price: Option<f64>,
    count: Option<i32>,
    class: Class,
    #[schemars(length(min = 1, max = 2))]
    extras: Vec<Extra>,
    #[schemars(length(min = 1, max = 20))]
    note: Option<String>,
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) enum Class {
    #[serde(rename = "economy")]
    Economy,
    #[serde(rename = "business")]
    Business,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) enum Extra {
    #[serde(rename = "meal")]
    Meal,
    #[serde(rename = "bag")]
    Bag,
    #[serde(rename = "seat")]
    Seat,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct BookArgs {
    to: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize)]
struct Vars {
    id: String,
}

#[derive(Deserialize)]
struct PathVars {
    path: String,
}

fn tools(b: crate::server::ServerBuilder<StateKeys>) -> crate::server::ServerBuilder<StateKeys> {
    b.tool(
        Tool::new("book")
            .ask(|a: &BookArgs| form::<Booking>(format!("Book {}?", a.to)))
            .run(
                |_: Context, a: BookArgs, b: Elicitation<Booking>| async move {
                    let b = b.required()?;
                    Ok::<_, HandlerError>(format!("{} {} {}", a.to, b.day, b.seats))
                },
            ),
    )
    .tool(
        Tool::new("redeem")
            .single_use()
            .ask(|_: &NoArgs| form::<Confirm>("Redeem?"))
            .run(
                |_: Context, _: NoArgs, ok: Elicitation<Confirm>| async move {
                    Ok::<_, HandlerError>(format!("redeemed {}", ok.required()?.ok))
                },
            ),
    )
    .tool(
        Tool::new("wizard").handler(|ctx: Context, _: NoArgs| async move {
            let n = ctx.elicit::<Name>("Name?").await?.required()?;
            let ok = ctx.elicit::<Confirm>("Sure?").await?.required()?;
            Ok::<_, HandlerError>(format!("{} {}", n.name, ok.ok))
        }),
    )
    .tool(
        Tool::new("add")
            .handler(|_: Context, a: AddArgs| async move { a.a.wrapping_add(a.b).to_string() }),
    )
    .prompt(
        Prompt::new("greeting")
            .ask(|_: &NoArgs| form::<Name>("For whom?"))
            .run(|_: Context, _: NoArgs, n: Elicitation<Name>| async move {
                Ok::<_, HandlerError>(format!("Greet {}", n.required()?.name))
            }),
    )
    .resource(
        ResourceTemplate::new("test://items/{id}", "item")
            .ask(|_: &Vars| form::<Confirm>("Reveal?"))
            .run(|_: Context, v: Vars, ok: Elicitation<Confirm>| async move {
                Ok::<_, HandlerError>(format!("{} {}", v.id, ok.required()?.ok))
            }),
    )
    .resource(
        ResourceTemplate::new("file:///{+path}", "file")
            .handler(|_: Context, v: PathVars| async move { v.path }),
    )
}

/// A server of the fuzz fixture (every one built with the same keys).
pub(crate) fn fixture() -> Server {
    let keys = StateKeys::new(&[[7u8; 32], [9u8; 32]]).expect("two distinct keys");
    tools(Server::builder("fuzz", "1").state_keys(keys))
        .build()
        .expect("the fuzz fixture builds")
}

/// Twin servers, rebuilt now and then so single-use records never fill the store.
struct Twins {
    fast: Server,
    slow: Server,
    runs: u32,
}

static TWINS: Mutex<Option<Twins>> = Mutex::new(None);

fn twins() -> (Server, Server) {
    let mut t = TWINS.lock().unwrap_or_else(|p| p.into_inner());
    let t = match &mut *t {
        Some(t) if t.runs < 20_000 => t,
        slot => slot.insert(Twins {
            fast: fixture(),
            slow: fixture(),
            runs: 0,
        }),
    };
    t.runs += 1;
    (t.fast.clone(), t.slow.clone())
}

/// The response to `bytes` as bytes, read the way HTTP reads it.
async fn one_pass(server: &Server, bytes: &[u8]) -> Option<Vec<u8>> {
    let r = server.handle_message(bytes, RequestEnv::new()).await?;
    Some(r.to_bytes())
}

/// The response to `bytes` as bytes, read the way byte streams read it.
async fn envelope_first(server: &Server, bytes: &[u8]) -> Option<Vec<u8>> {
    match classify_envelope(bytes).into_owned_request() {
        Some(req) => {
            let r = server
                .handle(
                    req.id,
                    &req.method,
                    req.params.as_deref(),
                    RequestEnv::new(),
                )
                .await?;
            Some(r.to_bytes())
        }
        None => one_pass(server, bytes).await,
    }
}

/// The id a response must carry, or `None` when none may be sent.
fn expected_id(bytes: &[u8]) -> Option<Option<RequestId>> {
    match RawMessage::parse(bytes) {
        Ok(Incoming::Request { id, .. }) => Some(Some(id)),
        Ok(_) => None,
        Err(m) => Some(m.id),
    }
}

/// Checks one response; returns it as JSON with `requestState` values blanked, and the
/// state (if the result asks for input).
fn check(bytes: &[u8], response: Option<Vec<u8>>) -> (Option<Value>, Option<String>) {
    let want = expected_id(bytes);
    let Some(out) = response else {
        assert!(want.is_none(), "no response to a request: {want:?}");
        return (None, None);
    };
    let want = want.expect("a response to something that is not a request");
    match RawMessage::parse(&out) {
        Ok(Incoming::Result { id, .. }) => assert_eq!(Some(id), want, "result id"),
        Ok(Incoming::Error { id, .. }) => assert_eq!(id, want, "error id"),
        other => panic!("not a JSON-RPC response: {other:?}"),
    }
    let mut v: Value = serde_json::from_slice(&out).expect("responses are JSON");
    let state = v["result"]["requestState"].as_str().map(str::to_owned);
    if v["result"]["resultType"] == "input_required" {
        let r = &v["result"];
        assert!(
            r.get("inputRequests").is_some() || state.is_some(),
            "input_required without questions or state: {v}"
        );
    }
    if let Some(s) = v["result"].get_mut("requestState") {
        *s = Value::Null;
    }
    (Some(v), state)
}

/// The same message with `params.requestState` set.
fn with_state(bytes: &[u8], state: &str) -> Option<Vec<u8>> {
    let mut v: Value = serde_json::from_slice(bytes).ok()?;
    let params = v.get_mut("params")?.as_object_mut()?;
    params.insert("requestState".into(), Value::String(state.to_owned()));
    serde_json::to_vec(&v).ok()
}

pub(crate) fn run(data: &[u8]) {
    let (fast, slow) = twins();
    runtime().block_on(async {
        let (a, sa) = check(data, one_pass(&fast, data).await);
        let (b, sb) = check(data, envelope_first(&slow, data).await);
        assert_eq!(a, b, "the two readings of one message disagree");
        let (Some(sa), Some(sb)) = (sa, sb) else {
            return;
        };
        let (Some(next_a), Some(next_b)) = (with_state(data, &sa), with_state(data, &sb)) else {
            return;
        };
        let (a, _) = check(&next_a, one_pass(&fast, &next_a).await);
        let (b, _) = check(&next_b, envelope_first(&slow, &next_b).await);
        assert_eq!(a, b, "the two readings of the retry disagree");
    });
}
