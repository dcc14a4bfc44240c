//! An elicitation form in the terminal: who asks and why, the fields in the server's
//! order, then a review where the user sends, edits, declines or cancels.

use super::{KEYS, Stop, bold, field};
use inquire::Select;
use serde_json::{Map, Value};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

/// Fills `form` in the terminal. Fields already in `given` are not asked (they show in
/// the review and can be edited there).
pub(crate) fn fill(
    server: &str,
    form: &ElicitFormParams,
    given: Map<String, Value>,
) -> ElicitResult {
    eprintln!("\n{} {} asks: {}", bold("?"), bold(server), form.message);
    eprintln!("  ({KEYS})");
    match run(form, given) {
        Ok(content) => ElicitResult::accept(content),
        Err(Stop::Decline) => {
            eprintln!("  → declined");
            ElicitResult::decline()
        }
        Err(Stop::Cancel) => {
            eprintln!("  → cancelled");
            ElicitResult::cancel()
        }
        Err(Stop::Io(e)) => {
            eprintln!("  → cancelled (terminal error: {e})");
            ElicitResult::cancel()
        }
    }
}

fn run(
    form: &ElicitFormParams,
    mut content: Map<String, Value>,
) -> Result<Map<String, Value>, Stop> {
    let schema = &form.requested_schema;
    for (name, f) in &schema.properties {
        if content.contains_key(name) {
            continue;
        }
        let current = default_of(f);
        if let Some(v) = field::ask(
            name,
            f,
            schema.is_required(name),
            current.as_ref(),
            "<declined>",
        )? {
            content.insert(name.clone(), v);
        }
    }
    loop {
        const SEND: &str = "Send";
        const EDIT: &str = "Edit a field";
        const DECLINE: &str = "Decline";
        const CANCEL: &str = "Cancel";
        let summary: Vec<String> = schema
            .properties
            .iter()
            .map(|(k, _)| match content.get(k) {
                Some(v) => format!("{k}={v}"),
                None => format!("{k}=(empty)"),
            })
            .collect();
        let help = format!("{} · {KEYS}", summary.join(", "));
        let choice = Select::new("Send these answers?", vec![SEND, EDIT, DECLINE, CANCEL])
            .with_render_config(
                inquire::ui::RenderConfig::default().with_canceled_prompt_indicator(
                    inquire::ui::Styled::new("<declined>").with_fg(inquire::ui::Color::DarkRed),
                ),
            )
            .with_help_message(&help)
            .prompt()?;
        match choice {
            SEND => return Ok(content),
            DECLINE => return Err(Stop::Decline),
            CANCEL => return Err(Stop::Cancel),
            _ => {
                let names: Vec<&str> = schema.properties.iter().map(|(k, _)| k.as_str()).collect();
                let Ok(pick) = Select::new("Which field?", names).prompt() else {
                    continue;
                };
                let Some(f) = schema.property(pick) else {
                    continue;
                };
                match field::ask(
                    pick,
                    f,
                    schema.is_required(pick),
                    content.get(pick),
                    "<back>",
                ) {
                    Ok(Some(v)) => {
                        content.insert(pick.to_owned(), v);
                    }
                    Ok(None) => {
                        content.remove(pick);
                    }
                    Err(Stop::Io(e)) => return Err(Stop::Io(e)),
                    Err(_) => {}
                }
            }
        }
    }
}

fn default_of(f: &sterna::types::elicitation::PrimitiveSchema) -> Option<Value> {
    use sterna::types::elicitation::PrimitiveSchema as P;
    match f {
        P::String(s) => s.default.clone().map(Value::String),
        P::Number(n) => n
            .default
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        P::Boolean(b) => b.default.map(Value::Bool),
        P::SingleSelect(s) => s.default.clone().map(Value::String),
        P::MultiSelect(m) => m
            .default
            .clone()
            .map(|d| d.into_iter().map(Value::String).collect()),
    }
}
