//! A loaded skill: its verified SKILL.md and the entry it was verified against, held for
//! the acting window. Other files are read only when asked, only if the held entry lists
//! them, and each is verified like SKILL.md was.

use super::error::{SkillError, VerificationError, VerifyFailure};
use super::verify::{self, VerifiedFile};
use crate::Client;
use sterna_types::skills::{SKILL_MD, Skill, SkillFile};

/// A skill whose SKILL.md was read and verified (see
/// [`SkillsClient::load`](super::SkillsClient::load)).
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    pub(super) client: Client,
    pub(super) entry: Skill,
    pub(super) skill_md: VerifiedFile,
}

impl LoadedSkill {
    /// The entry the skill was verified against (what an approval binds to).
    pub fn entry(&self) -> &Skill {
        &self.entry
    }

    /// SKILL.md, verified (size, digest, frontmatter).
    pub fn skill_md(&self) -> &str {
        self.skill_md.text().unwrap_or_default()
    }

    /// The skill root: the SKILL.md URI without `/SKILL.md`.
    pub fn root(&self) -> &str {
        self.entry
            .uri
            .strip_suffix(SKILL_MD)
            .and_then(|r| r.strip_suffix('/'))
            .unwrap_or(&self.entry.uri)
    }

    /// The files the entry lists (SKILL.md first).
    pub fn files(&self) -> &[SkillFile] {
        self.entry.files().unwrap_or_default()
    }

    /// The URI a reference inside SKILL.md points at: resolved against the skill root
    /// like a filesystem path (`guides/STYLE.md`, `./a/../b.md`); `None` when it climbs
    /// out of the root. A full URI is returned as is.
    pub fn resolve(&self, reference: &str) -> Option<String> {
        if reference.contains("://") {
            return Some(reference.to_owned());
        }
        let mut parts: Vec<&str> = Vec::new();
        for seg in reference.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                s => parts.push(s),
            }
        }
        (!parts.is_empty()).then(|| format!("{}/{}", self.root(), parts.join("/")))
    }

    /// Reads a file of the skill (a path relative to the root, or its URI) and verifies
    /// it. A file the held entry does not list is refused without a request.
    pub async fn read(&self, reference: &str) -> Result<VerifiedFile, SkillError> {
        let Some(uri) = self.resolve(reference) else {
            let failure = VerifyFailure::Unlisted;
            return Err(VerificationError {
                uri: reference.to_owned(),
                failure,
            }
            .into());
        };
        if uri == self.entry.uri {
            return Ok(self.skill_md.clone());
        }
        verify::read(&self.client, &self.entry, &uri).await
    }
}
