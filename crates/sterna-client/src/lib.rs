//! The client: one MRTR round driver for `tools/call`, `prompts/get` and `resources/read`,
//! over stdio or Streamable HTTP — for 2026-07-28 servers and, with the same API and the
//! same handlers, for 2025-11-25 ones.
//!
//! ```no_run
//! # async fn run() -> Result<(), sterna_client::ClientError> {
//! use sterna_client::{Call, Client};
//! use sterna_types::elicitation::ElicitResult;
//!
//! let client = Client::builder("my-host", "1.0.0")
//!     .on_elicit(|form: sterna_types::elicitation::ElicitFormParams| async move {
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
//!
//! # Both eras
//!
//! Most deployed servers speak 2025-11-25. Before its first request the client finds out
//! ([`EraMode::Auto`], the default; [`EraMode::Modern`] and [`EraMode::Legacy`] pin one era)
//! with a modern `server/discover`: only a `DiscoverResult` or a recognised modern error
//! means 2026-07-28; anything else (another error, `{}`, silence on stdio, a stdio server
//! that dies on the probe — it is started again) means 2025-11-25, while HTTP 401/403, 5xx
//! and timeouts are errors. The verdict is kept per child process, and per endpoint over
//! HTTP. [`Client::era`] tells it.
//!
//! With a 2025-11-25 server the client opens a session (`initialize`, `Mcp-Session-Id`, the
//! GET stream, `Last-Event-ID` resumption, a new session after a 404, DELETE on
//! [`Client::close`]) and the server *pushes* `elicitation/create`,
//! `sampling/createMessage` and `roots/list` as requests. The handlers registered here
//! answer them exactly as they answer MRTR questions, and the capabilities declared at
//! `initialize` are derived from them the same way. [`Client::run`] answers pushes as they
//! come; [`Client::start`] surfaces them as [`Step::InputRequired`] and [`Client::resume`]
//! sends the answers back as their responses — but that [`Pending`] lives in this process
//! only ([`Pending::is_portable`]): the server holds the request open. `-32042` is resolved
//! with the URL handler and `notifications/elicitation/complete`; change notifications
//! arrive as [`ServerEvent`]s ([`ClientBuilder::on_event`], [`Client::events`]).

mod answer;
mod builder;
mod call;
mod client;
mod connect;
mod driver;
mod envelope;
mod era;
mod error;
mod events;
mod fulfil;
mod handlers;
mod legacy;
mod link;
mod mirror;
#[cfg(feature = "oauth")]
pub mod oauth;
mod probe;
mod retry;
mod rounds;
mod shared;
#[cfg(feature = "skills")]
pub mod skills;
mod tasks;
pub mod transport;
#[cfg(feature = "oauth")]
mod util;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "fuzz/mod.rs"]
pub mod __fuzz;

pub use builder::ClientBuilder;
pub use call::{Call, CallResult, Pending, RunningTask, Step};
pub use client::Client;
pub use era::{Era, EraMode};
pub use error::{
    ClientError, ConfigError, GaveUp, Misuse, ProtocolViolation, Refusal, TransportError,
};
pub use events::ServerEvent;
pub use handlers::{FormHandler, RootsHandler, SamplingHandler, UrlHandler};
