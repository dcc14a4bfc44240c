//! One replica of a fleet: run as many as you like behind a load balancer.
//!
//! What replicas must share, and where it comes from here:
//!
//! * the `requestState` keys — `STERNA_STATE_KEYS` (comma-separated base64, the first one
//!   seals; `sterna keygen` makes one). Any replica then opens any replica's state, so a
//!   2026-07-28 flow may start on one and finish on another.
//! * consumed single-use states — Redis (`REDIS_URL`), so a state redeemed on one replica
//!   is refused on every other.
//! * 2025-11-25 session records, the events of their streams and the bus between replicas —
//!   Redis too, so a load balancer needs no sticky routing for 2025 clients either: any
//!   replica serves any session's request, resumes any broken stream, and hands an answer
//!   to the replica whose request waits for it (see the deployment guide).
//!
//! ```sh
//! export STERNA_STATE_KEYS=$(sterna keygen) REDIS_URL=redis://127.0.0.1:6379/
//! cargo run --example fleet -- 127.0.0.1:3001 &
//! cargo run --example fleet -- 127.0.0.1:3002 &
//! cargo run --example resume_client -- start http://127.0.0.1:3001/mcp \
//!     approve_payment '{"invoice":"INV-7"}' > pending.json
//! cargo run --example resume_client -- resume http://127.0.0.1:3002/mcp \
//!     pending.json '{"approval":{"approve":true}}'   # finished on the other replica
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use sterna::server::http::{HttpConfig, McpService, SessionConfig};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, Tool};
use sterna::server::{HandlerError, Server};
use sterna_redis::{Redis, RedisBus};

#[derive(Deserialize, JsonSchema)]
struct PaymentArgs {
    /// The invoice to pay.
    invoice: String,
}

#[derive(Deserialize, JsonSchema)]
struct Approval {
    /// Pay it?
    approve: bool,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt().init();
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fleet: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    // Never an ephemeral key in a fleet: fail at start if the keys are missing.
    let keys = StateKeys::from_env("STERNA_STATE_KEYS")?; // comma-separated base64
    let redis_url = std::env::var("REDIS_URL").map_err(|_| "REDIS_URL is not set")?;
    let redis = Redis::connect(&redis_url).await?;
    let replica = std::process::id(); // shown in results, to see who finished a flow

    let server = Server::builder("fleet-example", "1.0.0")
        .state_keys(keys)
        .replay_store(Arc::new(redis.replay_store()))
        .tool(
            Tool::new("approve_payment")
                .description("Pays an invoice once the user approves")
                .single_use()
                .ask(|a: &PaymentArgs| {
                    form::<Approval>(format!("Pay {}?", a.invoice)).key("approval")
                })
                .run(
                    move |_ctx: Context, a: PaymentArgs, ok: Elicitation<Approval>| async move {
                        let verdict = if ok.required()?.approve {
                            "Paid"
                        } else {
                            "Did not pay"
                        };
                        Ok::<_, HandlerError>(format!(
                            "{verdict} {} (replica {replica})",
                            a.invoice
                        ))
                    },
                ),
        )
        .build()?;

    // 2025-11-25 sessions: records and stream events in Redis, answers and changes between
    // replicas through its pub/sub. With all three, no sticky routing is needed.
    let bus = RedisBus::new(&redis);
    let sessions = SessionConfig::new()
        .store(Arc::new(redis.session_store()))
        .streams(Arc::new(redis.stream_store()))
        .bus(bus.clone());
    let service = McpService::new(server.clone(), HttpConfig::default().sessions(sessions));
    bus.attach(&server, Some(service.clone()));

    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!(
        "listening on http://{}/mcp (replica {replica})",
        listener.local_addr()?
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
