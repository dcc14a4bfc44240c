//! Token endpoint requests: client authentication (`client_secret_basic`,
//! `client_secret_post`, `none`, `private_key_jwt`), DPoP proofs with the nonce retry,
//! and reading the answer (an error counts even with HTTP 200).

use super::error::{OAuthError, Rejection, ServerError};
use super::fetch::{Answer, Call};
use super::jose::{ClientKey, DpopKey};
use super::nonces::Nonces;
use super::secret::Secret;
use super::store::{ClientInfo, Tokens};
use super::urls;
use crate::transport::HttpClient;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
use http::header::AUTHORIZATION;
use serde_json::Value;

/// How the client authenticates at a token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Basic,
    Post,
    None,
    PrivateKeyJwt,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Self::Basic => "client_secret_basic",
            Self::Post => "client_secret_post",
            Self::None => "none",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [Self::Basic, Self::Post, Self::None, Self::PrivateKeyJwt]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// The method to use: the one registered, if the server accepts it; else the best one
/// the server lists that this client can do.
pub(crate) fn choose_method(
    client: &ClientInfo,
    has_key: bool,
    supported: Option<&[String]>,
) -> Method {
    let has_secret = client.client_secret.is_some();
    let usable = |m: Method| match m {
        Method::Basic | Method::Post => has_secret,
        Method::PrivateKeyJwt => has_key,
        Method::None => true,
    };
    let listed = |m: Method| supported.is_none_or(|s| s.iter().any(|x| x == m.name()));
    if let Some(m) = client
        .token_endpoint_auth_method
        .as_deref()
        .and_then(Method::from_name)
        .filter(|&m| usable(m) && listed(m))
    {
        return m;
    }
    let preference = [
        Method::PrivateKeyJwt,
        Method::Basic,
        Method::Post,
        Method::None,
    ];
    match supported {
        Some(_) => preference.into_iter().find(|&m| usable(m) && listed(m)),
        None => preference
            .into_iter()
            .find(|&m| usable(m) && m != Method::Post),
    }
    .unwrap_or(if has_secret {
        Method::Basic
    } else {
        Method::None
    })
}

/// One token request, before client authentication.
#[derive(Debug)]
pub(crate) struct TokenRequest<'a> {
    pub(crate) endpoint: &'a str,
    /// The issuer (the audience of a client assertion).
    pub(crate) issuer: &'a str,
    /// The grant's parameters (`grant_type` first).
    pub(crate) params: Vec<(&'static str, String)>,
    /// Parameters that are secrets (codes, verifiers, assertions, refresh tokens).
    pub(crate) secrets: Vec<(&'static str, &'a Secret)>,
    /// What the OAuth error responses are attributed to.
    pub(crate) label: &'static str,
}

/// Who is asking, and how it proves it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Auth<'a> {
    pub(crate) client: &'a ClientInfo,
    pub(crate) key: Option<&'a ClientKey>,
    pub(crate) method: Method,
}

/// Sends `req` (with a DPoP proof when `dpop` is given, retried once with the server's
/// nonce) and reads the tokens; `requested_scope` stands for the granted scope when the
/// answer has none.
pub(crate) async fn request(
    http: &HttpClient,
    req: &TokenRequest<'_>,
    auth: Option<Auth<'_>>,
    dpop: Option<(&DpopKey, &Nonces)>,
    requested_scope: Option<&str>,
) -> Result<Tokens, OAuthError> {
    if !urls::is_secure_or_loopback(req.endpoint) {
        return Err(Rejection::InsecureEndpoint {
            url: req.endpoint.to_owned(),
        }
        .into());
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        let call = build(req, auth, dpop)?;
        let answer = call.send(http).await?;
        if let Some((_, nonces)) = dpop {
            nonces.note(req.endpoint, &answer.headers);
        }
        match read(req.label, &answer, requested_scope) {
            Err(OAuthError::Server(e))
                if e.error == "use_dpop_nonce" && dpop.is_some() && attempt == 1 =>
            {
                tracing::debug!(endpoint = %req.endpoint, "DPoP nonce required: retrying");
            }
            other => return other,
        }
    }
}

