//! DPoP proofs across a fleet: two replicas requiring DPoP share one `RedisProofCache`
//! on a real Redis. A proof accepted by one is a replay on the other; each principal's
//! share of the cache holds across the fleet; the `htu` both judge is the resource's
//! external URL, not the replica's own address; with Redis gone, proofs are refused.

#![allow(missing_docs)]

#[path = "support/redis_server.rs"]
mod support;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use sterna::server::Server;
use sterna::server::http::HttpServer;
use sterna::server::http::auth::{AuthError, AuthLayer, Authenticator, Dpop, Presented};
use sterna::server::state::StateKeys;
use sterna::server::{AccessGrant, Context, NoArgs, Principal, Tool};
use sterna_redis::{Redis, RedisProofCache};
use support::RedisServer;
use tokio::net::{TcpListener, TcpStream};

/// The URL clients use: a load balancer in front of the replicas.
const RESOURCE: &str = "https://mcp.fleet.example/mcp";

/// `<user>.<jkt>` authenticates `<user>` with a token bound to the key `<jkt>` (what a
/// JWT's `cnf.jkt` says; the JWT itself is not the point here).
struct BoundTokens;

impl Authenticator for BoundTokens {
    fn authenticate<'a>(
        &'a self,
        presented: Presented<'a>,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>> {
        let principal = presented.access_token().and_then(|t| {
            let (user, jkt) = t.split_once('.')?;
            let claims = json!({"cnf": {"jkt": jkt}}).as_object().unwrap().clone();
            let grant = AccessGrant::new("https://issuer.example", user).with_claims(claims);
            Some(Principal::from_grant(grant))
        });
        Box::pin(std::future::ready(Ok(principal)))
    }
}

struct Key {
    encoding: EncodingKey,
    jwk: Jwk,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Key {
    fn generate() -> Self {
        use p256::elliptic_curve::Generate;
        use p256::pkcs8::EncodePrivateKey;
        let der = p256::SecretKey::generate().to_pkcs8_der().unwrap();
        let encoding = EncodingKey::from_ec_der(der.as_bytes());
        let jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
        Self { encoding, jwk }
    }

    fn token(&self, user: &str) -> String {
        format!(
            "{user}.{}",
            self.jwk.thumbprint(ThumbprintHash::SHA256).unwrap()
        )
    }

    fn proof(&self, token: &str) -> String {
        use p256::elliptic_curve::Generate;
        let jti = URL_SAFE_NO_PAD.encode(p256::SecretKey::generate().to_bytes());
        let claims = json!({
            "jti": jti, "htm": "POST", "htu": RESOURCE, "iat": now(),
            "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())),
        });
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.encoding).unwrap()
    }
}

async fn replica(cache: RedisProofCache) -> SocketAddr {
    let server = Server::builder("fleet", "1")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("hello")
                .description("greets")
                .handler(|_: Context, _: NoArgs| async { "hello" }),
        )
        .build()
        .unwrap();
    let dpop = Dpop::required(RESOURCE)
        .replay_cache(cache)
        .build()
        .unwrap();
    let auth = AuthLayer::new(BoundTokens).dpop(dpop);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let http = HttpServer::new(server).auth(auth);
    tokio::spawn(http.serve_with_shutdown(listener, std::future::pending()));
    addr
}

/// `tools/list` with `Authorization: DPoP <token>` and `proof`: the status and body.
async fn list(addr: SocketAddr, token: &str, proof: &str) -> (u16, String) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let req = hyper::Request::post(format!("http://{addr}/mcp"))
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .header("authorization", format!("DPoP {token}"))
        .header("dpop", proof)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), tx.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn description(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_default();
    v["error_description"].as_str().unwrap_or("").to_owned()
}

#[tokio::test]
async fn a_proof_accepted_by_one_replica_is_a_replay_on_the_other() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let a = replica(redis.proof_cache()).await;
    let b = replica(redis.proof_cache()).await;
    let key = Key::generate();
    let token = key.token("alice");
    let proof = key.proof(&token);
    let (status, body) = list(a, &token, &proof).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = list(b, &token, &proof).await;
    assert_eq!(status, 401, "the same proof on the other replica: {body}");
    assert!(description(&body).contains("already used"), "{body}");
    let (status, body) = list(b, &token, &key.proof(&token)).await;
    assert_eq!(status, 200, "a fresh proof: {body}");
}

#[tokio::test]
async fn each_principal_has_a_share_of_the_cache_across_the_fleet() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let a = replica(redis.proof_cache().per_principal(2)).await;
    let b = replica(redis.proof_cache().per_principal(2)).await;
    let key = Key::generate();
    let (alice, bob) = (key.token("alice"), key.token("bob"));
    assert_eq!(list(a, &alice, &key.proof(&alice)).await.0, 200);
    assert_eq!(list(b, &alice, &key.proof(&alice)).await.0, 200);
    assert_eq!(
        list(a, &alice, &key.proof(&alice)).await.0,
        429,
        "alice's third proof within the window"
    );
    assert_eq!(list(b, &bob, &key.proof(&bob)).await.0, 200, "bob goes on");
}

#[tokio::test]
async fn without_redis_proofs_are_refused_not_accepted() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let a = replica(redis.proof_cache()).await;
    let key = Key::generate();
    let token = key.token("alice");
    assert_eq!(list(a, &token, &key.proof(&token)).await.0, 200);
    drop(redis_server);
    let (status, body) = list(a, &token, &key.proof(&token)).await;
    assert_eq!(status, 503, "{body}");
}
