//! Single use under memory pressure, against a real `redis-server` (required: the test
//! fails, never skips, when it is missing). With `maxmemory` and an evicting policy
//! (`volatile-lru`, a common managed-Redis default), other writes can evict the key that
//! records a consumed state; a replay must still never run. The store checks the
//! policy (with `CONFIG GET`, or `INFO` where `CONFIG` is refused) and fails closed when
//! it cannot rule eviction out.

#![allow(missing_docs)]

#[path = "redis.rs"]
#[allow(dead_code)]
mod harness;

#[path = "support/pay.rs"]
mod pay;
use pay::{call, state};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::ReplayStore;
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use sterna_redis::{Redis, RedisReplayStore};

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

/// A server whose `pay` tool is single-use; states are sealed inline (nothing else of
/// the flow lives in Redis).
fn server(store: RedisReplayStore, paid: Arc<AtomicUsize>) -> Server {
    Server::builder("eviction", "1")
        .state_keys(StateKeys::ephemeral())
        .replay_store(Arc::new(store))
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
        .build()
        .unwrap()
}

async fn conn(url: &str) -> harness::cluster::Raw {
    harness::cluster::Raw::open(url).await
}

async fn replay_keys(conn: &mut harness::cluster::Raw) -> usize {
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("sterna:replay:*")
        .query_async(conn)
        .await
        .unwrap();
    keys.len()
}

/// Another principal's writes (64 KiB values with a TTL) until Redis has evicted every
/// replay key (bounded: at most 4,000 writes).
async fn memory_pressure(url: &str) {
    let mut conn = conn(url).await;
    let value = vec![b'x'; 64 * 1024];
    for i in 0..4000 {
        if i % 20 == 0 && replay_keys(&mut conn).await == 0 {
            return;
        }
        let _: () = redis::cmd("SET")
            .arg(format!("other:{i}"))
            .arg(&value)
            .arg("EX")
            .arg(3600)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    panic!("Redis evicted nothing");
}

fn assert_fails_closed(r: &Value) {
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("single use cannot be guaranteed"), "{msg}");
}

#[tokio::test]
async fn an_evicting_redis_never_runs_a_single_use_state_twice() {
    let rs =
        harness::Server::start_with(&["--maxmemory", "8mb", "--maxmemory-policy", "volatile-lru"]);
    let redis = Redis::connect(&rs.url).await.unwrap();
    let paid = Arc::new(AtomicUsize::new(0));
    let a = server(redis.replay_store(), paid.clone());
    let s = state(&a).await;
    let first = call(&a, Some(&s)).await;
    memory_pressure(&rs.url).await;
    let replay = call(&a, Some(&s)).await;
    assert!(
        paid.load(Ordering::SeqCst) <= 1,
        "a consumed state ran again: first {first}, replay {replay}"
    );
    // The store cannot rule eviction out, so no single-use state runs at all.
    assert_eq!(paid.load(Ordering::SeqCst), 0, "first {first}");
    assert_fails_closed(&first);
    assert_fails_closed(&replay);
}

#[tokio::test]
async fn the_policy_is_reported_at_startup_and_checked_again() {
    let rs =
        harness::Server::start_with(&["--maxmemory", "8mb", "--maxmemory-policy", "allkeys-lru"]);
    let redis = Redis::connect(&rs.url).await.unwrap();
    let store = redis
        .replay_store()
        .recheck_every(Duration::from_millis(100));
    let err = store.check().await.unwrap_err().to_string();
    assert!(err.contains("allkeys-lru"), "{err}");
    let paid = Arc::new(AtomicUsize::new(0));
    let a = server(store, paid.clone());
    let err = a.check_single_use().await.unwrap_err().to_string();
    assert!(err.contains("maxmemory-policy"), "{err}");
    assert_fails_closed(&call(&a, Some(&state(&a).await)).await);

    // The operator fixes the policy: the next check (within 100 ms here) sees it.
    let mut c = conn(&rs.url).await;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query_async(&mut c)
        .await
        .unwrap();
    let s = state(&a).await;
    let mut ran = None;
    for _ in 0..100 {
        let r = call(&a, Some(&s)).await;
        if r.get("error").is_none() {
            ran = Some(r);
            break;
        }
        assert_fails_closed(&r);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        ran.expect("runs once the policy is safe")["content"][0]["text"],
        "paid #1"
    );
    assert_eq!(
        call(&a, Some(&s)).await["error"]["code"],
        -32602,
        "a replay is refused"
    );
    assert!(a.check_single_use().await.is_ok());
    assert_eq!(paid.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn where_config_is_refused_info_tells_the_policy() {
    let rs = harness::Server::start_with(&["--rename-command", "CONFIG", ""]);
    let redis = Redis::connect(&rs.url).await.unwrap();
    let paid = Arc::new(AtomicUsize::new(0));
    let a = server(redis.replay_store(), paid.clone());
    assert!(
        a.check_single_use().await.is_ok(),
        "noeviction, read from INFO"
    );
    let s = state(&a).await;
    assert_eq!(call(&a, Some(&s)).await["content"][0]["text"], "paid #1");
    assert_eq!(call(&a, Some(&s)).await["error"]["code"], -32602);
}

#[tokio::test]
async fn an_unreadable_policy_fails_closed_unless_the_operator_vouches_for_it() {
    // A cluster needs INFO to be created: there, a user that may not run CONFIG or INFO.
    let (_rs, url) = if harness::cluster::wanted() {
        let rs = harness::Server::start();
        let cluster = rs.cluster.as_ref().unwrap();
        let url = cluster.acl_user("app", "pw", &["~*", "&*", "+@all", "-config", "-info"]);
        (rs, url)
    } else {
        let rs = harness::Server::start_with(&[
            "--rename-command",
            "CONFIG",
            "",
            "--rename-command",
            "INFO",
            "",
        ]);
        let url = rs.url.clone();
        (rs, url)
    };
    let redis = Redis::connect(&url).await.unwrap();
    let paid = Arc::new(AtomicUsize::new(0));
    let a = server(redis.replay_store(), paid.clone());
    let err = a.check_single_use().await.unwrap_err().to_string();
    assert!(err.contains("cannot be read"), "{err}");
    assert_fails_closed(&call(&a, Some(&state(&a).await)).await);
    assert_eq!(paid.load(Ordering::SeqCst), 0);

    // The operator has set noeviction where CONFIG cannot be used (a managed Redis).
    let b = server(redis.replay_store().assume_noeviction(), paid.clone());
    assert!(b.check_single_use().await.is_ok());
    let s = state(&b).await;
    assert_eq!(call(&b, Some(&s)).await["content"][0]["text"], "paid #1");
    assert_eq!(call(&b, Some(&s)).await["error"]["code"], -32602);
}
