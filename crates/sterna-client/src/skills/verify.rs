//! One verified read: the URI must be listed in the held entry, then the bytes received
//! (a `text` content's UTF-8 bytes, or a decoded `blob`) must have the listed size and
//! digest, and the skill's own SKILL.md must carry the entry's frontmatter, field by
//! field. Nothing that fails is returned.

use super::error::{SkillError, VerificationError, VerifyFailure};
use crate::{Call, Client};
use base64::Engine;
use sterna_types::content::ResourceContents;
use sterna_types::skills::frontmatter::{self, Limits};
use sterna_types::skills::{Skill, SkillFile, digest};

/// A file of a skill, read and verified against the held entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedFile {
    /// The file's URI.
    pub uri: String,
    /// The MIME type the server gave.
    pub mime_type: Option<String>,
    /// The bytes: exactly the listed size, with the listed digest.
    pub bytes: Vec<u8>,
}

impl VerifiedFile {
    /// The bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

fn fail(uri: &str, failure: VerifyFailure) -> SkillError {
    VerificationError {
        uri: uri.to_owned(),
        failure,
    }
    .into()
}

/// Reads `uri` (which must be listed in `entry`) and verifies it.
pub(super) async fn read(
    client: &Client,
    entry: &Skill,
    uri: &str,
) -> Result<VerifiedFile, SkillError> {
    let Some(listed) = entry.file(uri) else {
        return Err(fail(uri, VerifyFailure::Unlisted));
    };
    let result = client.run(Call::resource(uri)).await?;
    let mut contents = result.contents.into_iter();
    let content = match contents.len() {
        1 => contents.next(),
        _ => contents.find(|c| content_uri(c) == uri),
    };
    let Some(content) = content else {
        return Err(fail(uri, VerifyFailure::NoContent));
    };
    let (bytes, mime_type) = bytes_of(content, listed)?;
    check_bytes(listed, &bytes)?;
    if uri == entry.uri {
        check_frontmatter(entry, &bytes)?;
    }
    Ok(VerifiedFile {
        uri: uri.to_owned(),
        mime_type,
        bytes,
    })
}

fn content_uri(c: &ResourceContents) -> &str {
    match c {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
    }
}

/// The raw bytes of a content; a blob whose decoded length cannot be the listed size is
/// refused before it is decoded.
fn bytes_of(
    content: ResourceContents,
    listed: &SkillFile,
) -> Result<(Vec<u8>, Option<String>), SkillError> {
    match content {
        ResourceContents::Text(t) => Ok((t.text.into_bytes(), t.mime_type)),
        ResourceContents::Blob(b) => {
            let blob = b.blob.trim_end_matches('=');
            let decoded_len = (blob.len() as u64 * 3) / 4;
            if decoded_len != listed.size {
                let failure = VerifyFailure::Size {
                    listed: listed.size,
                    got: decoded_len,
                };
                return Err(fail(&listed.uri, failure));
            }
            let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(blob)
                .map_err(|_| fail(&listed.uri, VerifyFailure::NoContent))?;
            Ok((bytes, b.mime_type))
        }
    }
}

/// Size first (no hashing needed when it differs), then the digest.
pub(crate) fn check_bytes(listed: &SkillFile, bytes: &[u8]) -> Result<(), SkillError> {
    let got = bytes.len() as u64;
    if got != listed.size {
        return Err(fail(
            &listed.uri,
            VerifyFailure::Size {
                listed: listed.size,
                got,
            },
        ));
    }
    let got = digest(bytes);
    if got != listed.digest {
        return Err(fail(
            &listed.uri,
            VerifyFailure::Digest {
                listed: listed.digest.clone(),
                got,
            },
        ));
    }
    Ok(())
}

/// SKILL.md's frontmatter, parsed (bounded), must equal the entry's in every field.
pub(crate) fn check_frontmatter(entry: &Skill, bytes: &[u8]) -> Result<(), SkillError> {
    let text = std::str::from_utf8(bytes).map_err(|_| fail(&entry.uri, VerifyFailure::NotText))?;
    let parsed = frontmatter::parse(text, &Limits::default())
        .map_err(|e| fail(&entry.uri, VerifyFailure::Frontmatter(e)))?;
    let diffs = frontmatter::differences(&entry.frontmatter, &parsed);
    if !diffs.is_empty() {
        return Err(fail(&entry.uri, VerifyFailure::FrontmatterDiffers(diffs)));
    }
    Ok(())
}
