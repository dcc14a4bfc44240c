//! Redis pub/sub between the replicas of a fleet: list and resource changes reach every
//! replica's `subscriptions/listen` streams (and 2025 GET streams), and what a 2025-11-25
//! client sends to one replica for a request running on another (the answer to a pushed
//! question, a cancellation, the end of its session) reaches that replica.
//!
//! An answer is published only for a push that waits for one: the replica that sends a
//! push records its id in `{prefix}:pushes:{session}` (a sorted set scored by when the
//! push stops waiting), and a script publishes an answer only when its id is there,
//! removing it (so each answer goes out at most once). Answers a client invents are
//! dropped in Redis before they reach any subscriber.
//!
//! On a Redis Cluster the channel is a sharded one (`SPUBLISH`/`SSUBSCRIBE`, Redis 7):
//! its messages stay on the shard that owns the channel's slot instead of crossing the
//! whole cluster. The subscription follows that slot: when the connection to a node drops
//! (its primary failed) or Redis ends the subscription (`sunsubscribe`: the slot moved),
//! the bus subscribes again, on the slot's owner by then. An answer is claimed by a
//! script on its push's key (at most once, as above) and then published.

use super::{Redis, Target};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use sterna::server::Change;
use sterna::server::Server;
use sterna::server::http::{McpService, SessionBus, SessionEvent};
use sterna::types::jsonrpc::RequestId;
use tokio::task::JoinHandle;

/// Records a push that waits: KEYS[1] the session's pushes; ARGV: push id, ms it waits.
const EXPECT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1";

/// Takes push ARGV[1] out of the session's waiting pushes (KEYS[1]); returns 0 from the
/// script when it was not there or had expired.
macro_rules! claim_lua {
    () => {
        r"
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(expiry) < now then return 0 end
"
    };
}

/// Publishes an answer when its push waits, once: KEYS[1] the session's pushes; ARGV:
/// push id, channel, message.
const ANSWER: &str = concat!(
    claim_lua!(),
    "redis.call('PUBLISH', ARGV[2], ARGV[3])\nreturn 1"
);

/// Claims an answer when its push waits, once (a cluster: the answer is published after,
/// on the bus's shard): KEYS[1] the session's pushes; ARGV: push id.
const CLAIM: &str = concat!(claim_lua!(), "return 1");

/// How often the subscription is pinged (a connection that died silently is noticed).
const PING_EVERY: Duration = Duration::from_secs(10);

/// What travels on the channel.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The replica that published it (it ignores its own).
    origin: String,
    /// When it was published (Unix ms; 0 from replicas that predate it): the lag.
    #[serde(default)]
    sent_ms: u64,
    #[serde(flatten)]
    body: Body,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Body {
    Change(Change),
    Session(SessionEvent),
}

/// The fleet's message bus on Redis pub/sub (channel `{prefix}:bus:all`; sharded on a
/// cluster).
#[derive(Debug)]
pub struct RedisBus {
    redis: Redis,
    origin: String,
    channel: String,
    /// How many times the subscription was established (1 + resubscriptions).
    subscribed: AtomicU64,
}

impl RedisBus {
    /// A bus on `redis`; this replica gets a random origin id.
    pub fn new(redis: &Redis) -> Arc<Self> {
        let origin = format!("{:016x}", rand_u64());
        Arc::new(Self {
            channel: redis.key("bus", "all"),
            redis: redis.clone(),
            origin,
            subscribed: AtomicU64::new(0),
        })
    }

    /// How many times the subscription was lost and established again (a Redis restart,
    /// a dropped connection, Redis closing a subscriber that fell behind its output
    /// buffer limit). Each one is logged at `error` level: what was published while it
    /// was down is lost.
    pub fn resubscriptions(&self) -> u64 {
        self.subscribed.load(Ordering::Relaxed).saturating_sub(1)
    }

    /// Publishes `server`'s changes to the fleet, and starts receiving: the fleet's
    /// changes are announced on `server`, session events handed to `service`. The task
    /// subscribes again at once when the subscription ends, and keeps trying (every
    /// 500 ms) while Redis is away.
    pub fn attach(
        self: &Arc<Self>,
        server: &Server,
        service: Option<McpService>,
    ) -> JoinHandle<()> {
        let bus = self.clone();
        server.changes().forward_with(move |change| {
            let bus = bus.clone();
            let body = Body::Change(change.clone());
            tokio::spawn(async move { bus.send(body).await });
        });
        let bus = self.clone();
        let changes = server.changes().clone();
        tokio::spawn(async move {
            loop {
                match bus.receive(&changes, service.as_ref()).await {
                    Ok(()) => {
                        tracing::error!(
                        channel = %bus.channel,
                        "the Redis bus subscription was dropped (connection closed: Redis restarted, or closed a subscriber over its pub/sub output buffer limit); subscribing again. Answers and changes published meanwhile are lost"
                        );
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, channel = %bus.channel, "the Redis bus is down; subscribing again");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                }
            }
        })
    }

