//! The first step of serving a request: read `_meta` and the params. A transport checks
//! what it must between this step and [`Prepared::run`](super::dispatch) (HTTP compares
//! its headers with [`Prepared::meta`] and [`Prepared::name_and_arguments`], and checks
//! the caller's scopes against [`Prepared::target`]); nothing calls back.
//!
//! **The era seam.** Everything that reaches `prepare` is a 2026-07-28 request: it carries
//! its own `_meta` (version, capabilities), and a request without one is refused here
//! (`-32602`). A 2025-11-25 client instead opens a session with `initialize`; its
//! requests are answered by the legacy path, which supplies the session's negotiated
//! version and capabilities in place of `_meta`.

use super::core::Server;
use super::inbound::Body;
use super::request::{Params, REMOVED, invalid};
use super::response::Response;
use super::target::Target;
use super::wing::Era;
use serde_json::value::RawValue;
use std::sync::Arc;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;

/// A request whose `_meta` was read, ready to [`run`](Prepared::run).
pub(crate) struct Prepared<'a> {
    pub(crate) id: RequestId,
    pub(crate) method: &'a str,
    /// Shared with the round, the handler's context and the spans (decoded once).
    pub(crate) meta: Arc<RequestMeta>,
    /// The decoded params, or why they could not be decoded (reported after the
    /// envelope checks, so those errors come first).
    pub(crate) params: Result<Params<'a>, ErrorObject>,
    /// The raw params, for methods that read them later (`subscriptions/listen`, the
    /// methods of wings).
    pub(crate) raw: Option<&'a RawValue>,
}

impl<'a> Prepared<'a> {
    #[cfg(feature = "http")]
    /// The request's `_meta`.
    pub(crate) fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// What the request acts on, from the params the method will run with (a targeted
    /// method whose params cannot be read has no target here, and never runs: the route
    /// stage answers it `-32602`).
    pub(crate) fn target(&self) -> Target<'_> {
        Target::of(self.method, self.name_and_arguments().0)
    }

    /// The tool or prompt name or resource URI, and the tool arguments (for header checks).
    pub(crate) fn name_and_arguments(&self) -> (Option<&str>, Option<&'a RawValue>) {
        self.params
            .as_ref()
            .map(Params::target)
            .unwrap_or((None, None))
    }

    #[cfg(feature = "http")]
    /// What `Mcp-Name` must equal: `None` when the method carries none, or when its params
    /// cannot be read (their own error answers the request: there is no name to compare);
    /// `Some(None)` when it must, but readable params name nothing.
    pub(crate) fn mcp_name(&self) -> Option<Option<std::borrow::Cow<'_, str>>> {
        use std::borrow::Cow;
        match &self.params {
            Err(_) => None,
            Ok(Params::Wing(w)) if matches!((&w.name, &w.call), (Some(None), Err(_))) => None,
            Ok(Params::Wing(w)) => w.name.as_ref().map(|n| n.as_deref().map(Cow::Borrowed)),
            _ if matches!(self.method, "tools/call" | "prompts/get" | "resources/read") => {
                Some(self.name_and_arguments().0.map(Cow::Borrowed))
            }
            _ => None,
        }
    }

    /// Reads `_meta` and the params of a request (a wing's method: decoded by the wing).
    /// `Err` is the answer when the request cannot go further (params not an object,
    /// `_meta` missing or malformed).
    pub(crate) fn read(
        server: &'a Server,
        id: RequestId,
        method: &'a str,
        body: Body<'a>,
    ) -> Result<Self, Response> {
        let mut prepared = Self::decode(id, method, body)?;
        if let Some(wing) = server.wings().serving(Era::Modern, method) {
            let request = wing.decode(method, &prepared.meta, prepared.raw);
            prepared.params = Ok(Params::Wing(request));
        }
        Ok(prepared)
    }

    fn decode(id: RequestId, method: &'a str, body: Body<'a>) -> Result<Self, Response> {
        let removed_method = REMOVED.contains(&method);
        let (params, meta, raw) = match body {
            Body::Decoded(p) => {
                let (params, meta) = p.with_meta();
                (params, meta, None)
            }
            Body::Raw(params) => {
                let Some(raw) = params.filter(|p| p.get().trim_start().starts_with('{')) else {
                    if removed_method {
                        return Err(Response::error(Some(id), removed(method)));
                    }
                    let e = match params {
                        None => invalid("Missing params: every request carries params._meta"),
                        Some(_) => invalid("params must be an object"),
                    };
                    return Err(Response::early(id, e));
                };
                let (params, meta) = Params::read(method, raw);
                (params, meta, Some(raw))
            }
        };
        match meta {
            Ok(meta) => Ok(Prepared {
                id,
                method,
                meta,
                params,
                raw,
            }),
            Err(_) if removed_method => Err(Response::error(Some(id), removed(method))),
            Err(e) => Err(Response::early(id, e)),
        }
    }
}

/// Checks that the request's protocol version is served (`-32022` otherwise).
pub(crate) fn check_version(meta: &RequestMeta) -> Result<(), ErrorObject> {
    if sterna_types::version::is_modern(&meta.protocol_version) {
        Ok(())
    } else {
        Err(ErrorObject::unsupported_version(
            sterna_types::version::MODERN_VERSIONS,
            &meta.protocol_version,
        ))
    }
}

/// The answer to a method 2026-07-28 removed.
pub(crate) fn removed(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method} (not part of MCP {}; this server is stateless: send \
             server/discover or any request with params._meta)",
            sterna_types::version::LATEST
        ),
    )
    .with_data(serde_json::json!({ "supported": sterna_types::version::MODERN_VERSIONS }))
}
