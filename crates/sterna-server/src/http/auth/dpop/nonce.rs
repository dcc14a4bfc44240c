//! Server-provided DPoP nonces (RFC 9449 §9): a proof must carry a nonce the server issued
//! recently, which bounds how long a proof made in advance stays usable. Nonces are
//! stateless: `base64url(period number ‖ HMAC-SHA256(secret, period number)[..16])`, so
//! every replica sharing the secret issues and accepts the same ones, with no store.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::time::Duration;

const LABEL: &[u8] = b"sterna dpop nonce v1";

/// Server-provided nonces for DPoP proofs (RFC 9449 §9), given to
/// [`DpopBuilder::nonces`](crate::http::auth::DpopBuilder::nonces).
///
/// A proof without the current nonce (or the one before it) is answered `401` with
/// `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a `DPoP-Nonce` header; a client
/// retries with a new proof carrying it. Each successful answer carries the current nonce
/// too. A nonce is good for one to two [`periods`](Self::period) (default 5 min).
#[derive(Clone)]
pub struct DpopNonces {
    key: Vec<u8>,
    period: u64,
}

impl fmt::Debug for DpopNonces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopNonces")
            .field("period_secs", &self.period)
            .finish_non_exhaustive()
    }
}

impl DpopNonces {
    /// Nonces derived from `secret`: give every replica of a fleet the same secret (at
    /// least 32 random bytes, from your secret store).
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        Self {
            key: secret.as_ref().to_vec(),
            period: 300,
        }
    }

    /// Nonces from a secret drawn now: for a single replica.
    pub fn random() -> Self {
        let mut secret = [0u8; 32];
        crate::state::fill_random(&mut secret);
        Self::new(secret)
    }

    /// How often the nonce changes (at least 1 s; default 5 min).
    pub fn period(mut self, period: Duration) -> Self {
        self.period = period.as_secs().max(1);
        self
    }

    fn tag(&self, number: u64) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(LABEL);
        mac.update(&number.to_be_bytes());
        mac
    }

    fn at(&self, now: u64) -> String {
        let number = now / self.period;
        let mut raw = number.to_be_bytes().to_vec();
        raw.extend_from_slice(&self.tag(number).finalize().into_bytes()[..16]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    fn accepts_at(&self, nonce: &str, now: u64) -> bool {
        let Ok(raw) = URL_SAFE_NO_PAD.decode(nonce) else {
            return false;
        };
        if raw.len() != 24 {
            return false;
        }
        let number = u64::from_be_bytes(raw[..8].try_into().expect("8 bytes"));
        let current = now / self.period;
        (number == current || number + 1 == current)
            && self.tag(number).verify_truncated_left(&raw[8..]).is_ok()
    }

    /// The nonce to hand out now.
    pub(crate) fn current(&self) -> String {
        self.at(crate::state::unix_now())
    }

    /// Whether `nonce` is the current one or the one before.
    pub(crate) fn accepts(&self, nonce: &str) -> bool {
        self.accepts_at(nonce, crate::state::unix_now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_and_previous_period_only() {
        let n = DpopNonces::new([7u8; 32]).period(Duration::from_secs(60));
        let issued = n.at(6000);
        assert!(n.accepts_at(&issued, 6000));
        assert!(
            n.accepts_at(&issued, 6119),
            "the next period still accepts it"
        );
        assert!(
            !n.accepts_at(&issued, 6120),
            "two periods later it is stale"
        );
        assert!(!n.accepts_at(&issued, 5999), "not before it was issued");
        let other = DpopNonces::new([8u8; 32]).period(Duration::from_secs(60));
        assert!(!other.accepts_at(&issued, 6000), "another secret");
        assert!(!n.accepts_at("not-a-nonce", 6000));
        assert!(!n.accepts_at("", 6000));
        assert_eq!(issued.len(), 32);
    }
}