fn build(
    req: &TokenRequest<'_>,
    auth: Option<Auth<'_>>,
    dpop: Option<(&DpopKey, &Nonces)>,
) -> Result<Call, OAuthError> {
    let mut fields: Vec<(&str, String)> = req.params.iter().map(|(k, v)| (*k, v.clone())).collect();
    fields.extend(req.secrets.iter().map(|(k, v)| (*k, v.expose().to_owned())));
    let mut basic = None;
    if let Some(a) = auth {
        let id = a.client.client_id.clone();
        let secret = a
            .client
            .client_secret
            .as_ref()
            .map(|s| s.expose().to_owned());
        match a.method {
            Method::Basic => basic = Some(basic_header(&id, secret.as_deref().unwrap_or(""))),
            Method::Post => {
                fields.push(("client_id", id));
                fields.push(("client_secret", secret.unwrap_or_default()));
            }
            Method::None => fields.push(("client_id", id)),
            Method::PrivateKeyJwt => {
                let key = a
                    .key
                    .ok_or(jsonwebtoken::errors::ErrorKind::InvalidKeyFormat)?;
                fields.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                fields.push(("client_assertion", key.assertion(&id, req.issuer)?));
                fields.push(("client_id", id));
            }
        }
    }
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut call = Call::form(req.endpoint, &pairs);
    if let Some(b) = basic {
        call.header(AUTHORIZATION, b);
    }
    if let Some((key, nonces)) = dpop {
        let nonce = nonces.get(req.endpoint);
        let proof = key.proof("POST", req.endpoint, None, nonce.as_deref())?;
        if let Ok(v) = HeaderValue::from_str(&proof) {
            call.header(http::HeaderName::from_static("dpop"), v);
        }
    }
    Ok(call)
}

/// `Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1).
fn basic_header(id: &str, secret: &str) -> HeaderValue {
    let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let raw = format!("{}:{}", enc(id), enc(secret));
    let mut v = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(raw)))
        .unwrap_or_else(|_| HeaderValue::from_static("Basic"));
    v.set_sensitive(true);
    v
}

/// Tokens from a token endpoint's answer, or its OAuth error.
pub(crate) fn read(
    label: &'static str,
    answer: &Answer,
    requested_scope: Option<&str>,
) -> Result<Tokens, OAuthError> {
    let doc = answer.json().unwrap_or_default();
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
    let access =
        text("access_token").filter(|_| answer.status.is_success() && !doc.contains_key("error"));
    let Some(access) = access else {
        return Err(OAuthError::Server(ServerError {
            endpoint: label,
            status: answer.status.as_u16(),
            error: text("error").unwrap_or_else(|| "invalid_response".into()),
            description: text("error_description"),
        }));
    };
    let expires_at = doc
        .get("expires_in")
        .and_then(Value::as_u64)
        .map(|s| crate::util::unix_now() + s);
    Ok(Tokens {
        access_token: Secret::new(access),
        token_type: text("token_type").unwrap_or_else(|| "Bearer".into()),
        expires_at,
        scope: text("scope").or_else(|| requested_scope.map(str::to_owned)),
        refresh_token: text("refresh_token").map(Secret::new),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn method_choice() {
        let public = ClientInfo::public("p");
        let secret = ClientInfo::confidential("c", "s");
        assert_eq!(choose_method(&public, false, None), Method::None);
        assert_eq!(choose_method(&secret, false, None), Method::Basic);
        let post = list(&["client_secret_post"]);
        assert_eq!(choose_method(&secret, false, Some(&post)), Method::Post);
        let registered = secret.clone().auth_method("client_secret_post");
        assert_eq!(choose_method(&registered, false, None), Method::Post);
        let basic_only = list(&["client_secret_basic"]);
        assert_eq!(
            choose_method(&registered, false, Some(&basic_only)),
            Method::Basic
        );
        let jwt = list(&["private_key_jwt"]);
        assert_eq!(
            choose_method(&public, true, Some(&jwt)),
            Method::PrivateKeyJwt
        );
        assert_eq!(
            choose_method(&public, false, Some(&list(&["none"]))),
            Method::None
        );
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        let h = basic_header("a b", "p:w");
        let b64 = h.to_str().unwrap().strip_prefix("Basic ").unwrap();
        assert_eq!(STANDARD.decode(b64).unwrap(), b"a+b:p%3Aw");
        assert!(h.is_sensitive());
    }
}
