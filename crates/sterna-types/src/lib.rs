//! Wire types for the [Model Context Protocol](https://modelcontextprotocol.io),
//! revision **2026-07-28**, with its headline feature: Multi Round-Trip Requests (MRTR).
//!
//! This crate holds only what travels on the wire, as plain `serde` types. It has no
//! runtime and no I/O; the `sterna` crate builds the server and client on top of it.
//!
//! # Map of the crate
//!
//! | module | what |
//! |---|---|
//! | [`jsonrpc`] | the JSON-RPC 2.0 envelope: ids, requests, responses, notifications, and the [`Method`](jsonrpc::Method) trait tying a method name to its params and result; the stdio transport's line framing with the `stdio` feature |
//! | [`error`] | wire errors: [`ErrorObject`](error::ErrorObject) and the MCP error codes (-32020, -32021, -32022 …) |
//! | [`meta`] | `_meta` objects of requests, results and notifications; [`Implementation`](meta::Implementation) |
//! | [`capabilities`] | client and server capabilities, per request |
//! | [`result`] | `resultType`, the caching scope, the empty result |
//! | [`mrtr`] | the [`Outcome`](mrtr::Outcome) union (complete or `input_required`), `InputRequiredResult`, `InputRequest`, `InputResponse` |
//! | [`elicitation`], [`sampling`], [`roots`] | the three kinds of question a server may ask |
//! | [`content`] | content blocks (text, image, audio, resource links, embedded resources) |
//! | [`tools`], [`prompts`], [`resources`], [`completion`] | server features |
//! | [`discover`], [`subscriptions`], [`notifications`] | `server/discover`, `subscriptions/listen`, progress, logging, cancellation |
//! | [`tasks`] | the `io.modelcontextprotocol/tasks` extension: `Task`, `CreateTaskResult`, `tasks/get`, `tasks/update`, `tasks/cancel` |
//! | [`skills`] | the `io.modelcontextprotocol/skills` extension: `Skill` entries, `skills/list`, `skills/get`, `resources/directory/read`, the naming and digest rules; frontmatter parsing with the `skills` feature |
//! | [`legacy`] | the 2025-11-25 era: `initialize`, negotiated revisions |
//!
//! # Decoding rules worth knowing
//!
//! * A result is discriminated on the **value** of `resultType` (absent means `complete`;
//!   an unknown value is an error), never by trying shapes one after the other: every
//!   `CallToolResult` would also validate as an `InputRequiredResult`.
//! * Request ids are strings or integers, never `null` and never fractional.
//! * `requestState` is an opaque string and is kept byte for byte.

pub mod capabilities;
pub mod completion;
pub mod content;
pub mod discover;
pub mod elicitation;
pub mod error;
pub mod header;
pub mod jsonrpc;
pub mod legacy;
pub mod meta;
pub mod mirror;
pub mod mrtr;
pub mod notifications;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod roots;
pub mod sampling;
pub mod skills;
pub mod subscriptions;
pub mod tasks;
pub mod tools;
pub mod version;

/// A JSON object, as used for open-ended maps (`_meta`, capability settings, schemas).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
