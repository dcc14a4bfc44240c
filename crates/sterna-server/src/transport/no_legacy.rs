//! Built without the 2025-11-25 era: no session ever opens on a connection, and
//! `initialize` is answered as 2026-07-28 answers a removed method.

use crate::server::{RequestEnv, Response, Server};
use serde_json::value::RawValue;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use tokio::sync::mpsc;

/// No session (this build has no 2025-11-25 era).
pub(crate) enum StdioSession {}

/// No session (this build has no 2025-11-25 era).
#[derive(Clone)]
pub(crate) enum SessionHandle {}

impl StdioSession {
    /// Answers `initialize` with `-32601`.
    pub(crate) fn open(
        _: &Server,
        id: RequestId,
        _: Option<&RawValue>,
        _: &mpsc::Sender<Vec<u8>>,
    ) -> (Option<Self>, Response) {
        let e = crate::server::prepare::removed("initialize");
        (None, Response::error(Some(id), e))
    }

    pub(crate) fn initialized(&self) {
        match *self {}
    }

    pub(crate) fn answer(&self, _: &RequestId, _: Result<&RawValue, ErrorObject>) -> bool {
        match *self {}
    }

    pub(crate) fn close(&self) {
        match *self {}
    }

    pub(crate) fn handle(&self) -> SessionHandle {
        match *self {}
    }
}

pub(crate) async fn serve(
    _: &Server,
    session: &SessionHandle,
    _: RequestId,
    _: &str,
    _: Option<&RawValue>,
    _: RequestEnv,
) -> Option<Response> {
    match *session {}
}
