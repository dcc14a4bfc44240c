//! 2025-11-25 stream events across the fleet: one Redis stream per session
//! (`{prefix}:events:{session}`), an entry per event (`s` the stream, `q` its position,
//! `d` the message, `w` the writing replica, `r` the request, `e` on the last one),
//! trimmed to the session's bound on every `XADD` (`MAXLEN`) and expiring a resume window
//! after its last write. A reader resumes with `XRANGE` after the client's event, then
//! after the last entry it read.
//!
//! Each replica that writes refreshes `{prefix}:alive:{writer}` every second (it expires
//! after 5 s): a reader waiting on a stream whose writer's key is gone knows the writer
//! died and ends the stream. A client reading elsewhere is marked in
//! `{prefix}:reading:{session}:{stream}`.

use super::Redis;
use futures_util::future::BoxFuture;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;
use sterna::server::http::{
    StreamAppend, StreamEvent, StreamPage, StreamRead, StreamStore, StreamStoreError,
};

/// How often a writer says it is alive, and how long that lasts.
const BEAT: Duration = Duration::from_secs(1);
const ALIVE_MS: u64 = 5_000;
/// Entries read at a time.
const BATCH: usize = 256;

/// A [`StreamStore`] in Redis (see the module documentation for the layout).
#[derive(Debug, Clone)]
pub struct RedisStreamStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    redis: Redis,
    /// This replica's writer id.
    writer: String,
    beating: OnceLock<()>,
}

fn unavailable(e: redis::RedisError) -> StreamStoreError {
    StreamStoreError::Unavailable(Box::new(e))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStreamStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self {
            inner: Arc::new(Inner {
                writer: writer_id(),
                redis,
                beating: OnceLock::new(),
            }),
        }
    }

    /// Says this writer is alive (awaited the first time), then every second while the
    /// store exists.
    async fn beat(&self) -> Result<(), StreamStoreError> {
        if self.inner.beating.get().is_some() {
            return Ok(());
        }
        alive(&self.inner).await.map_err(unavailable)?;
        if self.inner.beating.set(()).is_ok() {
            let weak = Arc::downgrade(&self.inner);
            tokio::spawn(beat_while_alive(weak));
        }
        Ok(())
    }

    async fn append_now(&self, w: StreamAppend<'_>) -> Result<(), StreamStoreError> {
        self.beat().await?;
        let i = &self.inner;
        let key = i.redis.key("events", w.session);
        let marker = [StreamEvent {
            seq: 0,
            data: Default::default(),
        }];
        let events = if w.events.is_empty() {
            &marker[..]
        } else {
            w.events
        };
        let mut pipe = redis::pipe();
        for (n, e) in events.iter().enumerate() {
            let cmd = pipe
                .cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg(w.max_events.max(1))
                .arg("*")
                .arg("s")
                .arg(w.stream)
                .arg("q")
                .arg(e.seq)
                .arg("d")
                .arg(e.data.as_ref())
                .arg("w")
                .arg(&i.writer)
                .arg("r")
                .arg(w.request);
            if w.ended && n + 1 == events.len() {
                cmd.arg("e").arg(1);
            }
            cmd.ignore();
        }
        pipe.cmd("PEXPIRE").arg(&key).arg(millis(w.keep)).ignore();
        let mut conn = i.redis.conn.clone();
        pipe.query_async::<()>(&mut conn).await.map_err(unavailable)
    }

    async fn read_now(&self, r: StreamRead<'_>) -> Result<StreamPage, StreamStoreError> {
        let i = &self.inner;
        let key = i.redis.key("events", r.session);
        // The position is `<entry id>/<writer>` (the writer last seen on the stream).
        let (mut from, mut writer) = match r.position.and_then(|p| p.split_once('/')) {
            Some((id, w)) => (format!("({id}"), Some(w.to_owned())),
            None => ("-".to_owned(), None),
        };
        let mut page = StreamPage::default();
        page.known = r.position.is_some();
        let mut conn = i.redis.conn.clone();
        loop {
            let entries: Vec<(String, Vec<Vec<u8>>)> = redis::cmd("XRANGE")
                .arg(&key)
                .arg(&from)
                .arg("+")
                .arg("COUNT")
                .arg(BATCH)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            let full = entries.len() == BATCH;
            for (id, fields) in entries {
                from = format!("({id}");
                page.position = Some(id.clone());
                let Some(e) = Entry::parse(&fields).filter(|e| e.stream == r.stream) else {
                    continue;
                };
                page.known = true;
                page.request = Some(e.request);
                writer = Some(e.writer);
                if e.seq > r.after && !e.data.is_empty() {
                    page.events.push(StreamEvent {
                        seq: e.seq,
                        data: e.data.into(),
                    });
                }
                if e.ended {
                    page.ended = true;
                    break;
                }
                if page.events.len() >= r.max {
                    break;
                }
            }
            if !full || page.ended || page.events.len() >= r.max {
                break;
            }
        }
        let writer = writer.unwrap_or_default();
        page.position = page
            .position
            .take()
            .or_else(|| {
                r.position
                    .and_then(|p| p.split_once('/'))
                    .map(|p| p.0.to_owned())
            })
            .map(|id| format!("{id}/{writer}"));
        if page.known && page.events.is_empty() && !page.ended && !writer.is_empty() {
            let alive: bool = redis::cmd("EXISTS")
                .arg(i.redis.key("alive", &writer))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            page.abandoned = !alive;
        }
        Ok(page)
    }
}

