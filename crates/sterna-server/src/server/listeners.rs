//! Each client's share of open `subscriptions/listen` streams: a stream holds its
//! connection and a place in the broadcast of changes for as long as the client keeps
//! it, so one client may hold at most a fixed number at once (per process), and one
//! client opening streams without end leaves every other client able to listen.

use super::QuotaKey;
use super::quota::limit_error;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use sterna_types::error::{ErrorCode, ErrorObject};

/// How many `subscriptions/listen` streams one client (an authenticated principal, or an
/// anonymous peer address: see [`QuotaKey`]) may hold open at once by default (see
/// [`ServerBuilder::listens_per_principal`](super::ServerBuilder::listens_per_principal)).
pub const DEFAULT_LISTENS_PER_PRINCIPAL: usize = 16;

/// The open streams of each client.
#[derive(Debug)]
pub(crate) struct Listeners {
    limit: usize,
    open: Mutex<HashMap<QuotaKey, usize>>,
}

/// A place taken by one open stream; given back when dropped (the stream ended, or its
/// client went away).
#[derive(Debug)]
pub(crate) struct Place {
    listeners: Arc<Listeners>,
    key: QuotaKey,
}

impl Listeners {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit: limit.max(1),
            open: Mutex::default(),
        })
    }

    /// A place for one more stream of `key`, or the refusal that names the limit.
    pub(crate) fn take(self: &Arc<Self>, key: QuotaKey) -> Result<Place, ErrorObject> {
        let mut open = self.lock();
        let held = open.entry(key.clone()).or_default();
        if *held >= self.limit {
            let msg = format!(
                "Too many subscriptions/listen streams: this client already holds {} open, its share of the server (listens_per_principal); end one before opening another",
                self.limit
            );
            return Err(limit_error(
                ErrorCode::INTERNAL_ERROR,
                msg,
                "listens_per_principal",
                self.limit,
            ));
        }
        *held += 1;
        Ok(Place {
            listeners: self.clone(),
            key,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<QuotaKey, usize>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[cfg(test)]
    fn held(&self, key: &QuotaKey) -> usize {
        self.lock().get(key).copied().unwrap_or(0)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self.listeners.lock();
        if let Some(held) = open.get_mut(&self.key) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                open.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Principal;

    #[test]
    fn a_client_holds_at_most_its_share_and_gets_places_back() {
        let l = Listeners::new(2);
        let (a, b) = (
            QuotaKey::of(&Principal::new("a")),
            QuotaKey::of(&Principal::new("b")),
        );
        let one = l.take(a.clone()).unwrap();
        let _two = l.take(a.clone()).unwrap();
        let refused = l.take(a.clone()).unwrap_err();
        assert_eq!(
            refused.data.as_ref().unwrap()["limit"],
            "listens_per_principal"
        );
        let _other = l.take(b.clone()).expect("another client is unaffected");
        drop(one);
        let _three = l
            .take(a.clone())
            .expect("a place given back is taken again");
        drop((_two, _three, _other));
        assert_eq!(l.held(&a), 0);
        assert!(l.lock().is_empty(), "no key stays once its streams ended");
    }
}
