//! The fuzz targets' bodies (feature `fuzzing`; not a stable API).
//!
//! One function per decoder of untrusted input, each asserting its own invariants (no
//! panic is the floor). `fuzz/` (cargo-fuzz) and the corpus replay test
//! (`tests/fuzz_corpus.rs`) call these same functions, so a corpus input means the same
//! thing to both.

mod form;
mod forwarded;
mod server;
mod state;
mod text;

use std::sync::OnceLock;

/// A current-thread runtime shared by the async targets.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime builds")
    })
}

/// JSON-RPC messages into a real server (tools, a declarative form with every kind of
/// field, a single-use tool, a prompt, resource templates), read both ways a transport
/// reads them; every request answered once, with valid JSON-RPC, the same both ways.
pub fn jsonrpc_server(data: &[u8]) {
    server::run(data);
}

/// `requestState` open: nothing forged opens; `open(seal(x)) == x`.
pub fn state_open(data: &[u8]) {
    state::run(data);
}

/// Form answers validated against a requested schema.
pub fn form(data: &[u8]) {
    form::run(data);
}

/// The `Mcp-Name` / `Mcp-Param-*` value codec: `decode(encode(s)) == s`.
pub fn header_value(data: &[u8]) {
    text::header_value(data);
}

/// URI templates: matching, and matching what an expansion produced.
pub fn uri_template(data: &[u8]) {
    text::uri_template(data);
}

/// The client a trusted proxy names (`X-Forwarded-For`, RFC 7239 `Forwarded`): never one
/// the client wrote itself.
pub fn forwarded(data: &[u8]) {
    forwarded::run(data);
}

/// A target's body.
pub type Target = fn(&[u8]);

/// The server's targets, by the name of their `fuzz/fuzz_targets/<name>.rs` and corpus
/// folder (the client's are in `sterna-client`; the facade lists both).
pub const TARGETS: &[(&str, Target)] = &[
    ("jsonrpc_server", jsonrpc_server),
    ("state_open", state_open),
    ("form", form),
    ("header_value", header_value),
    ("uri_template", uri_template),
    ("forwarded", forwarded),
];
