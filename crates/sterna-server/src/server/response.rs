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

    /// The complete JSON-RPC response message. A result's buffer is exactly its length, so
    /// `Bytes::from` takes it as it is (no second allocation to share it, no spare capacity
    /// kept in a stream's log for replay).
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.body {
            Ok(result) => {
                const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
                const RESULT: &[u8] = br#","result":"#;
                let id = self.id.as_ref().expect("results always answer a known id");
                let raw = result.get().as_bytes();
                let len = HEAD.len() + json_len(id) + RESULT.len() + raw.len() + 1;
                let mut out = Vec::with_capacity(len);
                out.extend_from_slice(HEAD);
                serde_json::to_writer(&mut out, id).expect("ids serialize");
                out.extend_from_slice(RESULT);
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

/// The length of `id` written as JSON (escapes included), counted without a buffer.
fn json_len(id: &RequestId) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    serde_json::to_writer(&mut n, id).expect("ids serialize");
    n.0
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A result's message fills its buffer exactly, whatever its id (escapes included).
    #[test]
    fn a_result_fills_its_buffer_exactly() {
        let raw = RawValue::from_string(r#"{"content":[]}"#.to_owned()).unwrap();
        for id in [
            RequestId::Number(7),
            RequestId::Number(i64::MIN),
            RequestId::String("call-\"1\"\u{1}é".to_owned()),
        ] {
            let bytes = Response::ok(id.clone(), raw.clone()).to_bytes();
            assert_eq!(bytes.len(), bytes.capacity(), "{id:?}");
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(v["id"], serde_json::to_value(&id).unwrap());
            assert_eq!(v["result"], serde_json::json!({"content": []}));
        }
    }
}
