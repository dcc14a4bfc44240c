//! The digest of a skill file: `sha256:` and the lowercase hex SHA-256 of its raw bytes.

use sha2::{Digest, Sha256};

/// `sha256:<64 lowercase hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_digests() {
        assert_eq!(
            super::digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // The SKILL.md of the skills digest's example (140 bytes).
        let md = "---\nname: release-notes\ndescription: Draft release notes from merged pull requests\n---\n\nRead guides/STYLE.md, then fill templates/notes.md.\n";
        assert_eq!(md.len(), 140);
        assert_eq!(
            super::digest(md.as_bytes()),
            "sha256:51e4979a5cbffecc509ba34f96f8bfe2e9d42945558a6a187f14af07f8da21c2"
        );
    }
}
