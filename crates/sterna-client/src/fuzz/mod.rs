//! The client's fuzz targets' bodies (feature `fuzzing`; not a stable API): `fuzz/`
//! (cargo-fuzz) and the corpus replay test call these same functions.

mod client;
mod sse;

use std::sync::OnceLock;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime builds")
    })
}

/// A hostile server's answers, read by a real client; stable re-encoding of what decodes.
pub fn jsonrpc_client(data: &[u8]) {
    client::run(data);
}

/// The client's SSE parser: the same events however the bytes are chunked.
pub fn sse(data: &[u8]) {
    sse::sse(data);
}
