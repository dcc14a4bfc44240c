//! The tasks extension, in process: lifecycle, in-task questions, cancel, the gate, ids
//! that must not be served (foreign, expired, guessed), and hostile updates.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::tasks::TaskSupport;
use sterna::server::{Context, NoArgs, Principal, RequestEnv, ServerBuilder, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::jsonrpc::RequestId;

const EXT: &str = "io.modelcontextprotocol/tasks";

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Color {
    color: String,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

#[derive(Default)]
struct Effects {
    /// Side effects of `wizard` (after its last answer).
    wizard: AtomicUsize,
    /// Side effects of `confirm`.
    confirmed: AtomicUsize,
    /// `slow` runs started.
    started: AtomicUsize,
    /// `slow` runs dropped before the end.
    dropped: AtomicUsize,
}

struct OnDrop(Arc<Effects>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

fn tools(b: ServerBuilder<StateKeys>, e: &Arc<Effects>) -> ServerBuilder<StateKeys> {
    let (wizard, confirmed, slow) = (e.clone(), e.clone(), e.clone());
    b.tool(Tool::new("wizard").task(TaskSupport::Required).handler(
        move |ctx: Context, _: NoArgs| {
            let e = wizard.clone();
            async move {
                let name = ctx.ask(form::<Name>("Your name?").key("name")).await?;
                let color = ctx.ask(form::<Color>("Your colour?").key("color")).await?;
                let (name, color) = (name.required()?, color.required()?);
                e.wizard.fetch_add(1, Ordering::SeqCst);
                Ok::<_, HandlerError>(format!("{} likes {}", name.name, color.color))
            }
        },
    ))
    .tool(Tool::new("confirm").task(TaskSupport::Optional).handler(
        move |ctx: Context, _: NoArgs| {
            let e = confirmed.clone();
            async move {
                let ok = ctx.ask(form::<Confirm>("Sure?")).await?;
                match ok {
                    Elicitation::Accepted(c) if c.confirm => {
                        e.confirmed.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, HandlerError>("done".to_owned())
                    }
                    _ => Ok("kept".to_owned()),
                }
            }
        },
    ))
    .tool(
        Tool::new("slow")
            .task(TaskSupport::Optional)
            .handler(move |_: Context, _: NoArgs| {
                slow.started.fetch_add(1, Ordering::SeqCst);
                let guard = OnDrop(slow.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    std::mem::forget(guard);
                    "never"
                }
            }),
    )
    .tool(
        Tool::new("greet_later")
            .task(TaskSupport::Required)
            .ask(|_: &NoArgs| form::<Name>("Who?").key("who"))
            .run(|_: Context, _: NoArgs, n: Elicitation<Name>| async move {
                Ok::<_, HandlerError>(format!("Hello, {}!", n.required()?.name))
            }),
    )
    .tool(Tool::new("plain").handler(|_: Context, _: NoArgs| async { "plain" }))
}

fn server_with(
    f: impl FnOnce(ServerBuilder<StateKeys>) -> ServerBuilder<StateKeys>,
) -> (Server, Arc<Effects>) {
    let e = Arc::new(Effects::default());
    let b = Server::builder("tasks-test", "1").state_keys(StateKeys::ephemeral());
    (f(tools(b, &e)).build().unwrap(), e)
}

fn server() -> (Server, Arc<Effects>) {
    server_with(|b| b)
}

fn meta(tasks: bool) -> Value {
    let mut caps = json!({"elicitation": {"form": {}}});
    if tasks {
        caps["extensions"] = json!({ EXT: {} });
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

fn anon() -> RequestEnv {
    RequestEnv::new()
}

fn as_user(who: &str) -> RequestEnv {
    RequestEnv::new().principal(Principal::new(who.to_owned()))
}

/// Sends one request: `Ok(result)` or `Err((code, message))`.
async fn send(
    srv: &Server,
    env: RequestEnv,
    method: &str,
    mut params: Value,
    tasks: bool,
) -> Result<Value, (i64, String)> {
    params["_meta"] = meta(tasks);
    let raw = RawValue::from_string(params.to_string()).unwrap();
    let r = srv
        .handle(RequestId::Number(1), method, Some(&raw), env)
        .await
        .expect("answered");
    match r.body {
        Ok(v) => Ok(serde_json::from_str(v.get()).unwrap()),
        Err(e) => Err((i64::from(e.code.0), e.message)),
    }
}

async fn call(srv: &Server, env: RequestEnv, tool: &str) -> Value {
    send(
        srv,
        env,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
        true,
    )
    .await
    .unwrap()
}

async fn get(srv: &Server, env: RequestEnv, id: &str) -> Result<Value, (i64, String)> {
    send(srv, env, "tasks/get", json!({"taskId": id}), true).await
}

async fn update(
    srv: &Server,
    env: RequestEnv,
    id: &str,
    answers: Value,
) -> Result<Value, (i64, String)> {
    send(
        srv,
        env,
        "tasks/update",
        json!({"taskId": id, "inputResponses": answers}),
        true,
    )
    .await
}

/// Polls `tasks/get` until the status is `want` (bounded: 2000 polls).
async fn wait(srv: &Server, env: RequestEnv, id: &str, want: &str) -> Value {
    for _ in 0..2000 {
        let t = get(srv, env.clone(), id).await.unwrap();
        if t["status"] == want {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("task {id} never reached {want}");
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn keys(t: &Value) -> Vec<String> {
    t["inputRequests"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none());
    created["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_task_that_asks_twice_completes_with_side_effects_once() {
    let (srv, e) = server();
    let id = task_id(&call(&srv, anon(), "wizard").await);
    assert!(id.len() >= 22, "at least 128 random bits: {id}");
    let t = wait(&srv, anon(), &id, "input_required").await;
    assert_eq!(keys(&t), ["name"]);
    assert!(t.get("requestState").is_none());
    update(
        &srv,
        anon(),
        &id,
        json!({"name": accept(json!({"name": "Ada"}))}),
    )
    .await
    .unwrap();
    let t = wait(&srv, anon(), &id, "input_required").await;
    assert_eq!(
        keys(&t),
        ["color"],
        "the first answer is pinned, the second question asked"
    );
    // An invalid answer is asked again, under a fresh key (keys never repeat in a task).
    update(
        &srv,
        anon(),
        &id,
        json!({"color": accept(json!({"colour": "red"}))}),
    )
    .await
    .unwrap();
    let t = wait(&srv, anon(), &id, "input_required").await;
    assert_eq!(keys(&t), ["color#2"]);
    assert_eq!(
        e.wizard.load(Ordering::SeqCst),
        0,
        "no side effect before the last answer"
    );
    let ack = update(
        &srv,
        anon(),
        &id,
        json!({"color#2": accept(json!({"color": "teal"}))}),
    )
    .await
    .unwrap();
    assert_eq!(ack["resultType"], "complete");
    for k in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(k).is_none(), "{k} in the ack");
    }
    let t = wait(&srv, anon(), &id, "completed").await;
    assert_eq!(t["result"]["content"][0]["text"], "Ada likes teal");
    assert_eq!(t["resultType"], "complete");
    // A duplicate of the last update changes nothing.
    update(
        &srv,
        anon(),
        &id,
        json!({"color#2": accept(json!({"color": "teal"}))}),
    )
    .await
    .unwrap();
    assert_eq!(
        wait(&srv, anon(), &id, "completed").await["result"],
        t["result"]
    );
    assert_eq!(e.wizard.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn decline_completes_and_cancel_stops_the_run() {
    let (srv, e) = server();
    let id = task_id(&call(&srv, anon(), "confirm").await);
    let t = wait(&srv, anon(), &id, "input_required").await;
    let key = keys(&t).remove(0);
    update(&srv, anon(), &id, json!({ key: {"action": "decline"} }))
        .await
        .unwrap();
    let t = wait(&srv, anon(), &id, "completed").await;
    assert_eq!(t["result"]["content"][0]["text"], "kept");
    assert_eq!(e.confirmed.load(Ordering::SeqCst), 0);

    let id = task_id(&call(&srv, anon(), "slow").await);
    for _ in 0..1000 {
        if e.started.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let ack = send(&srv, anon(), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete");
    let t = wait(&srv, anon(), &id, "cancelled").await;
    assert!(t.get("result").is_none() && t.get("error").is_none());
    for _ in 0..1000 {
        if e.dropped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        e.dropped.load(Ordering::SeqCst),
        1,
        "the running handler was stopped"
    );
    // Cancel is idempotent on a terminal task; an update there is ignored.
    send(&srv, anon(), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .unwrap();
    update(&srv, anon(), &id, json!({"x": accept(json!({}))}))
        .await
        .unwrap();
    assert_eq!(get(&srv, anon(), &id).await.unwrap()["status"], "cancelled");
}

#[tokio::test]
async fn foreign_expired_and_guessed_ids_are_all_unknown() {
    let (srv, _) = server();
    let id = task_id(&call(&srv, as_user("alice"), "slow").await);
    assert!(get(&srv, as_user("alice"), &id).await.is_ok());
    let unknown = get(&srv, anon(), "nope").await.unwrap_err();
    assert_eq!(unknown.0, -32602);
    for env in [as_user("bob"), anon(), as_user("alice ")] {
        assert_eq!(
            get(&srv, env.clone(), &id).await.unwrap_err(),
            unknown,
            "same answer as unknown"
        );
        let cancel = send(
            &srv,
            env.clone(),
            "tasks/cancel",
            json!({"taskId": id}),
            true,
        )
        .await;
        assert_eq!(cancel.unwrap_err(), unknown);
        assert_eq!(
            update(&srv, env, &id, json!({})).await.unwrap_err(),
            unknown
        );
    }
    assert_eq!(
        get(&srv, as_user("alice"), &id).await.unwrap()["status"],
        "working",
        "bob's cancel did nothing"
    );
    let long = "A".repeat(10_000);
    let mut guesses = vec![
        String::new(),
        long,
        id[..id.len() - 1].to_owned(),
        format!("{id}x"),
    ];
    guesses.extend((0..50).map(|i| format!("{:024}", i)));
    for g in guesses {
        assert_eq!(get(&srv, as_user("alice"), &g).await.unwrap_err(), unknown);
    }
    let not_a_string = send(&srv, anon(), "tasks/get", json!({"taskId": 7}), true).await;
    assert_eq!(not_a_string.unwrap_err().0, -32602);
    send(
        &srv,
        as_user("alice"),
        "tasks/cancel",
        json!({"taskId": id}),
        true,
    )
    .await
    .unwrap();

    // Expired: a TTL shorter than the wait.
    let (short, _) = server_with(|b| b.task_ttl(Duration::from_millis(20)));
    let id = task_id(&call(&short, anon(), "slow").await);
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(get(&short, anon(), &id).await.unwrap_err(), unknown);

    // Another server sharing the store does not serve this server's tasks.
    let store = Arc::new(sterna::server::tasks::MemoryTaskStore::default());
    let (a, _) = server_with(|b| b.task_store(store.clone()));
    let b = Server::builder("other", "1")
        .state_keys(StateKeys::ephemeral())
        .task_store(store);
    let (b, _) = (tools(b, &Arc::default()).build().unwrap(), ());
    let id = task_id(&call(&a, anon(), "slow").await);
    assert_eq!(get(&b, anon(), &id).await.unwrap_err(), unknown);
}

#[tokio::test]
async fn the_gate_comes_before_any_lookup() {
    let (srv, _) = server();
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let r = send(
            &srv,
            anon(),
            method,
            json!({"taskId": "gate-test", "inputResponses": {}}),
            false,
        )
        .await;
        assert_eq!(r.unwrap_err().0, -32021, "{method}");
        let malformed = send(&srv, anon(), method, json!({"taskId": 12}), false).await;
        assert_eq!(
            malformed.unwrap_err().0,
            -32021,
            "{method}: the gate comes before params"
        );
    }
    let r = send(
        &srv,
        anon(),
        "tools/call",
        json!({"name": "wizard", "arguments": {}}),
        false,
    )
    .await;
    let (code, msg) = r.unwrap_err();
    assert_eq!(code, -32021);
    assert!(msg.contains(EXT), "{msg}");
    // An optional task tool runs synchronously without the extension (and asks by MRTR).
    let r = send(
        &srv,
        anon(),
        "tools/call",
        json!({"name": "confirm", "arguments": {}}),
        false,
    )
    .await
    .unwrap();
    assert_eq!(r["resultType"], "input_required");
    // The legacy `task` param never promotes a tool.
    let r = send(
        &srv,
        anon(),
        "tools/call",
        json!({"name": "plain", "arguments": {}, "task": {"ttl": 1}}),
        true,
    )
    .await
    .unwrap();
    assert_eq!(r["resultType"], "complete");
    // Asking for task notifications without declaring the extension is -32021 too.
    let listen = json!({"notifications": {"taskIds": ["x"]}});
    let r = send(&srv, anon(), "subscriptions/listen", listen, false).await;
    assert_eq!(r.unwrap_err().0, -32021);
    for method in ["tasks/result", "tasks/list"] {
        assert_eq!(
            send(&srv, anon(), method, json!({"taskId": "x"}), true)
                .await
                .unwrap_err()
                .0,
            -32601
        );
    }
    // A server without task tools does not offer the methods.
    let plain = Server::builder("p", "1")
        .ephemeral_state_keys()
        .tool(Tool::new("plain").handler(|_: Context, _: NoArgs| async { "plain" }))
        .build()
        .unwrap();
    assert_eq!(get(&plain, anon(), "x").await.unwrap_err().0, -32601);
    let discover = send(&plain, anon(), "server/discover", json!({}), true)
        .await
        .unwrap();
    assert!(discover["capabilities"].get("extensions").is_none());
    let discover = send(&srv, anon(), "server/discover", json!({}), false)
        .await
        .unwrap();
    assert_eq!(discover["capabilities"]["extensions"][EXT], json!({}));
    assert!(discover["capabilities"].get("tasks").is_none());
}

#[tokio::test]
async fn an_in_task_question_the_creator_cannot_answer_fails_the_task() {
    let (srv, e) = server();
    let mut params = json!({"name": "wizard", "arguments": {}});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": { EXT: {} }},
    });
    let raw = RawValue::from_string(params.to_string()).unwrap();
    let r = srv
        .handle(RequestId::Number(1), "tools/call", Some(&raw), anon())
        .await
        .unwrap();
    let created: Value = serde_json::from_str(r.body.unwrap().get()).unwrap();
    let id = task_id(&created);
    // Gated on the creating request's capabilities (no elicitation): never parked.
    let t = wait(&srv, anon(), &id, "failed").await;
    assert_eq!(t["error"]["code"], -32021);
    assert!(t["statusMessage"].is_string());
    assert!(t.get("result").is_none());
    assert_eq!(e.wizard.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn mrtr_questions_first_then_the_task() {
    let (srv, _) = server();
    let r1 = call(&srv, anon(), "greet_later").await;
    assert_eq!(r1["resultType"], "input_required");
    assert!(r1.get("taskId").is_none());
    let state = r1["requestState"].as_str().unwrap();
    let r2 = send(
        &srv,
        anon(),
        "tools/call",
        json!({"name": "greet_later", "arguments": {},
        "inputResponses": {"who": accept(json!({"name": "Alice"}))}, "requestState": state}),
        true,
    )
    .await
    .unwrap();
    let id = task_id(&r2);
    assert!(r2.get("inputRequests").is_none());
    let t = wait(&srv, anon(), &id, "completed").await;
    assert_eq!(t["result"]["content"][0]["text"], "Hello, Alice!");
}

#[tokio::test]
async fn hostile_updates_are_ignored_or_refused() {
    let (srv, e) = server();
    let id = task_id(&call(&srv, anon(), "confirm").await);
    let t = wait(&srv, anon(), &id, "input_required").await;
    let key = keys(&t).remove(0);
    // Unsolicited keys, non-object answers, an empty map: plain acks, nothing changes.
    for answers in [
        json!({"unknown-key": {"ignored": true}}),
        json!({}),
        json!({ &key: 5 }),
        json!({"__proto__": accept(json!({"confirm": true}))}),
    ] {
        let r = update(&srv, anon(), &id, answers.clone()).await;
        match r {
            Ok(ack) => assert_eq!(ack["resultType"], "complete"),
            Err((code, _)) => assert_eq!(code, -32602, "{answers}"),
        }
        assert_eq!(
            keys(&get(&srv, anon(), &id).await.unwrap()),
            std::slice::from_ref(&key)
        );
    }
    assert_eq!(
        update(&srv, anon(), &id, json!([1, 2]))
            .await
            .unwrap_err()
            .0,
        -32602
    );
    // An answer that cannot be read (a number beyond any float) refuses the update, not
    // silently: the task keeps waiting for it.
    let unreadable = format!(
        r#"{{"taskId": {}, "inputResponses": {{{}: {{"action": "accept", "content": {{"confirm": 1e999}}}}}}, "_meta": {}}}"#,
        json!(id),
        json!(key),
        meta(true)
    );
    let raw = RawValue::from_string(unreadable).unwrap();
    let r = srv
        .handle(RequestId::Number(9), "tasks/update", Some(&raw), anon())
        .await
        .expect("answered");
    let e9 = r.body.unwrap_err();
    assert_eq!(i64::from(e9.code.0), -32602, "{}", e9.message);
    assert!(
        e9.message.contains("Invalid inputResponses"),
        "{}",
        e9.message
    );
    assert_eq!(
        get(&srv, anon(), &id).await.unwrap()["status"],
        "input_required"
    );
    // A huge answer is refused and the task keeps waiting.
    let huge = "x".repeat(400 * 1024);
    let r = update(
        &srv,
        anon(),
        &id,
        json!({ &key: accept(json!({"confirm": true, "pad": huge})) }),
    )
    .await;
    assert_eq!(r.unwrap_err().0, -32602);
    assert_eq!(
        get(&srv, anon(), &id).await.unwrap()["status"],
        "input_required"
    );
    // Concurrent updates with the answer: one run, one side effect.
    let answer = json!({ &key: accept(json!({"confirm": true})) });
    let mut joins = Vec::new();
    for _ in 0..16 {
        let (srv, id, answer) = (srv.clone(), id.clone(), answer.clone());
        joins.push(tokio::spawn(async move {
            update(&srv, anon(), &id, answer).await
        }));
    }
    for j in joins {
        assert_eq!(j.await.unwrap().unwrap()["resultType"], "complete");
    }
    let t = wait(&srv, anon(), &id, "completed").await;
    assert_eq!(t["result"]["content"][0]["text"], "done");
    assert_eq!(e.confirmed.load(Ordering::SeqCst), 1);
}
