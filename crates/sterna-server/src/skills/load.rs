//! Loading a skills folder: every folder holding a `SKILL.md` is a skill (nested skills
//! too), its path below the folder is its skill path, and every file under it is one of
//! its files. Hidden entries (`.name`) are skipped. Links are never followed and special
//! files never opened; each file is read once, bounded, and checked not to have changed
//! while it was read. Any problem fails the load with an error naming the file.

use super::def::{Built, BuiltFiles, check_file_segment, check_skill, order};
use super::error::{SkillsError, SkillsErrorKind as K};
use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sterna_types::skills::{MAX_FILES, MAX_TOTAL_SIZE, SKILL_MD};

/// A regular file found by the walk.
struct Found {
    rel: String,
    path: PathBuf,
    meta: Metadata,
}

/// Loads every skill under `root`, spending at most `budget` bytes in all (of the
/// catalog's `max_bytes`, named when a file breaks it).
pub(crate) fn load_dir(
    root: &Path,
    budget: &mut u64,
    max_bytes: u64,
) -> Result<Vec<Built>, SkillsError> {
    let meta = std::fs::metadata(root).map_err(|e| SkillsError::new(root, K::Io(e)))?;
    if !meta.is_dir() {
        return Err(SkillsError::new(root, K::NotRegular));
    }
    let mut files = Vec::new();
    walk(root, "", &mut files)?;
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let skills: Vec<String> = files
        .iter()
        .filter_map(|f| match f.rel.rsplit_once('/') {
            Some((dir, SKILL_MD)) => Some(dir.to_owned()),
            None if f.rel == SKILL_MD => Some(String::new()),
            _ => None,
        })
        .collect();
    let mut read: HashMap<String, Arc<[u8]>> = HashMap::new();
    let mut out = Vec::with_capacity(skills.len());
    for dir in skills {
        if dir.is_empty() {
            return Err(SkillsError::new(root.join(SKILL_MD), K::RootSkill));
        }
        out.push(load_skill(
            root,
            &dir,
            &files,
            &mut read,
            (budget, max_bytes),
        )?);
    }
    Ok(out)
}

/// Collects the regular files below `dir` (`rel` is its path below the root).
fn walk(dir: &Path, rel: &str, out: &mut Vec<Found>) -> Result<(), SkillsError> {
    let entries = std::fs::read_dir(dir).map_err(|e| SkillsError::new(dir, K::Io(e)))?;
    for entry in entries {
        let entry = entry.map_err(|e| SkillsError::new(dir, K::Io(e)))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(SkillsError::new(path, K::NonUtf8Name));
        };
        if name.starts_with('.') {
            continue;
        }
        let meta =
            std::fs::symlink_metadata(&path).map_err(|e| SkillsError::new(&path, K::Io(e)))?;
        let child = if rel.is_empty() {
            name.to_owned()
        } else {
            format!("{rel}/{name}")
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(SkillsError::new(path, K::Symlink));
        } else if kind.is_dir() {
            walk(&path, &child, out)?;
        } else if kind.is_file() {
            out.push(Found {
                rel: child,
                path,
                meta,
            });
        } else {
            return Err(SkillsError::new(path, K::NotRegular));
        }
    }
    Ok(())
}

/// One skill: its SKILL.md checked, then every file below its folder read.
fn load_skill(
    root: &Path,
    dir: &str,
    files: &[Found],
    read: &mut HashMap<String, Arc<[u8]>>,
    (budget, max_bytes): (&mut u64, u64),
) -> Result<Built, SkillsError> {
    let prefix = format!("{dir}/");
    let mut mine: Vec<(&str, &Found)> = files
        .iter()
        .filter_map(|f| f.rel.strip_prefix(&prefix).map(|r| (r, f)))
        .collect();
    mine.sort_by(|a, b| order(a.0, b.0));
    let mut total = 0u64;
    let mut out = Vec::with_capacity(mine.len());
    for (i, (rel, f)) in mine.iter().enumerate() {
        for s in rel.split('/') {
            check_file_segment(s).map_err(|w| SkillsError::new(&f.path, K::BadName(w)))?;
        }
        if i >= MAX_FILES {
            return Err(SkillsError::new(
                &f.path,
                K::TooManyFiles { max: MAX_FILES },
            ));
        }
        let left = MAX_TOTAL_SIZE - total;
        let bytes = match read.get(&f.rel) {
            Some(b) if b.len() as u64 > left => {
                return Err(SkillsError::new(
                    &f.path,
                    K::TooLarge {
                        max: MAX_TOTAL_SIZE,
                    },
                ));
            }
            Some(b) => b.clone(),
            None => {
                let (cap, limit) = if *budget < left {
                    (*budget, max_bytes)
                } else {
                    (left, MAX_TOTAL_SIZE)
                };
                let b: Arc<[u8]> = read_file(&f.path, &f.meta, cap, limit)?.into();
                *budget -= b.len() as u64;
                read.insert(f.rel.clone(), b.clone());
                b
            }
        };
        total += bytes.len() as u64;
        out.push(((*rel).to_owned(), bytes));
    }
    let skill_md = root.join(dir).join(SKILL_MD);
    let frontmatter = check_skill(dir, &out[0].1, &skill_md)?;
    Ok(Built {
        path: dir.to_owned(),
        frontmatter,
        files: BuiltFiles::Files(out),
    })
}

