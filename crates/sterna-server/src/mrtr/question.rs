//! Questions: what a handler can ask, and the typed answers it gets.

use super::check::validate;
use super::form::form_schema;
use super::inquiry::Inquiry;
use super::resolver::{NeedsInput, Resolver, Spec};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::marker::PhantomData;
use sterna_types::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult, ElicitUrlParams};
use sterna_types::mrtr::InputRequest;
use sterna_types::roots::{ListRootsResult, Root};
use sterna_types::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// Something a handler can ask the client: one question, an [`optional`](FormQuestion::optional)
/// one, or a tuple of questions asked together in one round.
///
/// Built with [`form`], [`url`], [`sampling`] and [`roots`]. Asking a tuple gathers
/// **every** missing answer into one `input_required` result.
pub trait Question: Send + Sized {
    /// What the handler gets back.
    type Answer: Send;

    /// Looks the answer up; registers the question when it is missing.
    #[doc(hidden)]
    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput>;

    /// Checks, without asking, that the question's types can be asked at all (form types
    /// must be flat). Called when a tool is registered.
    #[doc(hidden)]
    fn check() -> Result<(), crate::definition::DefinitionError> {
        Ok(())
    }
}

/// A single question (as opposed to a tuple): it has a key and can be made optional.
pub trait Single: Question {
    /// Resolves, skipping (`None`) when the client cannot answer this kind.
    #[doc(hidden)]
    fn resolve_optional(self, r: &mut Resolver) -> Result<Option<Self::Answer>, NeedsInput>;
}

/// An optional question: when the client did not declare the capability it needs, the
/// question is skipped and the answer is `None` (instead of the request failing with
/// `-32021`). Made with `.optional()` on any single question.
#[derive(Debug)]
pub struct Optional<Q>(Q);

impl<Q: Single> Question for Optional<Q> {
    type Answer = Option<Q::Answer>;

    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
        self.0.resolve_optional(r)
    }

    fn check() -> Result<(), crate::definition::DefinitionError> {
        Q::check()
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form (or consented to open the URL): here are the values.
    Accepted(T),
    /// The user explicitly refused.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
}

impl<T> Elicitation<T> {
    /// The values, if accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accepted(t) => Some(t),
            _ => None,
        }
    }

    /// The values, if accepted, by reference (handy in `then_ask`).
    pub fn as_accepted(&self) -> Option<&T> {
        match self {
            Self::Accepted(t) => Some(t),
            _ => None,
        }
    }

    /// The values, or a tool error saying the user declined or cancelled.
    pub fn required(self) -> Result<T, crate::HandlerError> {
        match self {
            Self::Accepted(t) => Ok(t),
            Self::Declined => Err(crate::HandlerError::tool("The user declined the request.")),
            Self::Cancelled => Err(crate::HandlerError::tool("The user cancelled the request.")),
        }
    }
}

/// Asks the user to fill in a form whose fields are those of `T`.
///
/// The form's `requestedSchema` is derived from `T` (which must be flat: strings, numbers,
/// booleans, enums of unit variants, `Vec`s of such enums, `Option`s of those). The answer
/// is validated against it and decoded into `T`; an invalid answer is asked again.
///
/// The key defaults to the type's name in snake case (`Region` → `region`); set one with
/// [`FormQuestion::key`].
pub fn form<T>(message: impl Into<String>) -> FormQuestion<T>
where
    T: DeserializeOwned + JsonSchema + Send + 'static,
{
    FormQuestion {
        message: message.into(),
        key: None,
        _t: PhantomData,
    }
}

/// A form question; see [`form`].
#[derive(Debug)]
pub struct FormQuestion<T> {
    message: String,
    key: Option<String>,
    _t: PhantomData<fn() -> T>,
}

