//! One request through [`AuthLayer`]: the credentials read once, the principal, the
//! token's binding judged against the scheme it came with (and its DPoP proof), the scope
//! check, and the challenges refusing it.

use super::super::respond::plain;
use super::challenge::{Challenge, ErrorCode, respond};
use super::credentials::{Presented, TokenScheme};
use super::error::{AuthError, ProofRejection, TokenRejection};
use super::layer::{AuthLayer, Refusal};
use super::proof_cache::ProofCacheError;
use crate::metrics::{Refusal as Reason, refused};
use crate::server::Principal;
use http::header::RETRY_AFTER;
use http::{HeaderMap, HeaderValue, Method, StatusCode};

/// What authentication found out about a request.
#[derive(Debug)]
pub(super) struct Authenticated {
    pub(super) principal: Principal,
    /// The scheme the token came with.
    pub(super) scheme: Option<TokenScheme>,
    /// The DPoP nonce to hand back with the answer.
    pub(super) nonce: Option<String>,
}

/// The key a principal's token is bound to (`cnf.jkt`, RFC 9449 §6), `None` for an
/// unbound token; a confirmation this server cannot check (another `cnf` member) is
/// refused.
fn binding(principal: &Principal) -> Result<Option<&str>, TokenRejection> {
    let Some(grant) = principal.grant() else {
        return Ok(None);
    };
    match (grant.claim("cnf"), grant.dpop_jkt()) {
        (None, _) => Ok(None),
        (Some(_), Some(jkt)) => Ok(Some(jkt)),
        (Some(_), None) => Err(TokenRejection::BadClaim("cnf")),
    }
}

impl AuthLayer {
    /// The principal of a request, or the answer refusing it.
    pub(super) async fn authenticate(
        &self,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<Authenticated, Refusal> {
        let presented = Presented::read(headers).map_err(|e| self.refuse(None, &e))?;
        let scheme = presented.scheme();
        let judged = self.judge(method, presented).await;
        match judged.map_err(|e| self.refuse(scheme, &e))? {
            Some(found) => Ok(found),
            None if self.required => {
                refused(Reason::Unauthenticated, 401);
                Err(self.challenge(None, None, self.scopes.base()))
            }
            None => Ok(Authenticated {
                principal: Principal::anonymous(),
                scheme: None,
                nonce: None,
            }),
        }
    }

    /// `Ok(None)`: no credentials.
    async fn judge(
        &self,
        method: &Method,
        presented: Presented<'_>,
    ) -> Result<Option<Authenticated>, AuthError> {
        let scheme = presented.scheme();
        if scheme.is_some_and(|s| !self.schemes().contains(&s)) {
            return Err(TokenRejection::Scheme.into());
        }
        let Some(principal) = self.auth.authenticate(presented).await? else {
            return Ok(None);
        };
        let mut nonce = None;
        match (scheme, binding(&principal)?) {
            (Some(TokenScheme::Dpop), None) => return Err(TokenRejection::NotBound.into()),
            (Some(TokenScheme::Dpop), Some(jkt)) => {
                let token = presented.access_token().unwrap_or("");
                let owner = principal.id().unwrap_or("");
                nonce = self
                    .prove(method, presented.headers(), token, owner, jkt)
                    .await?;
            }
            // Never a bound token without its proof (RFC 9449 §7.2).
            (_, Some(_)) => return Err(TokenRejection::BoundToKey.into()),
            (_, None) => {}
        }
        Ok(Some(Authenticated {
            principal,
            scheme,
            nonce,
        }))
    }

    /// Checks the DPoP proof; the nonce to hand back.
    #[cfg(feature = "jwt")]
    async fn prove(
        &self,
        method: &Method,
        headers: &HeaderMap,
        token: &str,
        owner: &str,
        jkt: &str,
    ) -> Result<Option<String>, AuthError> {
        let Some(dpop) = &self.dpop else {
            return Err(TokenRejection::Scheme.into());
        };
        dpop.verify(method, headers, token, owner, jkt).await?;
        Ok(dpop.nonce())
    }

    #[cfg(not(feature = "jwt"))]
    async fn prove(
        &self,
        _: &Method,
        _: &HeaderMap,
        _: &str,
        _: &str,
        _: &str,
    ) -> Result<Option<String>, AuthError> {
        Err(TokenRejection::Scheme.into())
    }

    /// The schemes accepted, in the order challenges name them.
    fn schemes(&self) -> &'static [TokenScheme] {
        #[cfg(feature = "jwt")]
        match &self.dpop {
            Some(d) if d.is_required() => return &[TokenScheme::Dpop],
            Some(_) => return &[TokenScheme::Bearer, TokenScheme::Dpop],
            None => {}
        }
        &[TokenScheme::Bearer]
    }

