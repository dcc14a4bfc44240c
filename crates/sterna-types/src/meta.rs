//! `_meta` objects and the implementation descriptor.

use crate::JsonObject;
use crate::capabilities::ClientCapabilities;
use crate::content::Icon;
use crate::jsonrpc::{RequestId, Str};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

mod shared;
pub use shared::SharedImplementation;

/// `_meta` key: the protocol revision of this request.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client capabilities declared for this request.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client implementation.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the minimum log level the client wants for this request (deprecated feature).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: the server implementation, on results.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the subscription a notification was delivered on.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: the progress token of a request.
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";

/// Name, version and optional display data of an MCP implementation (client or server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// A progress token: a string or an integer chosen by the client.
pub type ProgressToken = RequestId;

/// Log severities (RFC 5424 order, lowest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Notice.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Alert.
    Alert,
    /// Emergency.
    Emergency,
}

/// The `_meta` of every client request in 2026-07-28.
///
/// `protocolVersion` and `clientCapabilities` are required; decoding reports the first
/// missing key by name so the server can answer `-32602` with a useful message.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo` (optional).
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel` (optional).
    pub log_level: Option<LoggingLevel>,
    /// `progressToken` (optional).
    pub progress_token: Option<ProgressToken>,
    /// Every other key, kept as is (trace context, extensions …).
    pub other: JsonObject,
}

impl RequestMeta {
    /// A `_meta` for `version` with the given capabilities and nothing else.
    pub fn new(version: impl Into<String>, client_capabilities: ClientCapabilities) -> Self {
        Self {
            protocol_version: version.into(),
            client_capabilities,
            client_info: None,
            log_level: None,
            progress_token: None,
            other: JsonObject::new(),
        }
    }
}

impl Serialize for RequestMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(PROTOCOL_VERSION_KEY, &self.protocol_version)?;
        m.serialize_entry(CLIENT_CAPABILITIES_KEY, &self.client_capabilities)?;
        if let Some(v) = &self.client_info {
            m.serialize_entry(CLIENT_INFO_KEY, v)?;
        }
        if let Some(v) = &self.log_level {
            m.serialize_entry(LOG_LEVEL_KEY, v)?;
        }
        if let Some(v) = &self.progress_token {
            m.serialize_entry(PROGRESS_TOKEN_KEY, v)?;
        }
        for (k, v) in &self.other {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RequestMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request _meta object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RequestMeta, A::Error> {
                let mut version = None;
                let mut caps = None;
                let mut info = None;
                let mut level = None;
                let mut token = None;
                let mut other = JsonObject::new();
                while let Some(Str(key)) = a.next_key::<Str<'de>>()? {
                    match key.as_ref() {
                        PROTOCOL_VERSION_KEY => {
                            set(&mut version, a.next_value()?, PROTOCOL_VERSION_KEY)?
                        }
                        CLIENT_CAPABILITIES_KEY => set(
                            &mut caps,
                            a.next_value::<ObjectOnly<ClientCapabilities>>()?.0,
                            CLIENT_CAPABILITIES_KEY,
                        )?,
                        CLIENT_INFO_KEY => set(&mut info, a.next_value()?, CLIENT_INFO_KEY)?,
                        LOG_LEVEL_KEY => set(&mut level, a.next_value()?, LOG_LEVEL_KEY)?,
                        PROGRESS_TOKEN_KEY => set(&mut token, a.next_value()?, PROGRESS_TOKEN_KEY)?,
                        _ => {
                            let v: Value = a.next_value()?;
                            other.insert(key.into_owned(), v);
                        }
                    }
                }
                Ok(RequestMeta {
                    protocol_version: version
                        .ok_or_else(|| de::Error::missing_field(PROTOCOL_VERSION_KEY))?,
                    client_capabilities: caps
                        .ok_or_else(|| de::Error::missing_field(CLIENT_CAPABILITIES_KEY))?,
                    client_info: info,
                    log_level: level,
                    progress_token: token,
                    other,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A struct that must come from a JSON object.
struct ObjectOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::capabilities::object_only(d).map(ObjectOnly)
    }
}

fn set<T, E: de::Error>(slot: &mut Option<T>, v: T, key: &'static str) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(key));
    }
    *slot = Some(v);
    Ok(())
}

/// The `_meta` of a result: `serverInfo` plus any other key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultMeta {
    /// `io.modelcontextprotocol/serverInfo` (shared and rendered once, so stamping it costs
    /// no copy and writing it no serialization).
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<SharedImplementation>,
    /// `io.modelcontextprotocol/subscriptionId`, on the result that closes a subscription.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ResultMeta {
    /// True when nothing is set (the `_meta` member is then omitted).
    pub fn is_empty(&self) -> bool {
        self.server_info.is_none() && self.subscription_id.is_none() && self.other.is_empty()
    }
}

/// The `_meta` of a notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationMeta {
    /// `io.modelcontextprotocol/subscriptionId`: set on every notification sent on a
    /// `subscriptions/listen` stream.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl NotificationMeta {
    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.subscription_id.is_none() && self.other.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_meta_requires_keys() {
        let e = serde_json::from_str::<RequestMeta>(
            r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains(PROTOCOL_VERSION_KEY), "{e}");
        let e = serde_json::from_str::<RequestMeta>(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains(CLIENT_CAPABILITIES_KEY), "{e}");
        let m: RequestMeta = serde_json::from_str(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-x"}"#,
        )
        .unwrap();
        assert_eq!(m.other["traceparent"], "00-x");
        assert!(serde_json::from_str::<RequestMeta>("[]").is_err());
    }
}
