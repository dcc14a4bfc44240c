//! Single use on a real Redis Cluster while it changes under load (required: the test
//! fails, never skips, when redis-server is missing): a primary killed (its replica
//! promoted), slots moved by `redis-cli --cluster reshard`. Workers replay every state
//! twice at once and retry each `-32603` with the same state, as a client would; a state
//! that runs twice is a wrong success. The counts are printed (`--nocapture`).

#![allow(missing_docs)]

#[path = "support/cluster.rs"]
mod cluster;

#[path = "support/pay.rs"]
mod pay;
use cluster::Cluster;
use pay::{call, state};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use sterna_redis::{Redis, RedisReplayStore};

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

/// A server whose `pay` tool is single-use (states sealed inline).
fn server(store: RedisReplayStore, paid: Arc<AtomicUsize>) -> Server {
    Server::builder("failover", "1")
        .state_keys(StateKeys::ephemeral())
        .replay_store(Arc::new(store))
        .tool(
            Tool::new("pay")
                .single_use()
                .ask(|_: &NoArgs| form::<Confirm>("Pay?"))
                .run(move |_c: Context, _: NoArgs, ok: Elicitation<Confirm>| {
                    let paid = paid.clone();
                    async move {
                        let _ = ok.required()?.ok;
                        paid.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, HandlerError>("paid")
                    }
                }),
        )
        .build()
        .unwrap()
}

/// What the workers saw.
#[derive(Default)]
struct Counts {
    /// Calls with a state.
    operations: AtomicUsize,
    /// `-32603` answers (each retried with the same state).
    retries: AtomicUsize,
    /// States that ran more than once.
    wrong: AtomicUsize,
    /// States that ran once.
    ran: AtomicUsize,
    /// States refused (`-32602`) without having run (the client would start over).
    refused: AtomicUsize,
    /// Answers other than success, `-32602` and `-32603`.
    other: AtomicUsize,
}

impl Counts {
    fn print(&self, what: &str, paid: usize) {
        println!(
            "{what}: {} operations, {} states ran once, {} -32603 retries, {} wrong successes, \
             {} states refused without having run, {} other errors; the tool ran {paid} times",
            self.operations.load(Ordering::SeqCst),
            self.ran.load(Ordering::SeqCst),
            self.retries.load(Ordering::SeqCst),
            self.wrong.load(Ordering::SeqCst),
            self.refused.load(Ordering::SeqCst),
            self.other.load(Ordering::SeqCst),
        );
    }
}

/// One call with `state`, retried while it fails with `-32603`: whether it ran.
async fn settle(server: &Server, state: &str, counts: &Counts) -> bool {
    for _ in 0..100 {
        counts.operations.fetch_add(1, Ordering::SeqCst);
        let r = call(server, Some(state)).await;
        match r["error"]["code"].as_i64() {
            None if r["content"][0]["text"] == "paid" => return true,
            Some(-32602) => return false,
            Some(-32603) => {
                if counts.retries.fetch_add(1, Ordering::SeqCst) == 0 {
                    println!("the first -32603: {}", r["error"]["message"]);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            _ => {
                counts.other.fetch_add(1, Ordering::SeqCst);
                eprintln!("unexpected: {r}");
                return false;
            }
        }
    }
    panic!("a state was never settled");
}

/// Workers replaying fresh states twice at once until `stop`.
fn load(
    server: &Server,
    counts: &Arc<Counts>,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..8)
        .map(|_| {
            let (server, counts, stop) = (server.clone(), counts.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let s = state(&server).await;
                    let (a, b) =
                        tokio::join!(settle(&server, &s, &counts), settle(&server, &s, &counts));
                    match usize::from(a) + usize::from(b) {
                        0 => counts.refused.fetch_add(1, Ordering::SeqCst),
                        1 => counts.ran.fetch_add(1, Ordering::SeqCst),
                        _ => counts.wrong.fetch_add(1, Ordering::SeqCst),
                    };
                }
            })
        })
        .collect()
}

