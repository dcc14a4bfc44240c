//! The `auth/*` scenarios: one well-behaved OAuth client (sterna's), configured from the
//! scenario's context where the harness gives one.

use serde_json::Value;
use sterna::client::oauth::{
    ClientInfo, ClientKey, DpopKey, HeadlessRedirect, IdentityAssertion, OAuth, OAuthBuilder,
};
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, ClientError};

/// The client ID metadata document URL the suite expects (it never fetches it).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI: the headless step reads the redirect from `Location`, so nothing
/// listens here.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// Why the scenario's context cannot be used.
#[derive(Debug)]
pub(crate) struct BadContext(pub(crate) String);

fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

fn field(ctx: &Value, name: &str) -> Result<String, BadContext> {
    ctx[name]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| BadContext(format!("the context has no {name}")))
}

fn interactive() -> OAuthBuilder {
    OAuth::authorization_code(HeadlessRedirect::new(REDIRECT_URI))
        .client_name("sterna-conformance-client")
        .client_metadata_document(CIMD_URL)
}

/// The OAuth client for `scenario`.
fn oauth(scenario: &str) -> Result<OAuth, BadContext> {
    let ctx = context();
    let key_error = |e| BadContext(format!("unusable key: {e}"));
    let builder = match scenario {
        "auth/pre-registration" => interactive().pre_registered(ClientInfo::confidential(
            field(&ctx, "client_id")?,
            field(&ctx, "client_secret")?,
        )),
        "auth/dpop" | "auth/dpop-nonce" => {
            interactive().dpop(DpopKey::generate().map_err(key_error)?)
        }
        "auth/client-credentials-basic" => OAuth::client_credentials(ClientInfo::confidential(
            field(&ctx, "client_id")?,
            field(&ctx, "client_secret")?,
        )),
        "auth/client-credentials-jwt" => {
            let alg = ctx["signing_algorithm"].as_str().unwrap_or("ES256");
            let pem = field(&ctx, "private_key_pem")?;
            let key = ClientKey::from_pem(pem.as_bytes(), alg).map_err(key_error)?;
            OAuth::client_credentials_jwt(field(&ctx, "client_id")?, key)
        }
        "auth/wif-jwt-bearer" => {
            OAuth::workload_identity(field(&ctx, "client_id")?, field(&ctx, "valid_jwt")?)
        }
        "auth/enterprise-managed-authorization" => OAuth::enterprise_managed(
            IdentityAssertion::new(
                field(&ctx, "idp_token_endpoint")?,
                field(&ctx, "idp_client_id")?,
                field(&ctx, "idp_id_token")?,
            ),
            ClientInfo::confidential(field(&ctx, "client_id")?, field(&ctx, "client_secret")?),
        ),
        _ => interactive(),
    };
    Ok(builder.build())
}

/// A client of `url` that authorizes as `scenario` wants.
pub(crate) fn client(scenario: &str, url: &str) -> Result<Result<Client, ClientError>, BadContext> {
    let oauth = oauth(scenario)?;
    Ok(HttpTransport::builder(url)
        .oauth(oauth)
        .build()
        .map(|t| Client::builder("sterna-conformance-client", env!("CARGO_PKG_VERSION")).build(t))
        .map_err(ClientError::from))
}
