//! An authorization server issuing DPoP-bound JWT access tokens (RFC 9449 §5, §6): RFC
//! 8414 metadata advertising ES256 proofs, an authorization endpoint that redirects at
//! once (headless), a token endpoint that checks the client's proof (`typ`, signature by
//! its `jwk`, `htm`, `htu`) and binds the token to that key (`cnf.jkt`,
//! `token_type: DPoP`), and a JWKS. One public client, `dpop-client`.

use super::super::idp::{SigningKey, now};
use super::random;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::ThumbprintHash;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

pub const CLIENT_ID: &str = "dpop-client";
pub const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

#[derive(Default)]
pub struct Seen {
    /// The `token_type` of every token issued.
    pub issued: Vec<String>,
    codes: HashMap<String, String>,
}

pub struct Issuer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Issuer {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let key = Arc::new(SigningKey::generate("as-1"));
        let shared = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (seen, key) = (shared.clone(), key.clone());
                let svc = hyper::service::service_fn(move |req| {
                    let (seen, key) = (seen.clone(), key.clone());
                    async move {
                        let r = answer(&seen, &key, &format!("http://{addr}"), req).await;
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc),
                );
            }
        });
        Self { addr, seen, task }
    }

    pub fn issuer(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn reply(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}

fn params(s: &str) -> HashMap<String, String> {
    form_urlencoded::parse(s.as_bytes()).into_owned().collect()
}

async fn answer(
    seen: &Mutex<Seen>,
    key: &SigningKey,
    issuer: &str,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    match req.uri().path() {
        "/.well-known/oauth-authorization-server" => reply(
            StatusCode::OK,
            &json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": format!("{issuer}/jwks"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true,
                "dpop_signing_alg_values_supported": ["ES256"],
            }),
        ),
        "/jwks" => reply(StatusCode::OK, &json!({"keys": [key.jwk]})),
        "/authorize" => authorize(seen, issuer, req.uri().query().unwrap_or("")),
        "/token" => token(seen, key, issuer, req).await,
        _ => reply(StatusCode::NOT_FOUND, &json!({})),
    }
}

/// Grants what was asked at once: a code, `state` and `iss` back to the client.
fn authorize(seen: &Mutex<Seen>, issuer: &str, query: &str) -> Response<Full<Bytes>> {
    let p = params(query);
    assert_eq!(p["client_id"], CLIENT_ID);
    assert_eq!(p["redirect_uri"], REDIRECT_URI);
    let code = random();
    let scope = p.get("scope").cloned().unwrap_or_default();
    seen.lock().unwrap().codes.insert(code.clone(), scope);
    let location = format!(
        "{REDIRECT_URI}?code={code}&state={}&iss={}",
        form_urlencoded::byte_serialize(p["state"].as_bytes()).collect::<String>(),
        form_urlencoded::byte_serialize(issuer.as_bytes()).collect::<String>(),
    );
    Response::builder()
        .status(StatusCode::FOUND)
        .header("location", location)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// The thumbprint of the key that signed a valid proof for the token endpoint.
fn proof_key(proof: &str, endpoint: &str) -> Option<String> {
    let header = jsonwebtoken::decode_header(proof).ok()?;
    let jwk = header
        .jwk
        .filter(|_| header.typ.as_deref() == Some("dpop+jwt"))?;
    let mut v = Validation::new(Algorithm::ES256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(proof, &key, &v)
        .ok()?
        .claims;
    let iat = claims.get("iat")?.as_u64()?;
    let fits = claims.get("htm")? == "POST" && claims.get("htu")? == endpoint;
    (fits && iat.abs_diff(now()) < 60).then(|| jwk.thumbprint(ThumbprintHash::SHA256).ok())?
}

async fn token(
    seen: &Mutex<Seen>,
    key: &SigningKey,
    issuer: &str,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let proof = req
        .headers()
        .get("dpop")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let form = params(&String::from_utf8_lossy(&body));
    let scope = seen.lock().unwrap().codes.remove(&form["code"]);
    let Some(scope) = scope else {
        return reply(StatusCode::BAD_REQUEST, &json!({"error": "invalid_grant"}));
    };
    let mut claims = json!({
        "iss": issuer, "aud": form["resource"], "sub": "alice", "scope": scope,
        "client_id": CLIENT_ID, "iat": now(), "exp": now() + 300, "jti": random(),
    });
    let token_type = match proof {
        Some(p) => match proof_key(&p, &format!("{issuer}/token")) {
            Some(jkt) => {
                claims["cnf"] = json!({"jkt": jkt});
                "DPoP"
            }
            None => {
                return reply(
                    StatusCode::BAD_REQUEST,
                    &json!({"error": "invalid_dpop_proof"}),
                );
            }
        },
        None => "Bearer",
    };
    seen.lock().unwrap().issued.push(token_type.to_owned());
    let access_token = key.sign(&claims);
    reply(
        StatusCode::OK,
        &json!({"access_token": access_token, "token_type": token_type, "expires_in": 300, "scope": scope}),
    )
}
