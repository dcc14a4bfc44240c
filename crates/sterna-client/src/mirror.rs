//! The `x-mcp-header` annotations the tool list teaches (2026-07-28): which tools are kept
//! (a tool with invalid annotations is left out), and the `Mcp-Param-*` header values a
//! `tools/call`'s arguments give. Pure: the driver fetches the list and keeps the table.

use serde_json::Value;
use std::collections::HashMap;
use sterna_types::mirror::{HeaderParam, ParamKind, header_params};
use sterna_types::tools::Tool;

/// Annotations by tool name.
pub(crate) type Mirrors = HashMap<String, Vec<HeaderParam>>;

/// The tools to keep, and the annotations learned from them.
pub(crate) fn learn(tools: Vec<Tool>) -> (Vec<Tool>, Mirrors) {
    let mut mirrors = HashMap::new();
    let mut kept = Vec::with_capacity(tools.len());
    for tool in tools {
        let mut schema = tool.input_schema.clone();
        match header_params(&mut schema) {
            Ok(params) => {
                mirrors.insert(tool.name.clone(), params);
                kept.push(tool);
            }
            Err(e) => {
                tracing::warn!(tool = %tool.name, "leaving out a tool with invalid x-mcp-header annotations: {e}")
            }
        }
    }
    (kept, mirrors)
}

/// The `Mcp-Param-*` headers for a call of `tool` with `args`, by its annotations.
pub(crate) fn headers(
    tool: &str,
    params: &[HeaderParam],
    args: Option<&Value>,
) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        let value = args.and_then(|a| p.path.iter().try_fold(a, |v, k| v.get(k)));
        let text = match (p.kind, value) {
            (_, None | Some(Value::Null)) => continue,
            (ParamKind::String, Some(Value::String(s))) => {
                sterna_types::header::encode(s).into_owned()
            }
            (ParamKind::Integer, Some(Value::Number(n))) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i.to_string(),
                (None, Some(f)) if f.fract() == 0.0 => format!("{}", f as i64),
                _ => n.to_string(),
            },
            (ParamKind::Boolean, Some(Value::Bool(b))) => b.to_string(),
            (_, Some(other)) => {
                tracing::warn!(tool, header = %p.name, "argument {other} does not match its x-mcp-header type; header left out");
                continue;
            }
        };
        out.push((p.name.clone(), text));
    }
    out
}
