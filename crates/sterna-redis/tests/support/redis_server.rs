//! A redis-server of the test's own on 127.0.0.1 (required: a test fails, never skips,
//! when it is missing), with extra settings when a test needs them.

#[path = "cluster.rs"]
pub(crate) mod cluster;

use std::process::{Child, Command, Stdio};

/// A redis-server of our own, stopped when dropped.
#[derive(Debug)]
pub(crate) struct RedisServer {
    child: Option<Child>,
    /// The cluster started instead (`STERNA_REDIS_CLUSTER=1`).
    #[allow(dead_code)]
    pub(crate) cluster: Option<cluster::Cluster>,
    pub(crate) url: String,
    _dir: std::path::PathBuf,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // A frozen server (see `freeze`) is thawed first, so that it dies.
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(child.id().to_string())
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl RedisServer {
    /// Starts one with the test settings alone.
    #[allow(dead_code)]
    pub(crate) fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts one with `extra` command-line settings (`["--maxmemory", "10mb"]` …), or a
    /// 3-primary cluster of such nodes when `STERNA_REDIS_CLUSTER=1`.
    pub(crate) fn start_with(extra: &[&str]) -> Self {
        if cluster::wanted() {
            let cluster = cluster::Cluster::start(0, extra);
            return Self {
                child: None,
                url: cluster.url.clone(),
                cluster: Some(cluster),
                _dir: std::env::temp_dir(),
            };
        }
        for _ in 0..10 {
            let port = cluster::free_port(false);
            let dir = std::env::temp_dir().join(format!("sterna-redis-{port}"));
            std::fs::create_dir_all(&dir).unwrap();
            let port_arg = port.to_string();
            let mut args = vec![
                "--port",
                &port_arg,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ];
            args.extend_from_slice(extra);
            let mut child = Command::new("redis-server")
                .args(&args)
                .current_dir(&dir)
                .stdout(Stdio::null())
                .spawn()
                .expect("redis-server is required for these tests (apt-get install redis-server)");
            // Another program may take the port between our choosing it and the server
            // binding it: then the server exits, and another port is tried.
            if cluster::serving(&mut child, port) {
                return Self {
                    child: Some(child),
                    cluster: None,
                    url: format!("redis://127.0.0.1:{port}/"),
                    _dir: dir,
                };
            }
            let _ = child.wait();
        }
        panic!("no free port for redis-server after 10 tries");
    }

    /// Freezes the server (a network blink: commands time out), or thaws it.
    /// A cluster's nodes are all frozen.
    #[allow(dead_code)]
    pub(crate) fn freeze(&self, frozen: bool) {
        let sig = if frozen { "-STOP" } else { "-CONT" };
        let pids = match (&self.child, &self.cluster) {
            (Some(child), _) => vec![child.id()],
            (None, Some(cluster)) => cluster.pids(),
            (None, None) => Vec::new(),
        };
        for pid in pids {
            Command::new("kill")
                .arg(sig)
                .arg(pid.to_string())
                .status()
                .unwrap();
        }
    }
}
