//! Why a skill was not listed, got or loaded: typed, so a host can tell a server it
//! should refresh from (`skills/get`) from one it should stop trusting.

use crate::ClientError;
use std::fmt;
use sterna_types::skills::EntryProblem;
use sterna_types::skills::frontmatter::FrontmatterError;

/// What went wrong with a skill.
#[derive(Debug)]
#[non_exhaustive]
pub enum SkillError {
    /// The server did not declare `io.modelcontextprotocol/skills`: nothing was sent.
    NotDeclared,
    /// The server did not declare `directoryRead`: nothing was sent.
    NoDirectoryRead,
    /// The request failed (transport, protocol, or the server's error, e.g. `-32602` for
    /// a URI that is not a skill there).
    Client(ClientError),
    /// The entry is not a valid skill (or exceeds the limits): refused before any read.
    Invalid {
        /// The entry's URI (as sent, possibly empty).
        uri: String,
        /// What is wrong.
        problem: EntryProblem,
    },
    /// `skills/get` answered with an entry for another URI.
    WrongSkill {
        /// What was asked.
        asked: String,
        /// What came back.
        got: String,
    },
    /// The skill is `"dynamic"`: it carries no digests, so its content cannot be bound to
    /// what was approved; refused.
    Dynamic {
        /// The skill's URI.
        uri: String,
    },
    /// A read did not match the held entry: the content was not used.
    Verification(VerificationError),
}

/// A read that does not match the held entry (refresh with `skills/get`; the approval
/// of the old entry no longer holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationError {
    /// The file.
    pub uri: String,
    /// How it failed.
    pub failure: VerifyFailure,
}

/// How a read failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyFailure {
    /// The URI is not listed in the held entry (never read).
    Unlisted,
    /// The answer held no content for the URI.
    NoContent,
    /// The byte length is not the listed `size`.
    Size {
        /// The listed size.
        listed: u64,
        /// The size received.
        got: u64,
    },
    /// The SHA-256 of the bytes is not the listed `digest`.
    Digest {
        /// The listed digest.
        listed: String,
        /// The digest of what was received.
        got: String,
    },
    /// SKILL.md is not UTF-8 text.
    NotText,
    /// SKILL.md's frontmatter cannot be read (syntax, bounds, shape).
    Frontmatter(FrontmatterError),
    /// SKILL.md's frontmatter differs from the entry's in these fields.
    FrontmatterDiffers(Vec<String>),
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotDeclared => f.write_str("the server does not declare the skills extension"),
            Self::NoDirectoryRead => f.write_str("the server does not declare directoryRead"),
            Self::Client(e) => write!(f, "{e}"),
            Self::Invalid { uri, problem } => write!(f, "invalid skill entry {uri}: {problem}"),
            Self::WrongSkill { asked, got } => write!(f, "skills/get {asked} answered with {got}"),
            Self::Dynamic { uri } => write!(f, "{uri} is a dynamic skill (no digests): refused"),
            Self::Verification(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for VerificationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed verification: ", self.uri)?;
        match &self.failure {
            VerifyFailure::Unlisted => f.write_str("not listed in the skill's entry"),
            VerifyFailure::NoContent => f.write_str("the server sent no content for it"),
            VerifyFailure::Size { listed, got } => {
                write!(f, "{got} bytes, the entry lists {listed}")
            }
            VerifyFailure::Digest { listed, got } => {
                write!(f, "digest {got}, the entry lists {listed}")
            }
            VerifyFailure::NotText => f.write_str("SKILL.md is not UTF-8 text"),
            VerifyFailure::Frontmatter(e) => write!(f, "{e}"),
            VerifyFailure::FrontmatterDiffers(fields) => {
                write!(
                    f,
                    "the frontmatter differs from the entry's in {}",
                    fields.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for SkillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Client(e) => Some(e),
            Self::Invalid { problem, .. } => Some(problem),
            Self::Verification(v) => Some(v),
            _ => None,
        }
    }
}

impl std::error::Error for VerificationError {}

impl From<ClientError> for SkillError {
    fn from(e: ClientError) -> Self {
        Self::Client(e)
    }
}

impl From<VerificationError> for SkillError {
    fn from(e: VerificationError) -> Self {
        Self::Verification(e)
    }
}
