//! The client: one MRTR round driver for `tools/call`, `prompts/get` and `resources/read`,
//! over stdio or Streamable HTTP.
//!
//! ```no_run
//! # async fn run() -> Result<(), sterna::client::ClientError> {
//! use sterna::client::{Call, Client};
//! use sterna::types::elicitation::ElicitResult;
//!
//! let client = Client::builder("my-host", "1.0.0")
//!     .on_elicit(|form: sterna::types::elicitation::ElicitFormParams| async move {
//!         // Show `form.message` and `form.requested_schema` to the user …
//!         ElicitResult::accept(serde_json::json!({"region": "eu-west-1"}).as_object().unwrap().clone())
//!     })
//!     .connect_http("http://127.0.0.1:3000/mcp")?;
//! let result = client.run(Call::tool("provision_database", serde_json::json!({"name": "orders"}))).await?;
//! println!("{}", result.text_content());
//! # Ok(()) }
//! ```
//!
//! Every request carries `_meta` (version, the capabilities derived from the handlers
//! registered, client info). [`Client::run`] drives the rounds: on `input_required` it
//! runs the handlers for all questions concurrently, then retries with a new id, the
//! answers and the `requestState` echoed byte for byte — bounded by a round cap (10) and
//! a time budget (10 minutes), with backoff on rounds that carry only state. To take a
//! round yourself (your own UI, or later, or elsewhere), use [`Client::start`] and
//! [`Client::resume`]; the [`Pending`] call in between is serializable.

mod builder;
mod call;
mod driver;
mod envelope;
mod error;
mod fulfil;
mod handlers;
mod lists;
#[cfg(feature = "oauth")]
pub mod oauth;
mod retry;
mod rounds;
pub mod transport;

pub use builder::ClientBuilder;
pub use call::{Call, CallResult, Pending, Step};
pub use driver::Client;
pub use error::{
    ClientError, ConfigError, GaveUp, Misuse, ProtocolViolation, Refusal, TransportError,
};
pub use handlers::{FormHandler, RootsHandler, SamplingHandler, UrlHandler};
