//! The 2025-11-25 era (and the revisions before it): the `initialize` handshake and what
//! it negotiates. A dual-era peer speaks this inside a session opened by `initialize`;
//! see the `sterna` crate for how both eras are served and reached with one code base.

use crate::JsonObject;
use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::meta::Implementation;
use serde::{Deserialize, Serialize};

/// `2025-11-25`, the last legacy revision.
pub const V2025_11_25: &str = "2025-11-25";
/// `2025-06-18`.
pub const V2025_06_18: &str = "2025-06-18";
/// `2025-03-26`.
pub const V2025_03_26: &str = "2025-03-26";

/// Legacy revisions, newest first. A server echoes one of these in `initialize`; anything
/// else (a modern revision included) is answered with [`V2025_11_25`].
pub const LEGACY_VERSIONS: &[&str] = &[
    V2025_11_25,
    V2025_06_18,
    V2025_03_26,
    "2024-11-05",
    "2024-10-07",
];

/// The version a server answers `initialize` with: the one requested when it is a legacy
/// revision this crate knows, else the newest legacy revision. Never a modern one.
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(V2025_11_25)
}

/// True when `version` is one of [`LEGACY_VERSIONS`].
pub fn is_legacy(version: &str) -> bool {
    LEGACY_VERSIONS.contains(&version)
}

/// Whether a negotiated legacy revision has a feature that arrived in 2025-11-25 (URL
/// elicitation, `sampling.tools`, SSE priming events …).
pub fn at_least_2025_11_25(version: &str) -> bool {
    version == V2025_11_25
}

/// The params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The revision the client wants.
    pub protocol_version: String,
    /// What the client can do, for the whole session.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the session follows.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_never_offers_a_modern_revision() {
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
        assert_eq!(negotiate("1999-01-01"), "2025-11-25");
        let p: InitializeParams = serde_json::from_value(serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {"listChanged": true}, "elicitation": {}, "tasks": {"list": {}}},
            "clientInfo": {"name": "c", "version": "1"}
        }))
        .unwrap();
        assert!(p.capabilities.roots() && p.capabilities.elicitation_form());
        assert!(!p.capabilities.elicitation_url());
    }
}
