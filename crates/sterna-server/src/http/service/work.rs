//! The work of a 2026-07-28 request at the endpoint: its message read once, prepared,
//! authorized against the target it names, and run within the deadline.

use super::{Incoming, Shared};
use crate::http::headers;
use crate::http::layers::Deadline;
use crate::http::respond::Done;
use crate::metrics::{Refusal, refused};
use crate::server::inbound::{Body, Inbound, classify, classify_envelope};
use crate::server::prepare::Prepared;
use crate::server::{Notifier, RequestEnv, Response as RpcResponse, Server, log_panic};
use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::{Either, Ready, ready};
use http::StatusCode;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, RequestId};
use tokio_util::sync::CancellationToken;

impl Shared {
    /// Reads a 2026-07-28 message once — with its params when the header claims
    /// 2026-07-28, else its envelope (its `_meta` claims it: [`Shared::elsewhere`]) — and
    /// answers it.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
    )]
    pub(super) fn answer(
        self: Arc<Self>,
        incoming: Incoming,
        bytes: Bytes,
        notifier: Notifier,
    ) -> impl Future<Output = Done> + Send {
        async move {
            let read = if incoming.modern {
                classify(&bytes)
            } else {
                classify_envelope(&bytes)
            };
            let (id, method, params) = match request(read) {
                Ok(request) => request,
                Err(done) => return done,
            };
            let cancel = CancellationToken::new();
            // Dropping this future (client gone, timeout) cancels the request.
            let _guard = cancel.clone().drop_guard();
            let env = RequestEnv::cancelled_by(cancel)
                .principal(incoming.caller.principal.clone())
                .notifier(notifier);
            answer(&self.server, &incoming, id, &method, params, env).await
        }
    }
}

/// A request's parts; any other message is answered at once.
fn request(message: Inbound<'_>) -> Result<(RequestId, Cow<'_, str>, Body<'_>), Done> {
    match message {
        Inbound::Request { id, method, params } => Ok((id, method, params)),
        Inbound::Malformed(m) => Err(Done::Refused(StatusCode::BAD_REQUEST, m.id, m.error)),
        Inbound::Notification { .. } => Err(Done::Accepted),
        Inbound::Response { id, .. } => {
            Err(Done::Refused(StatusCode::BAD_REQUEST, id, not_a_request()))
        }
    }
}

/// Prepare, compare the headers with the body, authorize the target the prepared request
/// names, run that same request (within the deadline). All but the wait happens here, so
/// the future keeps only the running request and its deadline.
fn answer<'a>(
    server: &'a Server,
    incoming: &Incoming,
    id: RequestId,
    method: &'a str,
    params: Body<'a>,
    env: RequestEnv,
) -> Either<Ready<Done>, impl Future<Output = Done> + Send + 'a> {
    let version = match headers::protocol_version(&incoming.headers) {
        Ok(v) => v,
        Err(e) => {
            refused(Refusal::BadHeaders, 400);
            return Either::Left(ready(Done::Refused(StatusCode::BAD_REQUEST, Some(id), e)));
        }
    };
    let prepared = match Prepared::read(server, id.clone(), method, params) {
        Ok(p) => p,
        Err(refused) => return Either::Left(ready(Done::Response(refused))),
    };
    if let Err(refused) = incoming.caller.authorize(prepared.target()) {
        return Either::Left(ready(Done::Http(refused)));
    }
    let checked = headers::check_prepared(server, &incoming.headers, version, &prepared);
    if let Err(e) = checked {
        refused(Refusal::BadHeaders, 400);
        return Either::Left(ready(Done::Response(RpcResponse::early(id, e))));
    }
    let deadline = incoming
        .deadline
        .filter(|_| method != "subscriptions/listen");
    let failed = id.clone();
    let handled = AssertUnwindSafe(prepared.run(server, env))
        .catch_unwind()
        .map(move |r| {
            r.unwrap_or_else(|panic| {
                log_panic(panic.as_ref());
                let e = ErrorObject::internal("Internal error");
                Some(RpcResponse::error(Some(failed), e))
            })
        });
    let done = |r: Option<RpcResponse>| r.map_or(Done::Cancelled, Done::Response);
    let Some(Deadline(at)) = deadline else {
        return Either::Right(Either::Left(handled.map(done)));
    };
    Either::Right(Either::Right(tokio::time::timeout_at(at, handled).map(
        move |r| match r {
            Ok(r) => done(r),
            Err(_) => Done::TimedOut(RpcResponse::error(
                Some(id),
                ErrorObject::internal("Request timed out"),
            )),
        },
    )))
}

impl Done {
    /// The last event of an SSE stream (`None`: nothing more is sent).
    pub(super) fn into_final(self) -> Option<Vec<u8>> {
        match self {
            // Refusals come before the method runs, so before any stream.
            Done::Cancelled | Done::Accepted | Done::Http(_) => None,
            Done::Refused(_, id, e) => Some(
                serde_json::to_vec(&ErrorResponseRef {
                    id: id.as_ref(),
                    error: &e,
                })
                .expect("errors serialize"),
            ),
            Done::TimedOut(r) | Done::Response(r) => Some(r.to_bytes()),
        }
    }
}

fn not_a_request() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        "Invalid request: clients send requests and notifications only",
    )
}
