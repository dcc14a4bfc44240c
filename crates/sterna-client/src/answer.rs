//! One question, one registered handler: how the client answers an elicitation, sampling
//! or roots request, whether it came embedded in an MRTR `input_required` result (2026-07-28)
//! or was pushed as a real request by a 2025-11-25 server. Each era maps [`Unanswered`]
//! to its own wire: a protocol violation that abandons an MRTR call, a JSON-RPC error
//! answering a push.

use super::error::Refusal;
use super::handlers::Handlers;
use serde_json::{Map, Value};
use sterna_types::elicitation::{
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitSchema, NumberKind, PrimitiveSchema,
};
use sterna_types::mrtr::{InputRequest, InputResponse};
use sterna_types::roots::ListRootsResult;

/// Why a question got no answer from the handlers.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// No handler was registered for it, so the client never declared it.
    Undeclared(&'static str),
    /// A sampling or roots handler refused.
    Refused {
        /// `sampling` or `roots`.
        kind: &'static str,
        /// The handler's reason.
        refusal: Refusal,
    },
    /// A method this client does not know.
    Unknown(String),
}

/// Whether the handlers can answer `request` at all (its kind was declared).
pub(crate) fn check_declared(h: &Handlers, request: &InputRequest) -> Result<(), Unanswered> {
    let ok = match request {
        InputRequest::Elicit(ElicitRequestParams::Form(_)) => h.form.is_some(),
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => h.url.is_some(),
        InputRequest::Sample(p) => h.sampling.is_some() && (!p.uses_tools() || h.sampling_tools),
        InputRequest::ListRoots(_) => h.roots.is_some(),
        InputRequest::Unknown { method, .. } => return Err(Unanswered::Unknown(method.clone())),
    };
    if ok {
        Ok(())
    } else {
        Err(Unanswered::Undeclared(kind(request)))
    }
}

/// A short name of the question's kind, for messages.
pub(crate) fn kind(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicit(ElicitRequestParams::Form(_)) => "form elicitation",
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => "URL elicitation",
        InputRequest::Sample(p) if p.uses_tools() => "sampling with tools",
        InputRequest::Sample(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
        InputRequest::Unknown { .. } => "unknown",
    }
}

/// Answers one question with the registered handler. An accepted form is completed with
/// the schema's `default`s for the fields the handler left out.
pub(crate) async fn answer(
    h: &Handlers,
    request: &InputRequest,
) -> Result<InputResponse, Unanswered> {
    check_declared(h, request)?;
    let response = match (request, h) {
        (InputRequest::Elicit(ElicitRequestParams::Form(form)), Handlers { form: Some(f), .. }) => {
            let mut result = f.elicit(form.clone()).await;
            fill_defaults(&form.requested_schema, &mut result);
            InputResponse::Elicit(result)
        }
        (InputRequest::Elicit(ElicitRequestParams::Url(u)), Handlers { url: Some(f), .. }) => {
            InputResponse::Elicit(f.elicit_url(u.clone()).await)
        }
        (
            InputRequest::Sample(p),
            Handlers {
                sampling: Some(f), ..
            },
        ) => InputResponse::Sample(f.sample(p.clone()).await.map_err(|refusal| {
            Unanswered::Refused {
                kind: "sampling",
                refusal,
            }
        })?),
        (InputRequest::ListRoots(_), Handlers { roots: Some(f), .. }) => {
            InputResponse::ListRoots(ListRootsResult {
                roots: f.roots().await.map_err(|refusal| Unanswered::Refused {
                    kind: "roots",
                    refusal,
                })?,
            })
        }
        _ => return Err(Unanswered::Undeclared(kind(request))),
    };
    Ok(response)
}

/// Adds the schema's default for every field an accepted form left out.
pub(crate) fn fill_defaults(schema: &ElicitSchema, result: &mut ElicitResult) {
    if result.action != ElicitAction::Accept {
        return;
    }
    let content = result.content.get_or_insert_with(Map::new);
    for (name, field) in &schema.properties {
        if content.contains_key(name) {
            continue;
        }
        if let Some(v) = default_of(field) {
            content.insert(name.clone(), v);
        }
    }
}

fn default_of(field: &PrimitiveSchema) -> Option<Value> {
    match field {
        PrimitiveSchema::String(s) => s.default.clone().map(Value::String),
        PrimitiveSchema::Number(n) => n.default.map(|d| match n.kind {
            NumberKind::Integer if d.fract() == 0.0 && d.abs() < 9.0e15 => Value::from(d as i64),
            _ => Value::from(d),
        }),
        PrimitiveSchema::Boolean(b) => b.default.map(Value::Bool),
        PrimitiveSchema::SingleSelect(s) => s.default.clone().map(Value::String),
        PrimitiveSchema::MultiSelect(m) => m
            .default
            .clone()
            .map(|v| Value::Array(v.into_iter().map(Value::String).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepted_forms_get_the_defaults_of_omitted_fields() {
        let schema: ElicitSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
                "free": {"type": "string"}
            }
        }))
        .unwrap();
        let mut r = ElicitResult::accept(json!({"name": "Jane"}).as_object().unwrap().clone());
        fill_defaults(&schema, &mut r);
        assert_eq!(
            Value::Object(r.content.unwrap()),
            json!({"name": "Jane", "age": 30, "score": 95.5, "status": "active", "verified": true, "tags": ["a"]})
        );
        let mut declined = ElicitResult::decline();
        fill_defaults(&schema, &mut declined);
        assert!(declined.content.is_none());
        // `30` stays an integer on the wire.
        let mut empty = ElicitResult {
            action: ElicitAction::Accept,
            content: None,
        };
        fill_defaults(&schema, &mut empty);
        assert!(empty.content.unwrap()["age"].is_i64());
    }
}
