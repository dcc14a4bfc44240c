//! A Redis outage under a fleet's feet: a real `redis-server` (required: the test fails,
//! never skips, when it is missing) stopped and restarted on the same port. During the
//! outage single-use and stored-state requests fail cleanly (`-32603`, a clear message,
//! within the command timeout); no single-use state is accepted twice across it; service
//! recovers when Redis is back.

#![allow(missing_docs)]

#[path = "support/pay.rs"]
mod pay;
use pay::{call, state};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::state::StoreStates;
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use sterna_redis::Redis;

/// A redis-server on a fixed port with an append-only file synced on every write, so a
/// restart remembers every consumed state (without persistence a restarted Redis forgets
/// them: see the guide).
struct Instance {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Instance {
    fn new() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!("sterna-outage-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut me = Self {
            child: None,
            port,
            dir,
        };
        me.start();
        me
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn start(&mut self) {
        let port = self.port.to_string();
        let child = Command::new("redis-server")
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .current_dir(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is required for these tests (apt-get install redis-server)");
        self.child = Some(child);
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not start on port {}", self.port);
    }

    /// Kills the server outright (SIGKILL: no goodbye to the clients).
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

fn server(redis: &Redis, keys: &str, paid: Arc<AtomicUsize>) -> Server {
    builder(redis, keys, paid).build().unwrap()
}

fn builder(
    redis: &Redis,
    keys: &str,
    paid: Arc<AtomicUsize>,
) -> sterna::server::ServerBuilder<StateKeys> {
    Server::builder("outage", "1")
        .state_keys(StateKeys::from_base64_list(keys).unwrap())
        .replay_store(Arc::new(redis.replay_store()))
        .state_store(Arc::new(redis.state_store()), StoreStates::Always)
        .tool(
            Tool::new("pay")
                .single_use()
                .ask(|_: &NoArgs| form::<Confirm>("Pay?"))
                .run(move |_c: Context, _: NoArgs, ok: Elicitation<Confirm>| {
                    let paid = paid.clone();
                    async move {
                        let _ = ok.required()?.ok;
                        Ok::<_, HandlerError>(format!(
                            "paid #{}",
                            paid.fetch_add(1, Ordering::SeqCst) + 1
                        ))
                    }
                }),
        )
}

fn assert_unavailable(r: &Value) {
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("cannot be reached"), "{msg}");
}

fn assert_refused(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn an_outage_fails_cleanly_accepts_nothing_twice_and_recovers() {
    let mut redis_server = Instance::new();
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let keys = StateKeys::generate_base64();
    let paid = Arc::new(AtomicUsize::new(0));
    // Two replicas sharing keys and Redis.
    let a = server(&redis, &keys, paid.clone());
    let b = server(&redis, &keys, paid.clone());

    let used = state(&a).await;
    assert_eq!(used.len(), 71, "a stored-state reference");
    assert_eq!(call(&b, Some(&used)).await["content"][0]["text"], "paid #1");
    let pending = state(&a).await;

    redis_server.kill();
    // A new flow cannot store its state; a stored state cannot be fetched; a consumed one
    // is not accepted either.
    let cases: [(&Server, Option<&str>); 3] = [(&a, None), (&b, Some(&pending)), (&a, Some(&used))];
    for (replica, s) in cases {
        let started = Instant::now();
        assert_unavailable(&call(replica, s).await);
        let took = started.elapsed();
        eprintln!("failed cleanly in {took:?}");
        assert!(took < Duration::from_secs(3), "bounded: {took:?}");
    }
    assert_eq!(
        paid.load(Ordering::SeqCst),
        1,
        "nothing ran during the outage"
    );

    redis_server.start();
    let mut back = None;
    for _ in 0..100 {
        let r = call(&a, Some(&pending)).await;
        if r.get("error").is_none() {
            back = Some(r);
            break;
        }
        assert_unavailable(&r);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let back = back.expect("service recovers when Redis is back");
    assert_eq!(back["content"][0]["text"], "paid #2");
    // Across the outage, on either replica: each state was accepted exactly once.
    for s in [&used, &pending] {
        assert_refused(&call(&a, Some(s)).await);
        assert_refused(&call(&b, Some(s)).await);
    }
    let fresh = state(&b).await;
    assert_eq!(
        call(&a, Some(&fresh)).await["content"][0]["text"],
        "paid #3"
    );
    assert_eq!(paid.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_frozen_redis_times_out_and_thaws() {
    let redis_server = Instance::new();
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let keys = StateKeys::generate_base64();
    let paid = Arc::new(AtomicUsize::new(0));
    let a = server(&redis, &keys, paid.clone());
    let pending = state(&a).await;
    let pid = redis_server.child.as_ref().unwrap().id().to_string();
    let signal = |sig: &str| Command::new("kill").args([sig, &pid]).status().unwrap();
    signal("-STOP");
    let started = Instant::now();
    assert_unavailable(&call(&a, Some(&pending)).await);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the command timeout"
    );
    signal("-CONT");
    let mut done = false;
    for _ in 0..100 {
        let r = call(&a, Some(&pending)).await;
        if r.get("error").is_none() {
            assert_eq!(r["content"][0]["text"], "paid #1");
            done = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(done, "service recovers when Redis thaws");
    assert_refused(&call(&a, Some(&pending)).await);
}

#[tokio::test]
async fn stored_payloads_live_under_one_key_each_and_expire_with_the_state() {
    let instance = Instance::new();
    let redis = Redis::connect(&instance.url()).await.unwrap();
    let paid = Arc::new(AtomicUsize::new(0));
    let server = builder(&redis, &StateKeys::generate_base64(), paid)
        .state_ttl(Duration::from_secs(2))
        .state_clock_skew(Duration::ZERO)
        .build()
        .unwrap();
    let s = state(&server).await;
    let client = redis::Client::open(instance.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let stored: Vec<String> = redis::cmd("KEYS")
        .arg("sterna:state:*")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(
        stored[0].len(),
        "sterna:state:".len() + 32,
        "128-bit id in hex"
    );
    let ttl: i64 = redis::cmd("TTL")
        .arg(&stored[0])
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!((1..=2).contains(&ttl), "expires with the state: {ttl}");
    tokio::time::sleep(Duration::from_millis(3200)).await;
    let left: Vec<String> = redis::cmd("KEYS")
        .arg("sterna:state:*")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    assert_refused(&call(&server, Some(&s)).await);
}
