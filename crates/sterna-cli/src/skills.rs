//! `skills` (one-shot `sterna skills URL [list|show URI|load URI]`, and in `connect`):
//! list a server's skills, show one entry, or load one — SKILL.md and then every file the
//! entry lists, each read verified (listed, size, digest; SKILL.md's frontmatter field by
//! field) and the verification shown. A file that fails stops the load: nothing after it
//! is read, and the command exits 4.

use crate::exit::CliError;
use crate::render;
use serde_json::{Value, json};
use sterna::client::Client;
use sterna::client::skills::{SkillError, VerifiedFile};
use sterna::types::skills::Skill;

/// The usage of the command's words.
pub(crate) const USAGE: &str = "skills [list] | skills show URI | skills load URI";

impl From<SkillError> for CliError {
    fn from(e: SkillError) -> Self {
        match e {
            SkillError::Client(c) => Self::Client(c),
            other => Self::Local(other.to_string()),
        }
    }
}

/// Runs `skills WORDS…` against `client`.
pub(crate) async fn run(client: &Client, words: &[&str], json: bool) -> Result<(), CliError> {
    match words {
        [] | ["list"] => list(client, json).await,
        ["show", uri] => show(client, uri, json).await,
        ["load", uri] => load(client, uri, json).await,
        _ => Err(CliError::Usage(USAGE.into())),
    }
}

fn short(digest: &str) -> &str {
    digest.get(..19).unwrap_or(digest)
}

fn summary(s: &Skill) -> String {
    let files = match s.files() {
        Some(f) => format!("{} files, {} bytes", f.len(), s.total_size()),
        None => "dynamic: no digests".to_owned(),
    };
    format!(
        "  {}  {}  ({files})\n      {}",
        s.name().unwrap_or("?"),
        s.uri,
        s.description()
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
    )
}

async fn list(client: &Client, json: bool) -> Result<(), CliError> {
    let listing = client.skills().list().await?;
    let rejected: Vec<Value> = listing
        .rejected
        .iter()
        .map(|(uri, why)| json!({"uri": uri, "problem": why.to_string()}))
        .collect();
    if json {
        println!(
            "{}",
            render::json(&json!({"skills": listing.skills, "rejected": rejected}))
        );
        return Ok(());
    }
    if listing.skills.is_empty() {
        println!("  (no skills)");
    }
    for s in &listing.skills {
        println!("{}", summary(s));
    }
    for (uri, why) in &listing.rejected {
        println!("  ✗ {uri}: refused ({why})");
    }
    Ok(())
}

async fn show(client: &Client, uri: &str, json: bool) -> Result<(), CliError> {
    let skill = client.skills().get(uri).await?;
    if json {
        println!("{}", render::json(&json!({"skill": skill})));
        return Ok(());
    }
    println!("{}", summary(&skill));
    println!(
        "  frontmatter: {}",
        Value::Object(skill.frontmatter.clone())
    );
    for f in skill.files().unwrap_or_default() {
        println!("    {}  {} bytes  {}", f.uri, f.size, f.digest);
    }
    Ok(())
}

fn line(f: &VerifiedFile, skill_md: bool) -> String {
    let checks = if skill_md {
        "size ✓ digest ✓ frontmatter ✓"
    } else {
        "size ✓ digest ✓"
    };
    format!(
        "  ✓ {}  {} bytes  {}…  {checks}",
        f.uri,
        f.bytes.len(),
        short(&sterna::types::skills::digest(&f.bytes))
    )
}

/// SKILL.md, then every listed file, verified one by one; stops at the first failure.
async fn load(client: &Client, uri: &str, json: bool) -> Result<(), CliError> {
    let skills = client.skills();
    let entry = skills.get(uri).await?;
    let loaded = skills.load(&entry).await?;
    let mut files =
        vec![json!({"uri": entry.uri, "size": loaded.skill_md().len(), "verified": true})];
    if !json {
        println!("{}", summary(&entry));
        println!(
            "  ✓ {}  {} bytes  size ✓ digest ✓ frontmatter ✓",
            entry.uri,
            loaded.skill_md().len()
        );
    }
    let mut failed = None;
    for f in loaded.files().iter().filter(|f| f.uri != entry.uri) {
        match loaded.read(&f.uri).await {
            Ok(v) => {
                if !json {
                    println!("{}", line(&v, false));
                }
                files.push(json!({"uri": v.uri, "size": v.bytes.len(), "verified": true}));
            }
            Err(e) => {
                if !json {
                    println!("  ✗ {e}");
                }
                files.push(json!({"uri": f.uri, "verified": false, "error": e.to_string()}));
                failed = Some(e);
                break;
            }
        }
    }
    if json {
        let out = json!({"skill": entry.uri, "skillMd": loaded.skill_md(), "files": files});
        println!("{}", render::json(&out));
    } else if failed.is_none() {
        println!("\n{}", loaded.skill_md());
    }
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
