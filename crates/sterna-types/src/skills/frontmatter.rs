//! SKILL.md frontmatter: the YAML between a leading `---` line and the next `---` line,
//! read as JSON with YAML 1.2 **core schema** typing (`yes`, `on` and dates stay strings;
//! `1`, `1.5`, `0x1f`, `true`, `null` are typed), the way the conformance suite and the
//! TypeScript SDK read it.
//!
//! The input is hostile on both sides (a server reads an author's folder, a host reads
//! what a server sent), so parsing is bounded ([`Limits`]): the frontmatter's length, the
//! nesting depth, and the nodes and bytes that alias expansion may produce — a "billion
//! laughs" document stops at the budget, not at the end of memory. The parser is
//! `saphyr-parser` (pure Rust, an explicit state stack rather than recursion, no alias
//! expansion of its own); the JSON is built here, event by event.

use super::core_schema::scalar;
pub use super::frontmatter_error::FrontmatterError;
use crate::JsonObject;
use saphyr_parser::{Event, Parser, Tag};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Bounds of parsing one frontmatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest frontmatter, in bytes (default 64 KiB).
    pub max_bytes: usize,
    /// The deepest nesting of maps and lists (default 32).
    pub max_depth: usize,
    /// The most values produced, alias expansions included (default 10,000).
    pub max_nodes: usize,
    /// The most string bytes produced, alias expansions included (default 1 MiB).
    pub max_expanded_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 64 * 1024,
            max_depth: 32,
            max_nodes: 10_000,
            max_expanded_bytes: 1024 * 1024,
        }
    }
}

/// A SKILL.md split at its frontmatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the `---` lines.
    pub yaml: &'a str,
    /// What follows the closing line.
    pub body: &'a str,
}

fn fence(line: &str) -> bool {
    line.trim_end_matches(['\r', ' ', '\t']) == "---"
}

/// Splits a SKILL.md at its frontmatter (a BOM is skipped; CRLF is accepted).
pub fn split<'a>(text: &'a str, limits: &Limits) -> Result<Split<'a>, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = text.split_once('\n').ok_or(FrontmatterError::Missing)?;
    if !fence(first) {
        return Err(FrontmatterError::Missing);
    }
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if fence(line.trim_end_matches('\n')) {
            return Ok(Split {
                yaml: &rest[..at],
                body: &rest[at + line.len()..],
            });
        }
        at += line.len();
        if at > limits.max_bytes {
            return Err(FrontmatterError::TooLong {
                max: limits.max_bytes,
            });
        }
    }
    Err(FrontmatterError::Unterminated)
}

/// The frontmatter of a SKILL.md, as JSON.
pub fn parse(text: &str, limits: &Limits) -> Result<JsonObject, FrontmatterError> {
    parse_yaml(split(text, limits)?.yaml, limits)
}

/// A YAML mapping (one document) as JSON, within `limits`.
pub fn parse_yaml(yaml: &str, limits: &Limits) -> Result<JsonObject, FrontmatterError> {
    if yaml.len() > limits.max_bytes {
        return Err(FrontmatterError::TooLong {
            max: limits.max_bytes,
        });
    }
    let mut b = Builder::new(limits);
    let mut documents = 0;
    for ev in Parser::new_from_str(yaml) {
        let (ev, span) = ev.map_err(|e| FrontmatterError::Syntax {
            line: e.marker().line(),
            message: e.info().to_owned(),
        })?;
        let _ = span;
        match ev {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(FrontmatterError::MultipleDocuments);
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let v = scalar(&text, style, tag.as_deref())?;
                let bytes = text.len();
                b.push(
                    v,
                    anchor,
                    Cost {
                        nodes: 1,
                        bytes,
                        height: 0,
                    },
                )?;
            }
            Event::SequenceStart(anchor, tag) => {
                b.open(Frame::seq(anchor), tag.as_deref(), "seq")?
            }
            Event::MappingStart(anchor, tag) => {
                b.open(Frame::map(anchor), tag.as_deref(), "map")?
            }
            Event::SequenceEnd | Event::MappingEnd => b.close()?,
            Event::Alias(id) => b.alias(id)?,
            _ => {}
        }
    }
    match b.root {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(FrontmatterError::NotAMapping),
    }
}

/// What a value costs against the budgets, and how deep it nests.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    nodes: usize,
    bytes: usize,
    height: usize,
}

enum Body {
    Seq(Vec<Value>),
    Map(Map<String, Value>, Option<String>),
}

struct Frame {
    body: Body,
    anchor: usize,
    /// The budgets spent when it opened, and the deepest child so far.
    start: Cost,
    height: usize,
}

