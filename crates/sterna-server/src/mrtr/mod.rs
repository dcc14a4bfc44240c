//! Multi Round-Trip Requests, the server side: asking questions from handler code.
//!
//! See the [crate documentation](crate#asking-the-client) for the model; this module holds
//! the question builders ([`form`], [`url`], [`sampling`], [`roots`]), the typed answers
//! ([`Elicitation`]) and the declarative [`Plan`]s.

pub(crate) mod check;
pub(crate) mod form;
mod inquiry;
mod order;
mod plan;
mod question;
mod resolver;

#[cfg(feature = "legacy")]
pub(crate) use inquiry::FormView;
pub(crate) use inquiry::Inquiry;
pub use plan::{First, Plan, Then};
pub use question::{
    Elicitation, FormQuestion, Optional, Question, RootsQuestion, SamplingQuestion, Single,
    UrlQuestion, form, roots, sampling, url,
};
pub(crate) use resolver::Answers;
pub use resolver::{NeedsInput, Resolver};
