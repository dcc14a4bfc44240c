//! `server/discover`: versions, capabilities and identity in one call.

use crate::capabilities::ServerCapabilities;
use crate::jsonrpc::Method;
use crate::meta::{RequestMeta, ResultMeta};
use crate::result::{CacheScope, ResultType};
use serde::{Deserialize, Serialize};

/// The params of `server/discover`: only `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoverRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
}

/// The result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// Revisions the server speaks, preferred first.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Cache lifetime in milliseconds (read as 0, not cached, when a server omits it).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Cache scope (read as `private` when a server omits it).
    #[serde(default = "private")]
    pub cache_scope: CacheScope,
    /// Metadata (`serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The most careful scope, for a result that does not say.
fn private() -> CacheScope {
    CacheScope::Private
}

/// `server/discover`.
#[derive(Debug)]
pub enum Discover {}

impl Method for Discover {
    const NAME: &'static str = "server/discover";
    type Params = DiscoverRequestParams;
    type Result = DiscoverResult;
}
