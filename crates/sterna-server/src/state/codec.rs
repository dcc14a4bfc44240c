//! The sealed token: `base64url( 0x02 | key id (4) | nonce (24) | XChaCha20-Poly1305(payload) )`.
//!
//! What the state is bound to (audience, principal, method, target, argument digest) is
//! not stored in the token: it is the AEAD's associated data, rebuilt from the retry. A
//! state replayed against another principal, tool or arguments fails authentication
//! exactly like a forged one. A sealed payload kept in a [`StateStore`](super::StateStore)
//! is the same bytes (not base64), its associated data extended with the id it is stored
//! under (see `stored.rs`).

use super::keys::StateKeys;
use super::random::fill_unique;
use super::xchacha::{NONCE, TAG};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// Inline states with a flow id (current).
pub(crate) const VERSION: u8 = 2;
/// Inline states sealed before flow ids (still opened, so a rolling upgrade breaks no flow).
const VERSION_1: u8 = 1;
const HEADER: usize = 1 + 4 + NONCE;

/// What a state is bound to. Every field must be equal on the retry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding<'a> {
    /// The server's name (so two servers sharing keys cannot swap states).
    pub(crate) audience: &'a str,
    /// Who asked (empty for anonymous callers).
    pub(crate) principal: &'a str,
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub(crate) method: &'a str,
    /// Tool or prompt name, or resource URI.
    pub(crate) target: &'a str,
    /// SHA-256 of the canonical arguments.
    pub(crate) args_digest: &'a [u8; 32],
}

impl Binding<'_> {
    /// The associated data, with room for `extra` more bytes (sized exactly: a buffer
    /// that grows is reallocated off the allocator's per-thread cache).
    fn aad(&self, key_id: &[u8; 4], extra: usize) -> Vec<u8> {
        let parts = [self.audience, self.principal, self.method, self.target];
        let len = 14 + parts.iter().map(|p| 8 + p.len()).sum::<usize>() + 32;
        let mut out = Vec::with_capacity(len + extra);
        out.extend_from_slice(b"sterna-rs1");
        out.extend_from_slice(key_id);
        for part in parts {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part.as_bytes());
        }
        out.extend_from_slice(self.args_digest);
        out
    }
}

/// An answer carried from an earlier round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Carried {
    pub(crate) key: String,
    /// Digest of the question it answers (pins the answer to that question).
    pub(crate) question: [u8; 8],
    /// The answer, as JSON.
    pub(crate) json: Vec<u8>,
}

/// What one flow carries from a round to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FlowState {
    /// Round number, starting at 1.
    pub(crate) round: u32,
    /// The questions asked in the round this state was issued with: key and digest.
    pub(crate) asked: Vec<(String, [u8; 8])>,
    /// Answers gathered so far.
    pub(crate) answers: Vec<Carried>,
    /// The handler's own state, as given (JSON for typed state, raw bytes otherwise).
    pub(crate) app: Option<Vec<u8>>,
    /// Random at the first round, carried to the last: ties every round of one operation
    /// together in traces, whichever replica served it.
    pub(crate) flow_id: [u8; 16],
}

/// A version 1 payload (no flow id).
#[derive(Deserialize)]
struct PayloadV1 {
    iat: u64,
    exp: u64,
    round: u32,
    asked: Vec<(String, [u8; 8])>,
    answers: Vec<Carried>,
    app: Option<Vec<u8>>,
}

impl PayloadV1 {
    /// The payload, with a flow id derived from the token's nonce (stable across retries
    /// of this one token; the next round's state carries it on).
    fn upgrade(self, nonce: &[u8; 24]) -> StatePayload {
        let mut flow_id = [0u8; 16];
        flow_id.copy_from_slice(&nonce[8..]);
        StatePayload {
            iat: self.iat,
            exp: self.exp,
            flow: FlowState {
                round: self.round,
                asked: self.asked,
                answers: self.answers,
                app: self.app,
                flow_id,
            },
        }
    }
}

/// The plaintext of a state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatePayload {
    /// Issued at (Unix seconds).
    pub(crate) iat: u64,
    /// Expires at (Unix seconds).
    pub(crate) exp: u64,
    /// The flow (postcard encodes a nested struct exactly as its fields inline).
    pub(crate) flow: FlowState,
}

