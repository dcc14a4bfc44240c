//! A task's record: everything needed to serve `tasks/*` and to run the tool's handler
//! again on any replica (the same re-run model as a `requestState`, stored instead of
//! sealed). The transitions are pure functions here; `ops.rs` applies them atomically.

use crate::state::FlowState;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;
use sterna_types::mrtr::InputRequest;
use sterna_types::tasks::{DetailedTask, Task, TaskStatus};

/// Who may run a `working` task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Lease {
    /// A run was asked for at `since_ms` and has not begun (no handler code ran).
    Pending { since_ms: u64 },
    /// A run began and holds the task until `until_ms` (renewed while it runs).
    Held { until_ms: u64 },
}

/// One outstanding question: the key the handler asked under, and the question.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Outstanding {
    pub(crate) key: String,
    pub(crate) request: InputRequest,
}

/// The stored task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    /// The server that created it (replicas of one fleet share it).
    pub(crate) audience: String,
    /// Who created it (empty for anonymous callers); compared exactly on every call.
    pub(crate) principal: String,
    pub(crate) tool: String,
    /// The tool arguments, as received (raw JSON).
    pub(crate) args: Option<String>,
    /// The creating request's `_meta` (its capabilities gate the task's questions).
    pub(crate) meta: RequestMeta,
    pub(crate) status: TaskStatus,
    pub(crate) message: Option<String>,
    pub(crate) created_ms: u64,
    pub(crate) updated_ms: u64,
    pub(crate) ttl_ms: u64,
    pub(crate) poll_ms: u64,
    /// Answers pinned so far, the questions of the last park, the handler's own state.
    pub(crate) flow: FlowState,
    /// Open questions by wire key.
    pub(crate) outstanding: BTreeMap<String, Outstanding>,
    /// Answers received through `tasks/update` that no run has seen yet (by handler key).
    pub(crate) fresh: Map<String, Value>,
    /// Every wire key ever issued (a task's keys are unique for its whole life).
    pub(crate) issued: BTreeSet<String>,
    pub(crate) result: Option<Value>,
    pub(crate) error: Option<ErrorObject>,
    /// The run that may write the outcome; bumped each time a run is started.
    pub(crate) run: u64,
    /// Who may run the task while it is `working` (`None` otherwise, and in records
    /// written before leases: those are never taken over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lease: Option<Lease>,
}

/// How a run ended.
#[derive(Clone)]
pub(crate) enum Ending {
    Completed(Value),
    Failed(ErrorObject),
    /// Waiting for answers: the questions by the handler's keys, and the flow to resume
    /// from (its `asked` pins each answer to its question).
    Parked {
        requests: BTreeMap<String, InputRequest>,
        flow: FlowState,
    },
}

impl TaskRecord {
    /// Past its TTL: read as unknown.
    pub(crate) fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.created_ms.saturating_add(self.ttl_ms)
    }

    /// Applies `tasks/update` answers: only keys still outstanding count (the rest are
    /// ignored). `None` when nothing changed; `Some(true)` when this update answered the
    /// last one: the task is `working` again and the caller must start run `self.run`.
    pub(crate) fn answer(&mut self, responses: &Map<String, Value>, now_ms: u64) -> Option<bool> {
        if self.status != TaskStatus::InputRequired {
            return None;
        }
        let mut changed = false;
        for (wire, value) in responses {
            if !value.is_object() {
                continue;
            }
            if let Some(o) = self.outstanding.remove(wire) {
                self.fresh.insert(o.key, value.clone());
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        self.updated_ms = now_ms;
        if !self.outstanding.is_empty() {
            return Some(false);
        }
        self.status = TaskStatus::Working;
        self.message = None;
        self.run += 1;
        self.lease = Some(Lease::Pending { since_ms: now_ms });
        Some(true)
    }

    /// Cancels a task that has not ended. `false` when it had (nothing changes).
    pub(crate) fn cancel(&mut self, now_ms: u64) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = TaskStatus::Cancelled;
        self.message = Some("Cancelled by the client".into());
        self.outstanding.clear();
        self.fresh.clear();
        self.updated_ms = now_ms;
        self.lease = None;
        true
    }

    /// Records how run `run` ended; `false` when the run is stale (the task was
    /// cancelled, or ended, meanwhile).
    pub(crate) fn settle(&mut self, run: u64, ending: Ending, now_ms: u64) -> bool {
        if self.run != run || self.status != TaskStatus::Working {
            return false;
        }
        self.updated_ms = now_ms;
        self.lease = None;
        match ending {
            Ending::Completed(result) => {
                self.status = TaskStatus::Completed;
                self.result = Some(result);
                self.flow = FlowState::default();
            }
            Ending::Failed(error) => {
                self.status = TaskStatus::Failed;
                self.message = Some(error.message.clone());
                self.error = Some(error);
                self.flow = FlowState::default();
            }
            Ending::Parked { requests, flow } => {
                for (key, request) in requests {
                    let wire = self.mint(&key);
                    self.outstanding.insert(wire, Outstanding { key, request });
                }
                self.flow = flow;
                self.fresh.clear();
                self.status = TaskStatus::InputRequired;
                self.message = Some("Waiting for input".into());
            }
        }
        true
    }

    /// A wire key for a question asked under `key`: `key` the first time, then `key#2`,
    /// `key#3` … (a re-asked question never reuses a key).
    fn mint(&mut self, key: &str) -> String {
        let mut wire = key.to_owned();
        let mut n = 1u32;
        while self.issued.contains(&wire) {
            n += 1;
            wire = format!("{key}#{n}");
        }
        self.issued.insert(wire.clone());
        wire
    }

    /// The task as every message shows it.
    pub(crate) fn task(&self, id: &str) -> Task {
        Task {
            task_id: id.to_owned(),
            status: self.status,
            status_message: self.message.clone(),
            created_at: iso8601(self.created_ms),
            last_updated_at: iso8601(self.updated_ms),
            ttl_ms: Some(self.ttl_ms),
            poll_interval_ms: Some(self.poll_ms),
        }
    }

    /// The task with what its status adds, for `tasks/get`.
    pub(crate) fn detailed(&self, id: &str) -> DetailedTask {
        let input_requests = (self.status == TaskStatus::InputRequired).then(|| {
            self.outstanding
                .iter()
                .map(|(k, o)| (k.clone(), o.request.clone()))
                .collect()
        });
        DetailedTask {
            task: self.task(id),
            input_requests,
            result: (self.status == TaskStatus::Completed)
                .then(|| self.result.clone())
                .flatten(),
            error: (self.status == TaskStatus::Failed)
                .then(|| self.error.clone())
                .flatten(),
        }
    }
}

/// `2026-12-03T12:00:00.123Z` from Unix milliseconds (proleptic Gregorian, UTC).
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil-from-days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Now, in Unix milliseconds.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_796_299_200_000), "2026-12-03T12:00:00.000Z");
    }
}
