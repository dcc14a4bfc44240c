//! The fleet under test: a redis-server (a 3-primary Redis Cluster when
//! `STERNA_REDIS_CLUSTER=1`), replicas of `sterna serve --redis` and nginx (configured from
//! deploy/nginx.conf.template), all on 127.0.0.1, every process killed and reaped when
//! the fleet is dropped (also on a panic).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on right now, below the kernel's ephemeral range (32768 and up
/// on Linux): ports there are handed to outgoing connections and to `bind(0)`, so one chosen
/// there can be taken between choosing it and its server binding it. Never the same twice.
pub(crate) fn free_port() -> u16 {
    port_below_ephemeral(20_000, false)
}

/// From `low` on (12,000 ports, the walk starting at a place of this process's own), a
/// port that binds now and was not handed out before; with `bus`, one whose cluster bus
/// port (+10000) binds too.
fn port_below_ephemeral(low: u16, bus: bool) -> u16 {
    static TAKEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
    let start = (std::process::id() as usize * 7_919) % 12_000;
    for i in 0..12_000 {
        let port = low + ((start + i) % 12_000) as u16;
        let binds = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        if !taken.contains(&port) && binds(port) && (!bus || binds(port + 10_000)) {
            taken.push(port);
            return port;
        }
    }
    panic!("no free port from {low}");
}

fn wait_listening(port: u16, what: &str, child: &mut Child) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} did not listen on {port} within 20 s");
}

