//! Target `form`: `inputResponses` content validated against a requested form schema.
//!
//! The input is JSON. `{"schema": <ElicitSchema>, "content": {…}}` checks the content
//! against that schema; anything else is checked as content against the schema derived
//! from the fuzz fixture's `Booking` form. Invariants: no panic; what passes keeps only
//! the schema's fields, unchanged, without nulls, every required one present, each
//! within its declared bounds and options; and for the derived schema, what passes
//! decodes into `Booking` (else a valid answer would be asked again forever).

use super::server::Booking;
use crate::mrtr::check::validate;
use crate::mrtr::form::form_schema;
use serde_json::{Map, Value};
use sterna_types::elicitation::{ElicitSchema, NumberKind, PrimitiveSchema};

/// The declared bounds and options of one field, checked independently of `validate`.
fn within(field: &PrimitiveSchema, v: &Value) -> bool {
    match field {
        PrimitiveSchema::String(s) => v.as_str().is_some_and(|t| {
            let n = t.chars().count() as u64;
            s.min_length.is_none_or(|m| n >= m) && s.max_length.is_none_or(|m| n <= m)
        }),
        PrimitiveSchema::Number(s) => v.as_f64().is_some_and(|x| {
            let integral =
                s.kind == NumberKind::Number || v.is_i64() || v.is_u64() || x.fract() == 0.0;
            integral && s.minimum.is_none_or(|m| x >= m) && s.maximum.is_none_or(|m| x <= m)
        }),
        PrimitiveSchema::Boolean(_) => v.is_boolean(),
        PrimitiveSchema::SingleSelect(s) => v.as_str().is_some_and(|t| s.options.contains(t)),
        PrimitiveSchema::MultiSelect(s) => v.as_array().is_some_and(|a| {
            let n = a.len() as u64;
            a.iter()
                .all(|x| x.as_str().is_some_and(|t| s.options.contains(t)))
                && s.min_items.is_none_or(|m| n >= m)
                && s.max_items.is_none_or(|m| n <= m)
        }),
    }
}

fn check(schema: &ElicitSchema, content: &Map<String, Value>) -> Option<Map<String, Value>> {
    let out = validate(schema, content).ok()?;
    for (name, v) in &out {
        let field = schema.properties.iter().find(|(n, _)| n == name);
        let (_, field) = field.expect("only the schema's fields pass");
        assert!(!v.is_null(), "`{name}` passed as null");
        assert!(within(field, v), "`{name}` = {v} passed out of bounds");
        let given = content.get(name).expect("passed fields were given");
        assert_eq!(
            given.as_f64().map_or(given.clone(), |_| v.clone()),
            *v,
            "`{name}` changed"
        );
    }
    for (name, _) in &schema.properties {
        if schema.is_required(name) {
            assert!(out.contains_key(name), "required `{name}` missing");
        }
    }
    Some(out)
}

pub(crate) fn run(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let (Some(s), Some(Value::Object(content))) = (v.get("schema"), v.get("content"))
        && let Ok(schema) = serde_json::from_value::<ElicitSchema>(s.clone())
    {
        check(&schema, content);
        return;
    }
    let Value::Object(content) = v else {
        return;
    };
    let spec = form_schema::<Booking>().expect("the fixture form is flat");
    if let Some(out) = check(&spec.schema, &content)
        && let Err(e) = serde_json::from_value::<Booking>(Value::Object(out.clone()))
    {
        panic!(
            "{} passed validation but does not decode: {e}",
            Value::Object(out)
        );
    }
}
