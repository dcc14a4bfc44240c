//! The per-request resolver: matches questions with answers and collects what is missing.

use super::inquiry::Inquiry;
use crate::fast_map::FastMap;
use crate::state::{Carried, FlowState};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;
use sterna_types::mrtr::InputRequest;

/// This round's answers by question key, each the JSON object the client sent, kept as
/// its text: each is read once, into the type of the question it answers.
pub(crate) type Answers = std::collections::BTreeMap<String, Box<RawValue>>;

/// The marker returned when an answer is not there yet.
///
/// `ctx.ask(..).await?` returns it through `?`; the SDK then ends the request with an
/// `input_required` result listing every question still open. It converts into
/// [`HandlerError`](crate::HandlerError); give your own error type a `From<NeedsInput>` if
/// you use one.
pub struct NeedsInput {
    _private: (),
}

impl NeedsInput {
    pub(crate) fn new() -> Self {
        Self { _private: () }
    }
}

impl fmt::Debug for NeedsInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NeedsInput")
    }
}

impl From<NeedsInput> for crate::HandlerError {
    fn from(_: NeedsInput) -> Self {
        Self(crate::error::Repr::NeedsInput)
    }
}

impl fmt::Display for NeedsInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the client has not answered yet")
    }
}

/// Matches questions with this round's answers and the answers carried in the state.
///
/// Created by the SDK for each `tools/call`, `prompts/get` and `resources/read`; handler
/// code reaches it through [`Context::ask`](crate::Context::ask) and the declarative
/// [`ask`](crate::server::Tool::ask) plans, never directly.
pub struct Resolver {
    meta: Arc<RequestMeta>,
    fresh: Answers,
    asked: Vec<(String, [u8; 8])>,
    carried: Vec<Carried>,
    new_answers: Vec<Carried>,
    used: FastMap<String, [u8; 8]>,
    pending: Vec<(String, Inquiry, [u8; 8])>,
    missing_caps: Option<Value>,
    fatal: Option<ErrorObject>,
    unsolicited: bool,
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("fresh", &self.fresh.keys().collect::<Vec<_>>())
            .field("carried", &self.carried.len())
            .field(
                "pending",
                &self.pending.iter().map(|p| &p.0).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// One question, as seen by the resolver.
pub(crate) struct Spec {
    pub(crate) key: Option<String>,
    pub(crate) default_key: String,
    pub(crate) request: Inquiry,
}

impl Resolver {
    /// `unsolicited`: accept answers to questions this flow's verified state does not show
    /// as asked (the tool opted in with `accept_unsolicited_answers`). Otherwise an answer
    /// counts only when the previous round asked exactly that question under that key.
    pub(crate) fn new(
        meta: Arc<RequestMeta>,
        fresh: Answers,
        state: Option<&FlowState>,
        unsolicited: bool,
    ) -> Self {
        let (asked, carried) = match state {
            Some(s) => (s.asked.clone(), s.answers.clone()),
            None => (Vec::new(), Vec::new()),
        };
        Self {
            meta,
            fresh,
            asked,
            carried,
            new_answers: Vec::new(),
            used: FastMap::default(),
            pending: Vec::new(),
            missing_caps: None,
            fatal: None,
            unsolicited,
        }
    }

    /// Whether a fresh answer under `key` answers a question this server asked in this
    /// flow (`digest` pins the exact question; `None` for the low-level path, which reads
    /// raw answers by key).
    fn solicited(&self, key: &str, digest: Option<[u8; 8]>) -> bool {
        self.unsolicited
            || self
                .asked
                .iter()
                .any(|(k, d)| k == key && digest.is_none_or(|digest| *d == digest))
    }

    /// This round's raw answer under `key`, if the previous round asked under that key.
    pub(crate) fn fresh_answer(&self, key: &str) -> Option<sterna_types::mrtr::InputResponse> {
        if !self.solicited(key, None) {
            return None;
        }
        let raw = self.fresh.get(key)?;
        serde_json::from_str(raw.get())
            .ok()
            .map(sterna_types::mrtr::InputResponse::from_object)
    }

    /// Resolves one question. `Ok(None)` means "skipped": the client cannot answer this
    /// kind and the question is optional.
    pub(crate) fn resolve<A>(
        &mut self,
        q: Spec,
        optional: bool,
        decode: impl Fn(&RawValue) -> Option<A>,
    ) -> Result<Option<A>, NeedsInput> {
        let digest = q.request.digest();
        let key = match q.key {
            Some(k) => {
                if self.used.get(&k).is_some_and(|d| *d != digest) {
                    self.fail(
                        ErrorObject::internal("Internal error"),
                        format_args!(
                            "the key {k:?} was used for two different questions in one request"
                        ),
                    );
                    return Err(NeedsInput::new());
                }
                k
            }
            None => self.default_key(q.default_key, digest),
        };
        self.used.insert(key.clone(), digest);

        let gap = if q.request.is_form() {
            (!self.meta.client_capabilities.elicitation_form()).then(|| json!({"elicitation": {}}))
        } else if let Inquiry::Built(r) = &q.request {
            self.capability_gap(r)
        } else {
            None
        };
        if let Some(needed) = gap {
            if optional {
                return Ok(None);
            }
            merge(self.missing_caps.get_or_insert_with(|| json!({})), needed);
            return Err(NeedsInput::new());
        }

        if let Some(v) = self.fresh.get(&key) {
            // Unsolicited (no state, another key, a question that changed) is ignored
            // and the question asked.
            if let Some(a) = self
                .solicited(&key, Some(digest))
                .then(|| decode(v))
                .flatten()
            {
                let json = v.get().as_bytes().to_vec();
                self.new_answers.retain(|c| c.key != key);
                self.new_answers.push(Carried {
                    key,
                    question: digest,
                    json,
                });
                return Ok(Some(a));
            }
        }
        let carried = self
            .carried
            .iter()
            .find(|c| c.key == key && c.question == digest)
            .and_then(|c| serde_json::from_slice::<&RawValue>(&c.json).ok())
            .and_then(&decode);
        if let Some(a) = carried {
            return Ok(Some(a));
        }
        if !self.pending.iter().any(|p| p.0 == key) {
            self.pending.push((key, q.request, digest));
        }
        Err(NeedsInput::new())
    }

    /// `base`, or `base_2`, `base_3`… when another question of this request holds it.
    fn default_key(&self, base: String, digest: [u8; 8]) -> String {
        let free = |key: &str| self.used.get(key).is_none_or(|d| *d == digest);
        if free(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}_{n}"))
            .find(|key| free(key))
            .expect("one of endless keys is free")
    }

    fn capability_gap(&mut self, r: &InputRequest) -> Option<Value> {
        use sterna_types::elicitation::ElicitRequestParams;
        let c = &self.meta.client_capabilities;
        match r {
            InputRequest::Elicit(ElicitRequestParams::Form(_)) => {
                (!c.elicitation_form()).then(|| json!({"elicitation": {}}))
            }
            InputRequest::Elicit(ElicitRequestParams::Url(_)) => {
                (!c.elicitation_url()).then(|| json!({"elicitation": {"url": {}}}))
            }
            InputRequest::Sample(p) => {
                if !c.sampling() {
                    Some(json!({"sampling": {}}))
                } else if p.uses_tools() && !c.sampling_tools() {
                    Some(json!({"sampling": {"tools": {}}}))
                } else {
                    None
                }
            }
            InputRequest::ListRoots(_) => (!c.roots()).then(|| json!({"roots": {}})),
            InputRequest::Unknown { method, .. } => {
                let m = method.clone();
                self.fail(
                    ErrorObject::internal("Internal error"),
                    format_args!("a handler asked an unknown kind of question: {m}"),
                );
                None
            }
        }
    }

    pub(crate) fn fail(&mut self, error: ErrorObject, log: fmt::Arguments<'_>) {
        tracing::error!("{log}");
        self.fatal.get_or_insert(error);
    }

    /// Takes what the round ended with.
    pub(crate) fn finish(self) -> Finished {
        let fatal = self.fatal.or_else(|| {
            self.missing_caps.map(|caps| {
                let names: Vec<&str> = caps
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let msg = format!(
                    "This request needs client capabilities it did not declare: {}",
                    names.join(", ")
                );
                ErrorObject::missing_capability(msg, caps.clone())
            })
        });
        let mut answers = self.carried;
        answers.retain(|c| !self.new_answers.iter().any(|n| n.key == c.key));
        answers.extend(self.new_answers);
        // Answers to questions the previous round asked that this run did not reach (an
        // earlier question was asked again) are kept for a later round, still pinned to
        // the question they answer; they are validated when that question is resolved.
        for (key, digest) in &self.asked {
            if answers.iter().any(|c| c.key == *key) {
                continue;
            }
            if let Some(v) = self.fresh.get(key) {
                answers.push(Carried {
                    key: key.clone(),
                    question: *digest,
                    json: serde_json::to_vec(v).expect("values serialize"),
                });
            }
        }
        Finished {
            fatal,
            pending: self.pending,
            answers,
        }
    }

    /// Gates a question a handler built itself (low-level path): all are required.
    pub(crate) fn gate_raw(&mut self, r: &InputRequest) -> bool {
        match self.capability_gap(r) {
            Some(needed) => {
                merge(self.missing_caps.get_or_insert_with(|| json!({})), needed);
                false
            }
            None => true,
        }
    }
}

/// The end of a round.
pub(crate) struct Finished {
    pub(crate) fatal: Option<ErrorObject>,
    pub(crate) pending: Vec<(String, Inquiry, [u8; 8])>,
    pub(crate) answers: Vec<Carried>,
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert_with(|| json!({})), v);
            }
        }
        (slot, v) => *slot = v,
    }
}
