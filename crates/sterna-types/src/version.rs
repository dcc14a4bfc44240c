//! Protocol revisions.

/// The revision this crate implements: `2026-07-28`.
pub const LATEST: &str = "2026-07-28";

/// The last revision of the legacy era (with the `initialize` handshake).
pub const LEGACY_2025_11_25: &str = "2025-11-25";

/// Revisions spoken with per-request `_meta` (the "modern" era).
pub const MODERN_VERSIONS: &[&str] = &[LATEST];

/// Returns true when `version` is a modern (stateless, per-request `_meta`) revision.
pub fn is_modern(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}