impl<T> FormQuestion<T> {
    /// Sets the key of the question in `inputRequests`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Makes the question optional: skipped (answer `None`) when the client did not
    /// declare the capability it needs, instead of failing the request with `-32021`.
    pub fn optional(self) -> Optional<Self> {
        Optional(self)
    }
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FormQuestion<T> {
    fn run(self, r: &mut Resolver, optional: bool) -> Result<Option<Elicitation<T>>, NeedsInput> {
        let schema = match form_schema::<T>() {
            Ok(s) => s,
            Err(e) => {
                r.fail(
                    sterna_types::error::ErrorObject::internal("Internal error"),
                    format_args!("{e}"),
                );
                return Err(NeedsInput::new());
            }
        };
        let single = Spec {
            key: self.key,
            default_key: schema.default_key.clone(),
            request: Inquiry::Form {
                message: self.message,
                schema: schema.clone(),
            },
        };
        r.resolve(single, optional, |v| {
            let answer: ElicitResult = serde_json::from_str(v.get()).ok()?;
            match answer.action {
                ElicitAction::Accept => {
                    let content = validate(&schema.schema, answer.content.as_ref()?).ok()?;
                    T::deserialize(Value::Object(content))
                        .ok()
                        .map(Elicitation::Accepted)
                }
                ElicitAction::Decline => Some(Elicitation::Declined),
                ElicitAction::Cancel => Some(Elicitation::Cancelled),
            }
        })
    }
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> Question for FormQuestion<T> {
    type Answer = Elicitation<T>;

    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
        self.run(r, false)
            .map(|a| a.expect("required questions are never skipped"))
    }

    fn check() -> Result<(), crate::definition::DefinitionError> {
        form_schema::<T>().map(|_| ())
    }
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> Single for FormQuestion<T> {
    fn resolve_optional(self, r: &mut Resolver) -> Result<Option<Self::Answer>, NeedsInput> {
        self.run(r, true)
    }
}

/// Asks the user to visit a URL (for secrets, payments, third-party sign-in: never use a
/// form for those). `Accepted` means only that the user agreed to open it; learn the
/// outcome out of band (correlate through your own state).
pub fn url(message: impl Into<String>, url: impl Into<String>) -> UrlQuestion {
    UrlQuestion {
        message: message.into(),
        url: url.into(),
        key: None,
    }
}

/// A URL question; see [`url()`].
#[derive(Debug)]
pub struct UrlQuestion {
    message: String,
    url: String,
    key: Option<String>,
}

impl UrlQuestion {
    /// Sets the key of the question in `inputRequests`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Makes the question optional: skipped (answer `None`) when the client did not
    /// declare the capability it needs, instead of failing the request with `-32021`.
    pub fn optional(self) -> Optional<Self> {
        Optional(self)
    }

    fn run(self, r: &mut Resolver, optional: bool) -> Result<Option<Elicitation<()>>, NeedsInput> {
        let single = Spec {
            key: self.key,
            default_key: "url".into(),
            request: Inquiry::Built(Box::new(InputRequest::Elicit(ElicitRequestParams::Url(
                ElicitUrlParams {
                    message: self.message,
                    url: self.url,
                },
            )))),
        };
        r.resolve(single, optional, |v| {
            Some(
                match serde_json::from_str::<ElicitResult>(v.get()).ok()?.action {
                    ElicitAction::Accept => Elicitation::Accepted(()),
                    ElicitAction::Decline => Elicitation::Declined,
                    ElicitAction::Cancel => Elicitation::Cancelled,
                },
            )
        })
    }
}

impl Question for UrlQuestion {
    type Answer = Elicitation<()>;

    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
        self.run(r, false)
            .map(|a| a.expect("required questions are never skipped"))
    }
}

impl Single for UrlQuestion {
    fn resolve_optional(self, r: &mut Resolver) -> Result<Option<Self::Answer>, NeedsInput> {
        self.run(r, true)
    }
}

/// Asks the client's LLM for a completion (sampling; a deprecated feature of MCP that
/// still travels through MRTR). Tool use in sampling needs the client's `sampling.tools`.
pub fn sampling(params: CreateMessageRequestParams) -> SamplingQuestion {
    SamplingQuestion { params, key: None }
}

/// A sampling question; see [`sampling`].
#[derive(Debug)]
pub struct SamplingQuestion {
    params: CreateMessageRequestParams,
    key: Option<String>,
}

impl SamplingQuestion {
    /// Sets the key of the question in `inputRequests`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Makes the question optional: skipped (answer `None`) when the client did not
    /// declare the capability it needs, instead of failing the request with `-32021`.
    pub fn optional(self) -> Optional<Self> {
        Optional(self)
    }

