//! A snapshot of the skills served: the entries (digests and sizes computed once, when the
//! snapshot is built), the bytes that were hashed (served exactly), the directory tree, and
//! the readers of dynamic skills. A reload builds a new snapshot and swaps it whole.

use super::def::{Built, BuiltFiles, DynamicRead};
use super::error::{SkillsError, SkillsErrorKind};
use super::mime;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use sterna_types::resources::Resource;
use sterna_types::skills::{self, DIRECTORY, MARKDOWN, SKILL_MD, Skill, SkillFile, SkillResources};

/// The bytes of one file, as hashed.
pub(crate) struct Body {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) mime: &'static str,
}

/// A dynamic skill's root and reader.
pub(crate) struct Dynamic {
    pub(crate) root: String,
    pub(crate) read: DynamicRead,
}

/// The skills served at one moment.
#[derive(Default)]
pub(crate) struct Catalog {
    /// The entries, ordered by URI.
    pub(crate) entries: Vec<Skill>,
    by_uri: HashMap<String, usize>,
    files: HashMap<String, Body>,
    /// Directory URI → its direct children (by name).
    dirs: HashMap<String, Vec<Resource>>,
    dynamic: Vec<Dynamic>,
    /// Identifies the entries (the same folder gives the same value on every replica):
    /// cursors carry it, so a cursor of another catalog is refused.
    pub(crate) fingerprint: String,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("skills", &self.entries.len())
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
}

fn row(uri: String, name: &str, mime: &str) -> Resource {
    Resource {
        uri,
        name: name.to_owned(),
        title: None,
        description: None,
        mime_type: Some(mime.to_owned()),
        size: None,
        annotations: None,
        icons: None,
        meta: None,
    }
}

/// Adds `rel` (a file, or with `dir` a folder) and every folder above it to the tree.
fn add_path(
    tree: &mut BTreeMap<String, BTreeMap<String, Resource>>,
    root: &str,
    rel: &str,
    size: Option<u64>,
    mime: &'static str,
) {
    tree.entry(root.to_owned()).or_default();
    let mut parent = root.to_owned();
    let segments: Vec<&str> = rel.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let uri = format!("{parent}/{seg}");
        let last = i + 1 == segments.len();
        let mut r = row(uri.clone(), seg, if last { mime } else { DIRECTORY });
        if last {
            r.size = size;
        }
        tree.entry(parent.clone())
            .or_default()
            .entry((*seg).to_owned())
            .or_insert(r);
        if !last {
            tree.entry(uri.clone()).or_default();
        }
        parent = uri;
    }
}

impl Catalog {
    /// Builds the snapshot from checked skills (each URI served once).
    pub(crate) fn build(built: Vec<Built>) -> Result<Self, SkillsError> {
        let mut c = Catalog::default();
        let mut tree: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        let mut entries = Vec::with_capacity(built.len());
        for b in built {
            let root = format!("{}{}", skills::SCHEME, b.path);
            let uri = format!("{root}/{SKILL_MD}");
            if entries.iter().any(|e: &Skill| e.uri == uri) {
                return Err(SkillsError::new(b.path, SkillsErrorKind::Duplicate(uri)));
            }
            let resources = match b.files {
                BuiltFiles::Files(files) => {
                    let mut listed = Vec::with_capacity(files.len());
                    for (rel, bytes) in files {
                        let file_uri = format!("{root}/{rel}");
                        listed.push(SkillFile {
                            uri: file_uri.clone(),
                            digest: skills::digest(&bytes),
                            size: bytes.len() as u64,
                        });
                        let mime = mime::of(&rel, Some(&bytes));
                        add_path(&mut tree, &root, &rel, Some(bytes.len() as u64), mime);
                        c.files.entry(file_uri).or_insert(Body { bytes, mime });
                    }
                    SkillResources::Files(listed)
                }
                BuiltFiles::Dynamic {
                    skill_md,
                    listing,
                    read,
                } => {
                    add_path(
                        &mut tree,
                        &root,
                        SKILL_MD,
                        Some(skill_md.len() as u64),
                        MARKDOWN,
                    );
                    for rel in &listing {
                        add_path(&mut tree, &root, rel, None, mime::of(rel, None));
                    }
                    c.files.insert(
                        uri.clone(),
                        Body {
                            bytes: skill_md,
                            mime: MARKDOWN,
                        },
                    );
                    c.dynamic.push(Dynamic {
                        root: root.clone(),
                        read,
                    });
                    SkillResources::Dynamic
                }
            };
            entries.push(Skill {
                uri,
                frontmatter: b.frontmatter,
                resources,
                meta: None,
            });
        }
        entries.sort_by(|a, b| a.uri.cmp(&b.uri));
        c.by_uri = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.uri.clone(), i))
            .collect();
        c.dirs = tree
            .into_iter()
            .map(|(k, v)| (k, v.into_values().collect()))
            .collect();
        let rendered = serde_json::to_vec(&entries).expect("entries serialize");
        c.fingerprint = skills::digest(&rendered)[7..19].to_owned();
        c.entries = entries;
        Ok(c)
    }

    /// The entry whose SKILL.md is at `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<&Skill> {
        self.by_uri.get(uri).map(|&i| &self.entries[i])
    }

    /// The bytes of a file served as hashed.
    pub(crate) fn file(&self, uri: &str) -> Option<&Body> {
        self.files.get(uri)
    }

    /// The dynamic skill `uri` is inside, and the path relative to its root.
    pub(crate) fn dynamic(&self, uri: &str) -> Option<(&Dynamic, String)> {
        self.dynamic.iter().find_map(|d| {
            let rel = uri.strip_prefix(&d.root)?.strip_prefix('/')?;
            rel.split('/')
                .all(|s| super::def::check_file_segment(s).is_ok())
                .then(|| (d, rel.to_owned()))
        })
    }

    /// The children of a directory (`None`: not a directory of a skill).
    pub(crate) fn directory(&self, uri: &str) -> Option<&[Resource]> {
        self.dirs.get(uri).map(Vec::as_slice)
    }

    /// The `resources/list` rows: every SKILL.md, named and described by its frontmatter.
    pub(crate) fn rows(&self) -> Vec<Resource> {
        self.entries
            .iter()
            .map(|e| {
                let mut r = row(e.uri.clone(), e.name().unwrap_or_default(), MARKDOWN);
                r.description = e.description().map(str::to_owned);
                r.size = self.files.get(&e.uri).map(|b| b.bytes.len() as u64);
                r
            })
            .collect()
    }
}
