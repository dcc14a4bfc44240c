//! Redis pub/sub between the replicas of a fleet: list and resource changes reach every
//! replica's `subscriptions/listen` streams (and 2025 GET streams), and what a 2025-11-25
//! client sends to one replica for a request running on another (the answer to a pushed
//! question, a cancellation, the end of its session) reaches that replica.

use super::Redis;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use sterna::Server;
use sterna::http::{McpService, SessionBus, SessionEvent};
use sterna::server::Change;
use tokio::task::JoinHandle;

/// What travels on the channel.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The replica that published it (it ignores its own).
    origin: String,
    #[serde(flatten)]
    body: Body,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Body {
    Change(Change),
    Session(SessionEvent),
}

/// The fleet's message bus on Redis pub/sub (channel `{prefix}:bus`).
#[derive(Debug)]
pub struct RedisBus {
    redis: Redis,
    origin: String,
    channel: String,
}

impl RedisBus {
    /// A bus on `redis`; this replica gets a random origin id.
    pub fn new(redis: &Redis) -> Arc<Self> {
        let origin = format!("{:016x}", rand_u64());
        Arc::new(Self {
            channel: redis.key("bus", "all"),
            redis: redis.clone(),
            origin,
        })
    }

    /// Publishes `server`'s changes to the fleet, and starts receiving: the fleet's
    /// changes are announced on `server`, session events handed to `service`. The task
    /// reconnects when Redis goes away.
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
                if let Err(e) = bus.receive(&changes, service.as_ref()).await {
                    tracing::warn!(error = %e, "the Redis bus is down; reconnecting");
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })
    }

    async fn send(&self, body: Body) {
        let envelope = Envelope {
            origin: self.origin.clone(),
            body,
        };
        let Ok(json) = serde_json::to_string(&envelope) else {
            return;
        };
        let mut conn = self.redis.conn.clone();
        let sent: Result<i64, _> = redis::cmd("PUBLISH")
            .arg(&self.channel)
            .arg(json)
            .query_async(&mut conn)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, "could not publish to the fleet");
        }
    }

    async fn receive(
        &self,
        changes: &sterna::server::Changes,
        service: Option<&McpService>,
    ) -> Result<(), redis::RedisError> {
        let mut pubsub = self.redis.client.get_async_pubsub().await?;
        pubsub.subscribe(&self.channel).await?;
        let mut messages = pubsub.on_message();
        while let Some(msg) = messages.next().await {
            let Ok(payload) = msg.get_payload::<String>() else {
                continue;
            };
            let Ok(envelope) = serde_json::from_str::<Envelope>(&payload) else {
                tracing::warn!("an unreadable message on the fleet bus");
                continue;
            };
            if envelope.origin == self.origin {
                continue;
            }
            match (envelope.body, service) {
                (Body::Change(c), _) => changes.announce_local(c),
                (Body::Session(e), Some(s)) => s.deliver(e),
                (Body::Session(_), None) => {}
            }
        }
        Ok(())
    }
}

impl SessionBus for RedisBus {
    fn publish(&self, event: SessionEvent) -> BoxFuture<'_, ()> {
        Box::pin(self.send(Body::Session(event)))
    }
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
