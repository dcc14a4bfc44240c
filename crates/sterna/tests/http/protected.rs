//! A protected server for the resource-server tests: the `whoami` tool, the scope policy,
//! a sterna server behind `AuthLayer<JwtValidator>` trusting a tiny authorization server
//! (`idp`), and request helpers.

use super::client::{Reply, Running, meta, post_with, set, start_on};
use super::fixture::server_with;
use super::idp::{Idp, SigningKey};
use serde_json::{Value, json};
use sterna::server::Server;
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{
    AuthLayer, JwtValidator, JwtValidatorBuilder, ResourceMetadata, ScopePolicy,
};
use sterna::server::{Context, NoArgs, Tool};
use tokio::net::TcpListener;

/// A tool that reports what the token granted, as handlers see it.
pub fn whoami() -> sterna::server::ToolDef {
    Tool::new("whoami")
        .description("who the token says I am")
        .handler(|ctx: Context, _: NoArgs| async move {
            let p = ctx.principal();
            let g = p.grant();
            json!({
                "id": p.id(),
                "issuer": g.map(|g| g.issuer()),
                "subject": g.map(|g| g.subject()),
                "client_id": g.and_then(|g| g.client_id()),
                "scopes": g.map(|g| g.scopes().collect::<Vec<_>>()),
                "jti": g.and_then(|g| g.claim("jti")),
            })
            .to_string()
        })
}

pub fn test_server() -> Server {
    server_with(|b| b.tool(whoami())).0
}

/// The policy of these tests: `mcp:read` always, `mcp:write` to provision.
pub fn policy() -> ScopePolicy {
    ScopePolicy::new()
        .always(["mcp:read"])
        .tool("provision_database", ["mcp:write"])
        .implies("mcp:admin", ["mcp:read", "mcp:write"])
}

pub struct Setup {
    pub idp: Idp,
    pub key: SigningKey,
    pub resource: String,
    pub s: Running,
}

impl Setup {
    pub fn token(&self, sub: &str, scope: &str) -> String {
        self.key.sign(&self.idp.claims(&self.resource, sub, scope))
    }

    pub fn metadata_url(&self) -> String {
        format!(
            "http://{}/.well-known/oauth-protected-resource/mcp",
            self.s.addr
        )
    }
}

/// An authorization server with one published key, and a sterna server trusting it.
pub async fn setup(tune: impl FnOnce(JwtValidatorBuilder) -> JwtValidatorBuilder) -> Setup {
    let idp = Idp::start().await;
    let key = SigningKey::generate("k1");
    idp.publish(&[&key]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jwt = tune(JwtValidator::builder(&resource).issuer(idp.issuer()))
        .build()
        .unwrap();
    let metadata = ResourceMetadata::new(&resource, idp.issuer())
        .unwrap()
        .scopes_supported(["mcp:read", "mcp:write"])
        .resource_name("sterna test server");
    let auth = AuthLayer::new(jwt)
        .resource_metadata(metadata)
        .scopes(policy());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));
    Setup {
        idp,
        key,
        resource,
        s,
    }
}

pub async fn post_as(addr: std::net::SocketAddr, body: &Value, token: &str) -> Reply {
    post_with(addr, body, |h| {
        set(h, "authorization", &format!("Bearer {token}"))
    })
    .await
}

pub fn www(r: &Reply) -> String {
    r.headers
        .get("www-authenticate")
        .unwrap_or_else(|| panic!("no challenge on {}: {}", r.status, r.body))
        .to_str()
        .unwrap()
        .to_owned()
}

pub fn list_tools(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta(json!({}))}})
}
