//! The structural rules of a skill entry: the name rule, the digest format, where a
//! skill's URIs may point, and the limits — checked from the entry alone, before anything
//! is fetched.

use super::{MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_FILES, MAX_NAME, MAX_TOTAL_SIZE, SKILL_MD};
use super::{Skill, SkillResources};
use std::collections::HashSet;
use std::fmt;

/// Whether `name` follows the Agent Skills naming rule, ASCII only: 1–64 characters of
/// `a-z`, `0-9` and `-`, no leading, trailing or doubled `-`.
pub fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_NAME
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
        && !name.contains("--")
}

/// Whether `digest` is `sha256:` followed by 64 lowercase hex characters.
pub fn valid_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    })
}

/// A SKILL.md URI taken apart: `<scheme>://<skill-path>/SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUri<'a> {
    /// The skill root: the URI without `/SKILL.md` (no trailing slash).
    pub root: &'a str,
    /// The skill path's segments (the last one is the skill's name).
    pub segments: Vec<&'a str>,
}

impl SkillUri<'_> {
    /// The last segment of the skill path: what `frontmatter.name` must equal.
    pub fn name(&self) -> &str {
        self.segments.last().copied().unwrap_or("")
    }
}

/// Splits a SKILL.md URI (`None`: no scheme, no skill path, not ending in `/SKILL.md`, or a
/// segment that is empty, `.`, `..` or hides one with percent-encoding).
pub fn split_skill_uri(uri: &str) -> Option<SkillUri<'_>> {
    let root = uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    let (scheme, path) = root.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
    {
        return None;
    }
    let segments: Vec<&str> = path.split('/').collect();
    if segments.iter().any(|s| !safe_segment(s)) {
        return None;
    }
    Some(SkillUri { root, segments })
}

/// A path segment that names itself: not empty, not `.` or `..`, no `?`, `#` or `\`, and no
/// percent-encoded `.`, `/` or `\` (which a resolver might turn into a traversal).
fn safe_segment(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    !s.is_empty()
        && s != "."
        && s != ".."
        && !s.contains(['?', '#', '\\'])
        && !lower.contains("%2e")
        && !lower.contains("%2f")
        && !lower.contains("%5c")
        && !s.chars().any(char::is_control)
}

/// Why an entry is not a valid skill (a host must not load it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryProblem {
    /// The entry does not have the shape of a skill (a member missing or of the wrong
    /// type, `resources` neither an array nor `"dynamic"`).
    Malformed(String),
    /// `uri` is not `<scheme>://<skill-path>/SKILL.md` with clean segments.
    BadUri(String),
    /// A required frontmatter field is missing, not a string, or empty.
    MissingField(&'static str),
    /// A frontmatter field is longer than allowed.
    FieldTooLong {
        /// The field.
        field: &'static str,
        /// Its limit, in characters.
        max: usize,
    },
    /// `frontmatter.name` breaks the naming rule.
    InvalidName(String),
    /// The last segment of the skill path is not `frontmatter.name`.
    NameMismatch {
        /// `frontmatter.name`.
        name: String,
        /// The segment before `/SKILL.md`.
        segment: String,
    },
    /// `resources` does not list the SKILL.md itself.
    SkillMdNotListed,
    /// A URI is listed twice.
    DuplicateFile(String),
    /// A listed URI is outside the skill's root (another authority, another skill).
    OutsideSkill(String),
    /// A listed URI has an empty, `.` or `..` segment (or hides one).
    PathTraversal(String),
    /// A digest is not `sha256:` and 64 lowercase hex characters.
    BadDigest(String),
    /// More files than a host accepts.
    TooManyFiles {
        /// Files listed.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// More bytes than a host accepts.
    TooLarge {
        /// The sum of the listed sizes.
        total: u64,
        /// The limit.
        max: u64,
    },
}

impl fmt::Display for EntryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(why) => write!(f, "not a skill entry: {why}"),
            Self::BadUri(u) => write!(
                f,
                "{u:?} is not a SKILL.md URI (<scheme>://<skill-path>/SKILL.md)"
            ),
            Self::MissingField(n) => write!(f, "frontmatter.{n} is missing, empty or not a string"),
            Self::FieldTooLong { field, max } => {
                write!(f, "frontmatter.{field} is longer than {max} characters")
            }
            Self::InvalidName(n) => write!(
                f,
                "the name {n:?} breaks the naming rule (a-z, 0-9, single inner '-', 1-64)"
            ),
            Self::NameMismatch { name, segment } => write!(
                f,
                "the URI's last segment {segment:?} is not the name {name:?}"
            ),
            Self::SkillMdNotListed => f.write_str("resources does not list the SKILL.md itself"),
            Self::DuplicateFile(u) => write!(f, "{u} is listed twice"),
            Self::OutsideSkill(u) => write!(f, "{u} is outside the skill's directory"),
            Self::PathTraversal(u) => write!(f, "{u} has an empty, '.' or '..' segment"),
            Self::BadDigest(d) => write!(f, "the digest {d:?} is not sha256:<64 lowercase hex>"),
            Self::TooManyFiles { count, max } => write!(f, "{count} files listed (at most {max})"),
            Self::TooLarge { total, max } => write!(f, "{total} bytes listed (at most {max})"),
        }
    }
}

