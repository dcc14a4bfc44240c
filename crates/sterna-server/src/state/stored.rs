//! Stored-state references: what the client carries when the sealed payload lives in a
//! [`StateStore`](super::StateStore).
//!
//! `base64url( 0x03 | key id (4) | id (16) | HMAC-SHA256(mac key, 0x03 | key id | id) )`,
//! 71 characters whatever the flow holds. The id is 128 random bits; the MAC key is derived
//! with HKDF from the state key named by the key id (never the AEAD key). The MAC is checked
//! (in constant time) before the store is asked anything, so a forged or guessed id never
//! reaches the store. The stored bytes are an ordinary sealed state whose associated data
//! also holds the id: a payload opens only under the reference it was stored for, and is
//! then checked exactly like an inline state (principal, target, arguments, expiry).

use super::codec::OpenError;
use super::keys::StateKeys;
use super::random::fill_unique;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac;

/// First byte of a stored-state reference (inline states start with 1 or 2).
pub(crate) const REFERENCE: u8 = 3;
const ID: usize = 16;
const MAC: usize = 32;
const LEN: usize = 1 + 4 + ID + MAC;
const CONTEXT_TAG: &[u8] = b"sterna stored state";

/// A verified reference: the store id it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reference {
    pub(crate) id: [u8; ID],
}

impl Reference {
    /// The associated data that binds a stored payload to this reference.
    pub(crate) fn context(&self) -> [u8; CONTEXT_TAG.len() + ID] {
        let mut out = [0u8; CONTEXT_TAG.len() + ID];
        out[..CONTEXT_TAG.len()].copy_from_slice(CONTEXT_TAG);
        out[CONTEXT_TAG.len()..].copy_from_slice(&self.id);
        out
    }
}

/// A fresh reference under the sealing key: the id to store under, and the token.
pub(crate) fn mint(keys: &StateKeys) -> (Reference, String) {
    let key = keys.sealing();
    let mut buf = [0u8; LEN];
    buf[0] = REFERENCE;
    buf[1..5].copy_from_slice(&key.id);
    let mut id = [0u8; ID];
    fill_unique(&mut id);
    buf[5..5 + ID].copy_from_slice(&id);
    let tag = key
        .mac
        .clone()
        .chain_update(&buf[..5 + ID])
        .finalize()
        .into_bytes();
    buf[5 + ID..].copy_from_slice(&tag);
    (Reference { id }, URL_SAFE_NO_PAD.encode(buf))
}

/// Checks a decoded reference: exact length, known key, genuine MAC.
pub(crate) fn verify(keys: &StateKeys, buf: &[u8]) -> Result<Reference, OpenError> {
    if buf.len() != LEN || buf[0] != REFERENCE {
        return Err(OpenError::Malformed);
    }
    let key = keys.find(&buf[1..5]).ok_or(OpenError::UnknownKey)?;
    key.mac
        .clone()
        .chain_update(&buf[..5 + ID])
        .verify_slice(&buf[5 + ID..])
        .map_err(|_| OpenError::Forged)?;
    let id: [u8; ID] = buf[5..5 + ID].try_into().expect("16 bytes");
    Ok(Reference { id })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(t: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(t).unwrap()
    }

    #[test]
    fn references_verify_and_refuse_tampering() {
        let keys = StateKeys::ephemeral();
        let (r, token) = mint(&keys);
        assert_eq!(token.len(), 71);
        assert_eq!(verify(&keys, &decode(&token)), Ok(r));
        let (r2, _) = mint(&keys);
        assert_ne!(r.id, r2.id, "ids are random");
        let raw = decode(&token);
        for i in 0..raw.len() {
            let mut t = raw.clone();
            t[i] ^= 0x01;
            assert!(verify(&keys, &t).is_err(), "flipped byte {i} verified");
        }
        for cut in 1..raw.len() {
            assert_eq!(
                verify(&keys, &raw[..raw.len() - cut]),
                Err(OpenError::Malformed)
            );
        }
        let mut long = raw.clone();
        long.push(0);
        assert_eq!(verify(&keys, &long), Err(OpenError::Malformed));
        // Another key ring does not know the key id; one that knows it as another key's
        // id cannot exist (ids are derived from the key).
        assert_eq!(
            verify(&StateKeys::ephemeral(), &raw),
            Err(OpenError::UnknownKey)
        );
        // A forged id with a MAC under another key, relabelled with our key id.
        let other = StateKeys::ephemeral();
        let (_, forged) = mint(&other);
        let mut f = decode(&forged);
        f[1..5].copy_from_slice(&raw[1..5]);
        assert_eq!(verify(&keys, &f), Err(OpenError::Forged));
    }
}
