//! An implementation descriptor shared by many results and written as JSON once.

use super::Implementation;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// An [`Implementation`] shared between many messages, with its JSON rendered the first
/// time it is written: a server stamps its own on every result's `_meta`, and writing it
/// with `serde_json` is then a copy of those bytes (one that is only read, such as a peer's
/// `serverInfo`, is never rendered). Reads as the [`Implementation`] it holds.
#[derive(Clone)]
pub struct SharedImplementation(Arc<Rendered>);

struct Rendered {
    info: Implementation,
    json: OnceLock<Box<RawValue>>,
}

impl SharedImplementation {
    /// Shares `info`.
    pub fn new(info: Implementation) -> Self {
        Self(Arc::new(Rendered {
            info,
            json: OnceLock::new(),
        }))
    }

    fn rendered(&self) -> &RawValue {
        self.0.json.get_or_init(|| {
            serde_json::value::to_raw_value(&self.0.info).expect("an implementation serializes")
        })
    }
}

impl From<Implementation> for SharedImplementation {
    fn from(info: Implementation) -> Self {
        Self::new(info)
    }
}

impl Deref for SharedImplementation {
    type Target = Implementation;
    fn deref(&self) -> &Implementation {
        &self.0.info
    }
}

impl fmt::Debug for SharedImplementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.info.fmt(f)
    }
}

impl PartialEq for SharedImplementation {
    fn eq(&self, other: &Self) -> bool {
        self.0.info == other.0.info
    }
}

impl Serialize for SharedImplementation {
    /// `serde_json`'s compact writer copies the rendered bytes; any other serializer (the
    /// pretty writer, `to_value`, other formats) gets the fields.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if compact_json::<S>() {
            self.rendered().serialize(s)
        } else {
            self.0.info.serialize(s)
        }
    }
}

/// Whether `S` is `serde_json`'s writer with its default, compact formatter: its type's name
/// is `&mut serde_json::ser::Serializer<W>`, where a formatter given would follow `W` after a
/// comma. A name of another shape gives `false` and the fields are written (the tests pin
/// both paths).
fn compact_json<S>() -> bool {
    let name = std::any::type_name::<S>();
    name.starts_with("&mut serde_json::ser::Serializer<") && !name.contains(", ")
}

impl<'de> Deserialize<'de> for SharedImplementation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Implementation::deserialize(d).map(Self::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> Implementation {
        Implementation {
            title: Some("Quote \" and \u{e9}".into()),
            ..Implementation::new("srv", "1.0")
        }
    }

    #[test]
    fn written_as_the_implementation_is() {
        let shared = SharedImplementation::new(info());
        assert_eq!(
            serde_json::to_string(&shared).unwrap(),
            serde_json::to_string(&info()).unwrap()
        );
        assert_eq!(
            serde_json::to_string_pretty(&shared).unwrap(),
            serde_json::to_string_pretty(&info()).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&shared).unwrap(),
            serde_json::to_value(info()).unwrap()
        );
        let back: SharedImplementation =
            serde_json::from_str(&serde_json::to_string(&shared).unwrap()).unwrap();
        assert_eq!(back, shared);
        assert_eq!(back.title.as_deref(), Some("Quote \" and \u{e9}"));
    }

    #[test]
    fn the_compact_writer_copies_the_rendering() {
        // The rendering, not the fields: a copy whose text differs shows which was written.
        let mut shared = SharedImplementation::new(info());
        let rendered = RawValue::from_string(r#"{"name":"rendered","version":"1"}"#.into());
        Arc::get_mut(&mut shared.0).unwrap().json = OnceLock::from(rendered.unwrap());
        let out = serde_json::to_string(&shared).unwrap();
        assert_eq!(out, r#"{"name":"rendered","version":"1"}"#);
        let mut buf = Vec::new();
        serde_json::to_writer(&mut buf, &[&shared]).unwrap();
        assert_eq!(buf, br#"[{"name":"rendered","version":"1"}]"#);
    }

    #[test]
    fn a_peers_malformed_server_info_is_refused_and_never_rendered() {
        for bad in [
            r#"{"name":5,"version":"1"}"#,
            r#"{"name":"srv"}"#,
            r#""srv""#,
            r#"{"name":"srv","version":"1","icons":"no"}"#,
        ] {
            assert!(
                serde_json::from_str::<SharedImplementation>(bad).is_err(),
                "{bad}"
            );
        }
        // Unknown members are dropped, as `Implementation` drops them; reading renders nothing.
        let read: SharedImplementation =
            serde_json::from_str(r#"{"name":"srv","version":"1","x-extra":[1,2]}"#).unwrap();
        assert!(read.0.json.get().is_none());
        assert_eq!(
            serde_json::to_string(&read).unwrap(),
            r#"{"name":"srv","version":"1"}"#
        );
    }

    #[test]
    fn other_formats_get_the_fields() {
        let shared = SharedImplementation::new(info());
        let bytes = postcard::to_allocvec(&shared).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&info()).unwrap());
    }
}
