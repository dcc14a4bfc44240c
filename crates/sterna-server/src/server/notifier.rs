//! Where a request's notifications go, and the receiving end a transport reads them from.
//!
//! Most requests never notify. `Notifier::deferred` (the HTTP endpoint's) makes the channel
//! at the first notification instead of with every request: until then both ends share
//! small cells, and the receiving end (`Notifications`) is woken when the channel opens.

#[cfg(feature = "http")]
use std::sync::{Arc, Mutex, OnceLock, Weak};
#[cfg(feature = "http")]
use tokio::sync::Notify;
use tokio::sync::mpsc;

/// Where a request's notifications (progress, log messages) go: the stream of that
/// request. Transports create it; handlers use [`Context::progress`] and [`Context::log`].
///
/// [`Context::progress`]: crate::Context::progress
/// [`Context::log`]: crate::Context::log
#[derive(Debug, Clone)]
pub struct Notifier(Route);

#[derive(Debug, Clone)]
enum Route {
    Channel(mpsc::Sender<Vec<u8>>),
    #[cfg(feature = "http")]
    Deferred(Arc<Deferred>),
}

#[cfg(feature = "http")]
/// The sending side of a channel made at the first notification; dropped with the last
/// notifier, which closes the channel (or tells a receiving end still waiting for it).
#[derive(Debug)]
struct Deferred {
    capacity: usize,
    tx: OnceLock<mpsc::Sender<Vec<u8>>>,
    opened: Arc<Opened>,
}

#[cfg(feature = "http")]
/// The receiving end until [`Notifications`] takes it, and its wake-up.
#[derive(Debug, Default)]
struct Opened {
    rx: Mutex<Option<mpsc::Receiver<Vec<u8>>>>,
    notify: Notify,
}

impl Notifier {
    /// A notifier and the receiving end of its channel (holding up to `capacity` messages).
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<Vec<u8>>) {
        let (tx, rx) = mpsc::channel(capacity);
        (Self(Route::Channel(tx)), rx)
    }

    /// A notifier writing into an existing channel (a transport's writer queue).
    pub fn from_sender(sender: mpsc::Sender<Vec<u8>>) -> Self {
        Self(Route::Channel(sender))
    }

    #[cfg(feature = "http")]
    /// A notifier whose channel (holding up to `capacity` messages) is made when it first
    /// sends, and the receiving end.
    pub(crate) fn deferred(capacity: usize) -> (Self, Notifications) {
        let opened = Arc::new(Opened::default());
        let cell = Arc::new(Deferred {
            capacity,
            tx: OnceLock::new(),
            opened: opened.clone(),
        });
        let rx = Notifications {
            cell: Arc::downgrade(&cell),
            opened,
            rx: None,
        };
        (Self(Route::Deferred(cell)), rx)
    }

    #[cfg_attr(
        not(feature = "http"),
        allow(
            clippy::infallible_destructuring_match,
            reason = "the deferred route comes with the http feature"
        )
    )]
    pub(crate) async fn send(&self, bytes: Vec<u8>) {
        let tx = match &self.0 {
            Route::Channel(tx) => tx,
            #[cfg(feature = "http")]
            Route::Deferred(cell) => cell.sender(),
        };
        // A closed stream means the request is gone; there is nobody left to tell.
        let _ = tx.send(bytes).await;
    }
}

#[cfg(feature = "http")]
impl Deferred {
    fn sender(&self) -> &mpsc::Sender<Vec<u8>> {
        self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel(self.capacity);
            *self.opened.slot() = Some(rx);
            self.opened.notify.notify_one();
            tx
        })
    }
}

#[cfg(feature = "http")]
impl Drop for Deferred {
    /// A receiving end waiting for a channel that no notifier opened learns there is none.
    fn drop(&mut self) {
        self.opened.notify.notify_one();
    }
}

#[cfg(feature = "http")]
impl Opened {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<mpsc::Receiver<Vec<u8>>>> {
        self.rx.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(feature = "http")]
/// The receiving end of a [`Notifier::deferred`]: nothing until the first notification.
#[derive(Debug)]
pub(crate) struct Notifications {
    cell: Weak<Deferred>,
    opened: Arc<Opened>,
    rx: Option<mpsc::Receiver<Vec<u8>>>,
}

#[cfg(feature = "http")]
impl Notifications {
    /// The next notification; `None` once every notifier is gone and everything sent was
    /// read. Cancel-safe.
    pub(crate) async fn recv(&mut self) -> Option<Vec<u8>> {
        if self.rx.is_none() {
            self.rx = Some(self.opened().await?);
        }
        self.rx.as_mut()?.recv().await
    }

    /// A notification already sent, if any.
    pub(crate) fn try_recv(&mut self) -> Option<Vec<u8>> {
        self.take();
        self.rx.as_mut()?.try_recv().ok()
    }

    /// Whether nothing was sent that is still to be read.
    #[cfg(feature = "legacy")]
    pub(crate) fn is_empty(&mut self) -> bool {
        self.take();
        self.rx.as_ref().is_none_or(|rx| rx.is_empty())
    }

