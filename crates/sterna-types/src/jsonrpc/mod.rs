//! The JSON-RPC 2.0 envelope as MCP 2026-07-28 uses it.
//!
//! * Typed messages: [`JsonRpcRequest<M>`], [`JsonRpcNotification<N>`],
//!   [`JsonRpcResultResponse<R>`] and [`JsonRpcErrorResponse`], where `M`/`N` implement
//!   [`Method`]/[`NotificationMethod`] and tie the method name to its params.
//! * Untyped, zero-copy decoding of anything that arrives: [`RawMessage::parse`] and
//!   [`Incoming`], which keep `params`/`result` as borrowed raw JSON so that each method
//!   decodes its own params exactly once.
//! * Borrowing encoders for the hot path: [`ResultResponseRef`], [`ErrorResponseRef`],
//!   [`NotificationRef`].

use crate::error::ErrorObject;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

mod incoming;
#[cfg(feature = "stdio")]
pub mod lines;

pub use incoming::{IdField, Incoming, Malformed, RawMessage};

/// A request id: a string or an integer. Never `null`, never fractional.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => s.serialize_i64(*n),
            Self::String(v) => s.serialize_str(v),
        }
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer request id")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
        i64::try_from(v)
            .map(RequestId::Number)
            .map_err(|_| E::custom("request id is out of the integer range"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
        Ok(RequestId::String(v))
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

/// The `"jsonrpc": "2.0"` member. Decoding anything else fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Str(v) = Str::deserialize(d)?;
        if v == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(de::Error::custom("jsonrpc must be \"2.0\""))
        }
    }
}

/// A string borrowed from the input when it has no escapes (serde's own `Cow<str>`
/// always copies unless a derive marks it `borrow`).
pub(crate) struct Str<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A request method: ties a method name to its params and result types.
pub trait Method {
    /// The method name on the wire, e.g. `tools/call`.
    const NAME: &'static str;
    /// The `params` type.
    type Params: Serialize + DeserializeOwned;
    /// The `result` type.
    type Result: Serialize + DeserializeOwned;
}

/// A notification method: ties a method name to its params type.
pub trait NotificationMethod {
    /// The method name on the wire, e.g. `notifications/progress`.
    const NAME: &'static str;
    /// The `params` type.
    type Params: Serialize + DeserializeOwned;
}

/// A typed JSON-RPC request.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcRequest<M: Method> {
    /// The request id.
    pub id: RequestId,
    /// The params.
    pub params: M::Params,
}

impl<M: Method> JsonRpcRequest<M> {
    /// Builds a request.
    pub fn new(id: impl Into<RequestId>, params: M::Params) -> Self {
        Self {
            id: id.into(),
            params,
        }
    }
}

impl<M: Method> Serialize for JsonRpcRequest<M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("JsonRpcRequest", 4)?;
        st.serialize_field("jsonrpc", &JsonRpcVersion)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("method", M::NAME)?;
        st.serialize_field("params", &self.params)?;
        st.end()
    }
}

#[derive(Deserialize)]
struct RequestDe<P> {
    #[expect(dead_code, reason = "validated by deserializing, never read")]
    jsonrpc: JsonRpcVersion,
    id: RequestId,
    method: String,
    params: P,
}

impl<'de, M: Method> Deserialize<'de> for JsonRpcRequest<M> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = RequestDe::<M::Params>::deserialize(d)?;
        if r.method != M::NAME {
            return Err(de::Error::custom(format_args!(
                "expected method {}, found {}",
                M::NAME,
                r.method
            )));
        }
        Ok(Self {
            id: r.id,
            params: r.params,
        })
    }
}

/// A typed JSON-RPC notification.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcNotification<N: NotificationMethod> {
    /// The params, if any.
    pub params: Option<N::Params>,
}

impl<N: NotificationMethod> Serialize for JsonRpcNotification<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = if self.params.is_some() { 3 } else { 2 };
        let mut st = s.serialize_struct("JsonRpcNotification", n)?;
        st.serialize_field("jsonrpc", &JsonRpcVersion)?;
        st.serialize_field("method", N::NAME)?;
        if let Some(p) = &self.params {
            st.serialize_field("params", p)?;
        }
        st.end()
    }
}

#[derive(Deserialize)]
struct NotificationDe<P> {
    #[expect(dead_code, reason = "validated by deserializing, never read")]
    jsonrpc: JsonRpcVersion,
    method: String,
    #[serde(default = "Option::default")]
    params: Option<P>,
}

impl<'de, N: NotificationMethod> Deserialize<'de> for JsonRpcNotification<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = NotificationDe::<N::Params>::deserialize(d)?;
        if r.method != N::NAME {
            return Err(de::Error::custom(format_args!(
                "expected method {}, found {}",
                N::NAME,
                r.method
            )));
        }
        Ok(Self { params: r.params })
    }
}

/// A typed successful response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse<R> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RequestId,
    /// The result.
    pub result: R,
}

/// An error response. `id` is absent only when the request's id could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

/// Encodes `{"jsonrpc":"2.0","id":…,"result":…}` without owning either part.
#[derive(Debug)]
pub struct ResultResponseRef<'a, R: ?Sized> {
    /// The id of the request answered.
    pub id: &'a RequestId,
    /// The result.
    pub result: &'a R,
}

impl<R: Serialize + ?Sized> Serialize for ResultResponseRef<'_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("JsonRpcResultResponse", 3)?;
        st.serialize_field("jsonrpc", &JsonRpcVersion)?;
        st.serialize_field("id", self.id)?;
        st.serialize_field("result", self.result)?;
        st.end()
    }
}

/// Encodes `{"jsonrpc":"2.0","id":…,"error":…}` without owning either part.
#[derive(Debug)]
pub struct ErrorResponseRef<'a> {
    /// The id of the request answered, when known.
    pub id: Option<&'a RequestId>,
    /// The error.
    pub error: &'a ErrorObject,
}

impl Serialize for ErrorResponseRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("JsonRpcErrorResponse", 3)?;
        st.serialize_field("jsonrpc", &JsonRpcVersion)?;
        if let Some(id) = self.id {
            st.serialize_field("id", id)?;
        }
        st.serialize_field("error", self.error)?;
        st.end()
    }
}

/// Encodes `{"jsonrpc":"2.0","method":…,"params":…}` without owning the params.
#[derive(Debug)]
pub struct NotificationRef<'a, P: ?Sized> {
    /// The method name.
    pub method: &'a str,
    /// The params.
    pub params: &'a P,
}

impl<P: Serialize + ?Sized> Serialize for NotificationRef<'_, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("JsonRpcNotification", 3)?;
        st.serialize_field("jsonrpc", &JsonRpcVersion)?;
        st.serialize_field("method", self.method)?;
        st.serialize_field("params", self.params)?;
        st.end()
    }
}
