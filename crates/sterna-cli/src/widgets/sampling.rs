//! Sampling (a deprecated feature): answered by a configured command, or typed by the
//! user after seeing the request; refused otherwise.

use super::{Stop, bold};
use inquire::{Select, Text};
use serde_json::json;
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// A result made of the text the user or a command produced.
pub(crate) fn text_result(text: &str, model: &str) -> CreateMessageResult {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": "endTurn"
    }))
    .expect("a text sampling result decodes")
}

/// Shows the request and lets the user type the reply, or refuse (`None`).
pub(crate) fn ask(
    server: &str,
    req: &CreateMessageRequestParams,
) -> Result<Option<CreateMessageResult>, Stop> {
    eprintln!(
        "\n{} {} asks for an LLM completion (up to {} tokens):",
        bold("?"),
        bold(server),
        req.max_tokens
    );
    if let Some(s) = &req.system_prompt {
        eprintln!("  system: {s}");
    }
    for m in &req.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        eprintln!("  {role}: {}", m.content.text());
    }
    let choice = Select::new("Answer it?", vec!["Type the reply", "Refuse"])
        .with_help_message("Esc or Refuse abandons the call")
        .prompt()?;
    if choice == "Refuse" {
        return Ok(None);
    }
    let reply = Text::new("Reply:").prompt()?;
    Ok(Some(text_result(&reply, "human (sterna)")))
}
