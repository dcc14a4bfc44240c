//! Tool and prompt arguments, asked field by field from a JSON Schema (`inputSchema`):
//! fields that fit the form subset get the form widgets; anything else is typed as JSON,
//! checked before it is taken. Nullable fields (`Option<T>`: `"type": ["integer",
//! "null"]`, or `anyOf` with `{"type": "null"}`) are asked as optional fields of their type.

use super::{Stop, field};
use crate::check::parse_text;
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

/// A property without its `null` alternative, and whether it had one: `{"type":
/// ["integer", "null"]}` → (`{"type": "integer"}`, true); `{"anyOf": [X, {"type":
/// "null"}]}` → (X with the outer title, description and default, true).
pub(crate) fn without_null(prop: &Value) -> (Value, bool) {
    let mut p = prop.clone();
    let Some(obj) = p.as_object_mut() else {
        return (p, false);
    };
    if let Some(Value::Array(types)) = obj.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if rest.len() == types.len() {
            return (p, false);
        }
        let ty = match rest.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(rest),
        };
        obj.insert("type".into(), ty);
        if let Some(Value::Array(e)) = obj.get_mut("enum") {
            e.retain(|x| !x.is_null());
        }
        return (p, true);
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = obj.get(key) else {
            continue;
        };
        let is_null = |a: &Value| a.get("type") == Some(&Value::String("null".into()));
        let rest: Vec<&Value> = alts.iter().filter(|a| !is_null(a)).collect();
        if let [one] = rest.as_slice()
            && rest.len() < alts.len()
        {
            let mut inner = (*one).clone();
            if let Some(io) = inner.as_object_mut() {
                for k in ["title", "description", "default"] {
                    if let Some(v) = obj.get(k).filter(|v| !v.is_null()) {
                        io.entry(k).or_insert(v.clone());
                    }
                }
            }
            return (inner, true);
        }
    }
    (p, false)
}

/// Asks every argument of `schema`. Esc or Ctrl-C abandons the call.
pub(crate) fn ask_all(schema: &Map<String, Value>) -> Result<Map<String, Value>, Stop> {
    let mut args = Map::new();
    for (name, prop, required) in properties(schema) {
        let (prop, nullable) = without_null(&prop);
        if let Some(v) = ask_one(&name, &prop, required && !nullable)? {
            args.insert(name, v);
        }
    }
    Ok(args)
}

fn ask_one(name: &str, prop: &Value, required: bool) -> Result<Option<Value>, Stop> {
    if let Ok(f) = serde_json::from_value::<PrimitiveSchema>(prop.clone()) {
        return field::ask(name, &f, required, None, "<abandoned>");
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

/// `--arg NAME=VALUE`, typed and checked by the property's schema: text for strings,
/// numbers, yes/no, enum values, JSON for arrays and objects, `null` for a nullable one.
/// A value that does not fit is refused with the reason (a usage error, before anything
/// is sent). A property the schema does not describe takes JSON, else text.
pub(crate) fn typed(
    schema: Option<&Map<String, Value>>,
    name: &str,
    text: &str,
) -> Result<Value, String> {
    let Some(prop) = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(name))
    else {
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())));
    };
    let (prop, nullable) = without_null(prop);
    if nullable && text.trim() == "null" {
        return Ok(Value::Null);
    }
    if let Ok(f) = serde_json::from_value::<PrimitiveSchema>(prop.clone()) {
        return parse_text(&f, text);
    }
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
    let v = match ty {
        "string" => Value::String(text.to_owned()),
        "" => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
        _ => serde_json::from_str(text).map_err(|_| format!("{text:?} is not {}", a(ty)))?,
    };
    if !json_type_ok(ty, &v) {
        return Err(format!("{text:?} is not {}", a(ty)));
    }
    if let Some(options) = prop.get("enum").and_then(Value::as_array)
        && !options.contains(&v)
    {
        let names: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(format!("{text:?} is not one of: {}", names.join(", ")));
    }
    Ok(v)
}

fn a(ty: &str) -> String {
    match ty {
        "integer" => "a whole number".into(),
        "array" | "object" => format!("a JSON {ty}"),
        other => format!("a {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        json!({"type": "object", "properties": {
            "steps": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
            "mode": {"anyOf": [{"type": "string", "enum": ["fast", "safe"]}, {"type": "null"}],
                     "description": "How"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string"}}})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn nullable_arguments_are_typed() {
        let s = schema();
        assert_eq!(typed(Some(&s), "steps", "8").unwrap(), json!(8));
        assert_eq!(typed(Some(&s), "steps", "null").unwrap(), Value::Null);
        assert!(
            typed(Some(&s), "steps", "many")
                .unwrap_err()
                .contains("whole number")
        );
        assert!(typed(Some(&s), "steps", "\"fast\"").is_err());
        assert_eq!(typed(Some(&s), "mode", "safe").unwrap(), json!("safe"));
        assert!(
            typed(Some(&s), "mode", "slow")
                .unwrap_err()
                .contains("not one of")
        );
        assert_eq!(typed(Some(&s), "tags", r#"["a"]"#).unwrap(), json!(["a"]));
        assert!(typed(Some(&s), "tags", "a").is_err());
        assert_eq!(typed(Some(&s), "name", "42").unwrap(), json!("42"));
        assert_eq!(typed(Some(&s), "other", "42").unwrap(), json!(42));
        let (mode, nullable) = without_null(&s["properties"]["mode"]);
        assert!(nullable);
        assert_eq!(mode["description"], "How");
    }
}
