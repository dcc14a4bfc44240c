//! The MRTR members of a request as it carries them: this round's `inputResponses` and the
//! state of the last round (echoed sealed, or held by the era).

use super::request::RawField;
pub(crate) use crate::mrtr::Answers;
use crate::state::FlowState;
use serde_json::value::RawValue;
use sterna_types::error::ErrorObject;

/// The MRTR members of a request: this round's answers and the state of the last round.
pub(crate) struct FlowParams<'a> {
    pub(crate) input_responses: RawField<'a>,
    pub(crate) state: Option<StateIn>,
    /// Hand the next state back ([`Continuation::Held`]) instead of sealing it.
    pub(crate) hold: bool,
}

/// The state of the last round, as it comes back.
pub(crate) enum StateIn {
    /// The `requestState` a client echoed (verified before use).
    Sealed(String),
    /// The state an era kept itself since the last round (its own memory: trusted), and
    /// the answers it gathered to that round's questions.
    #[cfg_attr(
        not(feature = "legacy"),
        allow(dead_code, reason = "the 2025 era holds states")
    )]
    Held(Box<Held>),
}

/// What an era holds between two rounds of a request.
pub(crate) struct Held {
    pub(crate) flow: FlowState,
    /// The answers to the last round's questions (each the client's, as it wrote it:
    /// checked like any `inputResponses`).
    pub(crate) answers: Answers,
}

impl<'a> FlowParams<'a> {
    /// The members of a 2026-07-28 request: its answers and its echoed `requestState`.
    pub(crate) fn sealed(input_responses: RawField<'a>, request_state: Option<String>) -> Self {
        Self {
            input_responses,
            state: request_state.map(StateIn::Sealed),
            hold: false,
        }
    }

    /// A retry: the request carried answers or a state (its result is never cached).
    pub(crate) fn is_retry(&self) -> bool {
        self.state.is_some() || matches!(self.input_responses, RawField::Present(_))
    }
}

/// Checks that `inputResponses` is a map of objects. Unknown keys are kept here and
/// ignored later (nothing asks for them); a key given twice counts once, the last.
pub(crate) fn input_responses(raw: &RawField<'_>) -> Result<Answers, ErrorObject> {
    let RawField::Present(raw) = raw else {
        return Ok(Answers::new());
    };
    if !raw.get().starts_with('{') {
        return Err(ErrorObject::invalid_params(format!(
            "inputResponses must be an object mapping question keys to answers, found {}",
            kind(raw)
        )));
    }
    let map: Answers = serde_json::from_str(raw.get())
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid inputResponses: {e}")))?;
    objects_only(map)
}

/// `answers`, when every one is an object.
pub(crate) fn objects_only(answers: Answers) -> Result<Answers, ErrorObject> {
    if let Some((k, v)) = answers.iter().find(|(_, v)| !v.get().starts_with('{')) {
        return Err(ErrorObject::invalid_params(format!(
            "inputResponses[{k:?}] must be an object (an elicitation, sampling or roots result), found {}",
            kind(v)
        )));
    }
    Ok(answers)
}

/// What a JSON value is, told by its first token (a raw value starts at it), so that a
/// value of any depth is named without being parsed.
fn kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<Answers, String> {
        let raw = RawValue::from_string(json.to_owned()).unwrap();
        input_responses(&RawField::Present(&raw)).map_err(|e| e.message)
    }

    #[test]
    fn answers_are_kept_as_the_objects_the_client_sent() {
        let a =
            read("{ \"pick\" :\n { \"action\": \"accept\", \"content\": {\"n\": 1} } }").unwrap();
        assert_eq!(
            a["pick"].get(),
            "{ \"action\": \"accept\", \"content\": {\"n\": 1} }"
        );
        let twice = read(r#"{"k": {"n": 1}, "k": {"n": 2}}"#).unwrap();
        assert_eq!(
            (twice.len(), twice["k"].get()),
            (1, r#"{"n": 2}"#),
            "the last counts"
        );
        assert!(input_responses(&RawField::Absent).unwrap().is_empty());
    }

    #[test]
    fn what_is_not_a_map_of_objects_is_refused_saying_what_it_is() {
        let e = read(r#"{"k": {"action": "accept"}, "x": [1]}"#).unwrap_err();
        assert!(
            e.contains(r#"inputResponses["x"]"#) && e.contains("found an array"),
            "{e}"
        );
        for (json, found) in [(r#"{"k": "yes"}"#, "a string"), (r#"{"k": null}"#, "null")] {
            let e = read(json).unwrap_err();
            assert!(e.ends_with(found), "{json}: {e}");
        }
        let deep = format!("{{\"k\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        let e = read(&deep).unwrap_err();
        assert!(e.ends_with("found an array"), "{e}");
        let e = read(r#"{"k": -1.5e3}"#).unwrap_err();
        assert!(e.ends_with("found a number"), "{e}");
        let e = read("[1, 2]").unwrap_err();
        assert!(
            e.contains("must be an object") && e.ends_with("found an array"),
            "{e}"
        );
        let e = read(r#"{"k": {"n": 1e999}}"#);
        assert!(
            e.is_ok(),
            "an answer's content is read by its question, not here"
        );
    }
}
