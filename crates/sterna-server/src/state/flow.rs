//! The lifecycle of a flow's `requestState`: open the incoming one (verify, fetch when
//! stored, decode, redeem when single-use), seal the next one (inline, or stored with a
//! reference). Owns the clock, the TTL and the skew.

use super::StateConfig;
use super::codec::{
    Binding, FlowState, OpenError, Opened, Plain, StatePayload, decode, open_sealed, seal_plain,
};
use super::replay::ReplayError;
use super::store::StoreError;
use super::stored::{self, REFERENCE};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::fmt;

/// Why an incoming state was refused. The client only ever hears "invalid or expired"
/// (or, when a store failed, that the service is unavailable); the reason is for the
/// operator's log.
#[derive(Debug)]
pub(crate) enum Refused {
    /// It does not open: tampered, truncated, expired, bound to something else.
    Invalid(OpenError),
    /// A single-use state seen before.
    Replayed,
    /// The replay store could not answer (fail closed: the state is not accepted).
    Store(ReplayError),
    /// A single-use target on a server without a replay store (the builder prevents it).
    NoStore,
    /// The state store could not answer (fail closed).
    StateStore(StoreError),
    /// A stored-state reference on a server without a state store.
    NoStateStore,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(e) => f.write_str(e.reason()),
            Self::Replayed => f.write_str("replayed (single-use)"),
            Self::Store(e) => write!(f, "{e}"),
            Self::NoStore => f.write_str("no replay store for a single-use target"),
            Self::StateStore(e) => write!(f, "{e}"),
            Self::NoStateStore => f.write_str("a stored-state reference, but no state store"),
        }
    }
}

/// Why the next state could not be issued.
#[derive(Debug)]
pub(crate) enum SealError {
    /// Larger than the server accepts back (inline) or keeps (stored).
    TooLarge { len: usize, limit: usize },
    /// The state store could not keep it.
    Store(StoreError),
}

/// Length of `n` bytes in unpadded base64.
fn b64_len(n: usize) -> usize {
    (n * 4).div_ceil(3)
}

impl StateConfig {
    /// Opens an incoming state bound to `binding`; a single-use state (`single_use` names
    /// its owner) is consumed here, before any handler code runs, against the owner's
    /// share of the replay store.
    pub(crate) async fn open_flow(
        &self,
        binding: &Binding<'_>,
        token: &str,
        single_use: Option<&crate::server::QuotaKey>,
    ) -> Result<FlowState, Refused> {
        let buf = decode(token, self.max_len).map_err(Refused::Invalid)?;
        let opened = if buf.first() == Some(&REFERENCE) {
            self.open_stored(binding, &buf).await?
        } else {
            let skew = self.skew.as_secs();
            open_sealed(&self.keys, binding, buf, &[], self.now(), skew)
                .map_err(Refused::Invalid)?
        };
        if let Some(owner) = single_use {
            let store = self.replay.as_ref().ok_or(Refused::NoStore)?;
            let expires = opened.payload.exp.saturating_add(self.skew.as_secs());
            match store.consume(opened.jti, owner, expires).await {
                Ok(true) => {}
                Ok(false) => return Err(Refused::Replayed),
                Err(e) => return Err(Refused::Store(e)),
            }
        }
        Ok(opened.payload.flow)
    }

    /// A reference: its MAC first (a forged id never reaches the store), then the
    /// payload, opened under the reference's context.
    async fn open_stored(&self, binding: &Binding<'_>, buf: &[u8]) -> Result<Opened, Refused> {
        let reference = stored::verify(&self.keys, buf).map_err(Refused::Invalid)?;
        let store = self.store.as_ref().ok_or(Refused::NoStateStore)?;
        let sealed = store
            .get(reference.id)
            .await
            .map_err(Refused::StateStore)?
            .ok_or(Refused::Invalid(OpenError::Gone))?;
        if sealed.len() > self.max_stored_len {
            return Err(Refused::Invalid(OpenError::Oversized));
        }
        let skew = self.skew.as_secs();
        let context = reference.context();
        open_sealed(&self.keys, binding, sealed, &context, self.now(), skew)
            .map_err(Refused::Invalid)
    }

    /// Seals the state for the next round, valid for the configured TTL: inline, or kept
    /// in the state store with a reference for the client (as configured). Refuses to
    /// emit a state this server would itself refuse for its size. A stored state counts
    /// against `owner`'s share of the store.
    pub(crate) async fn seal_flow(
        &self,
        binding: &Binding<'_>,
        owner: &crate::server::QuotaKey,
        flow: FlowState,
    ) -> Result<String, SealError> {
        let now = self.now();
        let exp = now.saturating_add(self.ttl.as_secs());
        let plain = Plain::encode(&StatePayload {
            iat: now,
            exp,
            flow,
        });
        let inline_len = b64_len(plain.sealed_len());
        if let Some(store) = self
            .store
            .as_ref()
            .filter(|_| self.store_when.stores(inline_len))
        {
            if plain.sealed_len() > self.max_stored_len {
                return Err(SealError::TooLarge {
                    len: plain.sealed_len(),
                    limit: self.max_stored_len,
                });
            }
            let (reference, token) = stored::mint(&self.keys);
            let sealed = seal_plain(&self.keys, binding, plain, &reference.context());
            let expires = exp.saturating_add(self.skew.as_secs());
            store
                .put(reference.id, owner, sealed, expires)
                .await
                .map_err(SealError::Store)?;
            return Ok(token);
        }
        if inline_len > self.max_len {
            return Err(SealError::TooLarge {
                len: inline_len,
                limit: self.max_len,
            });
        }
        // Into a string sized up front: `encode` would zero a fresh buffer (`calloc`, which
        // never comes from the allocator's per-thread cache).
        let sealed = seal_plain(&self.keys, binding, plain, &[]);
        let mut token = String::with_capacity(sealed.len().div_ceil(3) * 4);
        URL_SAFE_NO_PAD.encode_string(&sealed, &mut token);
        Ok(token)
    }
}
