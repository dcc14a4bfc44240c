//! Finding the server's era before the first request (once; see [`era`](super::era)) and
//! opening a 2025-11-25 session when it is legacy.

use super::era::{self, EraMode, Verdict};
use super::error::{ClientError, Misuse, TransportError};
use super::legacy::{Dispatch, Hello, Session, Wire};
use super::link::{Connected, Dual, LegacyLink};
use super::probe::{StreamVerdict, discover_request, probe_stream};
use super::shared::Shared;
use std::sync::Arc;
use std::time::Duration;

/// How long opening a 2025-11-25 session (`initialize`, then the GET stream) may take.
const INITIALIZE_WAIT: Duration = Duration::from_secs(30);

/// What the server speaks, found once and kept.
pub(crate) async fn connected(shared: &Shared) -> Result<Connected, ClientError> {
    let mut conn = shared.conn.lock().await;
    if let Some(c) = conn.as_ref() {
        return Ok(c.clone());
    }
    let c = establish(shared).await?;
    *conn = Some(c.clone());
    Ok(c)
}

/// Forgets a remembered verdict that failed: the next request probes again.
pub(crate) async fn forget_era(shared: &Shared) {
    if let Some(key) = shared.dual.as_ref().and_then(Dual::endpoint) {
        era::forget(&key);
    }
    *shared.conn.lock().await = None;
}

async fn establish(shared: &Shared) -> Result<Connected, ClientError> {
    let modern = Connected::Modern { remembered: false };
    let Some(dual) = &shared.dual else {
        return match shared.era_mode {
            EraMode::Legacy => Err(ClientError::Misuse(Misuse::NoLegacyTransport)),
            _ => Ok(modern),
        };
    };
    match shared.era_mode {
        EraMode::Modern => return Ok(modern),
        EraMode::Legacy => return open_legacy(shared, dual).await,
        EraMode::Auto => {}
    }
    let key = dual.endpoint();
    match key.as_deref().and_then(era::remembered) {
        Some(Verdict::Modern(v)) => {
            shared.set_version(v);
            return Ok(Connected::Modern { remembered: true });
        }
        Some(Verdict::Legacy(_)) => match open_legacy(shared, dual).await {
            Ok(c) => return Ok(c),
            Err(e) => {
                tracing::info!(error = %e, "the remembered 2025-11-25 verdict failed; probing again");
                era::forget(key.as_deref().unwrap_or_default());
            }
        },
        None => {}
    }
    let verdict = probe(shared, dual).await?;
    if let Some(k) = &key {
        era::remember(k, &verdict);
    }
    match verdict {
        Verdict::Modern(v) => {
            shared.set_version(v);
            Ok(modern)
        }
        Verdict::Legacy(why) => {
            tracing::debug!(why, "the server speaks 2025-11-25 or earlier");
            open_legacy(shared, dual).await
        }
    }
}

async fn probe(shared: &Shared, dual: &Dual) -> Result<Verdict, ClientError> {
    let request = discover_request(&shared.caps, shared.info.as_ref());
    let wait = shared.probe_wait;
    match dual {
        Dual::Stdio(s) => match probe_stream(&*s.stream().await, request, wait).await? {
            StreamVerdict::Judged(v) => Ok(v),
            StreamVerdict::Died => {
                // (Restarting reaps the old process first: its exit is logged before this.)
                s.restart().await.map_err(TransportError::Io)?;
                tracing::warn!(
                    "the server exited on the server/discover probe: started it again to speak \
                     2025-11-25 (some 2025-11-25 servers exit on a request they do not know)"
                );
                Ok(Verdict::Legacy("the server died on the probe"))
            }
        },
        Dual::Stream(s) => match probe_stream(s, request, wait).await? {
            StreamVerdict::Judged(v) => Ok(v),
            StreamVerdict::Died => {
                tracing::warn!(
                    "the server closed the stream on the server/discover probe (a byte stream cannot be started again)"
                );
                Err(TransportError::Closed.into())
            }
        },
        #[cfg(feature = "http")]
        Dual::Http(h) => super::legacy::probe_http(h, request, wait).await,
    }
}

async fn open_legacy(shared: &Shared, dual: &Dual) -> Result<Connected, ClientError> {
    let dispatch = Dispatch::new(shared.handlers.clone(), shared.events.clone());
    let wire = match dual {
        Dual::Stdio(s) => {
            let stream = s.stream().await;
            stream.attach(Arc::new(dispatch.clone()));
            Wire::Stream(stream)
        }
        Dual::Stream(s) => {
            s.attach(Arc::new(dispatch.clone()));
            Wire::Stream(s.clone())
        }
        #[cfg(feature = "http")]
        Dual::Http(h) => Wire::Http(super::legacy::LegacyHttp::new(
            (**h).clone(),
            Arc::new(dispatch.clone()),
        )),
    };
    let hello = Hello {
        capabilities: shared.caps.clone(),
        info: shared.identity.clone(),
    };
    let open = Session::open(wire, hello, shared.next_id.clone());
    let session = tokio::time::timeout(INITIALIZE_WAIT, open)
        .await
        .map_err(|_| {
            TransportError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer to initialize within {INITIALIZE_WAIT:?}"),
            ))
        })??;
    Ok(Connected::Legacy(Arc::new(LegacyLink {
        session: Arc::new(session),
        dispatch,
    })))
}
