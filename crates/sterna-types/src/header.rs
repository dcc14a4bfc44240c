//! Header values as 2026-07-28 carries them (`Mcp-Name`, `Mcp-Param-*`): as is when HTTP
//! can carry the text, else the `=?base64?…?=` sentinel. Shared by the server's checks
//! and the client's requests.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::borrow::Cow;

/// Encodes a header value: as is when it is printable ASCII without leading or trailing
/// whitespace (and does not look like the sentinel), else `=?base64?<UTF-8 in base64>?=`.
pub fn encode(value: &str) -> Cow<'_, str> {
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !sentinel;
    if plain {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!("=?base64?{}?=", STANDARD.encode(value)))
    }
}

/// Decodes a header value, undoing the sentinel. `None` when the sentinel's payload is
/// not base64 of UTF-8.
pub fn decode(value: &str) -> Option<Cow<'_, str>> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        None => Some(Cow::Borrowed(value)),
        Some(b64) => {
            let bytes = STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok().map(Cow::Owned)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{decode as decode_header_value, encode as encode_header_value};

    #[test]
    fn sentinel() {
        assert_eq!(encode_header_value("plain"), "plain");
        for v in ["héllo", " padded", "tab\t", "line\nbreak", "=?base64?abc?="] {
            let e = encode_header_value(v);
            assert!(e.starts_with("=?base64?"), "{v}");
            assert_eq!(decode_header_value(&e).unwrap(), v);
        }
        assert_eq!(decode_header_value("=?base64?not base64!?="), None);
        assert_eq!(decode_header_value("x").unwrap(), "x");
    }
}