impl std::error::Error for EntryProblem {}

fn text_field(skill: &Skill, field: &'static str, max: usize) -> Result<(), EntryProblem> {
    match skill.frontmatter.get(field) {
        Some(serde_json::Value::String(s)) if !s.is_empty() => {
            if s.chars().count() > max {
                return Err(EntryProblem::FieldTooLong { field, max });
            }
            Ok(())
        }
        _ => Err(EntryProblem::MissingField(field)),
    }
}

impl Skill {
    /// Checks the entry's structure: the URI, name and description, and for a listed
    /// skill every file (inside the skill, no traversal, no duplicate, a valid digest,
    /// SKILL.md present) and the limits (512 files, 16 MiB).
    pub fn check(&self) -> Result<(), EntryProblem> {
        let split =
            split_skill_uri(&self.uri).ok_or_else(|| EntryProblem::BadUri(self.uri.clone()))?;
        text_field(self, "name", MAX_NAME)?;
        text_field(self, "description", MAX_DESCRIPTION)?;
        if let Some(c) = self.frontmatter.get("compatibility")
            && c.as_str()
                .is_some_and(|c| c.chars().count() > MAX_COMPATIBILITY)
        {
            return Err(EntryProblem::FieldTooLong {
                field: "compatibility",
                max: MAX_COMPATIBILITY,
            });
        }
        let name = self.name().unwrap_or_default();
        if !valid_name(name) {
            return Err(EntryProblem::InvalidName(name.to_owned()));
        }
        if split.name() != name {
            return Err(EntryProblem::NameMismatch {
                name: name.to_owned(),
                segment: split.name().to_owned(),
            });
        }
        let SkillResources::Files(files) = &self.resources else {
            return Ok(());
        };
        if files.len() > MAX_FILES {
            return Err(EntryProblem::TooManyFiles {
                count: files.len(),
                max: MAX_FILES,
            });
        }
        let total = self.total_size();
        if total > MAX_TOTAL_SIZE {
            return Err(EntryProblem::TooLarge {
                total,
                max: MAX_TOTAL_SIZE,
            });
        }
        let mut seen = HashSet::with_capacity(files.len());
        for file in files {
            check_file_uri(split.root, &file.uri)?;
            if !valid_digest(&file.digest) {
                return Err(EntryProblem::BadDigest(file.digest.clone()));
            }
            if !seen.insert(file.uri.as_str()) {
                return Err(EntryProblem::DuplicateFile(file.uri.clone()));
            }
        }
        if !seen.contains(self.uri.as_str()) {
            return Err(EntryProblem::SkillMdNotListed);
        }
        Ok(())
    }
}

/// A file URI must be `<root>/<clean relative path>`.
fn check_file_uri(root: &str, uri: &str) -> Result<(), EntryProblem> {
    let rel = uri
        .strip_prefix(root)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or_else(|| EntryProblem::OutsideSkill(uri.to_owned()))?;
    if rel.split('/').any(|s| !safe_segment(s)) {
        return Err(EntryProblem::PathTraversal(uri.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["a", "pdf-processing", "a1-b2", &"x".repeat(64)] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "é",
            "a_b",
            "a b",
            &"x".repeat(65),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn digests() {
        assert!(valid_digest(&format!("sha256:{}", "0a".repeat(32))));
        assert!(!valid_digest(&format!("sha256:{}", "0A".repeat(32))));
        assert!(!valid_digest(&format!("sha512:{}", "0a".repeat(32))));
        assert!(!valid_digest("sha256:00"));
    }

    #[test]
    fn skill_uris() {
        let u = split_skill_uri("skill://acme/billing/refunds/SKILL.md").unwrap();
        assert_eq!(u.root, "skill://acme/billing/refunds");
        assert_eq!(u.name(), "refunds");
        for bad in [
            "skill://SKILL.md",
            "skill:///SKILL.md",
            "refunds/SKILL.md",
            "skill://a/../b/SKILL.md",
            "skill://a/%2E%2E/b/SKILL.md",
            "skill://a/b/skill.md",
        ] {
            assert!(split_skill_uri(bad).is_none(), "{bad}");
        }
    }
}