/// Why a state was refused. Never sent to the client (which gets one generic message);
/// logged at debug level for the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    Oversized,
    Malformed,
    UnknownKey,
    Forged,
    Expired,
    NotYetValid,
    /// A genuine stored-state reference whose payload the store does not hold.
    Gone,
}

impl OpenError {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::Oversized => "oversized",
            Self::Malformed => "malformed",
            Self::UnknownKey => "unknown key id",
            Self::Forged => {
                "authentication failed (tampered, or bound to another principal, target or arguments)"
            }
            Self::Expired => "expired",
            Self::NotYetValid => "issued in the future",
            Self::Gone => "stored state not found (expired, removed or never stored)",
        }
    }
}

/// An opened state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opened {
    pub(crate) payload: StatePayload,
    /// Unique id of this token (for single-use enforcement).
    pub(crate) jti: [u8; 16],
}

/// A payload encoded for sealing: room for the header, then the plaintext.
#[derive(Debug)]
pub(crate) struct Plain(Vec<u8>);

impl Plain {
    pub(crate) fn encode(payload: &StatePayload) -> Self {
        let mut buf = Vec::with_capacity(HEADER + 64 + TAG);
        buf.resize(HEADER, 0);
        Self(postcard::to_extend(payload, buf).expect("payload serializes"))
    }

    /// Length of the sealed bytes (before base64).
    pub(crate) fn sealed_len(&self) -> usize {
        self.0.len() + TAG
    }
}

/// Seals `payload` under the sealing key, as a token.
#[cfg(any(test, feature = "internals", feature = "fuzzing"))]
pub(crate) fn seal(keys: &StateKeys, binding: &Binding<'_>, payload: &StatePayload) -> String {
    URL_SAFE_NO_PAD.encode(seal_plain(keys, binding, Plain::encode(payload), &[]))
}

/// Seals an encoded payload; `context` extends the associated data (empty for inline
/// states).
pub(crate) fn seal_plain(
    keys: &StateKeys,
    binding: &Binding<'_>,
    plain: Plain,
    context: &[u8],
) -> Vec<u8> {
    let key = keys.sealing();
    let mut buf = plain.0;
    buf[0] = VERSION;
    buf[1..5].copy_from_slice(&key.id);
    let mut nonce = [0u8; 24];
    fill_unique(&mut nonce);
    buf[5..HEADER].copy_from_slice(&nonce);
    let mut aad = binding.aad(&key.id, 1 + context.len());
    aad.push(VERSION);
    aad.extend_from_slice(context);
    let tag = key.aead.seal(&nonce, &aad, &mut buf[HEADER..]);
    buf.extend_from_slice(&tag);
    buf
}

/// Decodes a token's base64, refusing oversized ones before decoding.
pub(crate) fn decode(token: &str, max_len: usize) -> Result<Vec<u8>, OpenError> {
    if token.len() > max_len {
        return Err(OpenError::Oversized);
    }
    // Sized up front: `decode` zeroes a fresh buffer (`calloc`, off the per-thread cache).
    let mut out = Vec::with_capacity(base64::decoded_len_estimate(token.len()));
    (URL_SAFE_NO_PAD.decode_vec(token.as_bytes(), &mut out)).map_err(|_| OpenError::Malformed)?;
    Ok(out)
}

/// Opens and checks a state. `now` is Unix seconds; `skew` is the clock leeway in seconds.
#[cfg(any(test, feature = "internals", feature = "fuzzing"))]
pub(crate) fn open(
    keys: &StateKeys,
    binding: &Binding<'_>,
    token: &str,
    max_len: usize,
    now: u64,
    skew: u64,
) -> Result<Opened, OpenError> {
    let buf = decode(token, max_len)?;
    open_sealed(keys, binding, buf, &[], now, skew)
}

