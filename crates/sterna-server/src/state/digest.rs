//! Digests: canonical arguments (for binding states) and questions (for pinning answers).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of the canonical form of `args`: object keys sorted, integral numbers written
/// as integers, no whitespace. Absent arguments and `{}` digest alike. The form is written
/// whole into one buffer, then hashed.
pub(crate) fn args_digest(args: Option<&Value>) -> [u8; 32] {
    let Some(v) = args else {
        return Sha256::digest(b"{}").into();
    };
    let mut out = Vec::with_capacity(128);
    canonical(v, &mut out);
    Sha256::digest(&out).into()
}

/// Digest of a string-keyed map (prompt arguments), canonical like [`args_digest`].
pub(crate) fn string_map_digest<'a>(
    entries: impl Iterator<Item = (&'a String, &'a String)>,
) -> [u8; 32] {
    let mut sorted: Vec<_> = entries.collect();
    sorted.sort();
    let mut out = Vec::with_capacity(128);
    out.push(b'{');
    for (i, (k, v)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(k, &mut out);
        out.push(b':');
        string(v, &mut out);
    }
    out.push(b'}');
    Sha256::digest(&out).into()
}

/// A string as `serde_json` escapes it.
fn string(s: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, s).expect("strings encode");
}

/// An integral number as an integer (`2.0` is `2`), any other as `serde_json` writes it.
fn number(n: &serde_json::Number, out: &mut Vec<u8>) {
    let mut int = itoa::Buffer::new();
    let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => int.format(i),
        (None, Some(u), _) => int.format(u),
        (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => int.format(f as i64),
        _ => return serde_json::to_writer(&mut *out, n).expect("numbers encode"),
    };
    out.extend_from_slice(text.as_bytes());
}

fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => number(n, out),
        Value::String(s) => string(s, out),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(x, out);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            // A map kept in key order (serde_json's default) is written as it is.
            if o.keys().is_sorted() {
                members(o.iter(), out);
            } else {
                let mut sorted: Vec<_> = o.iter().collect();
                sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
                members(sorted.into_iter(), out);
            }
            out.push(b'}');
        }
    }
}

fn members<'a>(entries: impl Iterator<Item = (&'a String, &'a Value)>, out: &mut Vec<u8>) {
    for (i, (k, v)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(k, out);
        out.push(b':');
        canonical(v, out);
    }
}

/// An 8-byte digest of a question (its method and params as JSON). Questions are built by
/// the SDK from ordered types, so their JSON is deterministic.
pub(crate) fn question_digest(json: &[u8]) -> [u8; 8] {
    let d = Sha256::digest(json);
    let mut out = [0u8; 8];
    out.copy_from_slice(&d[..8]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_args() {
        assert_eq!(
            args_digest(Some(&json!({"b": 1, "a": [1.0, "x"]}))),
            args_digest(Some(&json!({"a": [1, "x"], "b": 1.0})))
        );
        assert_eq!(args_digest(None), args_digest(Some(&json!({}))));
        assert_ne!(
            args_digest(Some(&json!({"a": 1}))),
            args_digest(Some(&json!({"a": "1"})))
        );
        assert_ne!(
            args_digest(Some(&json!({"name": "orders"}))),
            args_digest(Some(&json!({"name": "users"})))
        );
    }

    fn hex(d: [u8; 32]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// States sealed by earlier releases carry these digests: the canonical form may not
    /// change by a byte (escapes, numbers, key order, nesting).
    #[test]
    fn the_canonical_form_is_pinned() {
        let cases = [
            r#"{"b": 1, "a": [1.0, "x"]}"#,
            r#"{"s": "quote\" backslash\\ nl\n tab\t \u00e9 \u2603 ctl \u0001 \/ \ud83d\ude00"}"#,
            r#"{"n": [0, -1, 18446744073709551615, -9223372036854775808, 1.5, 1e300, 2.0, -0.0, 9007199254740993.0, 1.0e15, 0.1]}"#,
            r#"{"z": {"y": [true, false, null], "x": {}}, "a": [], "\u00e9": 1, "e": 2, "E": 3, "": 4}"#,
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|c| hex(args_digest(Some(&serde_json::from_str(c).unwrap()))))
            .collect();
        let map = [
            ("b".to_owned(), "x\"y".to_owned()),
            ("a".to_owned(), "\u{e9}".to_owned()),
        ];
        let prompt = hex(string_map_digest(map.iter().map(|(k, v)| (k, v))));
        assert_eq!(
            got,
            [
                "a88dede55f330dbae7d6c99cb78c43213f114625ed11c8fd0b769d117c06bb50",
                "868166e1fb67c7872684437ba311608d3eafac9d47b6c3fab796c94b0f2422be",
                "bca2e6652fda3a2deea40c0b125c2884bee273587963f3395f5d3b5e822b81d3",
                "e2f18d7aacad82c6710bdba0c4d76963be981c585b94b9fe330f5008090c6234",
            ]
        );
        assert_eq!(
            prompt,
            "3194bbe64463a0ba7b298d7cbe6c84a9a7c9e5d1cc4cb67ec9f13046b23edabe"
        );
        assert_eq!(
            hex(args_digest(None)),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
