//! Why a skills folder (or a skill defined in code) cannot be served: every error names
//! the file or folder at fault.

use std::fmt;
use std::path::PathBuf;
use sterna_types::skills::frontmatter::FrontmatterError;

/// A skill that cannot be loaded, and where.
#[derive(Debug)]
pub struct SkillsError {
    /// The file or folder at fault (for a skill defined in code: its skill path and file).
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: SkillsErrorKind,
}

/// What is wrong with a file or folder of a skill.
#[derive(Debug)]
#[non_exhaustive]
pub enum SkillsErrorKind {
    /// It could not be read (missing, unreadable, a folder that cannot be listed).
    Io(std::io::Error),
    /// A symbolic link: never followed (it could point out of the folder).
    Symlink,
    /// Not a regular file or folder (a FIFO, a socket, a device).
    NotRegular,
    /// Its name is not UTF-8.
    NonUtf8Name,
    /// Its name cannot be part of a skill URI (a path segment that is empty, `.`, `..`, or
    /// holds `/`, `\`, `?`, `#`, `%` or control characters; a skill path segment outside
    /// `a-z 0-9 . _ ~ -`).
    BadName(String),
    /// Its SKILL.md frontmatter cannot be read.
    Frontmatter(FrontmatterError),
    /// SKILL.md is not UTF-8 text.
    NotText,
    /// The frontmatter breaks a rule of the entry (name, description, folder name).
    Entry(sterna_types::skills::EntryProblem),
    /// The skill has more files than a host must accept (512, SKILL.md included).
    TooManyFiles {
        /// The limit.
        max: usize,
    },
    /// The skill is larger than a host must accept (16 MiB), or the whole catalog larger
    /// than its configured bound.
    TooLarge {
        /// The limit, in bytes.
        max: u64,
    },
    /// The file changed while it was being read.
    Changed,
    /// Two skills (or a skill and a skill defined in code) share a URI.
    Duplicate(String),
    /// A folder with SKILL.md at the root of the skills folder (a skill needs a path).
    RootSkill,
}

impl SkillsError {
    pub(crate) fn new(path: impl Into<PathBuf>, kind: SkillsErrorKind) -> Self {
        Self {
            path: path.into(),
            kind,
        }
    }
}

impl fmt::Display for SkillsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path.display())?;
        match &self.kind {
            SkillsErrorKind::Io(e) => write!(f, "cannot be read: {e}"),
            SkillsErrorKind::Symlink => f.write_str("is a symbolic link (links are not followed)"),
            SkillsErrorKind::NotRegular => f.write_str("is not a regular file or folder"),
            SkillsErrorKind::NonUtf8Name => f.write_str("its name is not UTF-8"),
            SkillsErrorKind::BadName(why) => write!(f, "its name cannot be part of a skill URI: {why}"),
            SkillsErrorKind::Frontmatter(e) => write!(f, "{e}"),
            SkillsErrorKind::NotText => f.write_str("SKILL.md is not UTF-8 text"),
            SkillsErrorKind::Entry(p) => write!(f, "{p}"),
            SkillsErrorKind::TooManyFiles { max } => write!(f, "the skill has more than {max} files"),
            SkillsErrorKind::TooLarge { max } => write!(f, "more than {max} bytes"),
            SkillsErrorKind::Changed => f.write_str("changed while it was being read"),
            SkillsErrorKind::Duplicate(uri) => write!(f, "{uri} is served twice"),
            SkillsErrorKind::RootSkill => {
                f.write_str("SKILL.md at the root of the skills folder (put each skill in a folder named after it)")
            }
        }
    }
}

impl std::error::Error for SkillsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            SkillsErrorKind::Io(e) => Some(e),
            SkillsErrorKind::Frontmatter(e) => Some(e),
            SkillsErrorKind::Entry(e) => Some(e),
            _ => None,
        }
    }
}