/// One entry of a session's log.
struct Entry {
    stream: u64,
    seq: u64,
    data: Vec<u8>,
    writer: String,
    request: String,
    ended: bool,
}

impl Entry {
    /// From the flat field list `XRANGE` returns; `None` when a field is missing.
    fn parse(fields: &[Vec<u8>]) -> Option<Self> {
        let text = |v: &[u8]| String::from_utf8(v.to_vec()).ok();
        let mut e = Entry {
            stream: 0,
            seq: 0,
            data: Vec::new(),
            writer: String::new(),
            request: String::new(),
            ended: false,
        };
        let mut pairs = fields.chunks_exact(2);
        for pair in &mut pairs {
            let value = &pair[1];
            match pair[0].as_slice() {
                b"s" => e.stream = text(value)?.parse().ok()?,
                b"q" => e.seq = text(value)?.parse().ok()?,
                b"d" => e.data = value.clone(),
                b"w" => e.writer = text(value)?,
                b"r" => e.request = text(value)?,
                b"e" => e.ended = true,
                _ => {}
            }
        }
        Some(e)
    }
}

/// A random id for this replica's writer.
fn writer_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

async fn alive(inner: &Inner) -> Result<(), redis::RedisError> {
    let mut conn = inner.redis.conn.clone();
    redis::cmd("SET")
        .arg(inner.redis.key("alive", &inner.writer))
        .arg(1)
        .arg("PX")
        .arg(ALIVE_MS)
        .query_async::<()>(&mut conn)
        .await
}

async fn beat_while_alive(inner: Weak<Inner>) {
    loop {
        tokio::time::sleep(BEAT).await;
        let Some(inner) = inner.upgrade() else { return };
        if let Err(e) = alive(&inner).await {
            tracing::warn!(error = %e, "could not tell the fleet this replica is alive");
        }
    }
}

impl StreamStore for RedisStreamStore {
    fn append<'a>(
        &'a self,
        write: StreamAppend<'a>,
    ) -> BoxFuture<'a, Result<(), StreamStoreError>> {
        Box::pin(self.append_now(write))
    }

    fn read<'a>(
        &'a self,
        read: StreamRead<'a>,
    ) -> BoxFuture<'a, Result<StreamPage, StreamStoreError>> {
        Box::pin(self.read_now(read))
    }

    fn reading<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        within: Duration,
    ) -> BoxFuture<'a, Result<(), StreamStoreError>> {
        let key = self
            .inner
            .redis
            .key("reading", &format!("{session}:{stream}"));
        let mut conn = self.inner.redis.conn.clone();
        Box::pin(async move {
            redis::cmd("SET")
                .arg(key)
                .arg(1)
                .arg("PX")
                .arg(millis(within))
                .query_async::<()>(&mut conn)
                .await
                .map_err(unavailable)
        })
    }

    fn is_read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<bool, StreamStoreError>> {
        let key = self
            .inner
            .redis
            .key("reading", &format!("{session}:{stream}"));
        let mut conn = self.inner.redis.conn.clone();
        Box::pin(async move {
            redis::cmd("EXISTS")
                .arg(key)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)
        })
    }
}