/// Opens and checks sealed bytes; `context` as given to [`seal_plain`].
pub(crate) fn open_sealed(
    keys: &StateKeys,
    binding: &Binding<'_>,
    mut buf: Vec<u8>,
    context: &[u8],
    now: u64,
    skew: u64,
) -> Result<Opened, OpenError> {
    if buf.len() < HEADER + TAG || !matches!(buf[0], VERSION | VERSION_1) {
        return Err(OpenError::Malformed);
    }
    let key_id: [u8; 4] = buf[1..5].try_into().expect("4 bytes");
    let key = keys.find(&key_id).ok_or(OpenError::UnknownKey)?;
    let nonce: [u8; 24] = buf[5..HEADER].try_into().expect("24 bytes");
    let tag_at = buf.len() - TAG;
    let tag: [u8; TAG] = buf[tag_at..].try_into().map_err(|_| OpenError::Malformed)?;
    let mut aad = binding.aad(&key_id, 1 + context.len());
    if buf[0] == VERSION {
        // Version 2 authenticates its version byte (version 1 did not): a token cannot be
        // relabelled to be decoded the other way.
        aad.push(VERSION);
    }
    aad.extend_from_slice(context);
    key.aead
        .open(&nonce, &aad, &mut buf[HEADER..tag_at], tag)
        .map_err(|_| OpenError::Forged)?;
    let plain = &buf[HEADER..tag_at];
    let payload: StatePayload = if buf[0] == VERSION_1 {
        let old: PayloadV1 = postcard::from_bytes(plain).map_err(|_| OpenError::Malformed)?;
        old.upgrade(&nonce)
    } else {
        postcard::from_bytes(plain).map_err(|_| OpenError::Malformed)?
    };
    if now > payload.exp.saturating_add(skew) {
        return Err(OpenError::Expired);
    }
    if payload.iat > now.saturating_add(skew) {
        return Err(OpenError::NotYetValid);
    }
    let mut jti = [0u8; 16];
    jti.copy_from_slice(&nonce[..16]);
    Ok(Opened { payload, jti })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding<'a>(principal: &'a str, target: &'a str, digest: &'a [u8; 32]) -> Binding<'a> {
        Binding {
            audience: "srv",
            principal,
            method: "tools/call",
            target,
            args_digest: digest,
        }
    }

    fn payload() -> StatePayload {
        StatePayload {
            iat: 1000,
            exp: 1600,
            flow: FlowState {
                round: 1,
                asked: vec![("pick_region".into(), [7; 8])],
                answers: vec![],
                app: None,
                flow_id: [9; 16],
            },
        }
    }

    #[test]
    fn seal_open_and_refusals() {
        let keys = StateKeys::ephemeral();
        let d = [1u8; 32];
        let b = binding("alice", "provision_database", &d);
        let token = seal(&keys, &b, &payload());
        assert!(token.len() < 200, "{}", token.len());
        let opened = open(&keys, &b, &token, 4096, 1100, 0).unwrap();
        assert_eq!(opened.payload, payload());
        // Each seal uses a fresh nonce, so the same payload gives a new token.
        assert_ne!(seal(&keys, &b, &payload()), token);

        let other_digest = [2u8; 32];
        let cases = [
            (
                binding("mallory", "provision_database", &d),
                OpenError::Forged,
            ),
            (binding("alice", "drop_database", &d), OpenError::Forged),
            (
                binding("alice", "provision_database", &other_digest),
                OpenError::Forged,
            ),
        ];
        for (b2, want) in cases {
            assert_eq!(open(&keys, &b2, &token, 4096, 1100, 0), Err(want));
        }
        assert_eq!(
            open(&keys, &b, &token, 4096, 1601, 0),
            Err(OpenError::Expired)
        );
        assert!(open(&keys, &b, &token, 4096, 1601, 5).is_ok());
        assert_eq!(
            open(&keys, &b, &token, 10, 1100, 0),
            Err(OpenError::Oversized)
        );
        for cut in 1..8 {
            assert!(open(&keys, &b, &token[..token.len() - cut], 4096, 1100, 0).is_err());
        }
        assert_eq!(
            open(&keys, &b, "AAAA", 4096, 1100, 0),
            Err(OpenError::Malformed)
        );
        assert_eq!(
            open(&keys, &b, "!!!", 4096, 1100, 0),
            Err(OpenError::Malformed)
        );
        // Flip every byte position in turn: none opens.
        let raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in 0..raw.len() {
            let mut t = raw.clone();
            t[i] ^= 0x01;
            assert!(open(&keys, &b, &URL_SAFE_NO_PAD.encode(&t), 4096, 1100, 0).is_err());
        }
        // Another key ring cannot open it.
        let other = StateKeys::ephemeral();
        assert_eq!(
            open(&other, &b, &token, 4096, 1100, 0),
            Err(OpenError::UnknownKey)
        );
    }

    /// A state sealed for `tools/call` of a target does not open for another method with a
    /// target of the same name (a prompt or a resource called like the tool), nor for
    /// another audience.
    #[test]
    fn the_method_and_audience_are_bound_on_their_own() {
        let keys = StateKeys::ephemeral();
        let d = [1u8; 32];
        let b = binding("alice", "report", &d);
        let token = seal(&keys, &b, &payload());
        assert!(open(&keys, &b, &token, 4096, 1100, 0).is_ok());
        for method in ["prompts/get", "resources/read", "tools/call "] {
            let other = Binding {
                method,
                ..binding("alice", "report", &d)
            };
            assert_eq!(
                open(&keys, &other, &token, 4096, 1100, 0),
                Err(OpenError::Forged)
            );
        }
        let elsewhere = Binding {
            audience: "other",
            ..binding("alice", "report", &d)
        };
        assert_eq!(
            open(&keys, &elsewhere, &token, 4096, 1100, 0),
            Err(OpenError::Forged)
        );
    }

    /// A state sealed by a version 1 server (before flow ids) still opens, with a flow id
    /// derived from its nonce; relabelling either version as the other fails.
    #[test]
    fn version_1_states_open() {
        #[derive(Serialize)]
        struct V1<'a>(
            u64,
            u64,
            u32,
            &'a [(String, [u8; 8])],
            &'a [Carried],
            Option<Vec<u8>>,
        );
        let keys = StateKeys::ephemeral();
        let d = [1u8; 32];
        let b = binding("alice", "t", &d);
        let p = payload();
        let f = &p.flow;
        let v1 = V1(p.iat, p.exp, f.round, &f.asked, &f.answers, f.app.clone());
        let key = keys.sealing();
        let mut buf = vec![VERSION_1];
        buf.extend_from_slice(&key.id);
        buf.extend_from_slice(&[0x33; 24]);
        let mut buf = postcard::to_extend(&v1, buf).unwrap();
        let aad = b.aad(&key.id, 0);
        let tag = key.aead.seal(&[0x33; 24], &aad, &mut buf[HEADER..]);
        buf.extend_from_slice(&tag);
        let old = URL_SAFE_NO_PAD.encode(&buf);
        let opened = open(&keys, &b, &old, 4096, 1100, 0).unwrap();
        assert_eq!(opened.payload.flow.flow_id, [0x33; 16]);
        assert_eq!(opened.payload.flow.asked, f.asked);
        buf[0] = VERSION;
        let relabelled = URL_SAFE_NO_PAD.encode(&buf);
        assert!(open(&keys, &b, &relabelled, 4096, 1100, 0).is_err());
        let mut new = URL_SAFE_NO_PAD.decode(seal(&keys, &b, &p)).unwrap();
        new[0] = VERSION_1;
        let relabelled = URL_SAFE_NO_PAD.encode(&new);
        assert_eq!(
            open(&keys, &b, &relabelled, 4096, 1100, 0),
            Err(OpenError::Forged)
        );
    }

    #[test]
    fn no_two_seals_share_a_nonce_across_threads() {
        let keys = std::sync::Arc::new(StateKeys::ephemeral());
        let d = [1u8; 32];
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let keys = keys.clone();
                std::thread::spawn(move || {
                    let b = binding("alice", "t", &d);
                    (0..500)
                        .map(|_| {
                            let raw = URL_SAFE_NO_PAD.decode(seal(&keys, &b, &payload())).unwrap();
                            <[u8; 24]>::try_from(&raw[5..HEADER]).unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        for t in threads {
            for nonce in t.join().unwrap() {
                assert_ne!(nonce, [0u8; 24]);
                assert!(seen.insert(nonce), "a nonce came out twice");
            }
        }
    }

    #[test]
    fn rotation() {
        let old = StateKeys::generate_base64();
        let new = StateKeys::generate_base64();
        let before = StateKeys::from_base64_list(&old).unwrap();
        let during = StateKeys::from_base64_list(&format!("{new},{old}")).unwrap();
        let d = [0u8; 32];
        let b = binding("", "t", &d);
        let in_flight = seal(&before, &b, &payload());
        assert!(open(&during, &b, &in_flight, 4096, 1100, 0).is_ok());
        let fresh = seal(&during, &b, &payload());
        assert_eq!(
            open(&before, &b, &fresh, 4096, 1100, 0),
            Err(OpenError::UnknownKey)
        );
    }
}
