//! A question as a round hands it on: a request built by the handler, or a form whose
//! schema stays shared with its type's cached [`FormSpec`] (never copied per request).
//! Both eras write it straight from here: 2026-07-28 into `inputRequests`, 2025-11-25 as
//! the params of a pushed `elicitation/create`.

#![cfg_attr(
    not(all(feature = "legacy", feature = "tasks")),
    allow(
        dead_code,
        reason = "the wings that push questions or park them compiled out"
    )
)]

use super::form::FormSpec;
use crate::state::digest::question_digest;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use std::sync::Arc;
use sterna_types::elicitation::{ElicitFormParams, ElicitRequestParams, ElicitSchema, FormMode};
use sterna_types::mrtr::{ELICITATION_CREATE, InputRequest};

/// One open question.
#[derive(Debug)]
pub(crate) enum Inquiry {
    /// Built by the handler (URL, sampling, roots, or a low-level request).
    Built(Box<InputRequest>),
    /// A form from a Rust type.
    Form {
        message: String,
        schema: Arc<FormSpec>,
    },
}

/// The params of a form question, borrowed: written exactly as [`ElicitFormParams`]
/// writes them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FormView<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<FormMode>,
    pub(crate) message: &'a str,
    pub(crate) requested_schema: SchemaView<'a>,
}

/// A form's schema: as its type's [`FormSpec`] wrote it once, or typed (a form the
/// handler built). Only ever written as JSON.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(crate) enum SchemaView<'a> {
    Written(&'a RawValue),
    Typed(&'a ElicitSchema),
}

impl<'a> FormView<'a> {
    fn shared(message: &'a str, spec: &'a FormSpec, with_mode: bool) -> Self {
        Self {
            mode: with_mode.then_some(FormMode::Form),
            message,
            requested_schema: SchemaView::Written(&spec.json),
        }
    }

    /// The params of `form`, with or without `"mode": "form"`.
    pub(crate) fn of(form: &'a ElicitFormParams, with_mode: bool) -> Self {
        Self {
            mode: with_mode.then_some(FormMode::Form),
            message: &form.message,
            requested_schema: SchemaView::Typed(&form.requested_schema),
        }
    }
}

impl Inquiry {
    /// The JSON-RPC method the question is (`elicitation/create` for a form).
    pub(crate) fn method(&self) -> &str {
        match self {
            Self::Built(r) => r.method(),
            Self::Form { .. } => ELICITATION_CREATE,
        }
    }

    /// The digest that pins answers to this question. Forms digest their message and
    /// their schema's digest (computed once per type), not the whole schema.
    pub(crate) fn digest(&self) -> [u8; 8] {
        match self {
            Self::Built(r) => question_digest(&serde_json::to_vec(r).expect("questions serialize")),
            Self::Form { message, schema } => {
                use sha2::{Digest, Sha256};
                let d = Sha256::new()
                    .chain_update(b"sterna/form\0")
                    .chain_update(message.as_bytes())
                    .chain_update(b"\0")
                    .chain_update(schema.digest)
                    .finalize();
                let mut out = [0u8; 8];
                out.copy_from_slice(&d[..8]);
                out
            }
        }
    }

    /// The form's params (`with_mode`: whether `"mode": "form"` is written), if it is a
    /// form, built here or by the handler.
    pub(crate) fn form(&self, with_mode: bool) -> Option<FormView<'_>> {
        match self {
            Self::Form { message, schema } => Some(FormView::shared(message, schema, with_mode)),
            Self::Built(r) => match &**r {
                InputRequest::Elicit(ElicitRequestParams::Form(f)) => {
                    Some(FormView::of(f, with_mode && f.mode.is_some()))
                }
                _ => None,
            },
        }
    }

    /// The request as its own value (a form's schema copied out of the cache).
    pub(crate) fn build(self) -> InputRequest {
        match self {
            Self::Built(r) => *r,
            Self::Form { message, schema } => {
                InputRequest::Elicit(ElicitRequestParams::Form(ElicitFormParams {
                    mode: Some(FormMode::Form),
                    message,
                    requested_schema: schema.schema.clone(),
                }))
            }
        }
    }

    pub(crate) fn is_form(&self) -> bool {
        matches!(self, Self::Form { .. })
    }
}

/// Written exactly as the [`InputRequest`] it stands for.
impl Serialize for Inquiry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Built(r) => r.serialize(s),
            Self::Form { message, schema } => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("method", ELICITATION_CREATE)?;
                m.serialize_entry("params", &FormView::shared(message, schema, true))?;
                m.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FormView, Inquiry};
    use crate::mrtr::form::form_schema;
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only its schema is used")]
    struct Pick {
        /// The region.
        region: Region,
        replicas: Option<u8>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    enum Region {
        EuWest1,
        UsEast1,
    }

    fn pick() -> Inquiry {
        Inquiry::Form {
            message: "Where \"should\" it live?".into(),
            schema: form_schema::<Pick>().expect("a flat form"),
        }
    }

    #[test]
    fn a_shared_form_is_written_as_the_request_it_stands_for() {
        let written = serde_json::to_string(&pick()).unwrap();
        let built = serde_json::to_string(&pick().build()).unwrap();
        assert_eq!(written, built);
        assert!(written.contains(r#""mode":"form""#), "{written}");
        assert_eq!(pick().digest(), pick().digest());
    }

    #[test]
    fn a_form_without_mode_drops_only_the_mode() {
        let with = serde_json::to_value(pick().form(true)).unwrap();
        let mut without = serde_json::to_value(pick().form(false)).unwrap();
        assert_eq!(without.get("mode"), None);
        without["mode"] = "form".into();
        assert_eq!(with, without);
    }

    #[test]
    fn a_built_form_keeps_its_own_mode_and_other_questions_have_no_form() {
        let built = Inquiry::Built(Box::new(pick().build()));
        let view: Option<FormView<'_>> = built.form(true);
        assert!(view.is_some_and(|v| v.mode.is_some()));
        let roots = Inquiry::Built(Box::new(sterna_types::mrtr::InputRequest::ListRoots(None)));
        assert!(roots.form(true).is_none());
        assert_eq!(roots.method(), "roots/list");
        assert_eq!(
            serde_json::to_string(&roots).unwrap(),
            r#"{"method":"roots/list"}"#
        );
    }
}
