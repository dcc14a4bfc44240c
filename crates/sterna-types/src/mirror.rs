//! `x-mcp-header` annotations: tool arguments mirrored into `Mcp-Param-*` headers.
//! Shared by servers (validating requests) and clients (sending headers).

use serde_json::{Map, Value};
use std::fmt;

/// Why an `x-mcp-header` annotation cannot be mirrored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderProblem {
    /// Not on a property reached through `properties`.
    Unreachable,
    /// Not a non-empty HTTP token.
    NotAToken,
    /// On an argument that is not a string, an integer or a boolean.
    Type,
    /// The same header name (ignoring case) twice.
    Duplicate,
}

impl fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unreachable => "not on a property reached through `properties`",
            Self::NotAToken => "the header name must be a non-empty HTTP token",
            Self::Type => "only string, integer and boolean arguments can be mirrored",
            Self::Duplicate => "used twice",
        })
    }
}

/// An `x-mcp-header` annotation that cannot be mirrored, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnnotationError {
    /// Where in the schema (a JSON pointer), or the header name when it is a duplicate.
    pub at: String,
    /// Why.
    pub problem: HeaderProblem,
}

impl fmt::Display for AnnotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x-mcp-header at {}: {}", self.at, self.problem)
    }
}

impl std::error::Error for AnnotationError {}

fn problem(at: String, problem: HeaderProblem) -> AnnotationError {
    AnnotationError { at, problem }
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
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaderParam {
    /// The header's name, without `Mcp-Param-`.
    pub name: String,
    /// Where the argument is, from the root of the arguments.
    pub path: Vec<String>,
    /// Its JSON type.
    pub kind: ParamKind,
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
pub fn header_params(schema: &mut Map<String, Value>) -> Result<Vec<HeaderParam>, AnnotationError> {
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
) -> Result<(), AnnotationError> {
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
