//! The canonical form of arguments, written byte by byte (see [`super::digest`]): JSON as
//! `serde_json` writes it, object keys sorted, integral numbers as integers, no whitespace;
//! and [`Canon`], the raw arguments read for it without building a `serde_json::Value`.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use std::borrow::Cow;
use std::fmt;

/// A string as `serde_json` escapes it.
pub(super) fn string(s: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, s).expect("strings encode");
}

/// An integral number as an integer (`2.0` is `2`), any other as `serde_json` writes it.
pub(super) fn number(n: &Number, out: &mut Vec<u8>) {
    let mut int = itoa::Buffer::new();
    let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => int.format(i),
        (None, Some(u), _) => int.format(u),
        (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => int.format(f as i64),
        _ => return serde_json::to_writer(&mut *out, n).expect("numbers encode"),
    };
    out.extend_from_slice(text.as_bytes());
}

/// A JSON value as the canonical form needs it.
pub(super) enum Canon<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Canon<'a>>),
    /// Sorted by key, each key once.
    Object(Vec<(Cow<'a, str>, Canon<'a>)>),
}

impl Canon<'_> {
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        match self {
            Canon::Null => out.extend_from_slice(b"null"),
            Canon::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Canon::Number(n) => number(n, out),
            Canon::String(s) => string(s, out),
            Canon::Array(a) => {
                out.push(b'[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    x.write(out);
                }
                out.push(b']');
            }
            Canon::Object(members) => {
                out.push(b'{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    string(k, out);
                    out.push(b':');
                    v.write(out);
                }
                out.push(b'}');
            }
        }
    }
}

impl<'de> Deserialize<'de> for Canon<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CanonVisitor)
    }
}

struct CanonVisitor;

impl<'de> Visitor<'de> for CanonVisitor {
    type Value = Canon<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Canon<'de>, E> {
        Ok(Canon::Null)
    }

    fn visit_none<E>(self) -> Result<Canon<'de>, E> {
        Ok(Canon::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Canon<'de>, D::Error> {
        Canon::deserialize(d)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Canon<'de>, E> {
        Ok(Canon::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Canon<'de>, E> {
        Ok(Canon::Number(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Canon<'de>, E> {
        Ok(Canon::Number(u.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Canon<'de>, E> {
        // As a `Value` reads it (JSON text has no NaN nor infinity).
        Ok(Number::from_f64(f).map_or(Canon::Null, Canon::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Canon<'de>, E> {
        Ok(Canon::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Canon<'de>, E> {
        Ok(Canon::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Canon<'de>, E> {
        Ok(Canon::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Canon<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(x) = seq.next_element()? {
            items.push(x);
        }
        Ok(Canon::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Canon<'de>, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Canon<'de>)> = Vec::new();
        while let Some(key) = map.next_key::<Canon<'de>>()? {
            let Canon::String(key) = key else {
                return Err(serde::de::Error::custom(
                    "an object key that is not a string",
                ));
            };
            members.push((key, map.next_value()?));
        }
        // Stable: of a repeated key, the last value comes last, and is the one kept.
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(Cow<'de, str>, Canon<'de>)> = Vec::with_capacity(members.len());
        for m in members {
            if kept.last().is_some_and(|last| last.0 == m.0) {
                kept.pop();
            }
            kept.push(m);
        }
        Ok(Canon::Object(kept))
    }
}
