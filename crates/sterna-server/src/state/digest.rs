//! Digests: canonical arguments (for binding states) and questions (for pinning answers).

use super::canon::{Canon, string};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// SHA-256 of the canonical form of a tool's raw arguments: object keys sorted, integral
/// numbers written as integers, no whitespace; absent arguments and `{}` digest alike. They
/// are read without building a `serde_json::Value` ([`Canon`]: strings borrowed where they
/// have no escapes, a repeated key keeping its last value as a `Value` does), and the form is
/// written whole into one buffer, then hashed.
pub(crate) fn args_digest(raw: Option<&RawValue>) -> Result<[u8; 32], serde_json::Error> {
    let Some(raw) = raw else {
        return Ok(Sha256::digest(b"{}").into());
    };
    let args: Canon<'_> = serde_json::from_str(raw.get())?;
    let mut out = Vec::with_capacity(raw.get().len());
    args.write(&mut out);
    Ok(Sha256::digest(&out).into())
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
    use super::super::canon::number;
    use super::super::keys::hex;
    use super::*;
    use serde_json::Value;

    /// The tests' reference: the canonical form of a `serde_json::Value`, as states were
    /// bound before the arguments were read raw.
    fn value_digest(v: &Value) -> [u8; 32] {
        let mut out = Vec::new();
        canonical(v, &mut out);
        Sha256::digest(&out).into()
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

    fn digest(text: &str) -> [u8; 32] {
        let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
        args_digest(Some(&raw)).unwrap()
    }

    #[test]
    fn canonical_args() {
        assert_eq!(
            digest(r#"{"b": 1, "a": [1.0, "x"]}"#),
            digest(r#"{"a": [1, "x"], "b": 1.0}"#)
        );
        assert_eq!(args_digest(None).unwrap(), digest("{}"));
        assert_ne!(digest(r#"{"a": 1}"#), digest(r#"{"a": "1"}"#));
        assert_ne!(
            digest(r#"{"name": "orders"}"#),
            digest(r#"{"name": "users"}"#)
        );
    }

    /// States sealed by earlier releases carry these digests: the canonical form may not
    /// change by a byte (escapes, numbers, key order, nesting).
    #[test]
    fn the_canonical_form_is_pinned() {
        let cases = [
            r#"{"b": 1, "a": [1.0, "x"]}"#,
            r#"{"s": "quote\" backslash\\ nl\n tab\t \u00e9 \u2603 ctl \u0001 \/ \ud83d\ude00"}"#,
            // (No number halfway between two doubles, such as 9007199254740993.0: how
            // serde_json rounds it depends on its `float_roundtrip` feature, which another
            // crate of the build may turn on.)
            r#"{"n": [0, -1, 18446744073709551615, -9223372036854775808, 1.5, 1e300, 2.0, -0.0, 1.0e15, 0.1]}"#,
            r#"{"z": {"y": [true, false, null], "x": {}}, "a": [], "\u00e9": 1, "e": 2, "E": 3, "": 4}"#,
        ];
        let got: Vec<String> = cases.iter().map(|c| hex(&digest(c))).collect();
        let map = [
            ("b".to_owned(), "x\"y".to_owned()),
            ("a".to_owned(), "\u{e9}".to_owned()),
        ];
        let prompt = hex(&string_map_digest(map.iter().map(|(k, v)| (k, v))));
        assert_eq!(
            got,
            [
                "a88dede55f330dbae7d6c99cb78c43213f114625ed11c8fd0b769d117c06bb50",
                "868166e1fb67c7872684437ba311608d3eafac9d47b6c3fab796c94b0f2422be",
                "123a45de37348541ffb3f017c875fab51a680813a58bdafa1c5c7a06159f37a7",
                "e2f18d7aacad82c6710bdba0c4d76963be981c585b94b9fe330f5008090c6234",
            ]
        );
        assert_eq!(
            prompt,
            "3194bbe64463a0ba7b298d7cbe6c84a9a7c9e5d1cc4cb67ec9f13046b23edabe"
        );
        assert_eq!(
            hex(&args_digest(None).unwrap()),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    fn both(text: &str) -> ([u8; 32], [u8; 32]) {
        let value: Value = serde_json::from_str(text).unwrap();
        (digest(text), value_digest(&value))
    }

    /// What a hostile client can put in the arguments: nesting far deeper than a `Value`
    /// may be (the body's raw reading has no depth limit), a megabyte string full of
    /// escapes, thousands of repeated keys. Each digests as its `Value` does, or, past the
    /// `Value`'s depth limit, is refused as the `Value` reading refused it: an error, never a
    /// panic nor a stack overflow.
    #[test]
    fn hostile_arguments_digest_as_their_value_does_or_are_refused() {
        let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let escapes = format!(r#"{{"s": "{}"}}"#, r#"\u00e9\n\"\\"#.repeat(100_000));
        let repeated = format!(
            "{{{}\"k\": 0}}",
            (0..5_000)
                .map(|i| format!(r#""k": {i}, "#))
                .collect::<String>()
        );
        let mut refused = 0;
        for text in [1, 100, 127, 128, 5_000, 100_000]
            .map(nested)
            .iter()
            .chain([&escapes, &repeated])
        {
            let raw: Box<RawValue> = serde_json::from_str(text).expect("the body's reading");
            match serde_json::from_str::<Value>(text) {
                Ok(value) => assert_eq!(digest(text), value_digest(&value)),
                Err(_) => {
                    assert!(args_digest(Some(&raw)).is_err());
                    refused += 1;
                }
            }
        }
        assert_eq!(refused, 3, "the nestings of 128 levels and more");
    }

    #[test]
    fn raw_arguments_digest_as_their_value_does() {
        for text in [
            r#"{"b": 1, "a": [1.0, "x"]}"#,
            r#"{"s": "quote\" backslash\\ nl\n \u00e9 \ud83d\ude00 \/", "\u0041": "k"}"#,
            r#"{"n": [0, -1, 18446744073709551615, -9223372036854775808, 1.5, 1e300, 2.0, -0.0, 0.1]}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": 1, "b": {"x": 1, "x": [1, {"x": 0}]}, "a": {"z": null, "y": true}}"#,
            r#"{"\u00e9": 1, "e": 2, "E": 3, "": 4, "é": 5}"#,
            r#"{}"#,
            r#"[]"#,
            r#""text""#,
            r#"null"#,
            r#"[[[[[[[[[[{"deep": [false]}]]]]]]]]]]"#,
        ] {
            let (raw, value) = both(text);
            assert_eq!(raw, value, "{text}");
        }
    }

    /// Random documents (a fixed seed): objects with repeated and escaped keys, every kind
    /// of number, nesting.
    #[test]
    fn random_documents_digest_alike() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        fn doc(next: &mut dyn FnMut(u64) -> u64, depth: u32, out: &mut String) {
            let keys = ["a", "b", "\\u00e9", "é", "A", "", "\\n", "a"];
            match if depth > 3 { next(5) } else { next(7) } {
                0 => out.push_str("null"),
                1 => out.push_str(if next(2) == 0 { "true" } else { "false" }),
                2 => out.push_str(
                    [
                        "0",
                        "-7",
                        "2.0",
                        "1e3",
                        "0.25",
                        "18446744073709551615",
                        "-0.0",
                        "3.5e-7",
                    ][next(8) as usize],
                ),
                3 => out.push_str(["\"x\"", "\"\\u0001\"", "\"é☃\"", "\"\\\"\""][next(4) as usize]),
                4 => out.push_str("{}"),
                5 => {
                    out.push('[');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        doc(next, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..next(5) {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&format!("\"{}\":", keys[next(8) as usize]));
                        doc(next, depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
        for _ in 0..2000 {
            let mut text = String::new();
            doc(&mut next, 0, &mut text);
            let (raw, value) = both(&text);
            assert_eq!(raw, value, "{text}");
        }
    }
}
