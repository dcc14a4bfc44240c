//! From validated claims (a JWT payload, an introspection answer) to an
//! [`AccessGrant`]: subject, scopes (`scope` or `scp`), client, expiry.

use super::error::TokenRejection;
use crate::server::AccessGrant;
use serde_json::{Map, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The grant `claims` describe, issued by `issuer` (already checked). `sub` is required.
pub(crate) fn grant(
    issuer: &str,
    claims: Map<String, Value>,
) -> Result<AccessGrant, TokenRejection> {
    let subject = match claims.get("sub") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(_) => return Err(TokenRejection::BadClaim("sub")),
        None => return Err(TokenRejection::MissingClaim("sub")),
    };
    let mut grant = AccessGrant::new(issuer, subject).with_scopes(scopes(&claims)?);
    match claims.get("client_id") {
        Some(Value::String(c)) => grant = grant.with_client_id(c.clone()),
        Some(_) => return Err(TokenRejection::BadClaim("client_id")),
        None => {}
    }
    if let Some(exp) = claims.get("exp") {
        let secs = exp.as_u64().ok_or(TokenRejection::BadClaim("exp"))?;
        grant = grant.with_expiry(UNIX_EPOCH + Duration::from_secs(secs));
    }
    Ok(grant.with_claims(claims))
}

/// `scope` (RFC 9068, RFC 7662: space-delimited) or `scp` (an array, or a string).
fn scopes(claims: &Map<String, Value>) -> Result<Vec<String>, TokenRejection> {
    let split = |s: &str| s.split_ascii_whitespace().map(str::to_owned).collect();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => Ok(split(s)),
        (Some(_), _) => Err(TokenRejection::BadClaim("scope")),
        (None, Some(Value::String(s))) => Ok(split(s)),
        (None, Some(Value::Array(a))) => a
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or(TokenRejection::BadClaim("scp")),
        (None, Some(_)) => Err(TokenRejection::BadClaim("scp")),
        (None, None) => Ok(Vec::new()),
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `exp`, `nbf` and `iat` against the clock, with `leeway` seconds of skew each way.
/// `exp` is required only when `need_exp`.
pub(crate) fn check_times(
    claims: &Map<String, Value>,
    leeway: u64,
    need_exp: bool,
) -> Result<(), TokenRejection> {
    let now = now_secs();
    let time = |name: &'static str| -> Result<Option<u64>, TokenRejection> {
        match claims.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or(TokenRejection::BadClaim(name)),
        }
    };
    match time("exp")? {
        Some(exp) if exp.saturating_add(leeway) <= now => return Err(TokenRejection::Expired),
        None if need_exp => return Err(TokenRejection::MissingClaim("exp")),
        _ => {}
    }
    if time("nbf")?.is_some_and(|nbf| nbf > now + leeway) {
        return Err(TokenRejection::NotYetValid);
    }
    if time("iat")?.is_some_and(|iat| iat > now + leeway) {
        return Err(TokenRejection::IssuedInFuture);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn scopes_from_scope_or_scp() {
        let g = grant("i", map(json!({"sub": "a", "scope": "x  y"}))).unwrap();
        assert_eq!(g.scopes().collect::<Vec<_>>(), ["x", "y"]);
        let g = grant("i", map(json!({"sub": "a", "scp": ["y", "x"]}))).unwrap();
        assert!(g.has_scope("x") && g.has_scope("y"));
        assert_eq!(
            grant("i", map(json!({"scope": "x"}))).unwrap_err(),
            TokenRejection::MissingClaim("sub")
        );
        assert_eq!(
            grant("i", map(json!({"sub": "a", "scope": 3}))).unwrap_err(),
            TokenRejection::BadClaim("scope")
        );
    }

    #[test]
    fn times_with_skew() {
        let now = now_secs();
        let ok = |v: Value| check_times(&map(v), 30, true);
        assert!(ok(json!({"exp": now + 60})).is_ok());
        assert!(ok(json!({"exp": now - 10})).is_ok(), "within the skew");
        assert_eq!(ok(json!({"exp": now - 60})), Err(TokenRejection::Expired));
        assert_eq!(ok(json!({})), Err(TokenRejection::MissingClaim("exp")));
        assert_eq!(
            ok(json!({"exp": now + 60, "nbf": now + 120})),
            Err(TokenRejection::NotYetValid)
        );
        assert_eq!(
            ok(json!({"exp": now + 60, "iat": now + 120})),
            Err(TokenRejection::IssuedInFuture)
        );
        assert_eq!(
            ok(json!({"exp": "soon"})),
            Err(TokenRejection::BadClaim("exp"))
        );
    }
}
