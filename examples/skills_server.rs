//! Serving a folder of Agent Skills (the skills extension, SEP-2640).
//!
//! Each folder holding a `SKILL.md` is a skill; its path below the served folder is its
//! skill path (`writing/release-notes` is served at `skill://writing/release-notes/`).
//! Digests and sizes are computed when the folder is loaded, and the bytes that were
//! hashed are what `resources/read` serves. SIGHUP re-reads the folder: a change is
//! announced as `notifications/resources/list_changed`.
//!
//! ```sh
//! cargo run --example skills_server -- 127.0.0.1:3000 examples/skills
//! sterna skills http://127.0.0.1:3000/mcp
//! sterna skills http://127.0.0.1:3000/mcp load skill://writing/release-notes/SKILL.md
//! kill -HUP <pid>   # after editing the folder
//! ```
//!
//! In a fleet, give every replica the same folder (baked into the image, or synced before
//! the signal): the same bytes give the same entries and cursors on every replica.

use sterna::server::Server;
use sterna::server::http::HttpServer;
use sterna::server::skills::Skills;
use sterna::server::state::StateKeys;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:3000".into());
    let dir = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/skills").into());
    // Every problem names the file at fault: a link, a bad name, a skill over the limits.
    let skills = Skills::from_dir(&dir)?;
    for skill in skills.entries() {
        eprintln!("serving {}", skill.uri);
    }
    let server = Server::builder("skills-example", "1.0.0")
        .state_keys(StateKeys::ephemeral())
        .skills(skills.clone())
        .build()?;
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hup = signal(SignalKind::hangup())?;
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                match skills.reload().await {
                    Ok(changed) => eprintln!("reloaded {dir} (changed: {changed})"),
                    Err(e) => eprintln!("reload failed, still serving the previous skills: {e}"),
                }
            }
        });
    }
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    HttpServer::new(server)
        .serve_with_shutdown(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
