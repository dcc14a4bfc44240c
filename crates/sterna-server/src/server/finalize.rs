//! Completing an MRTR-capable request: each result type becomes its [`Payload`], and a
//! handler failure becomes a result (a tool error) or an error.

use super::outcome::Payload;
use crate::error::{HandlerError, Repr};
use sterna_types::error::ErrorObject;
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::tools::CallToolResult;

/// Results that can complete an MRTR-capable request.
pub(crate) trait Finalize: Send + Sized + 'static {
    fn into_payload(self) -> Payload;
    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject>;
}

impl Finalize for CallToolResult {
    fn into_payload(self) -> Payload {
        Payload::Tool(self)
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
    fn into_payload(self) -> Payload {
        Payload::Prompt(self)
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        Err(rpc_error(e))
    }
}

impl Finalize for ReadResourceResult {
    fn into_payload(self) -> Payload {
        Payload::Resource(self)
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
