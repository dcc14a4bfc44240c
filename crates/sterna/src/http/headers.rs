//! The 2026-07-28 request headers: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*`, and the `=?base64?…?=` sentinel for values HTTP cannot carry as is.

use crate::server::prepare::Prepared;
use crate::server::{ParamKind, Server};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;
use http::header::{AsHeaderName, HeaderName};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use sterna_types::error::ErrorObject;

/// Encodes a header value: as is when it is printable ASCII without leading or trailing
/// whitespace (and does not look like the sentinel), else `=?base64?<UTF-8 in base64>?=`.
pub fn encode_header_value(value: &str) -> Cow<'_, str> {
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
pub fn decode_header_value(value: &str) -> Option<Cow<'_, str>> {
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

fn mismatch(msg: String) -> ErrorObject {
    ErrorObject::header_mismatch(format!("Header mismatch: {msg}"))
}

/// A header's value as text, trimmed; `Err` when it has characters HTTP forbids.
fn text<K: AsHeaderName + std::fmt::Display + Copy>(
    headers: &HeaderMap,
    name: K,
) -> Result<Option<&str>, ErrorObject> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim_matches([' ', '\t'])))
            .map_err(|_| mismatch(format!("{name} has invalid characters"))),
    }
}

const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD: HeaderName = HeaderName::from_static("mcp-method");
const NAME: HeaderName = HeaderName::from_static("mcp-name");

/// `MCP-Protocol-Version`, which every request must carry.
pub(crate) fn protocol_version(headers: &HeaderMap) -> Result<&str, ErrorObject> {
    text(headers, &PROTOCOL_VERSION)?
        .ok_or_else(|| mismatch("the MCP-Protocol-Version header is required".into()))
}

/// Checks the headers against a prepared request: `MCP-Protocol-Version` equal to
/// `_meta`'s version, then `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (all `-32020`).
pub(crate) fn check_prepared(
    server: &Server,
    headers: &HeaderMap,
    version: &str,
    prepared: &Prepared<'_>,
) -> Result<(), ErrorObject> {
    let meta = prepared.meta();
    if version != meta.protocol_version {
        return Err(ErrorObject::header_mismatch(format!(
            "Header mismatch: MCP-Protocol-Version header value '{version}' does not match body value '{}'",
            meta.protocol_version
        )));
    }
    let (name, arguments) = prepared.target();
    check(server, headers, prepared.method, name, arguments)
}

/// Checks `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` against the body (`name` is the
/// tool or prompt name or the resource URI; `arguments` the tool arguments).
fn check(
    server: &Server,
    headers: &HeaderMap,
    method: &str,
    name: Option<&str>,
    arguments: Option<&RawValue>,
) -> Result<(), ErrorObject> {
    match text(headers, &METHOD)? {
        None => return Err(mismatch("the Mcp-Method header is required".into())),
        Some(m) if m != method => {
            return Err(mismatch(format!(
                "Mcp-Method header value '{m}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        return Ok(());
    }
    let Some(h) = text(headers, &NAME)? else {
        return Err(mismatch("the Mcp-Name header is required".into()));
    };
    let decoded = decode_header_value(h)
        .ok_or_else(|| mismatch("Mcp-Name has an invalid base64 value".into()))?;
    if Some(decoded.as_ref()) != name {
        return Err(mismatch(format!(
            "Mcp-Name header value '{h}' does not match body value '{}'",
            name.unwrap_or("")
        )));
    }
    let mirrored = (method == "tools/call")
        .then(|| name.and_then(|n| server.tool_header_params(n)))
        .flatten();
    if let Some(params) = mirrored {
        let args: Option<Value> = arguments.and_then(|a| serde_json::from_str(a.get()).ok());
        for (name, path, kind) in params {
            check_param(headers, name, path, kind, args.as_ref())?;
        }
    }
    Ok(())
}

fn check_param(
    headers: &HeaderMap,
    name: &str,
    path: &[String],
    kind: ParamKind,
    args: Option<&Value>,
) -> Result<(), ErrorObject> {
    let header_name = format!("mcp-param-{}", name.to_ascii_lowercase());
    let value = args
        .and_then(|a| path.iter().try_fold(a, |v, k| v.get(k)))
        .filter(|v| !v.is_null());
    let header = text(headers, &header_name)?;
    let display = format!("Mcp-Param-{name}");
    match (header, value) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(mismatch(format!(
            "the {display} header is required (the argument is present)"
        ))),
        (Some(_), None) => Err(mismatch(format!(
            "{display} is set but the argument is absent"
        ))),
        (Some(h), Some(v)) => {
            let decoded = decode_header_value(h)
                .ok_or_else(|| mismatch(format!("{display} has an invalid base64 value")))?;
            let equal = match kind {
                ParamKind::String => v.as_str() == Some(decoded.as_ref()),
                ParamKind::Boolean => match decoded.as_ref() {
                    "true" => v.as_bool() == Some(true),
                    "false" => v.as_bool() == Some(false),
                    _ => false,
                },
                ParamKind::Integer => match (decoded.parse::<f64>(), v.as_f64()) {
                    (Ok(h), Some(b)) => h == b,
                    _ => false,
                },
            };
            if equal {
                Ok(())
            } else {
                Err(mismatch(format!(
                    "{display} header value '{h}' does not match the argument {v}"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
