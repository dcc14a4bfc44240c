//! What a [`Server`] can do: every public method in one place — build one, describe it,
//! and hand it messages (the pipeline: classify, prepare, run).

use super::builder::{NeedsKeys, ServerBuilder};
use super::changes::Changes;
use super::context::RequestEnv;
use super::core::Server;
use super::inbound::{Body, Inbound, classify};
use super::prepare::Prepared;
use super::response::Response;
use serde_json::value::RawValue;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::Implementation;
use sterna_types::mirror::ParamKind;

impl Server {
    /// Starts building a server called `name` (also the audience its states are bound
    /// to) at `version`.
    pub fn builder(
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> ServerBuilder<NeedsKeys> {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// The server's self-description.
    pub fn info(&self) -> &Implementation {
        self.shared_info()
    }

    /// The handle that announces list and resource changes to `subscriptions/listen`
    /// streams.
    pub fn changes(&self) -> &Changes {
        self.change_handle()
    }

    /// Ends every open `subscriptions/listen` stream gracefully (each gets its closing
    /// result). Called by the HTTP server's graceful shutdown.
    pub fn close_subscriptions(&self) {
        self.closing().cancel();
    }

    /// The `Mcp-Param-*` headers a tool's arguments are mirrored into
    /// (`x-mcp-header` annotations): `(header name, argument path, type)`; `None` for an
    /// unknown tool or one without annotations.
    pub fn tool_header_params(
        &self,
        tool: &str,
    ) -> Option<impl Iterator<Item = (&str, &[String], ParamKind)>> {
        let mirrored = self.routes().mirrored;
        let t = mirrored.then(|| self.tool(tool)).flatten();
        let t = t.filter(|t| !t.headers.is_empty());
        t.map(|t| {
            t.headers
                .iter()
                .map(|h| (h.name.as_str(), h.path.as_slice(), h.kind))
        })
    }

    /// The protocol revisions served per request (2026-07-28 and later). The legacy
    /// revisions of [`sterna_types::legacy::LEGACY_VERSIONS`] are served through
    /// `initialize`.
    pub fn supported_versions(&self) -> &'static [&'static str] {
        sterna_types::version::MODERN_VERSIONS
    }

    /// Whether this server's single-use tools are protected: `Ok` when it has no replay
    /// store, or its store can keep every consumed state until it expires (see
    /// [`ReplayStore::check`](crate::state::ReplayStore::check)). Otherwise every
    /// single-use call is refused with `-32603` until the store is fixed; this logs an
    /// error saying why. `HttpServer` calls it when it starts serving.
    pub async fn check_single_use(&self) -> Result<(), crate::state::ReplayError> {
        let Some(store) = &self.state().replay else {
            return Ok(());
        };
        let checked = store.check().await;
        if let Err(e) = &checked {
            tracing::error!(error = %e, "single-use tools will be refused until this is fixed");
        }
        checked
    }

    /// Handles one message given as bytes (a line of stdio, a POST body). Returns the
    /// response to send, if any: notifications and cancelled requests get none.
    pub async fn handle_message(&self, bytes: &[u8], env: RequestEnv) -> Option<Response> {
        match classify(bytes) {
            Inbound::Malformed(m) => Some(Response::error(m.id, m.error)),
            Inbound::Request { id, method, params } => {
                match Prepared::read(self, id, &method, params) {
                    Ok(prepared) => prepared.run(self, env).await,
                    Err(refused) => Some(refused),
                }
            }
            Inbound::Notification { method, .. } => {
                tracing::debug!(%method, "notification ignored");
                None
            }
            Inbound::Response { id, .. } => {
                tracing::warn!(
                    ?id,
                    "a response arrived but this server never sends requests"
                );
                None
            }
        }
    }

    /// Handles one request. `None` when it was cancelled (nothing may be sent then).
    pub async fn handle(
        &self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        match Prepared::read(self, id, method, Body::Raw(params)) {
            Ok(prepared) => prepared.run(self, env).await,
            Err(refused) => Some(refused),
        }
    }
}
