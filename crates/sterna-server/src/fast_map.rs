//! The hash map of the request path's lookups whose keys no client chooses.
//!
//! [`FastMap`] hashes with `foldhash` (seeded per process at random), several times
//! cheaper than std's SipHash on the short keys these maps hold. Its resistance to
//! crafted collisions is weaker than SipHash's, so it is kept to maps whose stored keys
//! come from the server or the application: tool, prompt and resource names, type ids,
//! ids the server generated (sessions, streams, pushed requests), quota keys (digests)
//! and the keys a handler gives its questions. A client may look any key up (a lookup
//! cannot make a map slow); a map that stores what a client chose — the ids of its
//! requests in flight, say — keeps std's `HashMap`.

/// A `HashMap` hashed with `foldhash`; see the [module docs](self).
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
