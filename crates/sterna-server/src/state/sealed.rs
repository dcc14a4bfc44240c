//! Sealed bytes at rest: `0x02 | key id (4) | nonce (24) | XChaCha20-Poly1305(plain)`,
//! with the context (what the bytes belong to) as associated data. Task records are kept
//! this way, so a shared store can neither read them nor forge, alter or swap them.

use super::keys::StateKeys;
use super::random::fill_unique;
use super::xchacha::{NONCE, TAG};

const VERSION: u8 = 2;
const HEADER: usize = 1 + 4 + NONCE;

fn aad(key_id: &[u8; 4], context: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"sterna-at-rest1");
    out.extend_from_slice(key_id);
    for part in context {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    out
}

/// Seals `plain` under the sealing key, bound to `context`.
pub(crate) fn seal_bytes(keys: &StateKeys, context: &[&str], plain: &[u8]) -> Vec<u8> {
    let key = keys.sealing();
    let mut nonce = [0u8; 24];
    fill_unique(&mut nonce);
    let mut buf = Vec::with_capacity(HEADER + plain.len() + TAG);
    buf.push(VERSION);
    buf.extend_from_slice(&key.id);
    buf.extend_from_slice(&nonce);
    buf.extend_from_slice(plain);
    let tag = key
        .aead
        .seal(&nonce, &aad(&key.id, context), &mut buf[HEADER..]);
    buf.extend_from_slice(&tag);
    buf
}

/// Opens what [`seal_bytes`] sealed with the same `context` under any key of the ring;
/// `None` when it is malformed, sealed under an unknown key, altered or bound elsewhere.
pub(crate) fn open_bytes(keys: &StateKeys, context: &[&str], sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < HEADER + TAG || sealed[0] != VERSION {
        return None;
    }
    let key_id: [u8; 4] = sealed[1..5].try_into().ok()?;
    let key = keys.find(&key_id)?;
    let nonce: [u8; 24] = sealed[5..HEADER].try_into().ok()?;
    let tag_at = sealed.len() - TAG;
    let tag: [u8; TAG] = sealed[tag_at..].try_into().ok()?;
    let mut buf = sealed[HEADER..tag_at].to_vec();
    key.aead
        .open(&nonce, &aad(&key_id, context), &mut buf, tag)
        .ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_to_context_and_tamper_evident() {
        let keys = StateKeys::ephemeral();
        let sealed = seal_bytes(&keys, &["srv", "task-1"], b"record");
        assert_eq!(
            open_bytes(&keys, &["srv", "task-1"], &sealed).unwrap(),
            b"record"
        );
        assert!(
            open_bytes(&keys, &["srv", "task-2"], &sealed).is_none(),
            "swapped id"
        );
        assert!(open_bytes(&keys, &["srv2", "task-1"], &sealed).is_none());
        let mut bad = sealed.clone();
        bad[HEADER] ^= 1;
        assert!(open_bytes(&keys, &["srv", "task-1"], &bad).is_none());
        assert!(open_bytes(&StateKeys::ephemeral(), &["srv", "task-1"], &sealed).is_none());
        assert!(open_bytes(&keys, &["srv", "task-1"], b"short").is_none());
    }
}
