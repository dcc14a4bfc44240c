//! Leases: a `working` task's record says who may run it and until when, so a task
//! survives the death of the replica running it.
//!
//! A record that becomes `working` (created, or answered) is `Pending`: a run is about to
//! start. The run that starts flips it to `Held` (compare-and-swap, so only one run ever
//! begins per run number) and renews it while the handler runs. When a lease lapses —
//! `Pending` for a whole lease (the replica died before the handler started) or `Held`
//! past its end (it died mid-run) — the next `tasks/get` of the task, on any replica,
//! takes it over: a task that never began, or whose tool declared
//! [`TaskTakeover::Rerun`], runs again from its stored answers under a new run number;
//! any other fails cleanly, since its handler may have done part of its work.

use super::TaskTakeover;
pub(crate) use super::record::Lease;
use super::record::{Ending, TaskRecord, now_ms};
use super::{Tasks, short};
use crate::server::Principal;
use crate::server::core::Server;
use sterna_types::error::ErrorObject;
use sterna_types::tasks::TaskStatus;
use tokio::time::Instant;

/// What a takeover did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TakenOver {
    /// Run `run` must be started (by whoever took it over).
    Rerun(u64),
    /// The task failed: its handler may have run partly, and may not run again.
    Failed,
}

impl TaskRecord {
    /// Whether the lease of a `working` task lapsed at `now_ms`: `Some(true)` when a run
    /// had begun, `Some(false)` when none had; `None` when it holds (or the task is not
    /// `working`, or its record predates leases).
    pub(crate) fn lapsed(&self, now_ms: u64, lease_ms: u64) -> Option<bool> {
        if self.status != TaskStatus::Working {
            return None;
        }
        match self.lease? {
            Lease::Pending { since_ms } if now_ms >= since_ms.saturating_add(lease_ms) => {
                Some(false)
            }
            Lease::Held { until_ms } if now_ms >= until_ms => Some(true),
            _ => None,
        }
    }

    /// Run `run` begins: `false` unless the record waits for exactly that run.
    pub(crate) fn begin(&mut self, run: u64, until_ms: u64) -> bool {
        let waiting = matches!(self.lease, Some(Lease::Pending { .. }));
        if self.run != run || self.status != TaskStatus::Working || !waiting {
            return false;
        }
        self.lease = Some(Lease::Held { until_ms });
        true
    }

    /// Whether run `run` still holds the task (it may renew its lease).
    pub(crate) fn held_by(&self, run: u64) -> bool {
        self.run == run
            && self.status == TaskStatus::Working
            && matches!(self.lease, Some(Lease::Held { .. }))
    }

    /// Takes over a task whose lease lapsed (`None` when it has not).
    pub(crate) fn take_over(
        &mut self,
        now_ms: u64,
        lease_ms: u64,
        takeover: TaskTakeover,
    ) -> Option<TakenOver> {
        let began = self.lapsed(now_ms, lease_ms)?;
        if began && takeover != TaskTakeover::Rerun {
            let e = not_rerun(&self.tool);
            return self
                .settle(self.run, Ending::Failed(e), now_ms)
                .then_some(TakenOver::Failed);
        }
        self.run += 1;
        self.lease = Some(Lease::Pending { since_ms: now_ms });
        Some(TakenOver::Rerun(self.run))
    }
}

/// The error of a task whose run was cut short and may not run again.
fn not_rerun(tool: &str) -> ErrorObject {
    ErrorObject::internal(format!(
        "The server running this task stopped mid-run, and the tool {tool} does not declare that it may run again (TaskTakeover::Rerun): it was not run twice, and its work may be partly done"
    ))
    .with_data(serde_json::json!({ "takeover": "not_rerun" }))
}

