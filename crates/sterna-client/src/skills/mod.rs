//! The host side of the skills extension (SEP-2640): list a server's skills, get one by
//! URI, and load one — reading its files **only when asked**, each verified against the
//! held entry (listed, size, digest, and SKILL.md's frontmatter field by field).
//!
//! ```no_run
//! # async fn run(client: sterna_client::Client) -> Result<(), sterna_client::skills::SkillError> {
//! let skills = client.skills();
//! let listing = skills.list().await?;           // entries only: no file is read
//! for skill in &listing.skills {
//!     println!("{} — {}", skill.name().unwrap_or("?"), skill.description().unwrap_or(""));
//! }
//! let loaded = skills.load(&listing.skills[0]).await?; // SKILL.md, verified
//! let guide = loaded.read("guides/STYLE.md").await?;   // when asked, verified
//! # let _ = guide; Ok(()) }
//! ```
//!
//! Nothing here reads a file on connect, on listing or on approval. Identity is the pair
//! (your label for the server, `uri`): keep entries of different servers apart.

mod error;
mod loaded;
mod verify;

pub use error::{SkillError, VerificationError, VerifyFailure};
pub use loaded::LoadedSkill;
pub use verify::VerifiedFile;

use crate::Client;
use crate::error::ProtocolViolation;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use sterna_types::resources::Resource;
use sterna_types::skills::{
    DIRECTORY_READ, EXTENSION, EntryProblem, GET, LIST, Skill, SkillResources, SkillsCapability,
};

/// The most pages of `skills/list` (or of one directory) followed.
const MAX_PAGES: usize = 1000;

/// A server's skills, through a [`Client`] (see [`Client::skills`]).
#[derive(Debug, Clone, Copy)]
pub struct SkillsClient<'c> {
    client: &'c Client,
}

/// Every entry of `skills/list`: the valid ones, and the others apart (never loadable).
#[derive(Debug, Clone, Default)]
pub struct SkillListing {
    /// Valid entries, in the server's order.
    pub skills: Vec<Skill>,
    /// Entries refused, with why (their `uri` when they had one).
    pub rejected: Vec<(String, EntryProblem)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page<T> {
    #[serde(default = "Vec::new")]
    skills: Vec<T>,
    #[serde(default = "Vec::new")]
    resources: Vec<T>,
    #[serde(default)]
    next_cursor: Option<String>,
}

impl Client {
    /// The skills extension of this client's server.
    pub fn skills(&self) -> SkillsClient<'_> {
        SkillsClient { client: self }
    }
}

impl SkillsClient<'_> {
    /// The extension's settings, as the server declared them (`server/discover`, or a
    /// 2025-11-25 `initialize`); `None` when it did not.
    pub async fn capability(&self) -> Result<Option<SkillsCapability>, SkillError> {
        let discover = self.client.discover().await?;
        let declared = discover
            .capabilities
            .extensions
            .and_then(|mut e| e.remove(EXTENSION));
        Ok(declared
            .map(|settings| serde_json::from_value(Value::Object(settings)).unwrap_or_default()))
    }

    async fn require(&self) -> Result<SkillsCapability, SkillError> {
        self.capability().await?.ok_or(SkillError::NotDeclared)
    }

    /// Every page of `skills/list`. Invalid entries (and a URI listed twice) are kept
    /// apart in [`SkillListing::rejected`]. Reads no file.
    pub async fn list(&self) -> Result<SkillListing, SkillError> {
        self.require().await?;
        let mut out = SkillListing::default();
        let mut seen = HashSet::new();
        for entry in self.pages(LIST, Map::new()).await? {
            let uri = entry
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            match decode(entry) {
                Ok(_) if !seen.insert(uri.clone()) => out
                    .rejected
                    .push((uri.clone(), EntryProblem::DuplicateFile(uri))),
                Ok(skill) => out.skills.push(skill),
                Err(problem) => out.rejected.push((uri, problem)),
            }
        }
        Ok(out)
    }

    /// `skills/get`: the entry of the skill at `uri` (a skill given only by its URI: from
    /// instructions, another skill, the user). The server answers `-32602` when `uri` is
    /// not a skill it serves.
    pub async fn get(&self, uri: &str) -> Result<Skill, SkillError> {
        self.require().await?;
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        let result: Value = self.client.typed(GET, params).await?;
        let entry = result
            .get("skill")
            .cloned()
            .ok_or_else(|| malformed(GET, "the result has no skill"))?;
        let skill = decode(entry).map_err(|problem| SkillError::Invalid {
            uri: uri.to_owned(),
            problem,
        })?;
        if skill.uri != uri {
            return Err(SkillError::WrongSkill {
                asked: uri.to_owned(),
                got: skill.uri,
            });
        }
        Ok(skill)
    }

    /// Loads a skill from the held entry: checks the entry (shape, limits), refuses a
    /// `"dynamic"` one, then reads SKILL.md and verifies it (size, digest, frontmatter).
    /// Other files are read later, when asked ([`LoadedSkill::read`]).
    pub async fn load(&self, entry: &Skill) -> Result<LoadedSkill, SkillError> {
        entry.check().map_err(|problem| SkillError::Invalid {
            uri: entry.uri.clone(),
            problem,
        })?;
        if entry.resources == SkillResources::Dynamic {
            return Err(SkillError::Dynamic {
                uri: entry.uri.clone(),
            });
        }
        let skill_md = verify::read(self.client, entry, &entry.uri).await?;
        Ok(LoadedSkill {
            client: self.client.clone(),
            entry: entry.clone(),
            skill_md,
        })
    }

    /// `resources/directory/read` (only if the server declared `directoryRead`): the
    /// direct children of a directory, all pages. A directory listing never widens what
    /// a loaded skill may read.
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<Resource>, SkillError> {
        if !self.require().await?.directory_read {
            return Err(SkillError::NoDirectoryRead);
        }
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        let rows = self.pages(DIRECTORY_READ, params).await?;
        rows.into_iter()
            .map(|r| serde_json::from_value(r).map_err(|e| malformed_source(DIRECTORY_READ, e)))
            .collect()
    }

    /// Every page of a paginated skills method (entries of `skills` or `resources`).
    async fn pages(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Vec<Value>, SkillError> {
        let mut all = Vec::new();
        let mut cursors = HashSet::new();
        let mut params = params;
        for _ in 0..MAX_PAGES {
            let page: Page<Value> = self.client.typed(method, params.clone()).await?;
            all.extend(page.skills);
            all.extend(page.resources);
            match page.next_cursor {
                Some(c) if cursors.insert(c.clone()) => {
                    params.insert("cursor".into(), Value::String(c));
                }
                Some(_) => break,
                None => return Ok(all),
            }
        }
        Err(SkillError::Client(
            ProtocolViolation::EndlessList {
                method: method.to_owned(),
            }
            .into(),
        ))
    }
}

/// An entry as sent, decoded and checked.
fn decode(entry: Value) -> Result<Skill, EntryProblem> {
    let skill: Skill =
        serde_json::from_value(entry).map_err(|e| EntryProblem::Malformed(e.to_string()))?;
    skill.check()?;
    Ok(skill)
}

fn malformed(method: &str, what: &str) -> SkillError {
    malformed_source(method, serde::de::Error::custom(what))
}

fn malformed_source(method: &str, source: serde_json::Error) -> SkillError {
    SkillError::Client(
        ProtocolViolation::Malformed {
            method: method.to_owned(),
            source,
        }
        .into(),
    )
}
