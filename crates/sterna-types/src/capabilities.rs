//! Client and server capabilities.
//!
//! In 2026-07-28 the client declares its capabilities on **every request**, in
//! `_meta["io.modelcontextprotocol/clientCapabilities"]`; a server must never infer them
//! from an earlier request. Server capabilities come from `server/discover`.

use crate::JsonObject;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// Deserializes a struct from a JSON object only (serde's derive would also take an
/// array, reading `[]` as an empty struct).
pub(crate) fn object_only<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<T, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<T, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(a))
        }
    }
    d.deserialize_map(V(PhantomData))
}

fn some_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    object_only(d).map(Some)
}

/// What a client can do, declared per request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<BTreeMap<String, JsonObject>>,
    /// The client can list its roots (deprecated feature). Settings are ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// The client can sample an LLM (deprecated feature).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_object"
    )]
    pub sampling: Option<SamplingCapability>,
    /// The client can elicit input from its user.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_object"
    )]
    pub elicitation: Option<ElicitationCapability>,
    /// Extensions, keyed by reverse-DNS identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<BTreeMap<String, JsonObject>>,
}

/// Sampling settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` values other than `none` (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// The client supports tool use in sampling (`tools`, `toolChoice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

/// Elicitation settings. `{}` means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

impl ElicitationCapability {
    /// Form mode is supported: declared, or implied by declaring no mode at all.
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// URL mode is supported (only when declared).
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

impl ClientCapabilities {
    /// Elicitation in form mode is possible.
    pub fn elicitation_form(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(ElicitationCapability::supports_form)
    }

    /// Elicitation in URL mode is possible.
    pub fn elicitation_url(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(ElicitationCapability::supports_url)
    }

    /// Sampling is possible.
    pub fn sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Sampling with tools is possible.
    pub fn sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Roots can be listed.
    pub fn roots(&self) -> bool {
        self.roots.is_some()
    }

    /// The extension `id` was declared.
    pub fn extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

/// What a server offers, as returned by `server/discover`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<BTreeMap<String, JsonObject>>,
    /// Log notifications (deprecated feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Prompts.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_object"
    )]
    pub prompts: Option<ListChangedCapability>,
    /// Resources.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_object"
    )]
    pub resources: Option<ResourcesCapability>,
    /// Tools.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_object"
    )]
    pub tools: Option<ListChangedCapability>,
    /// Extensions, keyed by reverse-DNS identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<BTreeMap<String, JsonObject>>,
}

/// A capability whose only setting is `listChanged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// The server sends `list_changed` notifications on `subscriptions/listen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Resource capability settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server sends `resources/updated` for subscribed resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}
