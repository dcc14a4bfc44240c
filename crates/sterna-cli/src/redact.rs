//! Secrets out of what is shown and recorded: the string values of keys that name a
//! secret (tokens, `client_secret`, passwords, `Authorization`, API keys) and any
//! `Bearer …` credential, wherever they sit in a message.

use serde_json::Value;

/// What a redacted value reads.
pub(crate) const REDACTED: &str = "[redacted]";

/// Whether a key names a secret (`access_token`, `refreshToken`, `client_secret`,
/// `Authorization`, `apiKey`, `password` …; not `progressToken` or `maxTokens`).
pub(crate) fn is_secret(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if k == "progresstoken" {
        return false;
    }
    matches!(
        k.as_str(),
        "authorization" | "proxyauthorization" | "cookie" | "setcookie" | "apikey" | "xapikey"
    ) || k.ends_with("token")
        || k.ends_with("secret")
        || k.ends_with("password")
        || k.ends_with("apikey")
}

/// Redacts `v` in place.
pub(crate) fn redact(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::String(s) if is_secret(k) && !s.is_empty() => *s = REDACTED.into(),
                    _ => redact(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        Value::String(s) => {
            if let Some(scheme) = ["Bearer ", "bearer ", "Basic ", "DPoP "]
                .iter()
                .find(|p| s.starts_with(**p))
            {
                *s = format!("{scheme}{REDACTED}");
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_go_and_the_rest_stays() {
        let mut v = json!({
            "params": {"_meta": {"progressToken": "sterna-1"}, "maxTokens": 100,
                       "arguments": {"api_token": "t0k", "apiKey": "k", "name": "orders",
                                     "note": "Bearer abc.def", "nested": [{"client_secret": "s"}]}},
            "result": {"access_token": "a", "refresh_token": "r", "Authorization": "Basic x",
                       "password": "p", "requestState": "sealed", "tokens": 3}
        });
        redact(&mut v);
        assert_eq!(v["params"]["_meta"]["progressToken"], "sterna-1");
        assert_eq!(v["params"]["maxTokens"], 100);
        let a = &v["params"]["arguments"];
        assert_eq!(a["api_token"], REDACTED);
        assert_eq!(a["apiKey"], REDACTED);
        assert_eq!(a["name"], "orders");
        assert_eq!(a["note"], "Bearer [redacted]");
        assert_eq!(a["nested"][0]["client_secret"], REDACTED);
        let r = &v["result"];
        for k in ["access_token", "refresh_token", "Authorization", "password"] {
            assert_eq!(r[k], REDACTED, "{k}");
        }
        assert_eq!(r["requestState"], "sealed");
        assert_eq!(r["tokens"], 3);
    }
}
