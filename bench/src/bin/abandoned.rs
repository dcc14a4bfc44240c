//! Nothing is held for an abandoned flow: a server answers 10^5 first legs of a
//! declarative asking tool, then of a single-use tool, each with `input_required`, and
//! the clients never come back. The resident set size (VmRSS) is measured after a
//! warm-up and after each batch; a server that kept anything per flow would grow.
//!
//! `cargo run --release -p sterna-bench --bin abandoned [-- FLOWS]`

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, RequestEnv, Tool};
use sterna::server::{HandlerError, Server};

#[derive(Deserialize, JsonSchema)]
struct Args {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
enum Region {
    #[serde(rename = "eu-west-1")]
    EuWest1,
    #[serde(rename = "us-east-1")]
    UsEast1,
}

#[derive(Deserialize, JsonSchema)]
struct PickRegion {
    region: Region,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

fn server() -> Server {
    Server::builder("abandoned", "1")
        .state_keys(StateKeys::new(&[[5u8; 32]]).expect("one key"))
        .tool(
            Tool::new("provision_database")
                .ask(|a: &Args| form::<PickRegion>(format!("Which region for {}?", a.name)))
                .run(
                    |_: Context, a: Args, p: Elicitation<PickRegion>| async move {
                        let region = match p.required()?.region {
                            Region::EuWest1 => "eu-west-1",
                            Region::UsEast1 => "us-east-1",
                        };
                        Ok::<_, HandlerError>(format!("Created {} in {region}", a.name))
                    },
                ),
        )
        .tool(
            Tool::new("redeem")
                .single_use()
                .ask(|_: &NoArgs| form::<Confirm>("Redeem the voucher?"))
                .run(
                    |_: Context, _: NoArgs, ok: Elicitation<Confirm>| async move {
                        Ok::<_, HandlerError>(format!("redeemed: {}", ok.required()?.ok))
                    },
                ),
        )
        .build()
        .expect("the server builds")
}

/// The resident set size, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

fn first_leg(i: u64, tool: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"name":"db{i}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{}}}}}}}}}}"#
    )
    .into_bytes()
}

async fn abandon(server: &Server, tool: &str, flows: u64) {
    for i in 0..flows {
        let r = server
            .handle_message(&first_leg(i, tool), RequestEnv::new())
            .await
            .expect("a response");
        let bytes = r.to_bytes();
        let asked = bytes
            .windows(br#""input_required""#.len())
            .any(|w| w == br#""input_required""#);
        assert!(asked, "{}", String::from_utf8_lossy(&bytes));
    }
}

fn main() {
    let flows: u64 = std::env::args()
        .nth(1)
        .map_or(100_000, |n| n.parse().expect("FLOWS is a number"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let server = server();
    rt.block_on(async {
        for tool in ["provision_database", "redeem"] {
            abandon(&server, tool, 1_000).await;
        }
        let before = rss_kib();
        println!("after warm-up (1000 first legs per tool): VmRSS {before} KiB");
        for tool in ["provision_database", "redeem"] {
            let t = std::time::Instant::now();
            abandon(&server, tool, flows).await;
            let now = rss_kib();
            println!(
                "after {flows} abandoned first legs of {tool}: VmRSS {now} KiB ({:+} KiB since warm-up) in {:?}",
                now as i64 - before as i64,
                t.elapsed()
            );
        }
    });
}
