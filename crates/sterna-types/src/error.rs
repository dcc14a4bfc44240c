//! Wire errors: the JSON-RPC `error` object and the codes MCP defines.
//!
//! These are *wire* values. The Rust error types of the SDK live in `sterna` and convert
//! into an [`ErrorObject`] at the edge.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A JSON-RPC error code.
///
/// The associated constants name every code MCP 2026-07-28 gives a meaning to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON is not a valid JSON-RPC request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// Unknown method, including methods removed in 2026-07-28 (HTTP 404).
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Invalid params: missing `_meta` keys, unknown tool or prompt, bad arguments,
    /// bad cursor, resource not found, rejected `requestState`.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// A required HTTP header is missing, malformed, or disagrees with the body (HTTP 400).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// The request needs a client capability it did not declare (HTTP 400);
    /// `data.requiredCapabilities` says which.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: Self = Self(-32021);
    /// The requested protocol version is not served (HTTP 400);
    /// `data.supported` and `data.requested` say more.
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);
    /// Retired in 2026-07-28 (resource not found in 2025-11-25); accepted from old servers only.
    pub const LEGACY_RESOURCE_NOT_FOUND: Self = Self(-32002);

    /// The numeric value.
    pub const fn code(self) -> i32 {
        self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short human-readable description.
    pub message: String,
    /// Optional structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602` Invalid params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32601` Method not found.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32603` Internal error (with a message that must not leak internals).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32022` with `data.supported` and `data.requested`.
    pub fn unsupported_version(supported: &[&str], requested: &str) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(serde_json::json!({ "supported": supported, "requested": requested }))
    }

    /// `-32021` with `data.requiredCapabilities` (an object such as `{"sampling":{}}`).
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        Self::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(serde_json::json!({ "requiredCapabilities": required }))
    }

    /// `-32020` Header mismatch.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::HEADER_MISMATCH, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}