    async fn send(&self, body: Body) -> bool {
        let Some(json) = self.envelope(body) else {
            return false;
        };
        match self.publish_raw(json).await {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(error = %e, "could not publish to the fleet");
                false
            }
        }
    }

    /// `PUBLISH`, or `SPUBLISH` on a cluster.
    async fn publish_raw(&self, json: String) -> Result<i64, redis::RedisError> {
        let publish = if self.redis.is_cluster() {
            "SPUBLISH"
        } else {
            "PUBLISH"
        };
        let mut conn = self.redis.conn.clone();
        redis::cmd(publish)
            .arg(&self.channel)
            .arg(json)
            .query_async(&mut conn)
            .await
    }

    fn envelope(&self, body: Body) -> Option<String> {
        let envelope = Envelope {
            origin: self.origin.clone(),
            sent_ms: now_ms(),
            body,
        };
        serde_json::to_string(&envelope).ok()
    }

    /// The answer, published by the script only when its push waits.
    async fn send_answer(&self, session: &str, push: &RequestId, event: SessionEvent) -> bool {
        let (Some(json), Ok(member)) = (
            self.envelope(Body::Session(event)),
            serde_json::to_string(push),
        ) else {
            return false;
        };
        let mut conn = self.redis.conn.clone();
        let sent: Result<i64, _> = if self.redis.is_cluster() {
            // The push's key and the channel are in two slots: claim, then publish.
            let claimed: Result<i64, _> = redis::cmd("EVAL")
                .arg(CLAIM)
                .arg(1)
                .arg(self.pushes_key(session))
                .arg(member)
                .query_async(&mut conn)
                .await;
            match claimed {
                Ok(1) => self.publish_raw(json).await.map(|_| 1),
                other => other,
            }
        } else {
            redis::cmd("EVAL")
                .arg(ANSWER)
                .arg(1)
                .arg(self.pushes_key(session))
                .arg(member)
                .arg(&self.channel)
                .arg(json)
                .query_async(&mut conn)
                .await
        };
        match sent {
            Ok(n) => n == 1,
            Err(e) => {
                tracing::warn!(error = %e, "could not publish an answer to the fleet");
                false
            }
        }
    }

    fn pushes_key(&self, session: &str) -> String {
        self.redis.key("pushes", session)
    }

    /// Subscribes and hands on what arrives until the subscription ends (`Ok`) or fails.
    async fn receive(
        &self,
        changes: &sterna::server::Changes,
        service: Option<&McpService>,
    ) -> Result<(), redis::RedisError> {
        let client = match &self.redis.target {
            Target::Single(client) => client,
            Target::Cluster(nodes, root_ca) => {
                return self
                    .receive_sharded(nodes, root_ca.as_deref(), changes, service)
                    .await;
            }
        };
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(&self.channel).await?;
        if self.subscribed.fetch_add(1, Ordering::Relaxed) > 0 {
            tracing::warn!(channel = %self.channel, "subscribed to the Redis bus again");
        }
        let (mut sink, mut messages) = pubsub.split();
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                msg = messages.next() => match msg {
                    Some(msg) => {
                        if let Ok(payload) = msg.get_payload::<Vec<u8>>() {
                            self.hand_on(&payload, changes, service);
                        }
                    }
                    None => return Ok(()),
                },
                _ = ping.tick() => {
                    match tokio::time::timeout(PING_EVERY / 2, sink.ping::<String>()).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) => return Err(e),
                        Err(_) => return Ok(()),
                    }
                }
            }
        }
    }

    /// Subscribes to the sharded channel on a cluster (the primary of its slot) and hands
    /// on what arrives until the subscription ends (`Ok`: the primary's connection
    /// dropped, the slot moved, a ping went unanswered) or fails.
    async fn receive_sharded(
        &self,
        nodes: &[String],
        root_ca: Option<&[u8]>,
        changes: &sterna::server::Changes,
        service: Option<&McpService>,
    ) -> Result<(), redis::RedisError> {
        let (tx, mut pushes) = tokio::sync::mpsc::unbounded_channel();
        let mut conn = super::cluster_client(nodes, Some(tx), root_ca)?
            .get_async_connection()
            .await?;
        conn.ssubscribe(&self.channel).await?;
        if self.subscribed.fetch_add(1, Ordering::Relaxed) > 0 {
            tracing::warn!(channel = %self.channel, "subscribed to the Redis bus again");
        }
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                push = pushes.recv() => {
                    let Some(push) = push else { return Ok(()) };
                    match push.kind {
                        redis::PushKind::SMessage => {
                            if let Some(redis::Value::BulkString(payload)) = push.data.get(1) {
                                self.hand_on(payload, changes, service);
                            }
                        }
                        redis::PushKind::Disconnection | redis::PushKind::SUnsubscribe => {
                            return Ok(());
                        }
                        _ => {}
                    }
                },
                _ = ping.tick() => {
                    // A command on the channel's slot: the owner's connection is alive.
                    let exists = redis::cmd("EXISTS").arg(&self.channel).to_owned();
                    match tokio::time::timeout(PING_EVERY / 2, exists.query_async::<i64>(&mut conn)).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) => return Err(e),
                        Err(_) => return Ok(()),
                    }
                }
            }
        }
    }

    fn hand_on(
        &self,
        payload: &[u8],
        changes: &sterna::server::Changes,
        service: Option<&McpService>,
    ) {
        let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
            tracing::warn!("an unreadable message on the fleet bus");
            return;
        };
        if envelope.origin == self.origin {
            return;
        }
        if envelope.sent_ms > 0 {
            let lag = now_ms().saturating_sub(envelope.sent_ms);
            sterna::server::metrics::bus_lag(Duration::from_millis(lag));
        }
        match (envelope.body, service) {
            (Body::Change(c), _) => changes.announce_local(c),
            (Body::Session(e), Some(s)) => s.deliver(e),
            (Body::Session(_), None) => {}
        }
    }
}

