//! A Redis Cluster of the test's own on 127.0.0.1: `redis-server --cluster-enabled yes`
//! nodes in a temporary directory, joined by `redis-cli --cluster create`, stopped when
//! dropped (required: a test fails, never skips, when redis-server is missing).
//!
//! The Redis tests run against one too when `STERNA_REDIS_CLUSTER=1` (scripts/test runs
//! them both ways).

#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether the tests run against a cluster (`STERNA_REDIS_CLUSTER=1`).
pub(crate) fn wanted() -> bool {
    std::env::var("STERNA_REDIS_CLUSTER").is_ok_and(|v| v == "1")
}

/// One node: its port and process (`None` once killed).
#[derive(Debug)]
struct Node {
    port: u16,
    child: Option<Child>,
}

/// A cluster of ours, stopped (and its directory removed) when dropped.
#[derive(Debug)]
pub(crate) struct Cluster {
    nodes: Vec<Node>,
    dir: std::path::PathBuf,
    /// `redis+cluster://127.0.0.1:p1,…/`, every node listed.
    pub(crate) url: String,
    /// The nodes' extra settings.
    extra: Vec<String>,
}

/// Starts the node on `port` (its cluster state in `dir/nodes-{port}.conf`).
fn spawn(dir: &std::path::Path, port: u16, extra: &[String]) -> Child {
    let p = port.to_string();
    let conf = format!("nodes-{port}.conf");
    Command::new("redis-server")
        .args([
            "--port",
            &p,
            "--bind",
            "127.0.0.1",
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            &conf,
            "--cluster-node-timeout",
            "1000",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server is required for these tests (apt-get install redis-server)")
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            if let Some(mut c) = n.child.take() {
                let _ = Command::new("kill")
                    .args(["-CONT", &c.id().to_string()])
                    .status();
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A free port never handed out before in this process (tests run in parallel threads: the
/// kernel may give a port one test just let go of to another before the first one's server
/// binds it); with `bus`, one whose cluster bus port (+10000) is free as well.
pub(crate) fn free_port(bus: bool) -> u16 {
    static TAKEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if bus && (port >= 55_000 || TcpListener::bind(("127.0.0.1", port + 10_000)).is_err()) {
            continue;
        }
        let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
        if taken.insert(port) {
            return port;
        }
    }
}

/// Waits until `child` listens on `port`; `false` when it exited first (the port was
/// taken, by another program, between choosing it and binding it).
pub(crate) fn serving(child: &mut Child, port: u16) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("redis-server did not start on port {port}");
}

/// A node of ours on a free port: tried again on another when its port was taken.
fn start_node(dir: &std::path::Path, extra: &[String]) -> Node {
    for _ in 0..10 {
        let port = free_port(true);
        let mut child = spawn(dir, port, extra);
        if serving(&mut child, port) {
            return Node {
                port,
                child: Some(child),
            };
        }
        let _ = child.wait();
    }
    panic!("no free port for a cluster node after 10 tries");
}

/// `redis-cli -p port args…`: its output.
pub(crate) fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli is required for these tests (apt-get install redis-server)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Cluster {
    /// 3 primaries, each with `replicas` replicas, started with `extra` settings.
    pub(crate) fn start(replicas: usize, extra: &[&str]) -> Self {
        static CLUSTERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let count = 3 * (1 + replicas);
        let n = CLUSTERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("sterna-redis-cluster-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let extra: Vec<String> = extra.iter().map(|&a| a.to_owned()).collect();
        let nodes: Vec<Node> = (0..count).map(|_| start_node(&dir, &extra)).collect();
        let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
        let url = format!(
            "redis+cluster://{}/",
            ports
                .iter()
                .map(|p| format!("127.0.0.1:{p}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let cluster = Self {
            nodes,
            dir,
            url,
            extra,
        };
        let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let replicas = replicas.to_string();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", &replicas, "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli is required for these tests");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster.wait_ok();
        cluster
    }

    /// Waits until every live node says `cluster_state:ok` and agrees on the slots'
    /// owners, and every replica's link to its primary is up.
    pub(crate) fn wait_ok(&self) {
        if !self.settled(Duration::from_secs(30)) {
            panic!(
                "timed out waiting for the cluster to be ok:\n{}",
                self.views()
            );
        }
    }

    /// Each live node's view: `cluster nodes`, its state and its replication link.
    fn views(&self) -> String {
        let mut out = String::new();
        for p in self.live_ports() {
            let info = cli(p, &["cluster", "info"]);
            let repl = cli(p, &["info", "replication"]);
            let pick = |text: &str, keys: &[&str]| -> String {
                text.lines()
                    .filter(|l| keys.iter().any(|k| l.starts_with(k)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            out += &format!(
                "-- node {p}: {} {}\n{}",
                pick(
                    &info,
                    &["cluster_state", "cluster_current_epoch", "cluster_my_epoch"]
                ),
                pick(&repl, &["role", "master_link_status"]),
                cli(p, &["cluster", "nodes"])
            );
        }
        out
    }

    /// Whether the cluster settles (see [`Cluster::wait_ok`]) within `limit`.
    fn settled(&self, limit: Duration) -> bool {
        within(limit, || {
            let live: Vec<u16> = self.live_ports();
            let views: Vec<String> = live
                .iter()
                .map(|&p| {
                    let mut slots: Vec<String> = cli(p, &["cluster", "nodes"])
                        .lines()
                        .filter(|l| l.contains("master") && !l.contains("fail"))
                        .map(|l| {
                            let f: Vec<&str> = l.split_whitespace().collect();
                            format!("{} {}", f[1], f[8..].join(" "))
                        })
                        .collect();
                    slots.sort();
                    slots.join("|")
                })
                .collect();
            live.iter()
                .all(|&p| cli(p, &["cluster", "info"]).contains("cluster_state:ok"))
                && views.windows(2).all(|w| w[0] == w[1])
                && live.iter().all(|&p| {
                    let info = cli(p, &["info", "replication"]);
                    !info.contains("role:slave") || info.contains("master_link_status:up")
                })
        })
    }

    fn live_ports(&self) -> Vec<u16> {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .map(|n| n.port)
            .collect()
    }

    /// The primaries' ports, as the first live node sees them (failed ones left out).
    pub(crate) fn primaries(&self) -> Vec<u16> {
        let any = self.live_ports()[0];
        let mut ports: Vec<u16> = cli(any, &["cluster", "nodes"])
            .lines()
            .filter(|l| l.contains("master") && !l.contains("fail"))
            .filter_map(|l| {
                let addr = l.split_whitespace().nth(1)?;
                addr.split(['@', ':']).nth(1)?.parse().ok()
            })
            .collect();
        ports.sort_unstable();
        ports
    }

    /// The port of the primary that owns `key`'s slot.
    pub(crate) fn owner(&self, key: &str) -> u16 {
        let any = self.live_ports()[0];
        let slot: u16 = cli(any, &["cluster", "keyslot", key])
            .trim()
            .parse()
            .unwrap();
        for line in cli(any, &["cluster", "nodes"]).lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if !f[2].contains("master") || f[2].contains("fail") {
                continue;
            }
            for range in &f[8..] {
                if range.starts_with('[') {
                    continue;
                }
                let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                if (lo.parse::<u16>().unwrap()..=hi.parse::<u16>().unwrap()).contains(&slot) {
                    return f[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
                }
            }
        }
        panic!("no primary owns slot {slot}");
    }

    /// The node id of the node on `port`.
    pub(crate) fn id(&self, port: u16) -> String {
        cli(port, &["cluster", "myid"]).trim().to_owned()
    }

    /// Runs `ACL SETUSER user rules…` on every node: the cluster's URL as that user
    /// (password `pw`).
    pub(crate) fn acl_user(&self, user: &str, pw: &str, rules: &[&str]) -> String {
        for port in self.live_ports() {
            let mut args = vec!["acl", "setuser", user, "on"];
            let pass = format!(">{pw}");
            args.push(&pass);
            args.extend_from_slice(rules);
            assert_eq!(cli(port, &args).trim(), "OK");
        }
        self.url.replacen(
            "redis+cluster://",
            &format!("redis+cluster://{user}:{pw}@"),
            1,
        )
    }

    /// The live nodes' process ids.
    pub(crate) fn pids(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .filter_map(|n| n.child.as_ref().map(Child::id))
            .collect()
    }

    /// Kills (SIGKILL) the node on `port`.
    pub(crate) fn kill(&mut self, port: u16) {
        let node = self.nodes.iter_mut().find(|n| n.port == port).unwrap();
        if let Some(mut c) = node.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// Moves the slot of `key` (holding no keys: a channel's) to the primary on `to`, as
    /// `redis-cli --cluster reshard` does for each slot: the target imports it first (a
    /// node importing a slot never gives it back to an older claim: without that, the
    /// source's gossip could take it back between the two claims, leaving the target and
    /// the replicas with one owner and the other primaries with another for good), then
    /// claims it (which bumps its config epoch above every other), then the rest follow.
    pub(crate) fn move_slot_of(&self, key: &str, to: u16) {
        let any = self.live_ports()[0];
        let slot = cli(any, &["cluster", "keyslot", key]).trim().to_owned();
        let from = self.owner(key);
        let (source, target) = (self.id(from), self.id(to));
        let steps: [(u16, &str, &str); 4] = [
            (to, "importing", &source),
            (from, "migrating", &target),
            (to, "node", &target),
            (from, "node", &target),
        ];
        for (port, how, node) in steps {
            let said = cli(port, &["cluster", "setslot", &slot, how, node]);
            assert_eq!(said.trim(), "OK", "setslot {slot} {how} on {port}");
        }
        for port in self.primaries() {
            if port != to && port != from {
                cli(port, &["cluster", "setslot", &slot, "node", &target]);
            }
        }
        self.wait_ok();
    }

    /// Starts the killed node on `port` again: it rejoins the cluster (a former primary
    /// as a replica of the one promoted in its place).
    pub(crate) fn restart(&mut self, port: u16) {
        let mut child = spawn(&self.dir, port, &self.extra);
        assert!(
            serving(&mut child, port),
            "node {port} could not start again (its port was taken)"
        );
        let node = self.nodes.iter_mut().find(|n| n.port == port).unwrap();
        assert!(node.child.is_none(), "node {port} is running");
        node.child = Some(child);
    }

    /// Waits until a replica has taken over every slot of a killed primary.
    pub(crate) fn wait_failover(&self) {
        self.wait_ok();
    }

    /// Moves `slots` slots from the primary on `from` to the one on `to`
    /// (`redis-cli --cluster reshard`, keys and all): the command's success.
    pub(crate) fn reshard(&self, from: u16, to: u16, slots: usize) -> bool {
        let out = Command::new("redis-cli")
            .args([
                "--cluster",
                "reshard",
                &format!("127.0.0.1:{from}"),
                "--cluster-from",
                &self.id(from),
                "--cluster-to",
                &self.id(to),
                "--cluster-slots",
                &slots.to_string(),
                "--cluster-yes",
                "--cluster-pipeline",
                "100",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli");
        out.success()
    }
}

/// Polls `ready` every 50 ms for up to `limit`: whether it became true.
fn within(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A plain connection to what `url` names (one Redis, or a `redis+cluster://` cluster),
/// for a test to look at or change keys behind the stores' back.
pub(crate) enum Raw {
    Single(redis::aio::MultiplexedConnection),
    Cluster(redis::cluster_async::ClusterConnection),
}

impl Raw {
    pub(crate) async fn open(url: &str) -> Self {
        match url.strip_prefix("redis+cluster://") {
            None => Raw::Single(
                redis::Client::open(url)
                    .unwrap()
                    .get_multiplexed_async_connection()
                    .await
                    .unwrap(),
            ),
            Some(rest) => {
                let nodes: Vec<String> = rest
                    .trim_end_matches('/')
                    .split(',')
                    .map(|h| format!("redis://{h}/"))
                    .collect();
                Raw::Cluster(
                    redis::cluster::ClusterClient::new(nodes)
                        .unwrap()
                        .get_async_connection()
                        .await
                        .unwrap(),
                )
            }
        }
    }
}

impl redis::aio::ConnectionLike for Raw {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Raw::Single(c) => c.req_packed_command(cmd),
            Raw::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Raw::Single(c) => c.req_packed_commands(cmd, offset, count),
            Raw::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        0
    }
}
