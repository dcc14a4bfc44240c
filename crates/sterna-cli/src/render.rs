//! Showing results and lists as text (stdout), or as JSON.

use serde::Serialize;
use serde_json::Value;
use sterna::types::content::{ContentBlock, ResourceContents};
use sterna::types::prompts::{GetPromptResult, Prompt};
use sterna::types::resources::{ReadResourceResult, Resource, ResourceTemplate};
use sterna::types::tools::{CallToolResult, Tool};

/// Pretty JSON of anything.
pub(crate) fn json(v: &impl Serialize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("(unprintable: {e})"))
}

fn first_line(s: Option<&String>) -> String {
    s.and_then(|d| d.lines().next())
        .map(|l| format!(" — {l}"))
        .unwrap_or_default()
}

fn contents(c: &ResourceContents) -> String {
    match c {
        ResourceContents::Text(t) => t.text.clone(),
        ResourceContents::Blob(b) => format!(
            "[{} bytes of {} (base64), {}]",
            b.blob.len() * 3 / 4,
            b.mime_type.as_deref().unwrap_or("binary"),
            b.uri
        ),
    }
}

/// One content block as text.
pub(crate) fn block(b: &ContentBlock) -> String {
    match b {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(m) => {
            format!("[image {}, {} bytes]", m.mime_type, m.data.len() * 3 / 4)
        }
        ContentBlock::Audio(m) => {
            format!("[audio {}, {} bytes]", m.mime_type, m.data.len() * 3 / 4)
        }
        ContentBlock::ResourceLink(l) => {
            format!("[link {}{}]", l.uri, first_line(l.description.as_ref()))
        }
        ContentBlock::Resource(r) => contents(&r.resource),
    }
}

/// A tool result: its content, then its structured content.
pub(crate) fn tool_result(r: &CallToolResult) -> String {
    let mut out: Vec<String> = r.content.iter().map(block).collect();
    if let Some(s) = &r.structured_content {
        out.push(format!("structured: {}", json(s)));
    }
    let text = out.join("\n");
    if r.is_error == Some(true) {
        format!("error: {text}")
    } else {
        text
    }
}

/// A prompt's messages.
pub(crate) fn prompt_result(r: &GetPromptResult) -> String {
    let mut out: Vec<String> = r.description.iter().map(|d| format!("# {d}")).collect();
    for m in &r.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        out.push(format!("{role}: {}", block(&m.content)));
    }
    out.join("\n")
}

/// A resource's contents.
pub(crate) fn resource_result(r: &ReadResourceResult) -> String {
    r.contents
        .iter()
        .map(contents)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool list.
pub(crate) fn tools(tools: &[Tool]) -> String {
    tools
        .iter()
        .map(|t| format!("  {}{}", t.name, first_line(t.description.as_ref())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prompt list.
pub(crate) fn prompts(prompts: &[Prompt]) -> String {
    prompts
        .iter()
        .map(|p| format!("  {}{}", p.name, first_line(p.description.as_ref())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The resource list.
pub(crate) fn resources(rs: &[Resource]) -> String {
    rs.iter()
        .map(|r| {
            format!(
                "  {} ({}){}",
                r.uri,
                r.name,
                first_line(r.description.as_ref())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The resource template list.
pub(crate) fn templates(ts: &[ResourceTemplate]) -> String {
    ts.iter()
        .map(|t| {
            format!(
                "  {} ({}){}",
                t.uri_template,
                t.name,
                first_line(t.description.as_ref())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn type_of(p: &Value) -> String {
    if let Some(e) = p.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(|x| x.as_str().map_or(x.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join("|");
    }
    match p.get("type") {
        Some(Value::String(t)) if t == "array" => {
            format!("[{}]", p.get("items").map(type_of).unwrap_or_default())
        }
        Some(Value::String(t)) => t.clone(),
        Some(other) => other.to_string(),
        None => "any".into(),
    }
}

/// A tool in full: description, hints, arguments.
pub(crate) fn describe_tool(t: &Tool) -> String {
    let mut out = vec![format!(
        "tool {}{}",
        t.name,
        t.title
            .as_ref()
            .map(|x| format!(" ({x})"))
            .unwrap_or_default()
    )];
    if let Some(d) = &t.description {
        out.push(format!("  {d}"));
    }
    if let Some(a) = &t.annotations {
        let hints: Vec<&str> = [
            (a.read_only_hint, "read-only"),
            (a.destructive_hint, "destructive"),
            (a.idempotent_hint, "idempotent"),
            (a.open_world_hint, "open world"),
        ]
        .iter()
        .filter(|(h, _)| *h == Some(true))
        .map(|(_, n)| *n)
        .collect();
        if !hints.is_empty() {
            out.push(format!("  hints: {}", hints.join(", ")));
        }
    }
    out.push("  arguments:".into());
    let props = crate::widgets::args::properties(&t.input_schema);
    if props.is_empty() {
        out.push("    (none)".into());
    }
    for (name, p, required) in props {
        let desc = p
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!(" — {d}"))
            .unwrap_or_default();
        let req = if required { "required" } else { "optional" };
        out.push(format!("    {name}: {} ({req}){desc}", type_of(&p)));
    }
    if t.output_schema.is_some() {
        out.push("  returns structured content (outputSchema)".into());
    }
    out.join("\n")
}

/// A prompt in full.
pub(crate) fn describe_prompt(p: &Prompt) -> String {
    let mut out = vec![format!("prompt {}", p.name)];
    if let Some(d) = &p.description {
        out.push(format!("  {d}"));
    }
    for a in p.arguments.iter().flatten() {
        let req = if a.required == Some(true) {
            "required"
        } else {
            "optional"
        };
        out.push(format!(
            "    {} ({req}){}",
            a.name,
            first_line(a.description.as_ref())
        ));
    }
    out.join("\n")
}
