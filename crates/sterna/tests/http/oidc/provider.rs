//! The `oidc-provider` process (interop/oidc/provider.mjs): started on a free loopback
//! port for one MCP resource, stopped when dropped.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct Provider {
    pub issuer: String,
    child: Child,
}

/// The provider script: `$STERNA_OIDC_PROVIDER`, else the repository's copy.
fn script() -> PathBuf {
    std::env::var_os("STERNA_OIDC_PROVIDER").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/oidc/provider.mjs"),
        PathBuf::from,
    )
}

impl Provider {
    /// Starts the provider for `resource`. Panics (the test fails, it is never skipped)
    /// when node or the provider's node_modules are missing.
    pub async fn start(resource: &str) -> Self {
        let script = script();
        let modules = script.with_file_name("node_modules").join("oidc-provider");
        assert!(
            modules.is_dir(),
            "{} is missing: run scripts/interop-oidc (it installs Node 22 and runs npm ci)",
            modules.display()
        );
        let mut child = Command::new("node")
            .arg(&script)
            .env("RESOURCE", resource)
            .env("PORT", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run node ({e}): Node 22 is required"));
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the provider starts within 30 s")
            .unwrap()
            .expect("the provider prints its issuer");
        let ready: Value = serde_json::from_str(&first).expect("a JSON line");
        let issuer = ready["issuer"].as_str().unwrap().to_owned();
        // Keep reading: a closed pipe would fail the provider's next write.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("oidc-provider: {line}");
            }
        });
        Self { issuer, child }
    }

    /// Stops the process (by its own handle) and waits for it.
    pub async fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}
