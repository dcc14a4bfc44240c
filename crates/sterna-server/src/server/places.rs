//! Each client's share of what it holds open: `subscriptions/listen` streams (a stream
//! holds its connection and a place in the broadcast of changes for as long as the
//! client keeps it) and, over HTTP, requests in flight (each holds a connection or an
//! HTTP/2 stream, and a task). One client holds at most a fixed number at once (per
//! process), so one client opening them without end leaves every other client served.

use super::QuotaKey;
use super::quota::limit_error;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use sterna_types::error::{ErrorCode, ErrorObject};

/// How many `subscriptions/listen` streams one client (an authenticated principal, or an
/// anonymous peer address: see [`QuotaKey`]) may hold open at once by default (see
/// [`ServerBuilder::listens_per_principal`](super::ServerBuilder::listens_per_principal)).
pub const DEFAULT_LISTENS_PER_PRINCIPAL: usize = 16;

/// What a share counts, as its refusal names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    /// The setting that sets the share (`data.limit` of the refusal).
    pub(crate) setting: &'static str,
    /// What is counted, plural ("subscriptions/listen streams").
    pub(crate) what: &'static str,
    /// What the client can do about it.
    pub(crate) remedy: &'static str,
}

/// The share of open `subscriptions/listen` streams.
pub(crate) const LISTENS: Share = Share {
    setting: "listens_per_principal",
    what: "subscriptions/listen streams",
    remedy: "end one before opening another",
};

/// What each client holds of one kind.
#[derive(Debug)]
pub(crate) struct Places {
    limit: usize,
    share: Share,
    open: Mutex<HashMap<QuotaKey, usize>>,
}

/// A place taken by one stream or request; given back when dropped (it ended, or its
/// client went away).
#[derive(Debug)]
pub(crate) struct Place {
    places: Arc<Places>,
    key: QuotaKey,
}

impl Places {
    pub(crate) fn new(limit: usize, share: Share) -> Arc<Self> {
        Arc::new(Self {
            limit: limit.max(1),
            share,
            open: Mutex::default(),
        })
    }

    /// A place for one more of `key`, or the refusal (`-32603`) that names the limit.
    pub(crate) fn take(self: &Arc<Self>, key: QuotaKey) -> Result<Place, ErrorObject> {
        let mut open = self.lock();
        let held = open.entry(key.clone()).or_default();
        if *held >= self.limit {
            let Share {
                setting,
                what,
                remedy,
            } = self.share;
            let msg = format!(
                "Too many {what}: this client already holds {}, its share of the server ({setting}); {remedy}",
                self.limit
            );
            return Err(limit_error(
                ErrorCode::INTERNAL_ERROR,
                msg,
                setting,
                self.limit,
            ));
        }
        *held += 1;
        Ok(Place {
            places: self.clone(),
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
        let mut open = self.places.lock();
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
        let l = Places::new(2, LISTENS);
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
