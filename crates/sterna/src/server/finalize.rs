//! Completing an MRTR-capable request: each result type stamps `resultType`, `serverInfo`
//! and caching hints, and turns a handler failure into a result or an error.

use crate::error::{HandlerError, Repr};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::meta::{Implementation, ResultMeta};
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::result::{CacheScope, ResultType};
use sterna_types::tools::CallToolResult;

/// Results that can complete an MRTR-capable request.
pub(crate) trait Finalize: Serialize + Send + Sized + 'static {
    fn finalize(&mut self, info: &Arc<Implementation>, cache: Option<(Duration, CacheScope)>);
    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject>;
}

fn stamp(meta: &mut Option<ResultMeta>, info: &Arc<Implementation>) {
    meta.get_or_insert_with(ResultMeta::default).server_info = Some(info.clone());
}

impl Finalize for CallToolResult {
    fn finalize(&mut self, info: &Arc<Implementation>, _: Option<(Duration, CacheScope)>) {
        self.result_type = ResultType::Complete;
        stamp(&mut self.meta, info);
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        match e.0 {
            Repr::Tool(m) => Ok(CallToolResult::error(m)),
            Repr::Internal(e) => Ok(CallToolResult::error(e.to_string())),
            Repr::Rpc(o) => Err(o),
            Repr::NeedsInput => Err(ErrorObject::internal("Internal error")),
        }
    }
}

impl Finalize for GetPromptResult {
    fn finalize(&mut self, info: &Arc<Implementation>, _: Option<(Duration, CacheScope)>) {
        self.result_type = ResultType::Complete;
        stamp(&mut self.meta, info);
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        Err(rpc_error(e))
    }
}

impl Finalize for ReadResourceResult {
    fn finalize(&mut self, info: &Arc<Implementation>, cache: Option<(Duration, CacheScope)>) {
        self.result_type = ResultType::Complete;
        stamp(&mut self.meta, info);
        if let Some((ttl, scope)) = cache {
            self.ttl_ms.get_or_insert(ttl.as_millis() as u64);
            self.cache_scope.get_or_insert(scope);
        }
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        Err(rpc_error(e))
    }
}

/// A handler failure as a JSON-RPC error (prompts, resources, completions).
pub(crate) fn rpc_error(e: HandlerError) -> ErrorObject {
    match e.0 {
        Repr::Rpc(o) => o,
        Repr::Tool(m) => ErrorObject::internal(m),
        Repr::Internal(e) => {
            tracing::error!(error = %e, "handler failed");
            ErrorObject::internal("Internal error")
        }
        Repr::NeedsInput => {
            tracing::error!("a handler asked a question where none can be asked");
            ErrorObject::internal("Internal error")
        }
    }
}
