//! A request's `_meta`, decoded once per distinct text on each thread.
//!
//! A client sends the same `_meta` (its protocol version, capabilities and name) with
//! every request, and decoding it was a tenth of an echo's work. Each thread keeps the
//! last texts it decoded with their shared value. The same text always decodes to the
//! same value, so a hit is exactly what decoding again would give: the cache changes
//! what a request costs, never what it means.
//!
//! It is bounded: [`SLOTS`] entries of at most [`MAX_TEXT`] bytes of text per thread, slots
//! chosen by a hash seeded at random per thread. A `_meta` that differs with each request
//! (a progress token, trace context) costs its decoding, as it did before; one client's
//! entries may push out another's, which costs that other client a decode and nothing
//! else.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::cell::RefCell;
use std::hash::BuildHasher;
use std::sync::Arc;
use sterna_types::meta::RequestMeta;

/// Entries per thread.
const SLOTS: usize = 8;
/// The longest `_meta` text kept.
const MAX_TEXT: usize = 1024;

struct Entry {
    text: Box<str>,
    meta: Arc<RequestMeta>,
}

struct Cache {
    seed: foldhash::fast::RandomState,
    slots: [Option<Entry>; SLOTS],
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache {
        seed: foldhash::fast::RandomState::default(),
        slots: Default::default(),
    });
}

/// The `_meta` written as `raw`, decoded (or found decoded from the same text).
pub(crate) fn decode(raw: &RawValue) -> Result<Arc<RequestMeta>, serde_json::Error> {
    let text = raw.get();
    if text.len() > MAX_TEXT {
        return parse(text);
    }
    CACHE
        .try_with(|cache| cache.borrow_mut().get_or_parse(text))
        // The thread is ending: decoded as if there were no cache.
        .unwrap_or_else(|_| parse(text))
}

impl Cache {
    fn get_or_parse(&mut self, text: &str) -> Result<Arc<RequestMeta>, serde_json::Error> {
        let slot = self.seed.hash_one(text) as usize % SLOTS;
        if let Some(entry) = &self.slots[slot]
            && *entry.text == *text
        {
            return Ok(entry.meta.clone());
        }
        let meta = parse(text)?;
        self.slots[slot] = Some(Entry {
            text: text.into(),
            meta: meta.clone(),
        });
        Ok(meta)
    }
}

fn parse(text: &str) -> Result<Arc<RequestMeta>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    RequestMeta::deserialize(&mut de).map(Arc::new)
}

/// What a decoding error says, without its place inside the `_meta` text (the reader of
/// the whole message adds its own).
pub(crate) fn message(e: &serde_json::Error) -> String {
    let said = e.to_string();
    match said.rfind(" at line ") {
        Some(at) if e.line() != 0 => said[..at].to_owned(),
        _ => said,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}"#;

    #[test]
    fn the_same_text_is_decoded_once_and_shared() {
        let first = decode(&raw(META)).unwrap();
        let again = decode(&raw(META)).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "decoded again");
        assert_eq!(first.client_info.as_ref().unwrap().name, "a");
    }

    #[test]
    fn a_different_text_is_its_own_value() {
        let other = META.replace(r#""name":"a""#, r#""name":"b""#);
        let a = decode(&raw(META)).unwrap();
        let b = decode(&raw(&other)).unwrap();
        assert_eq!(b.client_info.as_ref().unwrap().name, "b");
        assert_eq!(a.client_info.as_ref().unwrap().name, "a");
        // Whitespace makes another text: decoded on its own, to an equal value.
        let spaced = decode(&raw(&META.replace(':', ": "))).unwrap();
        assert!(!Arc::ptr_eq(&a, &spaced));
        assert_eq!(*a, *spaced);
    }

    #[test]
    fn a_long_text_is_decoded_each_time() {
        let padding = "x".repeat(MAX_TEXT);
        let long = META.replace(r#""name":"a""#, &format!(r#""name":"{padding}""#));
        let first = decode(&raw(&long)).unwrap();
        let again = decode(&raw(&long)).unwrap();
        assert!(!Arc::ptr_eq(&first, &again));
        assert_eq!(*first, *again);
    }

    #[test]
    fn errors_are_never_kept_and_say_what_is_wrong_without_a_place() {
        let missing = r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#;
        for _ in 0..2 {
            let e = decode(&raw(missing)).unwrap_err();
            let said = message(&e);
            assert!(said.contains("protocolVersion"), "{said}");
            assert!(!said.contains(" at line "), "{said}");
        }
    }

    #[test]
    fn many_texts_through_few_slots_each_decode_to_their_own() {
        for round in 0..3 {
            for n in 0..(SLOTS * 4) {
                let text = META.replace(r#""name":"a""#, &format!(r#""name":"c{n}""#));
                let meta = decode(&raw(&text)).unwrap();
                let name = &meta.client_info.as_ref().unwrap().name;
                assert_eq!(*name, format!("c{n}"), "round {round}");
            }
        }
    }
}
