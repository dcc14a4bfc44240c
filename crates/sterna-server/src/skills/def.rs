//! Skills defined in code ([`SkillDef`]): files given as bytes (digested when the
//! catalog is built), or a `"dynamic"` skill whose files a function produces at read time.
//! Both go through the same checks as a folder on disk ([`check_skill`]).

use super::error::{SkillsError, SkillsErrorKind};
use futures_util::future::BoxFuture;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sterna_types::JsonObject;
use sterna_types::skills::frontmatter::{self, Limits};
use sterna_types::skills::{MAX_FILES, MAX_TOTAL_SIZE, SKILL_MD, Skill, SkillResources};

/// What reads a file of a dynamic skill: its path relative to the skill root, to the bytes
/// (`None`: no such file).
pub(crate) type DynamicRead =
    Arc<dyn Fn(String) -> BoxFuture<'static, Option<Vec<u8>>> + Send + Sync>;

/// A skill defined in code, served next to (or instead of) a folder.
///
/// ```
/// use sterna_server::skills::SkillDef;
/// let def = SkillDef::new("acme/refunds")
///     .file("SKILL.md", "---\nname: refunds\ndescription: Issue refunds\n---\nSee guides/policy.md\n")
///     .file("guides/policy.md", "Refund within 30 days.\n");
/// # let _ = def;
/// ```
#[derive(Clone)]
pub struct SkillDef {
    pub(crate) path: String,
    pub(crate) body: DefBody,
}

#[derive(Clone)]
pub(crate) enum DefBody {
    Files(Vec<(String, Vec<u8>)>),
    Dynamic {
        skill_md: String,
        listing: Vec<String>,
        read: DynamicRead,
    },
}

impl std::fmt::Debug for SkillDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.body {
            DefBody::Files(files) => format!("{} files", files.len()),
            DefBody::Dynamic { .. } => "dynamic".to_owned(),
        };
        f.debug_struct("SkillDef")
            .field("path", &self.path)
            .field("files", &kind)
            .finish()
    }
}

impl SkillDef {
    /// A skill at `skill://<path>/` (its last segment is the skill's name) whose files are
    /// given with [`file`](Self::file); SKILL.md is required.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            body: DefBody::Files(Vec::new()),
        }
    }

    /// Adds a file at `rel` (a `/`-separated path relative to the skill root).
    pub fn file(mut self, rel: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        if let DefBody::Files(files) = &mut self.body {
            files.push((rel.into(), bytes.into()));
        }
        self
    }

    /// A `"dynamic"` skill: its SKILL.md is fixed (its frontmatter is the entry's), and
    /// any other file is produced by `read` when it is read. Hosts get no digests for
    /// it (no integrity), and may refuse it.
    pub fn dynamic<F, Fut>(path: impl Into<String>, skill_md: impl Into<String>, read: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Vec<u8>>> + Send + 'static,
    {
        let read: DynamicRead = Arc::new(move |rel| Box::pin(read(rel)));
        Self {
            path: path.into(),
            body: DefBody::Dynamic {
                skill_md: skill_md.into(),
                listing: Vec::new(),
                read,
            },
        }
    }

    /// The files a directory read shows for a dynamic skill (besides SKILL.md).
    pub fn listing(mut self, files: impl IntoIterator<Item = impl Into<String>>) -> Self {
        if let DefBody::Dynamic { listing, .. } = &mut self.body {
            listing.extend(files.into_iter().map(Into::into));
        }
        self
    }
}

/// A skill ready for the catalog: checked, its files in order (SKILL.md first).
pub(crate) struct Built {
    pub(crate) path: String,
    pub(crate) frontmatter: JsonObject,
    pub(crate) files: BuiltFiles,
}

pub(crate) enum BuiltFiles {
    Files(Vec<(String, Arc<[u8]>)>),
    Dynamic {
        skill_md: Arc<[u8]>,
        listing: Vec<String>,
        read: DynamicRead,
    },
}

/// A segment of a skill path before the name: lowercase unreserved characters only (the
/// first one is the URI's authority).
pub(crate) fn check_prefix_segment(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._~-".contains(&c));
    ok.then_some(())
        .ok_or_else(|| format!("{s:?} is not made of a-z 0-9 . _ ~ -"))
}

