//! The `io.modelcontextprotocol/skills` extension (SEP-2640): a server publishes folders
//! of Agent Skills (`SKILL.md` plus supporting files) as resources, and lists them with
//! `skills/list` and `skills/get`.
//!
//! An entry ([`Skill`]) names the SKILL.md URI, carries its YAML frontmatter as JSON, and
//! lists every file of the skill with its size and SHA-256 digest ([`SkillResources`]), or
//! says `"dynamic"`. A host verifies each file it reads against that list. The rules an
//! entry must follow are checked by [`Skill::check`]; the naming rule by [`valid_name`].
//!
//! With the `skills` feature this module also parses frontmatter (`frontmatter`, YAML 1.2
//! core schema, with bounds on size, depth and alias expansion) and computes digests
//! (`digest`).

#[cfg(feature = "skills")]
mod core_schema;
#[cfg(feature = "skills")]
mod digest;
#[cfg(feature = "skills")]
pub mod frontmatter;
#[cfg(feature = "skills")]
mod frontmatter_error;
mod uri;

#[cfg(feature = "skills")]
pub use digest::digest;
pub use uri::{EntryProblem, SkillUri, split_skill_uri, valid_digest, valid_name};

use crate::JsonObject;
use crate::resources::Resource;
use crate::result::{CacheScope, ResultType};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";
/// `skills/list`.
pub const LIST: &str = "skills/list";
/// `skills/get`.
pub const GET: &str = "skills/get";
/// `resources/directory/read` (only with `directoryRead: true`).
pub const DIRECTORY_READ: &str = "resources/directory/read";
/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";
/// The MIME type of a SKILL.md.
pub const MARKDOWN: &str = "text/markdown";
/// The MIME type of a directory resource.
pub const DIRECTORY: &str = "inode/directory";
/// The conventional scheme of skill URIs.
pub const SCHEME: &str = "skill://";
/// Resource entries per skill (SKILL.md included) a host must accept.
pub const MAX_FILES: usize = 512;
/// Bytes per skill (the sum of `size`) a host must accept: 16 MiB.
pub const MAX_TOTAL_SIZE: u64 = 16 * 1024 * 1024;
/// The longest `name`.
pub const MAX_NAME: usize = 64;
/// The longest `description`.
pub const MAX_DESCRIPTION: usize = 1024;
/// The longest `compatibility`.
pub const MAX_COMPATIBILITY: usize = 500;

/// The extension's settings, inline under its id: `{}` or `{"directoryRead": true}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsCapability {
    /// The server implements `resources/directory/read`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub directory_read: bool,
}

/// One skill, as `skills/list` and `skills/get` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The SKILL.md resource URI.
    pub uri: String,
    /// SKILL.md's YAML frontmatter as JSON, verbatim (`name` and `description` present).
    pub frontmatter: JsonObject,
    /// Every file of the skill with its digest and size, or `"dynamic"`.
    pub resources: SkillResources,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Skill {
    /// `frontmatter.name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// `frontmatter.description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|v| v.as_str())
    }

    /// The listed files (`None` for a dynamic skill).
    pub fn files(&self) -> Option<&[SkillFile]> {
        match &self.resources {
            SkillResources::Files(f) => Some(f),
            SkillResources::Dynamic => None,
        }
    }

    /// The listed file at `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.files()?.iter().find(|f| f.uri == uri)
    }

    /// The sum of the listed sizes (0 for a dynamic skill).
    pub fn total_size(&self) -> u64 {
        self.files().map_or(0, |f| {
            f.iter().map(|f| f.size).fold(0u64, u64::saturating_add)
        })
    }
}

/// The files of a skill: the complete list, or the `"dynamic"` marker.
#[derive(Debug, Clone, PartialEq)]
pub enum SkillResources {
    /// Every file exactly once, SKILL.md included.
    Files(Vec<SkillFile>),
    /// Generated content that cannot be digested: no integrity.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Files(f) => f.serialize(s),
            Self::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Files(Vec<SkillFile>),
            Marker(String),
        }
        match Raw::deserialize(d)? {
            Raw::Files(f) => Ok(Self::Files(f)),
            Raw::Marker(m) if m == "dynamic" => Ok(Self::Dynamic),
            Raw::Marker(m) => Err(de::Error::custom(format!(
                "resources must be an array or \"dynamic\", not {m:?}"
            ))),
        }
    }
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// The resource URI (the SKILL.md itself, or a file inside the skill directory).
    pub uri: String,
    /// `sha256:` and 64 lowercase hex characters, over the raw bytes.
    pub digest: String,
    /// The byte length of those bytes.
    pub size: u64,
}

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// `complete` (2026-07-28; absent on 2025-11-25).
    #[serde(default)]
    pub result_type: ResultType,
    /// The skills of this page (an entry is never split across pages).
    pub skills: Vec<Skill>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// The result of `skills/get`: one entry, no cursor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// `complete` (2026-07-28; absent on 2025-11-25).
    #[serde(default)]
    pub result_type: ResultType,
    /// The entry.
    pub skill: Skill,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// The result of `resources/directory/read`: the direct children, metadata only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceDirectoryResult {
    /// `complete` (2026-07-28; absent on 2025-11-25).
    #[serde(default)]
    pub result_type: ResultType,
    /// Files and subdirectories (`inode/directory`).
    pub resources: Vec<Resource>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
