//! `x-mcp-header` annotations: tool arguments mirrored into `Mcp-Param-*` headers.
//! Shared by the server (validating requests) and the client (sending headers).

use crate::definition::{DefinitionError, HeaderProblem};
use serde_json::{Map, Value};

fn problem(at: String, problem: HeaderProblem) -> DefinitionError {
    DefinitionError::HeaderAnnotation { at, problem }
}

/// The JSON type of an argument mirrored into an `Mcp-Param-*` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A string (compared exactly, after Base64-sentinel decoding).
    String,
    /// An integer (compared numerically).
    Integer,
    /// A boolean (`true` / `false`).
    Boolean,
}

/// An argument mirrored into a header (`x-mcp-header`).
#[derive(Debug, Clone)]
pub(crate) struct HeaderParam {
    pub(crate) name: String,
    pub(crate) path: Vec<String>,
    pub(crate) kind: ParamKind,
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Finds the `x-mcp-header` annotations of an input schema. They must sit on a property
/// reached through `properties` only, name an RFC 9110 token unique ignoring case, and
/// annotate a string, integer or boolean. A nullable type (`["boolean", "null"]`, from an
/// `Option`) is published as the plain type: an absent argument sends no header anyway.
pub(crate) fn header_params(
    schema: &mut Map<String, Value>,
) -> Result<Vec<HeaderParam>, DefinitionError> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for h in &found {
        let lower = h.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(problem(h.name.clone(), HeaderProblem::Duplicate));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn walk(
    obj: &mut Map<String, Value>,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<HeaderParam>,
) -> Result<(), DefinitionError> {
    if let Some(v) = obj.get("x-mcp-header") {
        let at = format!("/{}", path.join("/"));
        if !reachable || path.is_empty() {
            return Err(problem(at, HeaderProblem::Unreachable));
        }
        let name = v
            .as_str()
            .filter(|n| is_token(n))
            .ok_or_else(|| problem(at.clone(), HeaderProblem::NotAToken))?;
        let single = match obj.get("type") {
            Some(Value::String(t)) => Some(t.clone()),
            Some(Value::Array(ts)) => {
                match ts.iter().filter(|t| *t != "null").collect::<Vec<_>>()[..] {
                    [Value::String(t)] => Some(t.clone()),
                    _ => None,
                }
            }
            _ => None,
        };
        let kind = match single.as_deref() {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            _ => return Err(problem(at, HeaderProblem::Type)),
        };
        let name = name.to_owned();
        obj.insert("type".into(), Value::String(single.unwrap_or_default()));
        found.push(HeaderParam {
            name,
            path: path.clone(),
            kind,
        });
    }
    for (key, value) in obj.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(props)) => {
                for (name, prop) in props.iter_mut() {
                    if let Value::Object(p) = prop {
                        path.push(name.clone());
                        walk(p, path, reachable, found)?;
                        path.pop();
                    }
                }
            }
            (_, Value::Object(o)) => walk(o, path, false, found)?,
            (_, Value::Array(items)) => {
                for item in items.iter_mut() {
                    if let Value::Object(o) = item {
                        walk(o, path, false, found)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
