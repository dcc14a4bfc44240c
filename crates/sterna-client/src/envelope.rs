//! The request envelope: `params` plus `_meta` (2026-07-28), or `params` alone
//! (2025-11-25), serialized without copying; and reading the answer.

use super::error::ProtocolViolation;
use super::retry::Failure;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};
use sterna_types::meta::Implementation;

/// The `_meta` keys the client always writes itself.
const CLIENT_KEYS: [&str; 3] = [
    sterna_types::meta::PROTOCOL_VERSION_KEY,
    sterna_types::meta::CLIENT_CAPABILITIES_KEY,
    sterna_types::meta::CLIENT_INFO_KEY,
];

/// `params` plus `_meta`, serialized without copying either.
pub(crate) struct WithMeta<'a> {
    pub(crate) params: &'a Map<String, Value>,
    pub(crate) version: &'a str,
    pub(crate) caps: &'a ClientCapabilities,
    pub(crate) info: Option<&'a Implementation>,
}

impl Serialize for WithMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Meta<'a>(&'a WithMeta<'a>);
        impl Serialize for Meta<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry(sterna_types::meta::PROTOCOL_VERSION_KEY, self.0.version)?;
                m.serialize_entry(sterna_types::meta::CLIENT_CAPABILITIES_KEY, self.0.caps)?;
                if let Some(info) = self.0.info {
                    m.serialize_entry(sterna_types::meta::CLIENT_INFO_KEY, info)?;
                }
                // The call's own entries (`progressToken`, `logLevel` …); the three above
                // are the client's and win.
                if let Some(Value::Object(extra)) = self.0.params.get("_meta") {
                    for (k, v) in extra {
                        if !CLIENT_KEYS.contains(&k.as_str()) {
                            m.serialize_entry(k, v)?;
                        }
                    }
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.params {
            if k != "_meta" {
                m.serialize_entry(k, v)?;
            }
        }
        m.serialize_entry("_meta", &Meta(self))?;
        m.end()
    }
}

#[derive(Serialize)]
pub(crate) struct Message<'a> {
    pub(crate) jsonrpc: &'static str,
    pub(crate) id: &'a RequestId,
    pub(crate) method: &'a str,
    pub(crate) params: WithMeta<'a>,
}

/// `params` as a 2025-11-25 request carries them: no 2026-07-28 `_meta` keys (a
/// dual-era server would route a request that has them to its modern side).
pub(crate) struct Plain<'a>(pub(crate) &'a Map<String, Value>);

impl Serialize for Plain<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct OwnMeta<'a>(&'a Map<String, Value>);
        impl Serialize for OwnMeta<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                for (k, v) in self.0.iter().filter(|(k, _)| !is_modern_key(k)) {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0 {
            match (k.as_str(), v) {
                ("_meta", Value::Object(meta)) => {
                    if meta.keys().any(|k| !is_modern_key(k)) {
                        m.serialize_entry(k, &OwnMeta(meta))?;
                    }
                }
                _ => m.serialize_entry(k, v)?,
            }
        }
        m.end()
    }
}

fn is_modern_key(key: &str) -> bool {
    key.starts_with("io.modelcontextprotocol/")
}

/// A 2025-11-25 request.
#[derive(Serialize)]
pub(crate) struct PlainMessage<'a> {
    pub(crate) jsonrpc: &'static str,
    pub(crate) id: &'a RequestId,
    pub(crate) method: &'a str,
    pub(crate) params: Plain<'a>,
}

impl<'a> PlainMessage<'a> {
    pub(crate) fn bytes(
        id: &'a RequestId,
        method: &'a str,
        params: &'a Map<String, Value>,
    ) -> Vec<u8> {
        serde_json::to_vec(&Self {
            jsonrpc: "2.0",
            id,
            method,
            params: Plain(params),
        })
        .expect("requests serialize")
    }
}

/// The result of the response to `id`, or why there is none.
///
/// The result stays raw: decoding it through a `Value` would sort every object's keys,
/// and a form's fields must reach the user in the order the server sent them.
pub(crate) fn read_answer(
    method: &str,
    id: &RequestId,
    bytes: &[u8],
) -> Result<Box<RawValue>, Failure> {
    let violation = |v: ProtocolViolation| Failure::Client(v.into());
    match RawMessage::parse(bytes) {
        Ok(Incoming::Result { id: got, result }) if got == *id => {
            serde_json::from_str(result.get()).map_err(|source| {
                violation(ProtocolViolation::Malformed {
                    method: method.to_owned(),
                    source,
                })
            })
        }
        Ok(Incoming::Error { error, .. }) => Err(Failure::Server(error)),
        Ok(_) => Err(violation(ProtocolViolation::WrongResponse)),
        Err(m) => Err(violation(ProtocolViolation::Unreadable(m.error))),
    }
}
