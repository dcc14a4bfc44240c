//! Tool and prompt arguments, asked field by field from a JSON Schema (`inputSchema`):
//! fields that fit the form subset get the form widgets; anything else is typed as JSON,
//! checked before it is taken.

use super::{Stop, field};
use inquire::Text;
use inquire::validator::Validation;
use serde_json::{Map, Value};
use sterna::types::elicitation::PrimitiveSchema;

/// The properties of an object schema, required ones first, and the required set.
pub(crate) fn properties(schema: &Map<String, Value>) -> Vec<(String, Value, bool)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out: Vec<(String, Value, bool)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.clone(), v.clone(), required.contains(&k.as_str())))
                .collect()
        })
        .unwrap_or_default();
    out.sort_by_key(|(_, _, req)| !req);
    out
}

/// Asks every argument of `schema`. Esc or Ctrl-C abandons the call.
pub(crate) fn ask_all(schema: &Map<String, Value>) -> Result<Map<String, Value>, Stop> {
    let mut args = Map::new();
    for (name, prop, required) in properties(schema) {
        if let Some(v) = ask_one(&name, &prop, required)? {
            args.insert(name, v);
        }
    }
    Ok(args)
}

fn ask_one(name: &str, prop: &Value, required: bool) -> Result<Option<Value>, Stop> {
    if let Ok(f) = serde_json::from_value::<PrimitiveSchema>(prop.clone()) {
        return field::ask(name, &f, required, None);
    }
    let ty = prop
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("any JSON value")
        .to_owned();
    let mut help = format!("{ty}, as JSON");
    if let Some(d) = prop.get("description").and_then(Value::as_str) {
        help = format!("{d} · {help}");
    }
    let label = if required {
        name.to_owned()
    } else {
        format!("{name} (optional)")
    };
    let answer = Text::new(&label)
        .with_help_message(&help)
        .with_validator(move |s: &str| {
            Ok(match serde_json::from_str::<Value>(s) {
                _ if s.is_empty() && !required => Validation::Valid,
                Ok(v) if json_type_ok(&ty, &v) => Validation::Valid,
                Ok(_) => Validation::Invalid(format!("expected {ty}").into()),
                Err(e) => Validation::Invalid(format!("not JSON: {e}").into()),
            })
        })
        .prompt()?;
    Ok((!answer.is_empty()).then(|| serde_json::from_str(&answer).unwrap_or(Value::Null)))
}

fn json_type_ok(ty: &str, v: &Value) -> bool {
    match ty {
        "array" => v.is_array(),
        "object" => v.is_object(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        _ => true,
    }
}

/// `--arg NAME=VALUE`, typed by the property's schema: text for strings, JSON otherwise
/// (falling back to text when it does not parse).
pub(crate) fn typed(schema: Option<&Map<String, Value>>, name: &str, text: &str) -> Value {
    let prop = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(name));
    let is_string = prop.is_some_and(|p| {
        p.get("type").and_then(Value::as_str) == Some("string")
            || p.get("enum")
                .is_some_and(|e| e.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
    });
    if is_string {
        return Value::String(text.to_owned());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}
