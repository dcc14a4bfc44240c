//! The key ring: one key seals, every key opens.

use super::xchacha::XChaCha;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hkdf::Hkdf;
use hmac::{Hmac, KeyInit};
use sha2::{Digest, Sha256};
use std::fmt;

/// Length of a master key in bytes.
pub const KEY_LEN: usize = 32;

/// Why keys could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// The configuration holds no key.
    Empty,
    /// A key is not valid base64.
    NotBase64 {
        /// Position in the list (0 = the sealing key).
        index: usize,
    },
    /// A key is not 32 bytes long.
    WrongLength {
        /// Position in the list.
        index: usize,
        /// Its length in bytes.
        len: usize,
    },
    /// Two keys are the same.
    Duplicate {
        /// Position of the second copy.
        index: usize,
    },
    /// The environment variable is not set (or not UTF-8).
    MissingVariable(String),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("no requestState key given"),
            Self::NotBase64 { index } => write!(f, "requestState key #{index} is not base64"),
            Self::WrongLength { index, len } => write!(
                f,
                "requestState key #{index} is {len} bytes long; keys are {KEY_LEN} random bytes"
            ),
            Self::Duplicate { index } => write!(f, "requestState key #{index} is listed twice"),
            Self::MissingVariable(v) => write!(f, "environment variable {v} is not set"),
        }
    }
}

impl std::error::Error for KeyError {}

/// One key, ready to use: the AEAD instance and the keyed MAC of stored-state references
/// (both built once), and its 4-byte id.
pub(crate) struct Key {
    pub(crate) id: [u8; 4],
    pub(crate) aead: XChaCha,
    pub(crate) mac: Hmac<Sha256>,
}

/// The keys that protect `requestState`.
///
/// The first key seals new states; every key opens. To rotate without breaking flows in
/// flight, deploy `new,old` everywhere, then (after the state TTL) `new` alone.
///
/// Keys are 32 random bytes, given in base64. A key is never used directly: the AEAD key
/// and the key id are derived from it with HKDF-SHA256, so the same secret can safely serve
/// elsewhere.
pub struct StateKeys {
    pub(crate) keys: Vec<Key>,
    pub(crate) ephemeral: bool,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<String> = self.keys.iter().map(|k| hex(&k.id)).collect();
        f.debug_struct("StateKeys")
            .field("key_ids", &ids)
            .field("ephemeral", &self.ephemeral)
            .finish()
    }
}

/// Bytes as lowercase hex (key ids in `Debug`, digests in tests).
pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl StateKeys {
    /// Keys from raw bytes, sealing key first.
    pub fn new(keys: &[[u8; KEY_LEN]]) -> Result<Self, KeyError> {
        if keys.is_empty() {
            return Err(KeyError::Empty);
        }
        let mut out: Vec<Key> = Vec::with_capacity(keys.len());
        for (index, master) in keys.iter().enumerate() {
            let key = derive(master);
            if out.iter().any(|k| k.id == key.id) {
                return Err(KeyError::Duplicate { index });
            }
            out.push(key);
        }
        Ok(Self {
            keys: out,
            ephemeral: false,
        })
    }

    /// Keys from a comma-separated list of base64 (standard or URL-safe) keys, sealing key
    /// first: `"<new>,<old>"`.
    pub fn from_base64_list(list: &str) -> Result<Self, KeyError> {
        let mut raw = Vec::new();
        for (index, part) in list
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .enumerate()
        {
            let bytes = STANDARD
                .decode(part)
                .or_else(|_| URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')))
                .map_err(|_| KeyError::NotBase64 { index })?;
            let key: [u8; KEY_LEN] =
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| KeyError::WrongLength {
                        index,
                        len: bytes.len(),
                    })?;
            raw.push(key);
        }
        Self::new(&raw)
    }

    /// Keys from an environment variable holding a base64 list (see
    /// [`from_base64_list`](Self::from_base64_list)), e.g. `STERNA_STATE_KEYS`.
    pub fn from_env(var: &str) -> Result<Self, KeyError> {
        let list = std::env::var(var).map_err(|_| KeyError::MissingVariable(var.to_owned()))?;
        Self::from_base64_list(&list)
    }

    /// A random key that lives as long as this process.
    ///
    /// States sealed with it cannot be opened by another replica or after a restart: use it
    /// for a single process (stdio servers, tests). Choosing it is logged.
    pub fn ephemeral() -> Self {
        let mut master = [0u8; KEY_LEN];
        fill_random(&mut master);
        let mut keys = Self::new(&[master]).expect("one fresh key");
        keys.ephemeral = true;
        keys
    }

    /// A new random key in base64, for configuration (`sterna keygen` prints one).
    pub fn generate_base64() -> String {
        let mut master = [0u8; KEY_LEN];
        fill_random(&mut master);
        STANDARD.encode(master)
    }

    /// True for [`ephemeral`](Self::ephemeral) keys.
    pub fn is_ephemeral(&self) -> bool {
        self.ephemeral
    }

    pub(crate) fn sealing(&self) -> &Key {
        &self.keys[0]
    }

    pub(crate) fn find(&self, id: &[u8]) -> Option<&Key> {
        self.keys.iter().find(|k| k.id == id)
    }
}

fn derive(master: &[u8; KEY_LEN]) -> Key {
    let hk = Hkdf::<Sha256>::new(Some(b"sterna requestState"), master);
    let mut aead_key = [0u8; 32];
    hk.expand(b"xchacha20poly1305 v1", &mut aead_key)
        .expect("32 bytes is a valid HKDF output length");
    let digest = Sha256::new()
        .chain_update(b"sterna requestState key id v1")
        .chain_update(master)
        .finalize();
    let mut id = [0u8; 4];
    id.copy_from_slice(&digest[..4]);
    let aead = XChaCha::new(aead_key);
    aead_key.fill(0);
    // A key of its own for the MAC of stored-state references (never the AEAD key).
    let mut mac_key = [0u8; 32];
    hk.expand(b"hmac-sha256 stored state v1", &mut mac_key)
        .expect("32 bytes is a valid HKDF output length");
    let mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(&mac_key).expect("HMAC takes any key length");
    mac_key.fill(0);
    Key { id, aead, mac }
}

pub(crate) fn fill_random(buf: &mut [u8]) {
    getrandom::fill(buf).expect("the operating system provides random bytes");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        let a = StateKeys::generate_base64();
        let b = StateKeys::generate_base64();
        let keys = StateKeys::from_base64_list(&format!("{a}, {b}")).unwrap();
        assert_eq!(keys.keys.len(), 2);
        assert_eq!(
            StateKeys::from_base64_list(&format!("{a},{a}")).unwrap_err(),
            KeyError::Duplicate { index: 1 }
        );
        assert_eq!(
            StateKeys::from_base64_list("").unwrap_err(),
            KeyError::Empty
        );
        assert_eq!(
            StateKeys::from_base64_list("not base64!").unwrap_err(),
            KeyError::NotBase64 { index: 0 }
        );
        assert_eq!(
            StateKeys::from_base64_list("AAAA").unwrap_err(),
            KeyError::WrongLength { index: 0, len: 3 }
        );
        let dbg = format!("{keys:?}");
        assert!(!dbg.contains(&a), "Debug must not print keys");
    }
}
