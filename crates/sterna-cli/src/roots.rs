//! Roots from `--root DIR` (default: the current directory), as `file://` URIs.

use crate::exit::CliError;
use std::path::{Path, PathBuf};
use sterna::types::roots::Root;

/// `path` as a `file://` URI (percent-encoding everything but unreserved characters and `/`).
pub(crate) fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The roots to expose: each directory made absolute, checked to exist (no `..` survives
/// canonicalisation).
pub(crate) fn roots(dirs: &[PathBuf]) -> Result<Vec<Root>, CliError> {
    let cwd = [PathBuf::from(".")];
    let dirs = if dirs.is_empty() { &cwd[..] } else { dirs };
    dirs.iter()
        .map(|d| {
            let abs = d
                .canonicalize()
                .map_err(|e| CliError::Usage(format!("--root {}: {e}", d.display())))?;
            if !abs.is_dir() {
                return Err(CliError::Usage(format!(
                    "--root {}: not a directory",
                    d.display()
                )));
            }
            let name = abs
                .file_name()
                .map_or_else(|| "/".to_owned(), |n| n.to_string_lossy().into_owned());
            Ok(Root::new(file_uri(&abs), name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn uris_are_encoded() {
        assert_eq!(
            super::file_uri(std::path::Path::new("/tmp/a b/ü")),
            "file:///tmp/a%20b/%C3%BC"
        );
    }
}
