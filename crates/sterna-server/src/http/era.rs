//! The HTTP side of the seam: an era other than 2026-07-28 answers the POSTs that do not
//! claim 2026-07-28, and the GETs and DELETEs of its sessions. The endpoint reads each
//! POST once and hands the era what it read.

use super::body::McpBody;
use super::caller::Caller;
use crate::server::Server;
use crate::server::inbound::Inbound;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Response};
use std::any::Any;

/// An era of Streamable HTTP around the 2026-07-28 endpoint.
pub(crate) trait HttpEra: Any + Send + Sync {
    /// A POST without the 2026-07-28 claim, as the endpoint read it (its envelope).
    fn post<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
        message: Inbound<'a>,
    ) -> BoxFuture<'a, Response<McpBody>>;

    /// A GET (2026-07-28 has none).
    fn get<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
    ) -> BoxFuture<'a, Response<McpBody>>;

    /// A DELETE (2026-07-28 has none).
    fn delete<'a>(
        &'a self,
        headers: &'a HeaderMap,
        caller: Caller,
    ) -> BoxFuture<'a, Response<McpBody>>;
}
