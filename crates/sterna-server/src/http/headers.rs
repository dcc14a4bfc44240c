//! The 2026-07-28 request headers: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*`, and the `=?base64?…?=` sentinel for values HTTP cannot carry as is.

use crate::server::Server;
use crate::server::prepare::Prepared;
use http::header::{AsHeaderName, HeaderName};
use http::{HeaderMap, HeaderValue};
use serde_json::Value;
use serde_json::value::RawValue;
use sterna_types::error::ErrorObject;
use sterna_types::header::decode as decode_header_value;
use sterna_types::mirror::ParamKind;

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

/// The headers a request carries once at most (with `Mcp-Param-*`): given twice, an
/// intermediary reading one value and this server another would disagree on the revision,
/// the method, the target or the session (one reading, one truth).
const SINGLE: [&str; 5] = [
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "last-event-id",
];

/// A request whose headers give one of [`SINGLE`] (or an `Mcp-Param-*`) more than once:
/// the error that refuses it (`-32020` for the 2026-07-28 headers, `-32600` for the
/// 2025-11-25 ones), else `None`. Costs nothing when no header repeats at all.
pub(crate) fn repeated(headers: &HeaderMap) -> Option<ErrorObject> {
    if headers.len() == headers.keys_len() {
        return None;
    }
    let name = headers.keys().find(|k| {
        let k = k.as_str();
        (SINGLE.contains(&k) || k.starts_with("mcp-param-"))
            && headers.get_all(k).iter().nth(1).is_some()
    })?;
    let msg = format!("the {name} header is given more than once");
    Some(match name.as_str() {
        "mcp-session-id" | "last-event-id" => ErrorObject::new(
            sterna_types::error::ErrorCode::INVALID_REQUEST,
            format!("Bad Request: {msg}"),
        ),
        _ => mismatch(msg),
    })
}

/// `MCP-Protocol-Version`: names as constants, so that looking one up parses no name.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Session-Id` (2025-11-25).
pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
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
    let name = prepared.mcp_name();
    let name = name.as_ref().map(|n| n.as_deref());
    let arguments = prepared.name_and_arguments().1;
    check(server, headers, prepared.method, name, arguments)
}

/// Checks `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` against the body (`name`: `None`
/// when the method carries no `Mcp-Name`, else what it must equal — the tool or prompt
/// name, the resource URI, a wing's value; `arguments` the tool arguments).
fn check(
    server: &Server,
    headers: &HeaderMap,
    method: &str,
    name: Option<Option<&str>>,
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
    let Some(name) = name else {
        return Ok(());
    };
    let Some(h) = text(headers, &NAME)? else {
        return Err(mismatch("the Mcp-Name header is required".into()));
    };
    let decoded = decode_header_value(h)
        .ok_or_else(|| mismatch("Mcp-Name has an invalid base64 value".into()))?;
    match name {
        Some(body) if body != decoded.as_ref() => {
            return Err(mismatch(format!(
                "Mcp-Name header value '{h}' does not match body value '{body}'"
            )));
        }
        Some(_) => {}
        None => {
            return Err(mismatch(format!(
                "Mcp-Name header value '{h}' does not match the body, which names none"
            )));
        }
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

/// Whether the version header names a 2026-07-28 (or later) revision.
pub(super) fn modern_header(headers: &HeaderMap) -> bool {
    let header = headers.get(&PROTOCOL_VERSION).map(HeaderValue::as_bytes);
    header.is_some_and(|v| {
        sterna_types::version::MODERN_VERSIONS
            .iter()
            .any(|m| m.as_bytes() == v)
    })
}
