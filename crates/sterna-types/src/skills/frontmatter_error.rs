//! Why a SKILL.md frontmatter cannot be read ([`FrontmatterError`]): the one error of
//! the frontmatter parser and of the core schema's scalar typing beneath it (re-exported
//! as `skills::frontmatter::FrontmatterError`).

use std::fmt;

/// Why a frontmatter cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The text does not begin with a `---` line.
    Missing,
    /// No closing `---` line.
    Unterminated,
    /// Longer than [`Limits::max_bytes`](super::frontmatter::Limits::max_bytes).
    TooLong {
        /// The limit.
        max: usize,
    },
    /// Not YAML.
    Syntax {
        /// 1-based line within the frontmatter.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// Nested deeper than [`Limits::max_depth`](super::frontmatter::Limits::max_depth).
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// Alias expansion (or sheer size) went past [`Limits::max_nodes`](super::frontmatter::Limits::max_nodes) or
    /// [`Limits::max_expanded_bytes`](super::frontmatter::Limits::max_expanded_bytes).
    TooLarge {
        /// Which budget.
        what: &'static str,
        /// The limit.
        max: usize,
    },
    /// An alias names no complete anchor (unknown, or recursive).
    UnknownAlias,
    /// The frontmatter is not a mapping.
    NotAMapping,
    /// A key that is not a string (a number, a boolean, null, a list or a map).
    NonStringKey(String),
    /// The same key twice in one mapping.
    DuplicateKey(String),
    /// A value JSON cannot hold (`.inf`, `.nan`).
    NotJson(String),
    /// A tag other than the core schema's (`!!str`, `!!int` …).
    UnsupportedTag(String),
    /// More than one YAML document.
    MultipleDocuments,
}

impl fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("the file does not begin with a '---' frontmatter line"),
            Self::Unterminated => f.write_str("the frontmatter has no closing '---' line"),
            Self::TooLong { max } => write!(f, "the frontmatter is longer than {max} bytes"),
            Self::Syntax { line, message } => {
                write!(f, "YAML error at frontmatter line {line}: {message}")
            }
            Self::TooDeep { max } => write!(f, "the frontmatter nests deeper than {max} levels"),
            Self::TooLarge { what, max } => write!(
                f,
                "the frontmatter expands to more than {max} {what} (aliases included)"
            ),
            Self::UnknownAlias => f.write_str("an alias names no complete anchor"),
            Self::NotAMapping => f.write_str("the frontmatter is not a mapping"),
            Self::NonStringKey(k) => write!(f, "the key {k} is not a string"),
            Self::DuplicateKey(k) => write!(f, "the key {k:?} appears twice"),
            Self::NotJson(v) => write!(f, "{v} has no JSON form"),
            Self::UnsupportedTag(t) => write!(f, "the tag {t} is not supported"),
            Self::MultipleDocuments => {
                f.write_str("the frontmatter holds more than one YAML document")
            }
        }
    }
}

impl std::error::Error for FrontmatterError {}