impl Tasks {
    /// The lease as milliseconds.
    pub(crate) fn lease_ms(&self) -> u64 {
        u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)
    }

    /// How a lapsed task of `tool` is taken over (a tool no longer served fails).
    fn takeover_of(server: &Server, tool: &str) -> TaskTakeover {
        server
            .tool(tool)
            .and_then(|t| t.settings.get::<TaskTakeover>().copied())
            .unwrap_or_default()
    }

    /// Takes over task `id` when its lease lapsed (`rec` as just read): starts the next
    /// run here, or fails the task. Returns the record as it now is.
    pub(crate) async fn take_over_lapsed(
        &self,
        server: &Server,
        id: &str,
        rec: TaskRecord,
        principal: &Principal,
    ) -> Result<TaskRecord, ErrorObject> {
        let lease_ms = self.lease_ms();
        if rec.lapsed(now_ms(), lease_ms).is_none() {
            return Ok(rec);
        }
        let takeover = Self::takeover_of(server, &rec.tool);
        let now = now_ms();
        let (rec, taken) = self
            .modify(id, &self.audience, &rec.principal, |r| {
                r.take_over(now, lease_ms, takeover)
            })
            .await?;
        match taken {
            Some(TakenOver::Rerun(run)) => {
                tracing::info!(task = short(id), run, "task taken over: its lease lapsed");
                metrics::counter!(crate::metrics::TAKEOVERS, "outcome" => "rerun").increment(1);
                super::runner::start_run(server, id.to_owned(), run, principal.clone());
            }
            Some(TakenOver::Failed) => {
                tracing::warn!(
                    task = short(id),
                    tool = %rec.tool,
                    "task failed: its run was cut short and its tool may not run again"
                );
                metrics::counter!(crate::metrics::TAKEOVERS, "outcome" => "failed").increment(1);
            }
            None => {}
        }
        Ok(rec)
    }

    /// Begins run `run` of task `id`: the record as it now is (lease held) and its
    /// version, or `None` when the run may not begin (another began, the task moved on).
    pub(crate) async fn begin(&self, id: &str, run: u64) -> Option<(TaskRecord, u64, Instant)> {
        for _ in 0..super::ops::ATTEMPTS {
            let (mut rec, version) = self.load_any(id).await.ok()??;
            let since = Instant::now();
            if !rec.begin(run, now_ms().saturating_add(self.lease_ms())) {
                return None;
            }
            let bytes = self.encode(id, &rec).ok()?;
            match self.store.swap(id, version, bytes, Self::keep(&rec)).await {
                Ok(true) => return Some((rec, version + 1, since)),
                Ok(false) => continue,
                Err(e) => {
                    tracing::warn!(task = short(id), error = %e, "task store failed");
                    return None;
                }
            }
        }
        None
    }

    /// Renews run `run`'s lease on `rec` (at `version`): `Ok(true)` renewed (both
    /// updated), `Ok(false)` when the run no longer holds the task, `Err` when the store
    /// failed (try again later).
    pub(crate) async fn renew(
        &self,
        id: &str,
        run: u64,
        rec: &mut TaskRecord,
        version: &mut u64,
    ) -> Result<bool, ()> {
        for _ in 0..super::ops::ATTEMPTS {
            if !rec.held_by(run) {
                return Ok(false);
            }
            rec.lease = Some(Lease::Held {
                until_ms: now_ms().saturating_add(self.lease_ms()),
            });
            let bytes = self.encode(id, rec).map_err(|_| ())?;
            match self.store.swap(id, *version, bytes, Self::keep(rec)).await {
                Ok(true) => {
                    *version += 1;
                    return Ok(true);
                }
                Ok(false) => match self.load_any(id).await? {
                    Some((r, v)) => (*rec, *version) = (r, v),
                    None => return Ok(false),
                },
                Err(e) => {
                    tracing::warn!(task = short(id), error = %e, "task store failed");
                    return Err(());
                }
            }
        }
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn working(lease: Option<Lease>) -> TaskRecord {
        let mut r: TaskRecord = serde_json::from_value(serde_json::json!({
            "audience": "a", "principal": "", "tool": "t", "args": null,
            "meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                     "io.modelcontextprotocol/clientCapabilities": {}},
            "status": "working", "message": null, "created_ms": 0,
            "updated_ms": 0, "ttl_ms": 1000000, "poll_ms": 500,
            "flow": serde_json::to_value(crate::state::FlowState::default()).unwrap(),
            "outstanding": {}, "fresh": {}, "issued": [], "result": null, "error": null,
            "run": 1
        }))
        .unwrap();
        r.lease = lease;
        r
    }

    #[test]
    fn a_lapsed_lease_is_taken_over_once_and_only_a_rerunnable_run_runs_again() {
        let mut r = working(Some(Lease::Pending { since_ms: 100 }));
        assert_eq!(r.lapsed(1099, 1000), None, "pending within the lease");
        // Never began: any tool runs again.
        assert_eq!(
            r.take_over(1100, 1000, TaskTakeover::Fail),
            Some(TakenOver::Rerun(2))
        );
        assert!(!r.begin(1, 5000), "the old run may not begin any more");
        assert!(r.begin(2, 5000));
        assert!(!r.begin(2, 5000), "a run begins once");
        assert_eq!(r.lapsed(4999, 1000), None);
        assert_eq!(r.lapsed(5000, 1000), Some(true));
        let mut fail = r.clone();
        assert_eq!(
            fail.take_over(5000, 1000, TaskTakeover::Fail),
            Some(TakenOver::Failed)
        );
        assert_eq!(fail.status, TaskStatus::Failed);
        assert_eq!(fail.lease, None);
        assert_eq!(
            r.take_over(5000, 1000, TaskTakeover::Rerun),
            Some(TakenOver::Rerun(3))
        );
        assert!(!r.held_by(2), "the run taken over may not renew");
    }

    #[test]
    fn records_without_a_lease_are_never_taken_over() {
        let mut r = working(None);
        assert_eq!(r.take_over(u64::MAX, 1, TaskTakeover::Rerun), None);
    }
}