impl Frame {
    fn seq(anchor: usize) -> Self {
        Self {
            body: Body::Seq(Vec::new()),
            anchor,
            start: Cost::default(),
            height: 0,
        }
    }
    fn map(anchor: usize) -> Self {
        Self {
            body: Body::Map(Map::new(), None),
            anchor,
            start: Cost::default(),
            height: 0,
        }
    }
}

struct Builder<'l> {
    limits: &'l Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Value, Cost)>,
    spent: Cost,
    root: Option<Value>,
}

impl<'l> Builder<'l> {
    fn new(limits: &'l Limits) -> Self {
        Self {
            limits,
            stack: Vec::new(),
            anchors: HashMap::new(),
            spent: Cost::default(),
            root: None,
        }
    }

    fn spend(&mut self, c: Cost) -> Result<(), FrontmatterError> {
        self.spent.nodes = self.spent.nodes.saturating_add(c.nodes);
        self.spent.bytes = self.spent.bytes.saturating_add(c.bytes);
        if self.spent.nodes > self.limits.max_nodes {
            return Err(FrontmatterError::TooLarge {
                what: "values",
                max: self.limits.max_nodes,
            });
        }
        if self.spent.bytes > self.limits.max_expanded_bytes {
            return Err(FrontmatterError::TooLarge {
                what: "bytes",
                max: self.limits.max_expanded_bytes,
            });
        }
        if self.stack.len() + c.height > self.limits.max_depth {
            return Err(FrontmatterError::TooDeep {
                max: self.limits.max_depth,
            });
        }
        Ok(())
    }

    fn open(
        &mut self,
        mut frame: Frame,
        tag: Option<&Tag>,
        kind: &str,
    ) -> Result<(), FrontmatterError> {
        if let Some(t) = tag
            && !(t.is_yaml_core_schema() && t.suffix == kind)
        {
            return Err(FrontmatterError::UnsupportedTag(t.to_string()));
        }
        self.spend(Cost {
            nodes: 1,
            bytes: 0,
            height: 1,
        })?;
        frame.start = self.spent;
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self) -> Result<(), FrontmatterError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let value = match frame.body {
            Body::Seq(items) => Value::Array(items),
            Body::Map(map, _) => Value::Object(map),
        };
        let cost = Cost {
            nodes: self.spent.nodes - frame.start.nodes + 1,
            bytes: self.spent.bytes - frame.start.bytes,
            height: frame.height + 1,
        };
        if frame.anchor != 0 {
            self.anchors.insert(frame.anchor, (value.clone(), cost));
        }
        self.attach(value, cost.height)
    }

    /// A scalar (already spent for) or a closed collection goes into its parent.
    fn push(&mut self, v: Value, anchor: usize, cost: Cost) -> Result<(), FrontmatterError> {
        self.spend(cost)?;
        if anchor != 0 {
            self.anchors.insert(anchor, (v.clone(), cost));
        }
        self.attach(v, cost.height)
    }

    fn alias(&mut self, id: usize) -> Result<(), FrontmatterError> {
        let (v, cost) = self
            .anchors
            .get(&id)
            .cloned()
            .ok_or(FrontmatterError::UnknownAlias)?;
        // The budget is charged before anything is copied.
        self.spend(cost)?;
        self.attach(v, cost.height)
    }

    fn attach(&mut self, v: Value, height: usize) -> Result<(), FrontmatterError> {
        let Some(top) = self.stack.last_mut() else {
            self.root = Some(v);
            return Ok(());
        };
        top.height = top.height.max(height);
        match &mut top.body {
            Body::Seq(items) => items.push(v),
            Body::Map(map, key) => match key.take() {
                None => match v {
                    Value::String(k) => *key = Some(k),
                    other => return Err(FrontmatterError::NonStringKey(other.to_string())),
                },
                Some(k) => {
                    if map.contains_key(&k) {
                        return Err(FrontmatterError::DuplicateKey(k));
                    }
                    map.insert(k, v);
                }
            },
        }
        Ok(())
    }
}

/// The top-level fields in which two frontmatters differ, compared as JSON values
/// (numbers by value, so `1` equals `1.0`; a missing key equals `null`).
pub fn differences(entry: &JsonObject, file: &JsonObject) -> Vec<String> {
    let mut keys: Vec<&String> = entry.keys().chain(file.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| {
            !same(
                entry.get(*k).unwrap_or(&Value::Null),
                file.get(*k).unwrap_or(&Value::Null),
            )
        })
        .cloned()
        .collect()
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => differences(x, y).is_empty(),
        _ => a == b,
    }
}

#[cfg(test)]
#[path = "frontmatter_tests.rs"]
mod tests;
