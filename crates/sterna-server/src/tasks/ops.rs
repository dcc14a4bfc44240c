//! Reading and changing records: decode, check who may see them, and compare-and-swap
//! until a change lands.

use super::record::{TaskRecord, now_ms};
use super::{TaskStoreError, Tasks, short};
use crate::server::QuotaKey;
use crate::server::quota::limit_error;
use crate::state::sealed;
use std::time::Duration;
use sterna_types::error::{ErrorCode, ErrorObject};

/// How many times a change is retried when other writers keep winning.
pub(crate) const ATTEMPTS: usize = 64;
/// How long a record stays readable after its TTL (so late pollers still see it).
const GRACE: Duration = Duration::from_secs(60);

/// The one answer to every id that cannot be served: unknown, expired, another
/// principal's, malformed (no oracle).
pub(crate) fn not_found() -> ErrorObject {
    ErrorObject::invalid_params("Unknown or expired taskId")
}

/// `-32603` naming the limit: the caller holds its share of the task store.
fn over_quota(limit: usize) -> ErrorObject {
    let msg = format!(
        "Too many tasks: this client already holds {limit} unexpired tasks, its share of the server (the task store's per_principal limit); let one expire first"
    );
    limit_error(ErrorCode::INTERNAL_ERROR, msg, "per_principal", limit)
}

fn store_failed(e: impl std::fmt::Display) -> ErrorObject {
    tracing::error!(error = %e, "task store failed");
    ErrorObject::internal("Internal error")
}

impl Tasks {
    /// How long the store must keep a record from now.
    pub(crate) fn keep(rec: &TaskRecord) -> Duration {
        let end = rec.created_ms.saturating_add(rec.ttl_ms);
        Duration::from_millis(end.saturating_sub(now_ms())) + GRACE
    }

    /// The record, sealed for the store (bound to this server and `id`).
    pub(crate) fn encode(&self, id: &str, rec: &TaskRecord) -> Result<Vec<u8>, ErrorObject> {
        let bytes = serde_json::to_vec(rec).expect("records serialize");
        if bytes.len() > self.max_record {
            return Err(ErrorObject::invalid_params(format!(
                "The task's data would exceed {} bytes",
                self.max_record
            )));
        }
        Ok(sealed::seal_bytes(
            &self.keys,
            &[&self.audience, id],
            &bytes,
        ))
    }

    /// A record from the store; `None` when it does not open (another server's, altered,
    /// sealed under a retired key) or does not decode.
    pub(crate) fn decode(&self, id: &str, bytes: &[u8]) -> Option<TaskRecord> {
        let Some(plain) = sealed::open_bytes(&self.keys, &[&self.audience, id], bytes) else {
            tracing::warn!(
                task = short(id),
                "a task record does not open (altered, or another server's)"
            );
            return None;
        };
        serde_json::from_slice(&plain)
            .map_err(
                |e| tracing::error!(task = short(id), error = %e, "a task record does not decode"),
            )
            .ok()
    }

    /// The record, if `principal` of `audience` may see it and it has not expired.
    pub(crate) async fn find(
        &self,
        id: &str,
        audience: &str,
        principal: &str,
    ) -> Result<(TaskRecord, u64), ErrorObject> {
        if id.is_empty() || id.len() > 64 {
            return Err(not_found());
        }
        let stored = self.store.load(id).await.map_err(store_failed)?;
        let Some(stored) = stored else {
            return Err(not_found());
        };
        let rec = self.decode(id, &stored.bytes).ok_or_else(not_found)?;
        if rec.audience != audience || rec.principal != principal || rec.expired(now_ms()) {
            return Err(not_found());
        }
        Ok((rec, stored.version))
    }

    /// Applies `change` atomically: `change` returns `None` when nothing is to be
    /// written. Returns the record as it now is, and what `change` returned.
    pub(crate) async fn modify<R>(
        &self,
        id: &str,
        audience: &str,
        principal: &str,
        mut change: impl FnMut(&mut TaskRecord) -> Option<R>,
    ) -> Result<(TaskRecord, Option<R>), ErrorObject> {
        for _ in 0..ATTEMPTS {
            let (mut rec, version) = self.find(id, audience, principal).await?;
            let Some(r) = change(&mut rec) else {
                return Ok((rec, None));
            };
            let bytes = self.encode(id, &rec)?;
            let keep = Self::keep(&rec);
            if self
                .store
                .swap(id, version, bytes, keep)
                .await
                .map_err(store_failed)?
            {
                return Ok((rec, Some(r)));
            }
        }
        tracing::error!(
            task = short(id),
            "a task record changed too often to update"
        );
        Err(ErrorObject::internal("Internal error"))
    }

    /// Stores a new record of `owner` under a fresh id (≥ 128 random bits).
    pub(crate) async fn insert(
        &self,
        rec: &TaskRecord,
        owner: &QuotaKey,
    ) -> Result<String, ErrorObject> {
        for _ in 0..4 {
            let id = new_id();
            let bytes = self.encode(&id, rec)?;
            let created = match self.store.create(&id, owner, bytes, Self::keep(rec)).await {
                Ok(created) => created,
                Err(TaskStoreError::QuotaExceeded { limit }) => return Err(over_quota(limit)),
                Err(e) => return Err(store_failed(e)),
            };
            if created {
                return Ok(id);
            }
        }
        Err(ErrorObject::internal("Internal error"))
    }
}

/// 144 random bits, base64url (24 characters).
fn new_id() -> String {
    crate::state::random_id::<18>()
}