impl SessionBus for RedisBus {
    fn publish(&self, event: SessionEvent) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            match &event {
                SessionEvent::Answer { session, id, .. } => {
                    let (session, id) = (session.clone(), id.clone());
                    self.send_answer(&session, &id, event).await
                }
                _ => self.send(Body::Session(event)).await,
            }
        })
    }

    fn expect<'a>(
        &'a self,
        session: &'a str,
        push: &'a RequestId,
        within: Duration,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Ok(member) = serde_json::to_string(push) else {
                return;
            };
            let ttl = u64::try_from(within.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut conn = self.redis.conn.clone();
            let recorded: Result<i64, _> = redis::cmd("EVAL")
                .arg(EXPECT)
                .arg(1)
                .arg(self.pushes_key(session))
                .arg(member)
                .arg(ttl)
                .query_async(&mut conn)
                .await;
            if let Err(e) = recorded {
                tracing::warn!(error = %e, "could not record a push for the fleet: an answer posted to another replica will be dropped");
            }
        })
    }

    fn settle<'a>(&'a self, session: &'a str, push: &'a RequestId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Ok(member) = serde_json::to_string(push) else {
                return;
            };
            let mut conn = self.redis.conn.clone();
            let removed: Result<i64, _> = redis::cmd("ZREM")
                .arg(self.pushes_key(session))
                .arg(member)
                .query_async(&mut conn)
                .await;
            if let Err(e) = removed {
                tracing::debug!(error = %e, "could not forget a push");
            }
        })
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    #[test]
    fn an_answer_survives_the_trip_through_the_channel() {
        let raw = RawValue::from_string(r#"{"action":"accept","content":{"region":"eu"}}"#.into())
            .unwrap();
        let event = SessionEvent::Answer {
            session: "s".into(),
            id: sterna::types::jsonrpc::RequestId::from("p-1"),
            outcome: Ok(raw),
        };
        let json = serde_json::to_string(&Envelope {
            origin: "a".into(),
            sent_ms: 1,
            body: Body::Session(event),
        })
        .unwrap();
        let back: Envelope = serde_json::from_str(&json).expect(&json);
        let Body::Session(SessionEvent::Answer { outcome, .. }) = back.body else {
            panic!("not an answer: {json}");
        };
        assert_eq!(
            outcome.unwrap().get(),
            r#"{"action":"accept","content":{"region":"eu"}}"#
        );
    }
}
