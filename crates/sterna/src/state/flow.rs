//! The lifecycle of a flow's `requestState`: open the incoming one (verify, decode,
//! redeem when single-use), seal the next one. Owns the clock, the TTL and the skew.

use super::StateConfig;
use super::codec::{Binding, FlowState, OpenError, StatePayload, open, seal};
use super::replay::ReplayError;
use std::fmt;

/// Why an incoming state was refused. The client only ever hears "invalid or expired";
/// the reason is for the operator's log.
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
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(e) => f.write_str(e.reason()),
            Self::Replayed => f.write_str("replayed (single-use)"),
            Self::Store(e) => write!(f, "{e}"),
            Self::NoStore => f.write_str("no replay store for a single-use target"),
        }
    }
}

/// The next state would be larger than the server accepts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLarge {
    pub(crate) len: usize,
    pub(crate) limit: usize,
}

impl StateConfig {
    /// Opens an incoming state bound to `binding`; a single-use state is consumed here,
    /// before any handler code runs.
    pub(crate) async fn open_flow(
        &self,
        binding: &Binding<'_>,
        token: &str,
        single_use: bool,
    ) -> Result<FlowState, Refused> {
        let skew = self.skew.as_secs();
        let opened = open(&self.keys, binding, token, self.max_len, self.now(), skew)
            .map_err(Refused::Invalid)?;
        if single_use {
            let store = self.replay.as_ref().ok_or(Refused::NoStore)?;
            let expires = opened.payload.exp.saturating_add(skew);
            match store.consume(opened.jti, expires).await {
                Ok(true) => {}
                Ok(false) => return Err(Refused::Replayed),
                Err(e) => return Err(Refused::Store(e)),
            }
        }
        Ok(opened.payload.flow)
    }

    /// Seals the state for the next round, valid for the configured TTL. Refuses to
    /// emit a state this server would itself refuse for its size.
    pub(crate) fn seal_flow(
        &self,
        binding: &Binding<'_>,
        flow: FlowState,
    ) -> Result<String, TooLarge> {
        let now = self.now();
        let payload = StatePayload {
            iat: now,
            exp: now.saturating_add(self.ttl.as_secs()),
            flow,
        };
        let token = seal(&self.keys, binding, &payload);
        if token.len() > self.max_len {
            return Err(TooLarge {
                len: token.len(),
                limit: self.max_len,
            });
        }
        Ok(token)
    }
}