    /// The `algs` of `DPoP` challenges.
    fn algs(&self) -> Option<String> {
        #[cfg(feature = "jwt")]
        if let Some(d) = &self.dpop {
            return Some(d.algorithm_names().join(" "));
        }
        None
    }

    /// The challenges, one per accepted scheme: the one for `on` (the scheme the
    /// credentials came with) first, carrying the error.
    pub(super) fn challenge(
        &self,
        error: Option<(ErrorCode, String)>,
        on: Option<TokenScheme>,
        scope: Vec<&str>,
    ) -> Refusal {
        let mut schemes = self.schemes().to_vec();
        if let Some(i) = on.and_then(|s| schemes.iter().position(|x| *x == s)) {
            schemes[..=i].rotate_right(1);
        }
        let algs = self.algs();
        let challenges: Vec<Challenge<'_>> = schemes
            .iter()
            .enumerate()
            .map(|(i, s)| Challenge {
                scheme: *s,
                realm: &self.realm,
                error: if i == 0 { error.clone() } else { None },
                scope: scope.clone(),
                resource_metadata: self.metadata_url(),
                algs: algs.as_deref().filter(|_| *s == TokenScheme::Dpop),
            })
            .collect();
        Box::new(respond(&challenges))
    }

    /// The answer to credentials refused (`scheme`: the one they came with).
    fn refuse(&self, scheme: Option<TokenScheme>, e: &AuthError) -> Refusal {
        tracing::debug!(reason = %e, "credentials refused");
        let scope = self.scopes.base();
        let (code, on) = match e {
            AuthError::InvalidRequest(_) => (ErrorCode::InvalidRequest, scheme),
            AuthError::InvalidToken(_) => (ErrorCode::InvalidToken, scheme),
            AuthError::InvalidProof(ProofRejection::NonceRequired) => {
                refused(Reason::InvalidToken, 401);
                let mut r = self.challenge(
                    Some((ErrorCode::UseDpopNonce, e.to_string())),
                    Some(TokenScheme::Dpop),
                    scope,
                );
                if let Some(n) = self.nonce().and_then(|n| HeaderValue::from_str(&n).ok()) {
                    r.headers_mut().insert("dpop-nonce", n);
                }
                return r;
            }
            AuthError::InvalidProof(_) => (ErrorCode::InvalidDpopProof, Some(TokenScheme::Dpop)),
            AuthError::ProofCache(ProofCacheError::QuotaExceeded { .. }) => {
                refused(Reason::QuotaExceeded, 429);
                let mut r = Box::new(plain(StatusCode::TOO_MANY_REQUESTS));
                r.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(self.proof_window()));
                return r;
            }
            AuthError::ProofCache(_) | AuthError::Unavailable(_) => {
                tracing::warn!(error = %e, "authentication unavailable");
                refused(Reason::AuthUnavailable, 503);
                return Box::new(plain(StatusCode::SERVICE_UNAVAILABLE));
            }
        };
        refused(Reason::InvalidToken, 401);
        self.challenge(Some((code, e.to_string())), on, scope)
    }

    fn nonce(&self) -> Option<String> {
        #[cfg(feature = "jwt")]
        if let Some(d) = &self.dpop {
            return d.nonce();
        }
        None
    }

    fn proof_window(&self) -> u64 {
        #[cfg(feature = "jwt")]
        if let Some(d) = &self.dpop {
            return d.window_secs();
        }
        60
    }

    /// Whether `principal` holds the scopes `required`; else the `403` (or, anonymous,
    /// `401`) challenge.
    pub(super) fn check(
        &self,
        principal: &Principal,
        scheme: Option<TokenScheme>,
        required: Vec<&str>,
    ) -> Result<(), Refusal> {
        if self.scopes.satisfied(principal.grant(), &required) {
            return Ok(());
        }
        if principal.id().is_none() {
            // Anonymous: authenticate first (401), asking for what this request needs.
            refused(Reason::Unauthenticated, 401);
            return Err(self.challenge(None, None, required));
        }
        refused(Reason::InsufficientScope, 403);
        tracing::debug!(principal = ?principal.id(), required = ?required, "insufficient scope");
        let error = Some((
            ErrorCode::InsufficientScope,
            "the token lacks a scope this operation needs".to_owned(),
        ));
        Err(self.challenge(error, scheme, required))
    }
}
