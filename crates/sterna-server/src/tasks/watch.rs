//! A run holding its task: it renews its lease (every third of it) and watches for the
//! task changing under it — a cancel (or any end) written by another server sharing the
//! store cannot reach the run's token, so the run watches the record. Cheaply: a store
//! that sees every change itself (the in-process one) announces it, and nothing is read
//! until then; any other store is asked only for the record's version, first after
//! `watch` (500 ms), then at doubling intervals up to `watch_max` (5 s). The record is
//! read and opened only when its version moved; a renewal is a compare-and-swap on the
//! version the run knows, so it reads nothing either.
//!
//! A run that cannot renew (the store is down) stops its handler a sixth of a lease
//! before the lease ends, so that by the time another replica may take the task over,
//! this one has stopped: one run at a time, as long as the replicas' clocks agree within
//! that sixth.

use super::record::TaskRecord;
use super::{Tasks, short};
use std::time::Duration;
use sterna_types::tasks::TaskStatus;
use tokio::time::{Instant, sleep_until};

/// Where a run stands with its record.
struct Held {
    rec: TaskRecord,
    version: u64,
    /// The handler must have stopped by then unless the lease is renewed.
    fence: Instant,
    renew_at: Instant,
}

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

    /// When a lease renewed at `since` must be given up.
    fn fence(&self, since: Instant) -> Instant {
        since + self.lease - self.lease / 6
    }

    /// Holds run `run` of task `id` (`rec` at `version`, its lease taken at `since`);
    /// resolves when the run must stop: the task was cancelled or ended elsewhere, was
    /// taken over, has disappeared, or the lease could not be renewed in time.
    pub(crate) async fn hold(
        &self,
        id: &str,
        run: u64,
        rec: TaskRecord,
        version: u64,
        since: Instant,
    ) {
        let mut held = Held {
            rec,
            version,
            fence: self.fence(since),
            renew_at: since + self.lease / 3,
        };
        let mut pause = self.watch;
        let mut poll_at = Instant::now() + pause;
        loop {
            let change = self.store.changed(id, held.version);
            let polled = change.is_none();
            let wake = if polled {
                held.renew_at.min(held.fence).min(poll_at)
            } else {
                held.renew_at.min(held.fence)
            };
            let announced = async {
                match change {
                    Some(c) => c.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = announced => {
                    if !self.still_ours(id, run, &mut held, pause).await {
                        return;
                    }
                    continue;
                }
                () = sleep_until(wake) => {}
            }
            let now = Instant::now();
            if now >= held.fence {
                tracing::warn!(
                    task = short(id),
                    run,
                    "the task's lease could not be renewed: the run stops"
                );
                return;
            }
            if now >= held.renew_at {
                let since = Instant::now();
                match self.renew(id, run, &mut held.rec, &mut held.version).await {
                    Ok(true) => {
                        held.fence = self.fence(since);
                        held.renew_at = since + self.lease / 3;
                    }
                    Ok(false) => return,
                    // Again soon; the fence stops the run if the store stays away.
                    Err(()) => {
                        held.renew_at = now + (self.lease / 12).max(Duration::from_millis(5))
                    }
                }
                continue;
            }
            if polled && now >= poll_at {
                pause = (pause * 2).min(self.watch_max.max(self.watch));
                poll_at = now + pause;
                match self.store.version(id).await {
                    Ok(Some(v)) if v == held.version => {}
                    Ok(None) => return,
                    Ok(Some(_)) => {
                        if !self.still_ours(id, run, &mut held, Duration::ZERO).await {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!(task = short(id), error = %e, "task store failed"),
                }
            }
        }
    }

    /// The record changed (or may have): `false` when the run must stop. Adopts the new
    /// record and version otherwise.
    async fn still_ours(&self, id: &str, run: u64, held: &mut Held, pause: Duration) -> bool {
        match self.load_any(id).await {
            Ok(Some((r, v))) if r.run == run && r.status == TaskStatus::Working => {
                if v == held.version {
                    // Woken with nothing changed (a clock edge at expiry): no spinning.
                    tokio::time::sleep(pause).await;
                }
                (held.rec, held.version) = (r, v);
                true
            }
            Ok(_) => false,
            // The store failed: keep the run, look again later.
            Err(()) => {
                tokio::time::sleep(pause).await;
                true
            }
        }
    }
}