/// Reads a file found by the walk: at most `cap` bytes (a larger file breaks `limit`),
/// never through a link, never a special file, and refused if it changed after the walk
/// saw it or while it was read.
fn read_file(path: &Path, seen: &Metadata, cap: u64, limit: u64) -> Result<Vec<u8>, SkillsError> {
    let err = |kind| SkillsError::new(path, kind);
    let too_large = || err(K::TooLarge { max: limit });
    let file = open(path).map_err(|e| err(K::Io(e)))?;
    let before = file.metadata().map_err(|e| err(K::Io(e)))?;
    if !before.is_file() {
        return Err(err(K::NotRegular));
    }
    if !unchanged(seen, &before) {
        return Err(err(K::Changed));
    }
    if before.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(before.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(K::Io(e)))?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    let after = std::fs::symlink_metadata(path).map_err(|e| err(K::Io(e)))?;
    if after.len() != bytes.len() as u64 || !unchanged(&before, &after) {
        return Err(err(K::Changed));
    }
    Ok(bytes)
}

/// Whether two looks at a path saw the same file with the same contents: its identity
/// alone is not enough, since a rewrite keeps it and a replacement may get a freed inode
/// number back.
fn unchanged(a: &Metadata, b: &Metadata) -> bool {
    same_file(a, b) && a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // No link followed even if one was swapped in after the walk; a FIFO swapped in
    // does not block the open.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory holding `a.md` with `text`, and what a walk saw of that file.
    fn walked(tag: &str, text: &str) -> (PathBuf, PathBuf, std::fs::Metadata) {
        let dir = std::env::temp_dir().join(format!("sterna-load-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.md");
        std::fs::write(&f, text).unwrap();
        let seen = std::fs::symlink_metadata(&f).unwrap();
        (dir, f, seen)
    }

    #[test]
    fn a_file_gone_after_the_walk_is_named_as_unreadable() {
        let (dir, f, seen) = walked("gone", "x");
        std::fs::remove_file(&f).unwrap();
        let e = read_file(&f, &seen, 100, 100).unwrap_err();
        assert!(
            matches!(&e.kind, K::Io(io) if io.kind() == std::io::ErrorKind::NotFound),
            "{e}"
        );
        assert_eq!(e.path, f);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_rewritten_after_the_walk_is_refused_even_under_its_inode() {
        // A file rewritten in place, or replaced by one that got its freed inode number
        // back, keeps its identity (device, inode): what it holds is not what the walk saw.
        let (dir, f, seen) = walked("rewritten", "before");
        std::fs::write(&f, "after, and longer").unwrap();
        let e = read_file(&f, &seen, 100, 100).unwrap_err();
        assert!(matches!(e.kind, K::Changed), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_replaced_or_grown_after_the_walk_is_refused() {
        let (dir, f, seen) = walked("changed", "before");
        // Replaced by another file (a new inode) between the walk and the read.
        std::fs::remove_file(&f).unwrap();
        std::fs::write(dir.join("other"), "placeholder").unwrap();
        std::fs::write(&f, "after, and longer").unwrap();
        let e = read_file(&f, &seen, 100, 100).unwrap_err();
        assert!(matches!(e.kind, K::Changed), "{e}");
        // Larger than the cap once opened: refused without reading past it.
        let seen = std::fs::symlink_metadata(&f).unwrap();
        let e = read_file(&f, &seen, 4, 4).unwrap_err();
        assert!(matches!(e.kind, K::TooLarge { max: 4 }), "{e}");
        assert_eq!(
            read_file(&f, &seen, 100, 100).unwrap(),
            b"after, and longer"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
