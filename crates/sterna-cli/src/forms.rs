//! Filling elicitation forms in the terminal, or from values given on the command line.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult, PrimitiveSchema};

fn choices(field: &PrimitiveSchema) -> Vec<String> {
    match field {
        PrimitiveSchema::SingleSelect(s) => {
            s.options.values().into_iter().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    }
}

/// Fills a form field by field: from a preset, from the terminal, or (not interactive)
/// from the field's default or first option.
pub(crate) fn fill(
    form: &ElicitFormParams,
    presets: &HashMap<String, String>,
) -> Result<ElicitResult, String> {
    println!("  ? {}", form.message);
    let interactive = std::io::stdin().is_terminal();
    let mut content = Map::new();
    for (name, field) in &form.requested_schema.properties {
        let options = choices(field);
        let shown = if options.is_empty() {
            String::new()
        } else {
            format!(" [{}]", options.join(", "))
        };
        let answer = if let Some(v) = presets.get(name) {
            println!("    {name}{shown} → {v} (given)");
            v.clone()
        } else if interactive {
            loop {
                print!("    {name}{shown}: ");
                std::io::stdout().flush().map_err(|e| e.to_string())?;
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())?;
                let v = line.trim().to_owned();
                if v.is_empty() && !form.requested_schema.is_required(name) {
                    break String::new();
                }
                if options.is_empty() || options.contains(&v) {
                    break v;
                }
                println!("    please type one of: {}", options.join(", "));
            }
        } else {
            let v = options.first().cloned().unwrap_or_default();
            println!("    {name}{shown} → {v} (not a terminal: first option)");
            v
        };
        if answer.is_empty() {
            continue;
        }
        let value = match field {
            PrimitiveSchema::Boolean(_) => {
                Value::Bool(matches!(answer.as_str(), "y" | "yes" | "true"))
            }
            PrimitiveSchema::Number(_) => answer
                .parse::<f64>()
                .map(|n| json!(n))
                .unwrap_or(Value::String(answer)),
            _ => Value::String(answer),
        };
        content.insert(name.clone(), value);
    }
    Ok(ElicitResult::accept(content))
}