/// 64 concurrent replays of one state (each retried while `-32603`): how many ran.
async fn replays(server: &Server) -> usize {
    let s = state(server).await;
    let counts = Arc::new(Counts::default());
    let calls: Vec<_> = (0..64)
        .map(|_| {
            let (server, s, counts) = (server.clone(), s.clone(), counts.clone());
            tokio::spawn(async move { settle(&server, &s, &counts).await })
        })
        .collect();
    let mut ran = 0;
    for c in calls {
        ran += usize::from(c.await.unwrap());
    }
    assert_eq!(counts.other.load(Ordering::SeqCst), 0);
    ran
}

/// One cluster under load at a time (2 cores are not enough for two).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_killed_under_load_loses_no_consumption() {
    let _serial = SERIAL.lock().await;
    let mut cluster = Cluster::start(1, &[]);
    let redis = Redis::connect(&cluster.url).await.unwrap();
    let paid = Arc::new(AtomicUsize::new(0));
    // One client under load for the whole test: its share of consumed states holds it all.
    let srv = server(
        redis.replay_store().replicas(1).per_principal(1_000_000),
        paid.clone(),
    );
    let accepted = replays(&srv).await;
    println!("cluster: 64 concurrent replays of one state, {accepted} accepted");
    assert_eq!(accepted, 1);

    let (counts, stop) = (
        Arc::new(Counts::default()),
        Arc::new(AtomicBool::new(false)),
    );
    let workers = load(&srv, &counts, &stop);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let victim = cluster.primaries()[0];
    let before = counts.operations.load(Ordering::SeqCst);
    cluster.kill(victim);
    let killed = Instant::now();
    // The promoted replica has no replica of its own until the old primary is back (as
    // its replica): meanwhile its slots' consumptions cannot be confirmed (-32603).
    let (cluster, took) = tokio::task::spawn_blocking(move || {
        cluster.wait_failover();
        let took = killed.elapsed();
        cluster.restart(victim);
        cluster.wait_ok();
        (cluster, took)
    })
    .await
    .unwrap();
    let back = killed.elapsed();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    counts.print(
        &format!(
            "cluster failover (primary {victim} SIGKILLed after {before} operations, replica promoted in {} ms, the old primary back as its replica after {} ms)",
            took.as_millis(),
            back.as_millis()
        ),
        paid.load(Ordering::SeqCst) - 1,
    );
    assert_eq!(counts.wrong.load(Ordering::SeqCst), 0, "no state ran twice");
    assert_eq!(counts.other.load(Ordering::SeqCst), 0);
    assert_eq!(
        paid.load(Ordering::SeqCst) - 1,
        counts.ran.load(Ordering::SeqCst),
        "the tool ran once per state that ran"
    );
    assert!(counts.ran.load(Ordering::SeqCst) > 0);
    // After the failover, single use holds as before.
    assert_eq!(replays(&srv).await, 1);
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_moved_under_load_lose_no_consumption() {
    let _serial = SERIAL.lock().await;
    let cluster = Cluster::start(0, &[]);
    let redis = Redis::connect(&cluster.url).await.unwrap();
    let paid = Arc::new(AtomicUsize::new(0));
    // One client under load for the whole test: its share of consumed states holds it all.
    let srv = server(redis.replay_store().per_principal(1_000_000), paid.clone());

    let (counts, stop) = (
        Arc::new(Counts::default()),
        Arc::new(AtomicBool::new(false)),
    );
    let workers = load(&srv, &counts, &stop);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let p = cluster.primaries();
    let started = Instant::now();
    let (cluster, moved) = tokio::task::spawn_blocking(move || {
        let moved = cluster.reshard(p[0], p[1], 1000);
        (cluster, moved)
    })
    .await
    .unwrap();
    let took = started.elapsed();
    assert!(moved, "redis-cli --cluster reshard succeeded");
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    counts.print(
        &format!(
            "cluster reshard (1000 slots moved in {} ms)",
            took.as_millis()
        ),
        paid.load(Ordering::SeqCst),
    );
    assert_eq!(counts.wrong.load(Ordering::SeqCst), 0, "no state ran twice");
    assert_eq!(counts.other.load(Ordering::SeqCst), 0);
    assert_eq!(
        counts.refused.load(Ordering::SeqCst),
        0,
        "no consumption is left unconfirmed without replicas to wait for"
    );
    assert_eq!(
        paid.load(Ordering::SeqCst),
        counts.ran.load(Ordering::SeqCst)
    );
    assert_eq!(replays(&srv).await, 1);
    drop(cluster);
}
