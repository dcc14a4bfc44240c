//! Reading `Authorization` once: the scheme (`Bearer`, RFC 6750 §2.1, or `DPoP`, RFC 9449
//! §7.1) and the access token, the only place a token is accepted from (never the query
//! string or the body). [`AuthLayer`](super::AuthLayer) reads it, and hands what it read
//! to the [`Authenticator`](super::Authenticator) and the DPoP check alike.

use super::error::{AuthError, RequestProblem, TokenRejection};
use http::HeaderMap;
use http::header::AUTHORIZATION;
use std::fmt;

/// How an access token was presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenScheme {
    /// `Authorization: Bearer <token>` (RFC 6750): whoever holds the token may use it.
    Bearer,
    /// `Authorization: DPoP <token>` with a `DPoP` proof header (RFC 9449): only the
    /// holder of the key the token is bound to may use it.
    Dpop,
}

impl TokenScheme {
    /// The scheme's name as challenges spell it (`Bearer`, `DPoP`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bearer => "Bearer",
            Self::Dpop => "DPoP",
        }
    }
}

/// What a request presented, as [`AuthLayer`](super::AuthLayer) read it: the headers,
/// and the access token of its `Authorization` header with its scheme. Its `Debug`
/// output never shows the token.
#[derive(Clone, Copy)]
pub struct Presented<'a> {
    headers: &'a HeaderMap,
    token: Option<(TokenScheme, &'a str)>,
}

impl fmt::Debug for Presented<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Presented")
            .field("scheme", &self.scheme())
            .field("token", &self.token.map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl<'a> Presented<'a> {
    /// Reads `headers`: exactly one `Authorization` header (several are an
    /// `invalid_request`) whose scheme is `Bearer` or `DPoP` (case-insensitive) and whose
    /// token is a `token68` (RFC 7235), else an `invalid_token`. No `Authorization`
    /// header: no token.
    pub fn read(headers: &'a HeaderMap) -> Result<Self, AuthError> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Ok(Self {
                headers,
                token: None,
            });
        };
        if values.next().is_some() {
            return Err(AuthError::InvalidRequest(
                RequestProblem::SeveralCredentials,
            ));
        }
        let malformed = || AuthError::InvalidToken(TokenRejection::Malformed);
        let value = value.to_str().map_err(|_| malformed())?;
        let (scheme, rest) = value.split_once(' ').ok_or_else(malformed)?;
        let scheme = if scheme.eq_ignore_ascii_case("bearer") {
            TokenScheme::Bearer
        } else if scheme.eq_ignore_ascii_case("dpop") {
            TokenScheme::Dpop
        } else {
            return Err(malformed());
        };
        let token = rest.trim_matches(' ');
        if !is_token68(token) {
            return Err(malformed());
        }
        Ok(Self {
            headers,
            token: Some((scheme, token)),
        })
    }

    /// The request's headers (for authenticators reading other credentials, such as an
    /// API key header).
    pub fn headers(&self) -> &'a HeaderMap {
        self.headers
    }

    /// The access token, whichever the scheme (`None`: no `Authorization` header).
    pub fn access_token(&self) -> Option<&'a str> {
        self.token.map(|(_, t)| t)
    }

    /// The scheme the access token came with.
    pub fn scheme(&self) -> Option<TokenScheme> {
        self.token.map(|(s, _)| s)
    }
}

/// The bearer token of a request: `Ok(None)` when there is no `Authorization` header.
///
/// The scheme is case-insensitive; the token must be a `token68` (RFC 7235). Several
/// `Authorization` headers are an `invalid_request`; another scheme (`DPoP` included) or a
/// malformed token is an `invalid_token`.
pub fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, AuthError> {
    let presented = Presented::read(headers)?;
    match presented.scheme() {
        None => Ok(None),
        Some(TokenScheme::Bearer) => Ok(presented.access_token()),
        Some(_) => Err(AuthError::InvalidToken(TokenRejection::Malformed)),
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
            "DPoP abc",
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

    #[test]
    fn reads_either_scheme_once() {
        let h = with(&["dpop abc.def"]);
        let p = Presented::read(&h).unwrap();
        assert_eq!(p.scheme(), Some(TokenScheme::Dpop));
        assert_eq!(p.access_token(), Some("abc.def"));
        assert!(!format!("{p:?}").contains("abc"), "{p:?}");
        let h = with(&["Bearer abc"]);
        assert_eq!(
            Presented::read(&h).unwrap().scheme(),
            Some(TokenScheme::Bearer)
        );
        let none = HeaderMap::new();
        assert_eq!(Presented::read(&none).unwrap().access_token(), None);
        assert!(Presented::read(&with(&["DPoP a b"])).is_err());
    }
}