/// A file name inside a skill: a URI path segment that needs no percent-encoding.
pub(crate) fn check_file_segment(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&c));
    ok.then_some(()).ok_or_else(|| {
        format!("{s:?} needs characters outside A-Z a-z 0-9 - . _ ~ ! $ & ' ( ) * + , ; = : @")
    })
}

/// Checks a skill path and its SKILL.md; returns the frontmatter. `at` names the SKILL.md
/// in errors.
pub(crate) fn check_skill(
    path: &str,
    skill_md: &[u8],
    at: &Path,
) -> Result<JsonObject, SkillsError> {
    let err = |kind| SkillsError::new(at, kind);
    let segments: Vec<&str> = path.split('/').collect();
    for s in &segments[..segments.len() - 1] {
        check_prefix_segment(s).map_err(|why| err(SkillsErrorKind::BadName(why)))?;
    }
    let text = std::str::from_utf8(skill_md).map_err(|_| err(SkillsErrorKind::NotText))?;
    let fm = frontmatter::parse(text, &Limits::default())
        .map_err(|e| err(SkillsErrorKind::Frontmatter(e)))?;
    let probe = Skill {
        uri: format!("skill://{path}/{SKILL_MD}"),
        frontmatter: fm,
        resources: SkillResources::Dynamic,
        meta: None,
    };
    probe.check().map_err(|p| err(SkillsErrorKind::Entry(p)))?;
    Ok(probe.frontmatter)
}

impl SkillDef {
    /// Checks the definition as a folder would be checked.
    pub(crate) fn build(self) -> Result<Built, SkillsError> {
        let at = PathBuf::from(format!("{}/{SKILL_MD}", self.path));
        match self.body {
            DefBody::Files(mut files) => {
                files.sort_by(|a, b| order(&a.0, &b.0));
                let skill_md = files
                    .iter()
                    .find(|(r, _)| r == SKILL_MD)
                    .map(|(_, b)| b.as_slice());
                let skill_md = skill_md.ok_or_else(|| {
                    SkillsError::new(
                        &at,
                        SkillsErrorKind::Io(std::io::ErrorKind::NotFound.into()),
                    )
                })?;
                let frontmatter = check_skill(&self.path, skill_md, &at)?;
                let mut total = 0u64;
                let mut out = Vec::with_capacity(files.len());
                for (i, (rel, bytes)) in files.into_iter().enumerate() {
                    let here = PathBuf::from(format!("{}/{rel}", self.path));
                    for s in rel.split('/') {
                        check_file_segment(s)
                            .map_err(|w| SkillsError::new(&here, SkillsErrorKind::BadName(w)))?;
                    }
                    if i >= MAX_FILES {
                        return Err(SkillsError::new(
                            here,
                            SkillsErrorKind::TooManyFiles { max: MAX_FILES },
                        ));
                    }
                    total += bytes.len() as u64;
                    if total > MAX_TOTAL_SIZE {
                        return Err(SkillsError::new(
                            here,
                            SkillsErrorKind::TooLarge {
                                max: MAX_TOTAL_SIZE,
                            },
                        ));
                    }
                    if out.iter().any(|(r, _): &(String, Arc<[u8]>)| *r == rel) {
                        return Err(SkillsError::new(here, SkillsErrorKind::Duplicate(rel)));
                    }
                    out.push((rel, Arc::from(bytes)));
                }
                Ok(Built {
                    path: self.path,
                    frontmatter,
                    files: BuiltFiles::Files(out),
                })
            }
            DefBody::Dynamic {
                skill_md,
                listing,
                read,
            } => {
                let frontmatter = check_skill(&self.path, skill_md.as_bytes(), &at)?;
                for rel in &listing {
                    let here = PathBuf::from(format!("{}/{rel}", self.path));
                    for s in rel.split('/') {
                        check_file_segment(s)
                            .map_err(|w| SkillsError::new(&here, SkillsErrorKind::BadName(w)))?;
                    }
                }
                let skill_md = Arc::from(skill_md.into_bytes());
                Ok(Built {
                    path: self.path,
                    frontmatter,
                    files: BuiltFiles::Dynamic {
                        skill_md,
                        listing,
                        read,
                    },
                })
            }
        }
    }
}

/// SKILL.md first, then by path.
pub(crate) fn order(a: &str, b: &str) -> std::cmp::Ordering {
    (a != SKILL_MD, a).cmp(&(b != SKILL_MD, b))
}
