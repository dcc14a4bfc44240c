//! The request envelope: `params` plus `_meta`, serialized without copying either.

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::jsonrpc::RequestId;
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
