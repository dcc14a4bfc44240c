//! DPoP with a real authorization server: `oidc-provider` (its `features.dPoP`) binds the
//! tokens of `mcp-dpop-client` to the client's key. sterna's OAuth client, given a DPoP
//! key, obtains one (proof at the token endpoint, step-up included) and completes MRTR
//! against a sterna server requiring DPoP; the same token replayed with another key, or
//! as a bearer token, is refused.

use super::super::client::{post_with, set, start_on};
use super::super::dpop::{ProofKey, challenges};
use super::super::protected::{list_tools, policy, post_as, test_server};
use super::provider::Provider;
use futures_util::future::BoxFuture;
use http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use sterna::client::oauth::{
    ClientInfo, Credentials, DpopKey, HeadlessRedirect, MemoryStore, OAuth, StoreError, TokenStore,
};
use sterna::client::transport::HttpTransport;
use sterna::client::{Call, Client};
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthLayer, Dpop, JwtValidator, ResourceMetadata};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use tokio::net::TcpListener;

const DPOP_CLIENT_ID: &str = "mcp-dpop-client";
const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// The client's token store, readable by the test.
#[derive(Clone, Default)]
struct Shared(Arc<MemoryStore>);

impl TokenStore for Shared {
    fn load(&self) -> BoxFuture<'_, Result<Credentials, StoreError>> {
        self.0.load()
    }

    fn save<'a>(&'a self, credentials: &'a Credentials) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.save(credentials)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and interop/oidc/node_modules: run by scripts/interop-oidc"]
async fn oidc_provider_dpop_bound_tokens_are_accepted_only_with_their_key() {
    let started = std::time::Instant::now();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let op = Provider::start(&resource).await;
    let jwt = JwtValidator::builder(&resource)
        .issuer(&op.issuer)
        .build()
        .unwrap();
    let metadata = ResourceMetadata::new(&resource, &op.issuer)
        .unwrap()
        .scopes_supported(["mcp:read", "mcp:write"]);
    let auth = AuthLayer::new(jwt)
        .resource_metadata(metadata)
        .scopes(policy())
        .dpop(Dpop::required(resource.clone()).build().unwrap());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));

    // sterna's client, with a DPoP key, runs the whole flow on the server's 401.
    let store = Shared::default();
    let oauth = OAuth::authorization_code(HeadlessRedirect::new(REDIRECT_URI))
        .pre_registered(ClientInfo::public(DPOP_CLIENT_ID))
        .refresh_tokens(false)
        .dpop(DpopKey::generate().unwrap())
        .store(store.clone())
        .build();
    let transport = HttpTransport::builder(&s.url())
        .oauth(oauth)
        .build()
        .unwrap();
    let client = Client::builder("oidc-dpop", "1.0.0")
        .on_elicit(|_form: ElicitFormParams| async move {
            ElicitResult::accept(json!({"region": "eu-west-1"}).as_object().unwrap().clone())
        })
        .build(transport);
    let done = client
        .run(Call::tool("provision_database", json!({"name": "orders"})))
        .await
        .expect("provisioned with a DPoP-bound token");
    assert_eq!(done.text_content(), "Created orders in eu-west-1");
    let me = client.run(Call::tool("whoami", json!({}))).await.unwrap();
    let me: Value = serde_json::from_str(&me.text_content()).unwrap();
    assert_eq!(me["id"], format!("{}#test-user", op.issuer));
    assert_eq!(me["client_id"], DPOP_CLIENT_ID);

    // The token it holds is bound to its key by the provider.
    let credentials = store.load().await.unwrap();
    let tokens = credentials.tokens(&op.issuer, &resource).expect("a token");
    assert_eq!(tokens.token_type, "DPoP");
    let token = tokens.access_token.expose().to_owned();
    let claims = jsonwebtoken::dangerous::insecure_decode::<Value>(&token)
        .unwrap()
        .claims;
    assert!(claims["cnf"]["jkt"].is_string(), "{claims}");

    // A thief with the token but another key: refused; as a bearer token: refused.
    let thief = ProofKey::generate();
    let r = post_with(s.addr, &list_tools(1), |h| {
        set(h, "authorization", &format!("DPoP {token}"));
        set(h, "dpop", &thief.proof("POST", &resource, &token));
    })
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    let first = &challenges(&r)[0];
    assert!(
        first.starts_with("DPoP ") && first.contains("invalid_token"),
        "{first}"
    );
    let r = post_as(s.addr, &list_tools(2), &token).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);

    s.shutdown().await;
    op.stop().await;
    eprintln!("oidc-provider DPoP flow: {:?}", started.elapsed());
}
