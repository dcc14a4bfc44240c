//! Against a real `redis-server` started on 127.0.0.1 for the test (required: the test
//! fails, never skips, when it is missing).

#![allow(missing_docs)]

#[path = "support/redis_server.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;
use sterna::server::http::SessionStore;
use sterna::server::legacy::SessionRecord;
use sterna::server::state::ReplayStore;
use sterna_redis::Redis;
pub(crate) use support::RedisServer as Server;
pub(crate) use support::cluster;

fn owner() -> sterna::server::QuotaKey {
    sterna::server::QuotaKey::of(&sterna::server::Principal::new("owner"))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn single_use_holds_across_concurrent_consumers_and_expires() {
    let server = Server::start();
    let redis = Redis::connect(&server.url).await.unwrap();
    let store = Arc::new(redis.replay_store());
    let id = [7u8; 16];
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            s.consume(id, &owner(), now() + 60).await.unwrap()
        }));
    }
    let mut wins = 0;
    for t in tasks {
        wins += usize::from(t.await.unwrap());
    }
    assert_eq!(wins, 1, "exactly one of 64 concurrent consumers wins");
    // Expiring with its state.
    let short = [8u8; 16];
    assert!(store.consume(short, &owner(), now() + 1).await.unwrap());
    assert!(!store.consume(short, &owner(), now() + 1).await.unwrap());
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(store.consume(short, &owner(), now() + 60).await.unwrap());
}

#[tokio::test]
async fn one_client_fills_its_share_of_consumed_states_never_the_store() {
    use sterna::server::state::ReplayError;
    let server = Server::start();
    let redis = Redis::connect(&server.url).await.unwrap();
    let store = redis.replay_store().per_principal(3);
    let other = sterna::server::QuotaKey::of(&sterna::server::Principal::new("other"));
    for i in 0..3u8 {
        assert!(
            store
                .consume([40 + i; 16], &owner(), now() + 60)
                .await
                .unwrap()
        );
    }
    let r = store.consume([50u8; 16], &owner(), now() + 60).await;
    assert!(
        matches!(r, Err(ReplayError::QuotaExceeded { limit: 3 })),
        "{r:?}"
    );
    // A replay is still told it is one; another client is served.
    assert!(
        !store
            .consume([41u8; 16], &owner(), now() + 60)
            .await
            .unwrap()
    );
    assert!(store.consume([50u8; 16], &other, now() + 60).await.unwrap());
}

#[tokio::test]
async fn an_outage_fails_closed_and_service_recovers() {
    let server = Server::start();
    let redis = Redis::connect(&server.url).await.unwrap();
    let store = redis.replay_store();
    let id = [9u8; 16];
    assert!(store.consume(id, &owner(), now() + 60).await.unwrap());
    server.freeze(true);
    let started = std::time::Instant::now();
    let r = store.consume([10u8; 16], &owner(), now() + 60).await;
    assert!(
        r.is_err(),
        "an unreachable store is an error, never an acceptance"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the response timeout"
    );
    let r = store.consume(id, &owner(), now() + 60).await;
    assert!(
        !matches!(r, Ok(true)),
        "a consumed state is never accepted because Redis blinked"
    );
    server.freeze(false);
    let mut back = false;
    for _ in 0..50 {
        match store.consume(id, &owner(), now() + 60).await {
            Ok(accepted) => {
                assert!(!accepted, "still consumed after the outage");
                back = true;
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert!(back, "service recovers when Redis is back");
    assert!(
        store
            .consume([11u8; 16], &owner(), now() + 60)
            .await
            .unwrap()
    );
}

fn record() -> SessionRecord {
    serde_json::from_value(serde_json::json!({
        "version": "2025-11-25", "capabilities": {"elicitation": {}},
        "client": {"name": "c", "version": "1"}, "initialized": false,
        "log_level": null, "subscriptions": [], "principal": null
    }))
    .unwrap()
}

#[tokio::test]
async fn session_records_live_expire_and_end() {
    let server = Server::start();
    let redis = Redis::connect(&server.url).await.unwrap().with_prefix("t");
    let store = redis.session_store();
    let idle = Duration::from_millis(600);
    let me = sterna::server::QuotaKey::of(&sterna::server::Principal::new("me"));
    store.create("s1", &me, record(), idle).await.unwrap();
    let mut r = SessionRecord::clone(&store.touch("s1", &me, idle).await.unwrap().unwrap());
    assert!(!r.initialized);
    r.initialized = true;
    store.update("s1", r, idle).await.unwrap();
    assert!(
        store
            .touch("s1", &me, idle)
            .await
            .unwrap()
            .unwrap()
            .initialized
    );
    assert!(store.touch("nope", &me, idle).await.unwrap().is_none());
    // Each use refreshes the idle time; unused, it expires.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(store.touch("s1", &me, idle).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(store.touch("s1", &me, idle).await.unwrap().is_none());
    store.create("s2", &me, record(), idle).await.unwrap();
    assert!(store.remove("s2", &me).await.unwrap());
    assert!(!store.remove("s2", &me).await.unwrap());
}

/// `ACL SETUSER` on the server (every node of a cluster): the URL as that user.
#[cfg(test)]
fn acl_user(server: &Server, user: &str, rules: &[&str]) -> String {
    if let Some(cluster) = &server.cluster {
        return cluster.acl_user(user, "pw", rules);
    }
    let port = server.url.rsplit(':').next().unwrap().trim_end_matches('/');
    let mut args = vec!["acl", "setuser", user, "on", ">pw"];
    args.extend_from_slice(rules);
    assert_eq!(cluster::cli(port.parse().unwrap(), &args).trim(), "OK");
    server
        .url
        .replacen("redis://", &format!("redis://{user}:pw@"), 1)
}

#[tokio::test]
async fn the_settings_check_names_missing_commands_and_warns_of_no_persistence() {
    let server = Server::start();
    let redis = Redis::connect(&server.url).await.unwrap();
    // The test servers run without persistence.
    let warnings = redis.check_settings().await.unwrap();
    assert!(
        warnings.iter().any(|w| w.contains("appendonly yes")),
        "{warnings:?}"
    );
    // The documented command list is enough.
    let enough = acl_user(
        &server,
        "fleet",
        &[
            "~sterna:*",
            "&sterna:*",
            "+@connection",
            "+get",
            "+set",
            "+getex",
            "+del",
            "+exists",
            "+pexpire",
            "+pttl",
            "+hget",
            "+hmget",
            "+hset",
            "+zadd",
            "+zrem",
            "+zscore",
            "+zcard",
            "+zremrangebyscore",
            "+xadd",
            "+xrange",
            "+eval",
            "+time",
            "+publish",
            "+subscribe",
            "+spublish",
            "+ssubscribe",
            "+wait",
            "+cluster|slots",
            "+cluster|shards",
            "+config|get",
            "+info",
        ],
    );
    let redis = Redis::connect(&enough).await.unwrap();
    let warnings = redis.check_settings().await.unwrap();
    assert!(warnings.iter().all(|w| !w.contains("WAIT")), "{warnings:?}");
    // Without XADD (streams) and ZADD (run inside the scripts): refused, both named.
    let short = acl_user(
        &server,
        "short",
        &["~sterna:*", "&sterna:*", "+@all", "-xadd", "-zadd"],
    );
    let redis = Redis::connect(&short).await.unwrap();
    let err = redis.check_settings().await.unwrap_err().to_string();
    assert!(err.contains("XADD") && err.contains("ZADD"), "{err}");
}
