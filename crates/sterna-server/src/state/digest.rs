//! Digests: canonical arguments (for binding states) and questions (for pinning answers).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of the canonical form of `args`: object keys sorted, integral numbers written
/// as integers, no whitespace. Absent arguments and `{}` digest alike.
pub(crate) fn args_digest(args: Option<&Value>) -> [u8; 32] {
    let mut h = Sha256::new();
    match args {
        None => h.update(b"{}"),
        Some(v) => canonical(v, &mut h),
    }
    h.finalize().into()
}

/// Digest of a string-keyed map (prompt arguments), canonical like [`args_digest`].
pub(crate) fn string_map_digest<'a>(
    entries: impl Iterator<Item = (&'a String, &'a String)>,
) -> [u8; 32] {
    let mut sorted: Vec<_> = entries.collect();
    sorted.sort();
    let mut h = Sha256::new();
    h.update(b"{");
    for (i, (k, v)) in sorted.into_iter().enumerate() {
        if i > 0 {
            h.update(b",");
        }
        string(k, &mut h);
        h.update(b":");
        string(v, &mut h);
    }
    h.update(b"}");
    h.finalize().into()
}

fn string(s: &str, h: &mut Sha256) {
    let enc = serde_json::to_string(s).expect("strings encode");
    h.update(enc.as_bytes());
}

fn canonical(v: &Value, h: &mut Sha256) {
    match v {
        Value::Null => h.update(b"null"),
        Value::Bool(b) => h.update(if *b { &b"true"[..] } else { &b"false"[..] }),
        Value::Number(n) => {
            let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (None, Some(u), _) => u.to_string(),
                (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    format!("{}", f as i64)
                }
                _ => n.to_string(),
            };
            h.update(text.as_bytes());
        }
        Value::String(s) => string(s, h),
        Value::Array(a) => {
            h.update(b"[");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    h.update(b",");
                }
                canonical(x, h);
            }
            h.update(b"]");
        }
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            h.update(b"{");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    h.update(b",");
                }
                string(k, h);
                h.update(b":");
                canonical(&o[k], h);
            }
            h.update(b"}");
        }
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
}
