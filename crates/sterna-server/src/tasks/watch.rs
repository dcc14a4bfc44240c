//! A run waiting for its task to change under it: a cancel (or any end) written by
//! another server sharing the store cannot reach the run's token, so the run watches
//! the record. Cheaply: a store that sees every change itself (the in-process one)
//! announces it, and nothing is read until then; any other store is asked only for the
//! record's version, first after `watch` (500 ms), then at doubling intervals up to
//! `watch_max` (5 s). The record is read and opened only when its version moved.

use super::record::TaskRecord;
use super::{Tasks, short};
use sterna_types::tasks::TaskStatus;

impl Tasks {
    /// The record and its version, whoever owns it (for the server's own runs). `Err`
    /// when the store could not answer.
    pub(crate) async fn load_any(&self, id: &str) -> Result<Option<(TaskRecord, u64)>, ()> {
        match self.store.load(id).await {
            Ok(Some(stored)) => Ok(self.decode(id, &stored.bytes).map(|r| (r, stored.version))),
            Ok(None) => Ok(None),
            Err(e) => {
                tracing::warn!(task = short(id), error = %e, "task store failed");
                Err(())
            }
        }
    }

    /// Resolves when run `run` should stop: the task was cancelled or ended elsewhere,
    /// or has disappeared. `version` is the record's version when the run started.
    pub(crate) async fn watch_run(&self, id: &str, run: u64, mut version: u64) {
        let mut pause = self.watch;
        loop {
            match self.store.changed(id, version) {
                Some(change) => change.await,
                None => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(self.watch_max.max(self.watch));
                    match self.store.version(id).await {
                        Ok(Some(v)) if v == version => continue,
                        Ok(None) => return,
                        Ok(Some(_)) => {}
                        Err(e) => {
                            tracing::warn!(task = short(id), error = %e, "task store failed");
                            continue;
                        }
                    }
                }
            }
            match self.load_any(id).await {
                Ok(Some((r, v))) if r.run == run && r.status == TaskStatus::Working => {
                    if v == version {
                        // Woken with nothing changed (a clock edge at expiry): no spinning.
                        tokio::time::sleep(pause).await;
                    }
                    version = v;
                }
                Ok(_) => return,
                // The store failed: keep the run, look again later.
                Err(()) => tokio::time::sleep(pause).await,
            }
        }
    }
}
