//! The quiet side of a driven stream ([`driven`](super::driven)): its cut, and its
//! keep-alive comment when nothing was sent for a while.
//!
//! Made once per stream and polled (through [`OnWake`](crate::wake::OnWake)) only when one
//! of them fires: a stream sends its request's messages as they come, and a timer and a
//! cancellation wait made anew for each (registered, then dropped) cost more than the
//! message.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::time::{Instant, Sleep, sleep_until};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Why a driven stream's quiet wait ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Quiet {
    /// The stream was cut (its session closed, or the server shut down).
    Cut,
    /// Nothing was sent for the keep-alive interval.
    KeepAlive,
}

pin_project_lite::pin_project! {
    /// Completes when the stream is cut, or when nothing was sent for `every` (counted
    /// from `sent`, when the stream last sent something).
    pub(super) struct Quieting {
        #[pin]
        cut: WaitForCancellationFutureOwned,
        #[pin]
        timer: Sleep,
        every: Duration,
        sent: Instant,
    }
}

impl Quieting {
    pub(super) fn new(cut: CancellationToken, every: Duration) -> Self {
        let now = Instant::now();
        Self {
            cut: cut.cancelled_owned(),
            timer: sleep_until(now + every),
            every,
            sent: now,
        }
    }

    /// The stream sent something: the next keep-alive is due `every` after it. The timer
    /// is not touched: when it fires early, it is set again for then.
    pub(super) fn sent(self: Pin<&mut Self>) {
        *self.project().sent = Instant::now();
    }
}

impl Future for Quieting {
    type Output = Quiet;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Quiet> {
        let mut me = self.project();
        if me.cut.poll(cx).is_ready() {
            return Poll::Ready(Quiet::Cut);
        }
        loop {
            ready!(me.timer.as_mut().poll(cx));
            let due = *me.sent + *me.every;
            let now = Instant::now();
            if due <= now {
                me.timer.as_mut().reset(now + *me.every);
                return Poll::Ready(Quiet::KeepAlive);
            }
            // Something was sent since the timer was set: it fires `every` after that.
            me.timer.as_mut().reset(due);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wake::OnWake;

    #[tokio::test(start_paused = true)]
    async fn a_keep_alive_only_after_a_quiet_interval_and_the_cut_at_once() {
        let cut = CancellationToken::new();
        let every = Duration::from_secs(10);
        let mut quiet = Box::pin(OnWake::new(Quieting::new(cut.clone(), every)));
        let start = Instant::now();
        assert_eq!(quiet.as_mut().await, Quiet::KeepAlive);
        assert_eq!(start.elapsed(), every, "quiet from the start");
        // Something sent 4 s into the next interval pushes the keep-alive back to 14 s.
        tokio::time::sleep(Duration::from_secs(4)).await;
        quiet.as_mut().inner().sent();
        let sent = Instant::now();
        assert_eq!(quiet.as_mut().await, Quiet::KeepAlive);
        assert_eq!(sent.elapsed(), every, "counted from the last thing sent");
        let waiting = tokio::spawn(async move { quiet.as_mut().await });
        tokio::time::sleep(Duration::from_secs(1)).await;
        cut.cancel();
        assert_eq!(waiting.await.unwrap(), Quiet::Cut);
    }
}