/// Sends `signal` (TERM, KILL, QUIT…) to a child, then waits for it (at most 15 s, then KILL).
pub(crate) fn stop(child: &mut Child, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A redis-server on `port` with `extra` settings, its files in `run`.
fn redis_server(run: &std::path::Path, port: u16, extra: &[&str]) -> Child {
    Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .args(extra)
        .current_dir(run)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server is required for the cluster test (apt-get install redis-server)")
}

/// Three `--cluster-enabled` nodes joined by `redis-cli --cluster create`, once every
/// node says `cluster_state:ok`: the nodes and the `redis+cluster://` URL.
fn redis_cluster(run: &std::path::Path) -> (Vec<Child>, String) {
    let mut ports = Vec::new();
    while ports.len() < 3 {
        // The cluster bus listens on the port + 10000, below the ephemeral range as well.
        ports.push(port_below_ephemeral(10_000, true));
    }
    let mut nodes = Vec::new();
    for &p in &ports {
        let conf = format!("nodes-{p}.conf");
        let mut node = redis_server(
            run,
            p,
            &["--cluster-enabled", "yes", "--cluster-config-file", &conf],
        );
        wait_listening(p, "redis-server (cluster node)", &mut node);
        nodes.push(node);
    }
    let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let created = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("redis-cli is required for the cluster test (apt-get install redis-server)");
    assert!(created.success(), "redis-cli --cluster create failed");
    let started = Instant::now();
    let ok = |p: &u16| {
        Command::new("redis-cli")
            .args(["-p", &p.to_string(), "cluster", "info"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
    };
    while !ports.iter().all(ok) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the Redis Cluster is not ok"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (nodes, format!("redis+cluster://{}/", addrs.join(",")))
}

/// One replica: its name, port, and process while it runs.
#[derive(Debug)]
pub(crate) struct Replica {
    pub(crate) name: String,
    pub(crate) port: u16,
    child: Option<Child>,
}

/// The whole fleet.
#[derive(Debug)]
pub(crate) struct Fleet {
    run: PathBuf,
    /// The redis-server, or the cluster's nodes.
    redis: Vec<Child>,
    redis_url: String,
    pub(crate) replicas: Vec<Replica>,
    nginx: Option<Child>,
    nginx_port: u16,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(n) = &mut self.nginx {
            let _ = n.kill();
            let _ = n.wait();
        }
        for r in &mut self.replicas {
            if let Some(c) = &mut r.child {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        for r in &mut self.redis {
            let _ = r.kill();
            let _ = r.wait();
        }
        if std::env::var_os("STERNA_KEEP_CLUSTER").is_none() {
            let _ = std::fs::remove_dir_all(&self.run);
        }
    }
}

impl Fleet {
    /// Redis, `n` replicas sharing `keys` and Redis, and nginx in front.
    pub(crate) fn start(n: usize, keys: &str) -> Self {
        let redis_port = free_port();
        let run = std::env::temp_dir().join(format!("sterna-cluster-{redis_port}"));
        std::fs::create_dir_all(&run).unwrap();
        let (redis, redis_url) = if std::env::var("STERNA_REDIS_CLUSTER").is_ok_and(|v| v == "1") {
            redis_cluster(&run)
        } else {
            let mut redis = redis_server(&run, redis_port, &[]);
            wait_listening(redis_port, "redis-server", &mut redis);
            (vec![redis], format!("redis://127.0.0.1:{redis_port}/"))
        };
        println!("[fleet] Redis: {redis_url}");
        let mut fleet = Self {
            redis_url,
            run,
            redis,
            replicas: Vec::new(),
            nginx: None,
            nginx_port: free_port(),
        };
        for i in 1..=n {
            let mut r = Replica {
                name: format!("r{i}"),
                port: free_port(),
                child: None,
            };
            fleet.launch(&mut r, keys);
            fleet.replicas.push(r);
        }
        fleet.start_nginx();
        fleet
    }

    fn launch(&self, r: &mut Replica, keys: &str) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.run.join(format!("{}.log", r.name)))
            .unwrap();
        let mut child = Command::new(crate::sterna())
            .args(["serve", "--http", &format!("127.0.0.1:{}", r.port)])
            .args(["--redis", &self.redis_url, "--replica", &r.name])
            // Metrics at /metrics; tasks whose replica died are taken over after 2 s.
            .args(["--metrics", "--task-lease", "2"])
            // nginx: its X-Forwarded-For names the client (fair shares per client).
            .args(["--trusted-proxies", "127.0.0.1"])
            .env("STERNA_STATE_KEYS", keys)
            // Debug for legacy sessions: answers handed to the fleet are logged; the demo
            // tools' side effects too.
            .env(
                "STERNA_LOG",
                "warn,sterna_server::http::legacy=debug,sterna_demo::effects=info",
            )
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut line = String::new();
        let out = child.stdout.take().unwrap();
        BufReader::new(out).read_line(&mut line).unwrap();
        assert!(line.starts_with("listening on"), "{}: {line:?}", r.name);
        wait_listening(r.port, &r.name, &mut child);
        r.child = Some(child);
    }

    fn start_nginx(&mut self) {
        let template = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../deploy/nginx.conf.template"
        );
        let upstreams: String = self
            .replicas
            .iter()
            .map(|r| format!("server 127.0.0.1:{} max_fails=0; ", r.port))
            .collect();
        let run = self.run.to_str().unwrap();
        let conf = std::fs::read_to_string(template)
            .unwrap()
            .replace("@RUN@", run)
            .replace("@LISTEN@", &format!("127.0.0.1:{}", self.nginx_port))
            .replace("@UPSTREAMS@", &upstreams);
        let path = self.run.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        // One process in the foreground: a child the fleet can kill and reap.
        let mut child = Command::new("nginx")
            .args(["-p", run, "-c", path.to_str().unwrap()])
            .args(["-e", &format!("{run}/nginx-error.log")])
            .args(["-g", "daemon off; master_process off;"])
            .stdout(Stdio::null())
            .spawn()
            .expect("nginx is required for the cluster test (apt-get install nginx)");
        wait_listening(self.nginx_port, "nginx", &mut child);
        self.nginx = Some(child);
    }

    /// The endpoint behind nginx.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.nginx_port)
    }

    /// A replica's own endpoint.
    pub(crate) fn direct(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/mcp", self.replicas[i].port)
    }

    /// Lines of the replicas' logs that contain `needle`.
    pub(crate) fn replica_log_lines(&self, needle: &str) -> usize {
        self.replicas
            .iter()
            .map(|r| std::fs::read_to_string(self.run.join(format!("{}.log", r.name))))
            .map(|log| {
                log.unwrap_or_default()
                    .lines()
                    .filter(|l| l.contains(needle))
                    .count()
            })
            .sum()
    }

    /// Lines of nginx's error log about replica `i` (refused connects, resets: requests
    /// nginx passed on to the next replica).
    pub(crate) fn nginx_errors_about(&self, i: usize) -> usize {
        let needle = format!("127.0.0.1:{}", self.replicas[i].port);
        std::fs::read_to_string(self.run.join("nginx-error.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(&needle))
            .count()
    }

    /// Kills replica `i` with SIGKILL (no goodbye).
    pub(crate) fn kill(&mut self, i: usize) {
        if let Some(c) = &mut self.replicas[i].child {
            stop(c, "KILL");
        }
        self.replicas[i].child = None;
    }

    /// Restarts replica `i` on its port with `keys`: SIGTERM (it finishes what is in
    /// flight), then a new process.
    pub(crate) fn restart(&mut self, i: usize, keys: &str) {
        let mut r = std::mem::replace(
            &mut self.replicas[i],
            Replica {
                name: String::new(),
                port: 0,
                child: None,
            },
        );
        if let Some(c) = &mut r.child {
            stop(c, "TERM");
        }
        self.launch(&mut r, keys);
        self.replicas[i] = r;
    }
}
