//! A real authorization server: `oidc-provider` 9.13.3 (interop/oidc) on loopback issues
//! RFC 9068 JWT access tokens bound to the MCP resource; users log in through the
//! authorization code flow with PKCE (headless); sterna's client completes MRTR flows
//! with them against a server behind `AuthLayer<JwtValidator>`.
//!
//! `dpop` does it again with DPoP-bound tokens, obtained by sterna's own OAuth client.
//!
//! Ignored by a plain `cargo test` (it needs Node 22 and the provider's node_modules);
//! `scripts/interop-oidc` (a step of `scripts/test`) installs both and runs it, and it
//! fails — never skips — when they are missing.

mod browser;
#[cfg(feature = "oauth")]
mod dpop;
mod flow;
mod provider;

use super::client::{call, post, start_on};
use super::protected::{list_tools, policy, post_as, test_server, www};
use flow::{CLIENT_ID, CodeFlow, challenge_param};
use http::StatusCode;
use provider::Provider;
use serde_json::{Value, json};
use sterna::client::transport::HttpTransport;
use sterna::client::{Call, Client, ClientError, Step};
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthLayer, JwtValidator, ResourceMetadata};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use sterna::types::error::ErrorCode;
use sterna::types::mrtr::InputResponses;
use tokio::net::TcpListener;

/// The seam where sterna's OAuth client will plug in: today a client sending a token
/// obtained by [`CodeFlow`]; then, a client whose transport runs the flow itself on the
/// server's 401 (with a headless redirect handler logging in as the user).
fn client_for(url: &str, access_token: &str) -> Client {
    let transport = HttpTransport::new(url)
        .unwrap()
        .header("authorization", &format!("Bearer {access_token}"))
        .unwrap();
    Client::builder("oidc-interop", "1.0.0")
        .on_elicit(|_form: ElicitFormParams| async move {
            ElicitResult::accept(json!({"region": "eu-west-1"}).as_object().unwrap().clone())
        })
        .build(transport)
}

fn union(a: &str, b: &str) -> String {
    let mut all: Vec<&str> = a.split(' ').collect();
    for s in b.split(' ') {
        if !all.contains(&s) {
            all.push(s);
        }
    }
    all.join(" ")
}

fn provision() -> Call<sterna::types::tools::CallToolResult> {
    Call::tool("provision_database", json!({"name": "orders"}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and interop/oidc/node_modules: run by scripts/interop-oidc"]
async fn oidc_provider_tokens_protect_mrtr_flows_per_user() {
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
        .scopes(policy());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));

    // Discovery, as a client does it: the 401 names the metadata and the scope.
    let r = post(s.addr, &list_tools(1)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let first_scope = challenge_param(&www(&r), "scope").expect("a scope in the challenge");
    let flow = CodeFlow::discover(&www(&r)).await;
    assert_eq!(
        (flow.resource.as_str(), flow.issuer.as_str()),
        (resource.as_str(), op.issuer.as_str())
    );
    assert_eq!(flow.scopes_supported, ["mcp:read", "mcp:write"]);

    // Alice with the challenged scope; provisioning needs more: 403, step up to the union.
    let alice_read = flow.token("alice", &first_scope).await;
    assert_eq!(alice_read.scope, "mcp:read");
    let r = post_as(
        s.addr,
        &call(1, "provision_database", json!({"name": "orders"})),
        &alice_read.access_token,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(www(&r).contains("error=\"insufficient_scope\""));
    let wanted = union(&first_scope, &challenge_param(&www(&r), "scope").unwrap());
    let alice = flow.token("alice", &wanted).await;
    assert_eq!(alice.scope, "mcp:read mcp:write");

    // sterna's client, as alice, completes provision_database through MRTR.
    let client_a = client_for(&s.url(), &alice.access_token);
    let done = client_a.run(provision()).await.expect("alice provisions");
    assert_eq!(done.text_content(), "Created orders in eu-west-1");
    let me = client_a.run(Call::tool("whoami", json!({}))).await.unwrap();
    let me: Value = serde_json::from_str(&me.text_content()).unwrap();
    assert_eq!(
        me["id"],
        format!("{}#alice", op.issuer),
        "the principal is iss#sub"
    );
    assert_eq!(me["client_id"], CLIENT_ID);
    assert_eq!(me["scopes"], json!(["mcp:read", "mcp:write"]));

    // Bob has his own token; a requestState issued to alice is refused for him.
    let bob = flow.token("bob", &wanted).await;
    let client_b = client_for(&s.url(), &bob.access_token);
    let answers: InputResponses = serde_json::from_value(json!({
        "pick_region": {"action": "accept", "content": {"region": "eu-west-1"}}
    }))
    .unwrap();
    let Step::InputRequired(pending) = client_a.start(provision()).await.unwrap() else {
        panic!("provision_database asks first");
    };
    assert!(pending.has_state());
    match client_b.resume(pending, answers.clone()).await {
        Err(ClientError::Server(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e}"),
        other => panic!("bob finished alice's flow: {other:?}"),
    }
    let Step::InputRequired(pending) = client_a.start(provision()).await.unwrap() else {
        panic!("provision_database asks first");
    };
    let Step::Complete(mine) = client_a.resume(pending, answers).await.unwrap() else {
        panic!("alice's own state completes");
    };
    assert_eq!(mine.text_content(), "Created orders in eu-west-1");

    s.shutdown().await;
    op.stop().await;
    eprintln!("oidc-provider flow: {:?}", started.elapsed());
}
