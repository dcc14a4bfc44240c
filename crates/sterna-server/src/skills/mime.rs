//! The MIME type a skill file is served with: by its extension, else by whether its bytes
//! are text.

/// The MIME type of `name` (with its bytes when known).
pub(crate) fn of(name: &str, bytes: Option<&[u8]>) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let known = match ext.as_deref() {
        Some("md" | "markdown") => Some("text/markdown"),
        Some("txt") => Some("text/plain"),
        Some("json") => Some("application/json"),
        Some("yaml" | "yml") => Some("application/yaml"),
        Some("toml") => Some("application/toml"),
        Some("csv") => Some("text/csv"),
        Some("html" | "htm") => Some("text/html"),
        Some("xml") => Some("application/xml"),
        Some("py") => Some("text/x-python"),
        Some("sh") => Some("text/x-shellscript"),
        Some("js" | "mjs") => Some("text/javascript"),
        Some("ts") => Some("text/x-typescript"),
        Some("rs") => Some("text/x-rust"),
        Some("png") => Some("image/png"),
        Some("jpg" | "jpeg") => Some("image/jpeg"),
        Some("gif") => Some("image/gif"),
        Some("svg") => Some("image/svg+xml"),
        Some("pdf") => Some("application/pdf"),
        _ => None,
    };
    known.unwrap_or(match bytes.map(std::str::from_utf8) {
        Some(Err(_)) => "application/octet-stream",
        _ => "text/plain",
    })
}
