//! Answering a round's questions, one at a time: from what was given on the command line,
//! else with a widget in the terminal, else (not a terminal) failing with the name of
//! the question — never a silent default.

use crate::answers::{Answers, Given, Verdict};
use crate::check::{coerce, parse_text};
use crate::exit::{CliError, Unanswered};
use crate::ui::Ui;
use crate::widgets;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use sterna::client::{ClientError, ProtocolViolation};
use sterna::types::elicitation::{ElicitFormParams, ElicitRequestParams, ElicitResult};
use sterna::types::mrtr::{InputRequest, InputRequests, InputResponse, InputResponses};
use sterna::types::roots::{ListRootsResult, Root};
use sterna::types::sampling::CreateMessageRequestParams;

/// Answers questions. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Answerer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    ui: Ui,
    answers: Answers,
    sampling_cmd: Option<String>,
    roots: Vec<Root>,
    server: Mutex<String>,
}

impl Answerer {
    /// An answerer for the server called `server` (shown with every question).
    pub(crate) fn new(
        ui: Ui,
        answers: Answers,
        sampling_cmd: Option<String>,
        roots: Vec<Root>,
        server: String,
    ) -> Self {
        let inner = Inner {
            ui,
            answers,
            sampling_cmd,
            roots,
            server: Mutex::new(server),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Whether sampling can be answered (a command, or a user at the terminal).
    pub(crate) fn can_sample(&self) -> bool {
        self.inner.sampling_cmd.is_some() || self.inner.ui.interactive()
    }

    /// The roots exposed.
    pub(crate) fn roots(&self) -> Vec<Root> {
        self.inner.roots.clone()
    }

    /// Names the server (from its `serverInfo`).
    pub(crate) fn set_server(&self, name: String) {
        *self.inner.server.lock().unwrap_or_else(|p| p.into_inner()) = name;
    }

    fn server(&self) -> String {
        self.inner
            .server
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Answers every question of a round, in key order.
    pub(crate) async fn round(&self, requests: &InputRequests) -> Result<InputResponses, CliError> {
        let mut out = InputResponses::new();
        for (key, request) in requests {
            out.insert(key.clone(), self.answer(key, request).await?);
        }
        Ok(out)
    }

    /// Answers one question.
    pub(crate) async fn answer(
        &self,
        key: &str,
        request: &InputRequest,
    ) -> Result<InputResponse, CliError> {
        Ok(match request {
            InputRequest::Elicit(ElicitRequestParams::Form(f)) => {
                InputResponse::Elicit(self.form(key, f).await?)
            }
            InputRequest::Elicit(ElicitRequestParams::Url(u)) => {
                InputResponse::Elicit(match self.inner.answers.verdict(key) {
                    Some(v) => verdict(v),
                    None if self.inner.ui.interactive() => {
                        let (server, u) = (self.server(), u.clone());
                        self.inner
                            .ui
                            .exclusive(move || widgets::url::consent(&server, &u))
                            .await?
                    }
                    None => {
                        return Err(unanswered(
                            key,
                            &u.message,
                            None,
                            format!(
                                "Give it with --set {key}=accept (you open {}) or --set {key}=decline.",
                                u.url
                            ),
                        ));
                    }
                })
            }
            InputRequest::Sample(p) => InputResponse::Sample(self.sample(key, p).await?),
            InputRequest::ListRoots(_) => InputResponse::ListRoots(ListRootsResult {
                roots: self.roots(),
            }),
            InputRequest::Unknown { method, .. } => {
                return Err(CliError::Client(ClientError::Protocol(
                    ProtocolViolation::UnknownQuestion {
                        key: key.to_owned(),
                        method: method.clone(),
                    },
                )));
            }
        })
    }

    /// A form: given answers first (typed by the schema), the terminal for the rest.
    pub(crate) async fn form(
        &self,
        key: &str,
        form: &ElicitFormParams,
    ) -> Result<ElicitResult, CliError> {
        match self.inner.answers.verdict(key) {
            Some(Verdict::Decline) => return Ok(ElicitResult::decline()),
            Some(Verdict::Cancel) => return Ok(ElicitResult::cancel()),
            _ => {}
        }
        let schema = &form.requested_schema;
        let fields: Vec<&str> = schema.properties.iter().map(|(k, _)| k.as_str()).collect();
        self.inner.answers.check_targeted(key, &fields)?;
        let mut given = Map::new();
        for (name, field) in &schema.properties {
            let typed = match self.inner.answers.field(key, name) {
                None => continue,
                Some(Given::Text(t)) => parse_text(field, &t),
                Some(Given::Json(v)) => coerce(field, &v),
            };
            let v = typed
                .map_err(|e| CliError::Usage(format!("the answer for `{key}.{name}`: {e}")))?;
            given.insert(name.clone(), v);
        }
        let missing = schema
            .properties
            .iter()
            .map(|(k, _)| k)
            .find(|k| schema.is_required(k) && !given.contains_key(*k));
        let Some(missing) = missing.cloned() else {
            for (k, v) in &given {
                self.inner.ui.note(format!("  {key}.{k} → {v} (given)"));
            }
            return Ok(ElicitResult::accept(given));
        };
        let unused = self.inner.answers.unused();
        if let Some(typo) = unused.iter().find(|k| near(k, &missing)) {
            return Err(CliError::Usage(format!(
                "--set {typo}=…: question `{key}` has no field `{typo}` (its fields: {}); did you \
                 mean `{missing}`?",
                fields.join(", ")
            )));
        }
        if !self.inner.ui.interactive() {
            let mut hint = format!(
                "Give it with --set {missing}=VALUE (or --set {key}.{missing}=VALUE, or --answers FILE), or --set {key}=decline."
            );
            if !unused.is_empty() {
                hint.push_str(&format!(
                    " (--set {} matched no field; this question's fields: {})",
                    unused.join(", "),
                    fields.join(", ")
                ));
            }
            return Err(unanswered(key, &form.message, Some(missing), hint));
        }
        let (server, form) = (self.server(), form.clone());
        self.inner
            .ui
            .exclusive(move || widgets::form::fill(&server, &form, given))
            .await
    }

    async fn sample(
        &self,
        key: &str,
        p: &CreateMessageRequestParams,
    ) -> Result<sterna::types::sampling::CreateMessageResult, CliError> {
        if let Some(obj) = self.inner.answers.object(key) {
            return serde_json::from_value(Value::Object(obj.clone())).map_err(|e| {
                CliError::Usage(format!(
                    "the answer for `{key}` is not a sampling result: {e}"
                ))
            });
        }
        if let Some(cmd) = &self.inner.sampling_cmd {
            return crate::sampling_cmd::run(cmd, p).await;
        }
        if !self.inner.ui.interactive() {
            return Err(unanswered(
                key,
                "an LLM completion (sampling)",
                None,
                "Give --sampling-cmd CMD.".into(),
            ));
        }
        let (server, p) = (self.server(), p.clone());
        match self
            .inner
            .ui
            .exclusive(move || widgets::sampling::ask(&server, &p))
            .await?
        {
            Ok(Some(r)) => Ok(r),
            _ => Err(CliError::Refused(format!(
                "the sampling request `{key}` (refused at the terminal)"
            ))),
        }
    }
}

impl Answerer {
    /// After a call: a warning for each `--set FIELD=…` that no question asked for.
    pub(crate) fn warn_unused_sets(&self) {
        for k in self.inner.answers.unused() {
            self.inner.ui.note(format!(
                "warning: --set {k}=… answered nothing: no question had a field `{k}`"
            ));
        }
    }
}

/// Whether `a` looks like a typo of `b`: the same ignoring case, or at most two edits
/// apart (and not shorter than three letters).
fn near(a: &str, b: &str) -> bool {
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    if a.len() < 3 || b.len() < 3 {
        return false;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()] <= 2
}

fn verdict(v: Verdict) -> ElicitResult {
    match v {
        Verdict::Accept => ElicitResult::accept(Map::new()),
        Verdict::Decline => ElicitResult::decline(),
        Verdict::Cancel => ElicitResult::cancel(),
    }
}

fn unanswered(key: &str, message: &str, field: Option<String>, hint: String) -> CliError {
    CliError::Unanswered(Unanswered {
        key: key.to_owned(),
        message: message.to_owned(),
        field,
        hint,
    })
}
