//! DPoP nonces (RFC 9449 §8, §9), one per server origin: the latest `DPoP-Nonce` a
//! server sent goes into the next proof for it.

use super::urls;
use http::HeaderMap;
use std::collections::HashMap;
use std::sync::Mutex;

/// The latest nonce of each server.
#[derive(Debug, Default)]
pub(crate) struct Nonces {
    by_origin: Mutex<HashMap<String, String>>,
}

impl Nonces {
    /// Records the nonce in `headers`, if any, for the server at `url`.
    pub(crate) fn note(&self, url: &str, headers: &HeaderMap) {
        if let Some(n) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
            self.by_origin
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(urls::origin(url), n.to_owned());
        }
    }

    /// The nonce to put in the next proof for `url`.
    pub(crate) fn get(&self, url: &str) -> Option<String> {
        self.by_origin
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&urls::origin(url))
            .cloned()
    }
}
