//! The respond stage: a rendered result or error for one request id.

use serde_json::value::RawValue;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, RequestId};

/// The answer to one request: its id and a rendered result or an error.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered.
    pub id: Option<RequestId>,
    /// The rendered `result`, or the `error`.
    pub body: Result<Box<RawValue>, ErrorObject>,
    /// The error came from reading the envelope (`_meta`, headers, version) rather than
    /// from the method (HTTP answers those with 400).
    pub(crate) early: bool,
    /// The result is `input_required` (a round of an MRTR flow; for tracing).
    pub(crate) input_required: bool,
}

impl Response {
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            id,
            body: Err(error),
            early: false,
            input_required: false,
        }
    }

    pub(crate) fn early(id: RequestId, error: ErrorObject) -> Self {
        Self {
            id: Some(id),
            body: Err(error),
            early: true,
            input_required: false,
        }
    }

    pub(crate) fn with(id: RequestId, body: Result<Box<RawValue>, ErrorObject>) -> Self {
        Self {
            id: Some(id),
            body,
            early: false,
            input_required: false,
        }
    }

    pub(crate) fn ok(id: RequestId, result: Box<RawValue>) -> Self {
        Self {
            id: Some(id),
            body: Ok(result),
            early: false,
            input_required: false,
        }
    }

    /// True when the request was refused before its method ran: malformed `_meta`,
    /// header mismatch, unsupported version.
    pub fn is_envelope_error(&self) -> bool {
        self.early
    }

    /// The complete JSON-RPC response message.
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.body {
            Ok(result) => {
                let id = self.id.as_ref().expect("results always answer a known id");
                let raw = result.get().as_bytes();
                let mut out = Vec::with_capacity(raw.len() + 40);
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                serde_json::to_writer(&mut out, id).expect("ids serialize");
                out.extend_from_slice(br#","result":"#);
                out.extend_from_slice(raw);
                out.push(b'}');
                out
            }
            Err(error) => serde_json::to_vec(&ErrorResponseRef {
                id: self.id.as_ref(),
                error,
            })
            .expect("responses serialize"),
        }
    }

    /// The error code, if this is an error.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.body.as_ref().err().map(|e| e.code)
    }
}

impl crate::trace::Ending for Response {
    fn ending(&self) -> (&'static str, Option<i32>) {
        match &self.body {
            Ok(_) if self.input_required => ("input_required", None),
            Ok(_) => ("complete", None),
            Err(e) => ("error", Some(e.code.0)),
        }
    }
}
