//! The MRTR members of a request as it carries them: this round's `inputResponses` and the
//! state of the last round (echoed sealed, or held by the era).

use super::request::RawField;
use crate::state::FlowState;
use serde_json::{Map, Value};
use sterna_types::error::ErrorObject;
use sterna_types::mrtr::kind_of;

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
    /// The state an era kept itself since the last round (its own memory: trusted).
    #[cfg_attr(
        not(feature = "legacy"),
        allow(dead_code, reason = "the 2025 era holds states")
    )]
    Held(Box<FlowState>),
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
/// ignored later (nothing asks for them).
pub(crate) fn input_responses(raw: &RawField<'_>) -> Result<Map<String, Value>, ErrorObject> {
    let RawField::Present(raw) = raw else {
        return Ok(Map::new());
    };
    let v: Value = serde_json::from_str(raw.get())
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid inputResponses: {e}")))?;
    let Value::Object(map) = v else {
        return Err(ErrorObject::invalid_params(format!(
            "inputResponses must be an object mapping question keys to answers, found {}",
            kind_of(&v)
        )));
    };
    if let Some((k, v)) = map.iter().find(|(_, v)| !v.is_object()) {
        return Err(ErrorObject::invalid_params(format!(
            "inputResponses[{k:?}] must be an object (an elicitation, sampling or roots result), found {}",
            kind_of(v)
        )));
    }
    Ok(map)
}
