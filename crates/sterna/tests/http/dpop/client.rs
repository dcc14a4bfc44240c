//! sterna's OAuth client with a DPoP key against a sterna server requiring DPoP: it
//! obtains a DPoP-bound token (authorization code flow, proof at the token endpoint),
//! steps up for `mcp:write`, and completes `provision_database` through MRTR (2026-07-28)
//! and through a session with a pushed question (2025-11-25), every request proven; with
//! server nonces, it answers the `use_dpop_nonce` challenge.

use super::super::client::{Running, start_on};
use super::super::protected::{policy, test_server};
use super::issuer::{CLIENT_ID, Issuer, REDIRECT_URI};
use serde_json::{Value, json};
use sterna::client::oauth::{ClientInfo, DpopKey, HeadlessRedirect, OAuth};
use sterna::client::transport::HttpTransport;
use sterna::client::{Call, Client, EraMode};
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{
    AuthLayer, Dpop, DpopBuilder, DpopNonces, JwtValidator, ResourceMetadata,
};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use tokio::net::TcpListener;

/// A server requiring DPoP (as `dpop` configures it) with tokens from `issuer`; its URL.
async fn serve(issuer: &Issuer, dpop: impl FnOnce(String) -> DpopBuilder) -> (String, Running) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jwt = JwtValidator::builder(&resource)
        .issuer(issuer.issuer())
        .build()
        .unwrap();
    let auth = AuthLayer::new(jwt)
        .resource_metadata(ResourceMetadata::new(&resource, issuer.issuer()).unwrap())
        .scopes(policy())
        .dpop(dpop(resource.clone()).build().unwrap());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));
    (resource, s)
}

fn client(url: &str, era: EraMode) -> Client {
    let oauth = OAuth::authorization_code(HeadlessRedirect::new(REDIRECT_URI))
        .pre_registered(ClientInfo::public(CLIENT_ID))
        .refresh_tokens(false)
        .dpop(DpopKey::generate().unwrap())
        .build();
    let transport = HttpTransport::builder(url).oauth(oauth).build().unwrap();
    Client::builder("dpop-test", "1.0.0")
        .era(era)
        .on_elicit(|_form: ElicitFormParams| async move {
            ElicitResult::accept(json!({"region": "eu-west-1"}).as_object().unwrap().clone())
        })
        .build(transport)
}

async fn provision_and_whoami(c: &Client) -> Value {
    let done = c
        .run(Call::tool("provision_database", json!({"name": "orders"})))
        .await
        .expect("provisioned");
    assert_eq!(done.text_content(), "Created orders in eu-west-1");
    let me = c.run(Call::tool("whoami", json!({}))).await.unwrap();
    serde_json::from_str(&me.text_content()).unwrap()
}

#[tokio::test]
async fn sterna_client_completes_mrtr_with_dpop_in_both_eras() {
    let issuer = Issuer::start().await;
    let (url, s) = serve(&issuer, Dpop::required).await;
    for era in [EraMode::Modern, EraMode::Legacy] {
        let me = provision_and_whoami(&client(&url, era)).await;
        assert_eq!(me["id"], format!("{}#alice", issuer.issuer()), "{era:?}");
        assert_eq!(me["scopes"], json!(["mcp:read", "mcp:write"]), "{era:?}");
    }
    // Two tokens per client (the first for mcp:read, then the step-up), all bound.
    assert_eq!(issuer.seen.lock().unwrap().issued, ["DPoP"; 4]);
    s.shutdown().await;
}

#[tokio::test]
async fn sterna_client_answers_the_nonce_challenge() {
    let issuer = Issuer::start().await;
    let (url, s) = serve(&issuer, |r| Dpop::required(r).nonces(DpopNonces::random())).await;
    let me = provision_and_whoami(&client(&url, EraMode::Modern)).await;
    assert_eq!(me["id"], format!("{}#alice", issuer.issuer()));
    s.shutdown().await;
}