    /// The channel's receiving end (opened now if no notification opened it), for a
    /// stream that goes on reading after the request's first turn.
    pub(crate) fn into_receiver(mut self) -> mpsc::Receiver<Vec<u8>> {
        if let Some(cell) = self.cell.upgrade() {
            cell.sender();
        }
        self.take();
        // No notifier is left and none ever sent: a channel already closed.
        self.rx.unwrap_or_else(|| mpsc::channel(1).1)
    }

    fn take(&mut self) {
        if self.rx.is_none() {
            self.rx = self.opened.slot().take();
        }
    }

    /// The receiving end once a notification opened the channel; `None` when every
    /// notifier went without sending.
    async fn opened(&self) -> Option<mpsc::Receiver<Vec<u8>>> {
        loop {
            let woken = self.opened.notify.notified();
            if let Some(rx) = self.opened.slot().take() {
                return Some(rx);
            }
            if self.cell.strong_count() == 0 {
                // No notifier can open it any more; one may have just before it went.
                return self.opened.slot().take();
            }
            woken.await;
        }
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use std::time::Duration;

    #[tokio::test]
    async fn nothing_is_made_until_the_first_notification() {
        let (n, mut rx) = Notifier::deferred(4);
        let Route::Deferred(cell) = &n.0 else {
            panic!("a deferred notifier")
        };
        assert_eq!(rx.try_recv(), None);
        assert!(cell.tx.get().is_none(), "reading made no channel");
        n.send(b"one".to_vec()).await;
        assert_eq!(rx.try_recv().as_deref(), Some(&b"one"[..]));
        assert_eq!(rx.try_recv(), None);
    }

    #[cfg(feature = "legacy")]
    #[tokio::test]
    async fn empty_until_something_is_sent_and_after_it_is_read() {
        let (n, mut rx) = Notifier::deferred(4);
        assert!(rx.is_empty());
        n.send(b"one".to_vec()).await;
        assert!(!rx.is_empty());
        assert_eq!(rx.try_recv().as_deref(), Some(&b"one"[..]));
        assert!(rx.is_empty());
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_at_the_first_notification() {
        let (n, mut rx) = Notifier::deferred(4);
        let waiting = tokio::spawn(async move {
            let first = rx.recv().await;
            (first, rx.recv().await)
        });
        for _ in 0..4 {
            tokio::task::yield_now().await; // the receiver waits first
        }
        n.send(b"one".to_vec()).await;
        n.clone().send(b"two".to_vec()).await;
        let (first, second) = waiting.await.expect("no panic");
        assert_eq!(first.as_deref(), Some(&b"one"[..]));
        assert_eq!(second.as_deref(), Some(&b"two"[..]));
    }

    #[tokio::test]
    async fn a_receive_dropped_while_waiting_loses_nothing() {
        let (n, mut rx) = Notifier::deferred(4);
        // The select drops the pending receive, as an endpoint's loop does each turn.
        tokio::select! {
            biased;
            _ = rx.recv() => panic!("nothing was sent"),
            () = std::future::ready(()) => {}
        }
        n.send(b"one".to_vec()).await;
        let got = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
        assert_eq!(got.expect("woken").as_deref(), Some(&b"one"[..]));
    }

    #[tokio::test]
    async fn the_channel_ends_when_every_notifier_is_gone() {
        let (n, mut rx) = Notifier::deferred(4);
        n.send(b"one".to_vec()).await;
        drop(n);
        assert_eq!(rx.recv().await.as_deref(), Some(&b"one"[..]));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn notifiers_gone_without_sending_end_a_waiting_receiver() {
        let (n, mut rx) = Notifier::deferred(4);
        let second = n.clone();
        let waiting = tokio::spawn(async move { rx.recv().await });
        for _ in 0..4 {
            tokio::task::yield_now().await; // the receiver waits first
        }
        drop(n);
        drop(second);
        let got = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert_eq!(got.expect("woken").expect("no panic"), None);
        let (n, rx) = Notifier::deferred(4);
        drop(n);
        assert_eq!(rx.into_receiver().recv().await, None);
    }

    #[tokio::test]
    async fn a_receiver_taken_before_any_notification_still_gets_them() {
        let (n, rx) = Notifier::deferred(4);
        let mut rx = rx.into_receiver();
        n.send(b"one".to_vec()).await;
        assert_eq!(rx.recv().await.as_deref(), Some(&b"one"[..]));
        drop(n);
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn the_capacity_bounds_the_deferred_channel() {
        let (n, mut rx) = Notifier::deferred(2);
        n.send(b"1".to_vec()).await;
        n.send(b"2".to_vec()).await;
        let third = n.send(b"3".to_vec()).now_or_never();
        assert!(third.is_none(), "a full channel makes the sender wait");
        assert_eq!(rx.try_recv().as_deref(), Some(&b"1"[..]));
    }
}
