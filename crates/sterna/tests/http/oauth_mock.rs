//! A mock authorization server and protected MCP resource on one 127.0.0.1 port: the
//! authorization server's issuer is `<base>/as` (metadata by RFC 8414 path insertion),
//! the resource is `<base>/mcp` (the fixture server behind a bearer check: `tools/call`
//! needs `mcp:write`). Every secret it issues contains `SECRET` so tests can look for
//! leaks.

use crate::fixture;
use base64::Engine;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use sterna::server::http::{HttpConfig, McpService};
use tokio::net::TcpListener;
use tower_service::Service;

/// What the mock saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// The `scope` of each authorization request.
    pub authorizations: Vec<Option<String>>,
    /// The `grant_type` of each token request.
    pub grants: Vec<String>,
    pub registrations: u32,
    /// The authorization codes redeemed at the token endpoint.
    pub redeemed: Vec<String>,
    /// Every secret handed out or received (to look for in logs).
    pub secrets: Vec<String>,
    /// Access tokens and their scopes.
    tokens: HashMap<String, Vec<String>>,
    challenge: Option<String>,
    verifier_ok: bool,
}

#[derive(Clone)]
pub struct Mock {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Seen>>,
}

impl Mock {
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    /// Forgets every access token (they now get 401).
    pub fn revoke_all(&self) {
        self.seen.lock().unwrap().tokens.clear();
    }

    pub fn verifier_ok(&self) -> bool {
        self.seen.lock().unwrap().verifier_ok
    }
}

pub async fn start() -> Mock {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mock = Mock {
        addr,
        seen: Arc::default(),
    };
    let (server, _) = fixture::server();
    let mcp = McpService::new(server, HttpConfig::default());
    let m = mock.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let m = m.clone();
            let mcp = mcp.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let m = m.clone();
                    let mcp = mcp.clone();
                    async move { Ok::<_, std::convert::Infallible>(handle(&m, mcp, req).await) }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    mock
}

fn json_response(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

fn form(body: &[u8]) -> HashMap<String, String> {
    form_urlencoded::parse(body).into_owned().collect()
}

async fn handle(
    m: &Mock,
    mut mcp: McpService,
    req: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    let base = m.base();
    let issuer = format!("{base}/as");
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or("").to_owned();
    match (parts.method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_response(
            StatusCode::OK,
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [issuer], "scopes_supported": ["mcp:read"]}),
        ),
        ("GET", "/.well-known/oauth-authorization-server/as") => json_response(
            StatusCode::OK,
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true,
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "scopes_supported": ["mcp:read", "mcp:write", "offline_access"],
            }),
        ),
        ("POST", "/as/register") => register(m, &body),
        ("GET", "/as/authorize") => authorize(m, &issuer, &query),
        ("POST", "/as/token") => token(m, &parts.headers, &body),
        ("POST", "/mcp") => resource(m, &mut mcp, &parts, body).await,
        _ => json_response(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
    }
}

fn register(m: &Mock, body: &[u8]) -> Response<Full<Bytes>> {
    let doc: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(doc["application_type"], "native");
    let mut seen = m.seen.lock().unwrap();
    seen.registrations += 1;
    seen.secrets.push("client-SECRET-1".into());
    json_response(
        StatusCode::CREATED,
        json!({"client_id": "client-1", "client_secret": "client-SECRET-1", "token_endpoint_auth_method": "client_secret_basic"}),
    )
}

fn authorize(m: &Mock, issuer: &str, query: &str) -> Response<Full<Bytes>> {
    let q = form(query.as_bytes());
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["resource"], format!("{}/mcp", m.base()));
    let mut seen = m.seen.lock().unwrap();
    seen.authorizations.push(q.get("scope").cloned());
    seen.challenge = q.get("code_challenge").cloned();
    let code = format!("code-SECRET-{}", seen.authorizations.len());
    seen.secrets.push(code.clone());
    let mut location = format!("{}?", q["redirect_uri"]);
    let mut ser = form_urlencoded::Serializer::new(String::new());
    ser.append_pair("code", &code)
        .append_pair("state", &q["state"])
        .append_pair("iss", issuer);
    location.push_str(&ser.finish());
    Response::builder()
        .status(StatusCode::FOUND)
        .header("location", location)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

fn token(m: &Mock, headers: &http::HeaderMap, body: &[u8]) -> Response<Full<Bytes>> {
    let f = form(body);
    let basic = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let creds = base64::engine::general_purpose::STANDARD
        .decode(basic.strip_prefix("Basic ").unwrap_or(""))
        .unwrap_or_default();
    if creds != b"client-1:client-SECRET-1" {
        return json_response(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let mut seen = m.seen.lock().unwrap();
    seen.grants.push(f["grant_type"].clone());
    let scope = seen
        .authorizations
        .last()
        .cloned()
        .flatten()
        .unwrap_or_default();
    if f["grant_type"] == "authorization_code" {
        let verifier = f["code_verifier"].clone();
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(<sha2::Sha256 as sha2::Digest>::digest(verifier.as_bytes()));
        seen.verifier_ok = Some(challenge) == seen.challenge;
        seen.redeemed
            .push(f.get("code").cloned().unwrap_or_default());
        seen.secrets.push(verifier);
    }
    let n = seen.grants.len();
    let access = format!("access-SECRET-{n}");
    let refresh = format!("refresh-SECRET-{n}");
    seen.secrets.extend([access.clone(), refresh.clone()]);
    let scopes = scope.split(' ').map(str::to_owned).collect();
    seen.tokens.insert(access.clone(), scopes);
    json_response(
        StatusCode::OK,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": scope, "refresh_token": refresh}),
    )
}

fn challenge(status: StatusCode, value: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("www-authenticate", value)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(
            br#"{"error":"invalid_token"}"#,
        )))
        .unwrap()
}

async fn resource(
    m: &Mock,
    mcp: &mut McpService,
    parts: &http::request::Parts,
    body: Bytes,
) -> Response<Full<Bytes>> {
    let prm = format!("{}/.well-known/oauth-protected-resource/mcp", m.base());
    let token = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let scopes = token.and_then(|t| m.seen.lock().unwrap().tokens.get(&t).cloned());
    let Some(scopes) = scopes else {
        return challenge(
            StatusCode::UNAUTHORIZED,
            format!(r#"Bearer error="invalid_token", scope="mcp:read", resource_metadata="{prm}""#),
        );
    };
    let call: Value = serde_json::from_slice(&body).unwrap_or_default();
    if call["method"] == "tools/call" && !scopes.iter().any(|s| s == "mcp:write") {
        return challenge(
            StatusCode::FORBIDDEN,
            format!(
                r#"Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="{prm}""#
            ),
        );
    }
    let mut req = Request::builder().method("POST").uri("/mcp");
    for (k, v) in &parts.headers {
        req = req.header(k, v);
    }
    let response = mcp.call(req.body(Full::new(body)).unwrap()).await.unwrap();
    let (p, b) = response.into_parts();
    let bytes = b.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
    Response::from_parts(p, Full::new(bytes))
}
