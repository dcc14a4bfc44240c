//! A 2025-11-25 session: opened by `initialize`, renewed when the server forgets it (a
//! 404 on a request that carried its id), ended by DELETE (HTTP).

use super::handshake::{Hello, accept, initialized};
use super::wire::Wire;
use super::wire_error::WireError;
use crate::envelope::{PlainMessage, read_answer};
use crate::era::Era;
use crate::error::{ClientError, ProtocolViolation, TransportError};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use sterna_types::discover::DiscoverResult;
use sterna_types::jsonrpc::RequestId;
use sterna_types::legacy::InitializeResult;
use sterna_types::meta::ResultMeta;
use sterna_types::result::{CacheScope, ResultType};

/// An open 2025-11-25 session.
pub(crate) struct Session {
    wire: Wire,
    hello: Hello,
    ids: Arc<AtomicI64>,
    init: RwLock<InitializeResult>,
    /// Bumped by each `initialize`, so concurrent calls that all find the session gone
    /// open one new session, not one each.
    generation: AtomicU64,
    renewing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("wire", &self.wire)
            .field("version", &self.era().version())
            .finish()
    }
}

fn wire_error(e: WireError) -> ClientError {
    match e {
        WireError::SessionGone => ClientError::Transport(TransportError::Http {
            status: 404,
            body: "the session is gone".into(),
        }),
        WireError::Transport(t) => ClientError::Transport(t),
    }
}

impl Session {
    /// Opens a session: `initialize`, `notifications/initialized`, then (HTTP) the GET
    /// stream.
    pub(crate) async fn open(
        wire: Wire,
        hello: Hello,
        ids: Arc<AtomicI64>,
    ) -> Result<Self, ClientError> {
        let init = handshake(&wire, &hello, &ids).await?;
        Ok(Self {
            wire,
            hello,
            ids,
            init: RwLock::new(init),
            generation: AtomicU64::new(0),
            renewing: tokio::sync::Mutex::new(()),
        })
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.ids.fetch_add(1, Ordering::Relaxed))
    }

    /// The era and the negotiated revision.
    pub(crate) fn era(&self) -> Era {
        let init = self.init.read().unwrap_or_else(|p| p.into_inner());
        Era::Legacy {
            version: init.protocol_version.clone(),
        }
    }

    /// What `initialize` told, in the shape of a `server/discover` result.
    pub(crate) fn discover(&self) -> DiscoverResult {
        let init = self.init.read().unwrap_or_else(|p| p.into_inner()).clone();
        DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: vec![init.protocol_version],
            capabilities: init.capabilities,
            instructions: init.instructions,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
            meta: Some(ResultMeta {
                server_info: Some(init.server_info.into()),
                ..ResultMeta::default()
            }),
        }
    }

    /// Sends a request and returns its result. `sent` learns each id the request goes out
    /// with (a renewed session re-sends it with a new one).
    pub(crate) async fn request(
        &self,
        method: &str,
        params: &Map<String, Value>,
        sent: &(dyn Fn(&RequestId) + Send + Sync),
    ) -> Result<Box<RawValue>, ClientError> {
        let mut renewed = false;
        loop {
            let generation = self.generation.load(Ordering::Acquire);
            let id = self.next_id();
            sent(&id);
            let body = PlainMessage::bytes(&id, method, params);
            match self.wire.call(&id, method, body).await {
                Ok(bytes) => return read_answer(method, &id, &bytes).map_err(Into::into),
                Err(WireError::SessionGone) if !renewed => {
                    renewed = true;
                    self.renew(generation).await?;
                }
                Err(e) => return Err(wire_error(e)),
            }
        }
    }

    /// Opens a new session after the server forgot the one of `generation` (unless a
    /// concurrent call already did).
    async fn renew(&self, generation: u64) -> Result<(), ClientError> {
        let _one_at_a_time = self.renewing.lock().await;
        if self.generation.load(Ordering::Acquire) != generation {
            return Ok(());
        }
        tracing::info!("the server ended the 2025-11-25 session (404); initializing a new one");
        let init = handshake(&self.wire, &self.hello, &self.ids).await?;
        *self.init.write().unwrap_or_else(|p| p.into_inner()) = init;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Ends the session (HTTP: DELETE; a 405 is fine).
    pub(crate) async fn close(&self) {
        self.wire.terminate().await;
    }
}

async fn handshake(
    wire: &Wire,
    hello: &Hello,
    ids: &AtomicI64,
) -> Result<InitializeResult, ClientError> {
    wire.reset();
    let id = RequestId::Number(ids.fetch_add(1, Ordering::Relaxed));
    let bytes = wire
        .call(&id, "initialize", hello.request(&id))
        .await
        .map_err(wire_error)?;
    let raw = read_answer("initialize", &id, &bytes)?;
    let result =
        serde_json::from_str(raw.get()).map_err(|source| ProtocolViolation::Malformed {
            method: "initialize".into(),
            source,
        })?;
    let init = accept(result)?;
    tracing::debug!(version = %init.protocol_version, server = %init.server_info.name, "2025-11-25 session open");
    wire.opened(&init.protocol_version);
    wire.notify(initialized()).await.map_err(wire_error)?;
    wire.ready().await;
    Ok(init)
}