    fn run(
        self,
        r: &mut Resolver,
        optional: bool,
    ) -> Result<Option<CreateMessageResult>, NeedsInput> {
        let single = Spec {
            key: self.key,
            default_key: "sampling".into(),
            request: Inquiry::Built(Box::new(InputRequest::Sample(self.params))),
        };
        r.resolve(single, optional, |v| {
            serde_json::from_str::<CreateMessageResult>(v.get()).ok()
        })
    }
}

impl Question for SamplingQuestion {
    type Answer = CreateMessageResult;

    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
        self.run(r, false)
            .map(|a| a.expect("required questions are never skipped"))
    }
}

impl Single for SamplingQuestion {
    fn resolve_optional(self, r: &mut Resolver) -> Result<Option<Self::Answer>, NeedsInput> {
        self.run(r, true)
    }
}

/// Asks for the client's roots (a deprecated feature of MCP that still travels through
/// MRTR). Roots whose URI is not `file://` make the answer invalid (asked again).
pub fn roots() -> RootsQuestion {
    RootsQuestion { key: None }
}

/// A roots question; see [`roots`].
#[derive(Debug)]
pub struct RootsQuestion {
    key: Option<String>,
}

impl RootsQuestion {
    /// Sets the key of the question in `inputRequests`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Makes the question optional: skipped (answer `None`) when the client did not
    /// declare the capability it needs, instead of failing the request with `-32021`.
    pub fn optional(self) -> Optional<Self> {
        Optional(self)
    }

    fn run(self, r: &mut Resolver, optional: bool) -> Result<Option<Vec<Root>>, NeedsInput> {
        let single = Spec {
            key: self.key,
            default_key: "roots".into(),
            request: Inquiry::Built(Box::new(InputRequest::ListRoots(None))),
        };
        r.resolve(single, optional, |v| {
            let res: ListRootsResult = serde_json::from_str(v.get()).ok()?;
            res.roots
                .iter()
                .all(|root| root.uri.starts_with("file://"))
                .then_some(res.roots)
        })
    }
}

impl Question for RootsQuestion {
    type Answer = Vec<Root>;

    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
        self.run(r, false)
            .map(|a| a.expect("required questions are never skipped"))
    }
}

impl Single for RootsQuestion {
    fn resolve_optional(self, r: &mut Resolver) -> Result<Option<Self::Answer>, NeedsInput> {
        self.run(r, true)
    }
}

macro_rules! tuple_question {
    ($($q:ident $a:ident),+) => {
        impl<$($q: Question),+> Question for ($($q,)+) {
            type Answer = ($($q::Answer,)+);

            #[allow(non_snake_case, reason = "the macro names bindings after the type parameters")]
            fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
                let ($($q,)+) = self;
                // Resolve every question before failing, so all missing ones are asked
                // in the same round.
                $(let $a = $q.resolve(r);)+
                Ok(($($a?,)+))
            }

            fn check() -> Result<(), crate::definition::DefinitionError> {
                $($q::check()?;)+
                Ok(())
            }
        }
    };
}

tuple_question!(Q1 a1);
tuple_question!(Q1 a1, Q2 a2);
tuple_question!(Q1 a1, Q2 a2, Q3 a3);
tuple_question!(Q1 a1, Q2 a2, Q3 a3, Q4 a4);
tuple_question!(Q1 a1, Q2 a2, Q3 a3, Q4 a4, Q5 a5);
tuple_question!(Q1 a1, Q2 a2, Q3 a3, Q4 a4, Q5 a5, Q6 a6);
tuple_question!(Q1 a1, Q2 a2, Q3 a3, Q4 a4, Q5 a5, Q6 a6, Q7 a7);
tuple_question!(Q1 a1, Q2 a2, Q3 a3, Q4 a4, Q5 a5, Q6 a6, Q7 a7, Q8 a8);

impl<Q: Question> Question for Vec<Q> {
    type Answer = Vec<Q::Answer>;

    fn resolve(self, r: &mut Resolver) -> Result<Self::Answer, NeedsInput> {
        let results: Vec<_> = self.into_iter().map(|q| q.resolve(r)).collect();
        results.into_iter().collect()
    }

    fn check() -> Result<(), crate::definition::DefinitionError> {
        Q::check()
    }
}
