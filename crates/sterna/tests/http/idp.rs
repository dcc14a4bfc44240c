//! A tiny authorization server for the resource-server tests: metadata, a JWKS whose
//! keys the test rotates, an introspection endpoint; it counts what it serves. Keys are
//! ES256 (P-256) pairs generated at test time; tokens are signed with `jsonwebtoken`.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::net::TcpListener;

/// The credentials the resource server introspects with.
pub const RS_CLIENT: (&str, &str) = ("resource-server", "s3cret:/+");

/// An ES256 key pair with its `kid`.
#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub encoding: EncodingKey,
    pub jwk: Jwk,
}

impl SigningKey {
    pub fn generate(kid: &str) -> Self {
        use p256::elliptic_curve::Generate;
        use p256::pkcs8::EncodePrivateKey;
        let der = p256::SecretKey::generate().to_pkcs8_der().unwrap();
        let encoding = EncodingKey::from_ec_der(der.as_bytes());
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        Self {
            kid: kid.to_owned(),
            encoding,
            jwk,
        }
    }

    /// A JWT (`typ: at+jwt`, ES256, this `kid`) with these claims.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with(claims, |_| {})
    }

    /// The same, with the header adjusted first.
    pub fn sign_with(&self, claims: &Value, tweak: impl FnOnce(&mut Header)) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("at+jwt".into());
        header.kid = Some(self.kid.clone());
        tweak(&mut header);
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token with an arbitrary unsigned header (for `alg: none` and friends).
pub fn unsigned(header: &Value, claims: &Value, signature: &str) -> String {
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.{signature}", part(header), part(claims))
}

#[derive(Default)]
struct State {
    published: Mutex<Vec<Jwk>>,
    introspection: Mutex<HashMap<String, Value>>,
    jwks_fetches: AtomicUsize,
    metadata_fetches: AtomicUsize,
    introspections: AtomicUsize,
}

pub struct Idp {
    pub addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Idp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Idp {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let state = shared.clone();
                let issuer = format!("http://{addr}");
                let svc = hyper::service::service_fn(move |req| {
                    let (state, issuer) = (state.clone(), issuer.clone());
                    async move { Ok::<_, std::convert::Infallible>(answer(&state, &issuer, req).await) }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc),
                );
            }
        });
        Self { addr, state, task }
    }

    pub fn issuer(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn jwks_uri(&self) -> String {
        format!("http://{}/jwks", self.addr)
    }

    /// Replaces the published key set.
    pub fn publish(&self, keys: &[&SigningKey]) {
        *self.state.published.lock().unwrap() = keys.iter().map(|k| k.jwk.clone()).collect();
    }

    /// What the introspection endpoint answers for `token`.
    pub fn introspect_as(&self, token: &str, answer: Value) {
        self.state
            .introspection
            .lock()
            .unwrap()
            .insert(token.to_owned(), answer);
    }

    pub fn jwks_fetches(&self) -> usize {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }

    pub fn metadata_fetches(&self) -> usize {
        self.state.metadata_fetches.load(Ordering::SeqCst)
    }

    pub fn introspections(&self) -> usize {
        self.state.introspections.load(Ordering::SeqCst)
    }

    /// Claims of a valid token of this issuer for `audience`.
    pub fn claims(&self, audience: &str, sub: &str, scope: &str) -> Value {
        json!({
            "iss": self.issuer(), "aud": audience, "sub": sub, "scope": scope,
            "client_id": "test-client", "iat": now(), "exp": now() + 300, "jti": format!("{sub}-{}", now()),
        })
    }
}

async fn answer(state: &State, issuer: &str, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    match path.as_str() {
        "/.well-known/oauth-authorization-server" => {
            state.metadata_fetches.fetch_add(1, Ordering::SeqCst);
            reply(
                StatusCode::OK,
                json!({
                    "issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                    "introspection_endpoint": format!("{issuer}/introspect"),
                }),
            )
        }
        "/jwks" => {
            state.jwks_fetches.fetch_add(1, Ordering::SeqCst);
            let keys = state.published.lock().unwrap().clone();
            reply(StatusCode::OK, json!({ "keys": keys }))
        }
        "/introspect" => introspect(state, req).await,
        _ => reply(StatusCode::NOT_FOUND, json!({})),
    }
}

async fn introspect(state: &State, req: Request<Incoming>) -> Response<Full<Bytes>> {
    state.introspections.fetch_add(1, Ordering::SeqCst);
    let enc = |s: &str| {
        s.replace(':', "%3A")
            .replace('/', "%2F")
            .replace('+', "%2B")
    };
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", enc(RS_CLIENT.0), enc(RS_CLIENT.1)))
    );
    if req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        != Some(&expected)
    {
        return reply(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8(body.to_vec()).unwrap();
    let token = body
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .unwrap_or("")
        .replace("%2B", "+")
        .replace("%2F", "/")
        .replace("%3D", "=");
    let found = state.introspection.lock().unwrap().get(&token).cloned();
    reply(StatusCode::OK, found.unwrap_or(json!({"active": false})))
}

fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}
