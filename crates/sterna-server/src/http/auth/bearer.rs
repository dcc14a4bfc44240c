//! Reading `Authorization: Bearer <token>` (RFC 6750 §2.1), the only place a token is
//! accepted from (never the query string or the body).

use super::error::{AuthError, RequestProblem, TokenRejection};
use http::HeaderMap;
use http::header::AUTHORIZATION;

/// The bearer token of a request: `Ok(None)` when there is no `Authorization` header.
///
/// The scheme is case-insensitive; the token must be a `token68` (RFC 7235). Several
/// `Authorization` headers are an `invalid_request`; another scheme or a malformed token
/// is an `invalid_token`.
pub fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, AuthError> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(AuthError::InvalidRequest(
            RequestProblem::SeveralCredentials,
        ));
    }
    let malformed = || AuthError::InvalidToken(TokenRejection::Malformed);
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, rest) = value.split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(malformed());
    }
    let token = rest.trim_matches(' ');
    if is_token68(token) {
        Ok(Some(token))
    } else {
        Err(malformed())
    }
}

/// `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`
fn is_token68(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn reads_exactly_one_bearer_token68() {
        assert_eq!(bearer_token(&with(&[])).unwrap(), None);
        assert_eq!(
            bearer_token(&with(&["Bearer abc.def-_~+/=="])).unwrap(),
            Some("abc.def-_~+/==")
        );
        assert_eq!(bearer_token(&with(&["bEaReR  tok"])).unwrap(), Some("tok"));
        for bad in [
            "Basic abc",
            "Bearer",
            "Bearer ",
            "Bearer a b",
            "Bearer a\"b",
            "Bearer ==",
        ] {
            assert!(
                matches!(bearer_token(&with(&[bad])), Err(AuthError::InvalidToken(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            bearer_token(&with(&["Bearer a", "Bearer b"])),
            Err(AuthError::InvalidRequest(
                RequestProblem::SeveralCredentials
            ))
        ));
    }
}
