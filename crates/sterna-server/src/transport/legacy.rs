//! The 2025-11-25 era on a byte-stream connection: the session `initialize` opens, the
//! answers to the questions it pushed, and the change notifications it forwards once the
//! client said it is initialized.

use crate::legacy::change_notification;
use crate::legacy::{Legacy, LegacySession};
use crate::server::{RequestEnv, Response, Server};
use serde_json::value::RawValue;
use std::sync::Arc;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// A session, for a request of it running on a task of its own.
pub(crate) type SessionHandle = Arc<LegacySession>;

/// The session of a connection.
pub(crate) struct StdioSession {
    session: Arc<LegacySession>,
    forwarding: JoinHandle<()>,
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        self.forwarding.abort();
    }
}

impl StdioSession {
    /// Answers `initialize`: the session it opens (if the server serves this era), and
    /// the answer to send.
    pub(crate) fn open(
        server: &Server,
        id: RequestId,
        params: Option<&RawValue>,
        tx: &mpsc::Sender<Vec<u8>>,
    ) -> (Option<Self>, Response) {
        let opened = match Legacy::of(server) {
            Some(era) => era.initialize(params),
            None => Err(crate::server::prepare::removed("initialize")),
        };
        match opened {
            Ok((session, result)) => {
                let session = Arc::new(session);
                let forwarding = forward_changes(server, &session, tx);
                let opened = Self {
                    session,
                    forwarding,
                };
                (Some(opened), Response::ok(id, result))
            }
            Err(e) => (None, Response::error(Some(id), e)),
        }
    }

    /// `notifications/initialized` arrived.
    pub(crate) fn initialized(&self) {
        self.session.mark_initialized();
    }

    /// Routes the client's answer to the push it answers (false: nothing waits for it).
    pub(crate) fn answer(&self, id: &RequestId, outcome: Result<&RawValue, ErrorObject>) -> bool {
        self.session.pushes.answer(id, outcome)
    }

    /// The client is gone: pushes waiting fail at once.
    pub(crate) fn close(&self) {
        self.session.pushes.close();
    }

    /// The session, for a request of it running on a task of its own.
    pub(crate) fn handle(&self) -> SessionHandle {
        self.session.clone()
    }
}

/// Decodes and serves one request of a session.
pub(crate) async fn serve(
    server: &Server,
    session: &LegacySession,
    id: RequestId,
    method: &str,
    params: Option<&RawValue>,
    env: RequestEnv,
) -> Option<Response> {
    let era = Legacy::of(server)?;
    match era.decode(method, params) {
        Ok(decoded) => era.serve(session, id, decoded, env).await,
        Err(e) => Some(Response::error(Some(id), e)),
    }
}

/// List changes (and updates of subscribed resources) as 2025 notifications, once the
/// client said it is initialized.
fn forward_changes(
    server: &Server,
    session: &Arc<LegacySession>,
    tx: &mpsc::Sender<Vec<u8>>,
) -> JoinHandle<()> {
    let mut changes = server.changes().subscribe();
    let session = session.clone();
    let tx = tx.clone();
    tokio::spawn(async move {
        while let Ok(change) = changes.recv().await {
            if !session.is_initialized() {
                continue;
            }
            if let Some(bytes) = change_notification(&change, |uri| session.subscribed(uri))
                && tx.send(bytes).await.is_err()
            {
                return;
            }
        }
    })
}
