//! Where a request's notifications go, and the receiving end a transport reads them from.
//!
//! The HTTP endpoint gives each request a [`Notifier::queued`]: a small bounded queue
//! ([`super::queue`]) made with the request, whose buffer comes with the first
//! notification (most requests never notify).

#[cfg(feature = "http")]
use super::queue;
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
    Queue(queue::Sender),
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
    /// A notifier whose queue holds up to `capacity` messages, and the receiving end.
    pub(crate) fn queued(capacity: usize) -> (Self, Notifications) {
        let (tx, rx) = queue::queue(capacity);
        (Self(Route::Queue(tx)), rx)
    }

    /// Sends a notification, waiting while its stream is full; a stream that is gone
    /// means the request is gone, and there is nobody left to tell.
    pub(crate) async fn send(&self, bytes: Vec<u8>) {
        match &self.0 {
            Route::Channel(tx) => {
                let _ = tx.send(bytes).await;
            }
            #[cfg(feature = "http")]
            Route::Queue(tx) => tx.send(bytes).await,
        }
    }
}

#[cfg(feature = "http")]
/// The receiving end of a [`Notifier::queued`].
pub(crate) type Notifications = queue::Receiver;

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use std::time::Duration;

    #[tokio::test]
    async fn each_notification_is_read_once() {
        let (n, mut rx) = Notifier::queued(4);
        assert_eq!(rx.try_recv(), None);
        n.send(b"one".to_vec()).await;
        assert_eq!(rx.try_recv().as_deref(), Some(&b"one"[..]));
        assert_eq!(rx.try_recv(), None);
    }

    #[cfg(feature = "legacy")]
    #[tokio::test]
    async fn empty_until_something_is_sent_and_after_it_is_read() {
        let (n, mut rx) = Notifier::queued(4);
        assert!(rx.is_empty());
        n.send(b"one".to_vec()).await;
        assert!(!rx.is_empty());
        assert_eq!(rx.try_recv().as_deref(), Some(&b"one"[..]));
        assert!(rx.is_empty());
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_at_the_first_notification() {
        let (n, mut rx) = Notifier::queued(4);
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
        let (n, mut rx) = Notifier::queued(4);
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
        let (n, mut rx) = Notifier::queued(4);
        n.send(b"one".to_vec()).await;
        drop(n);
        assert_eq!(rx.recv().await.as_deref(), Some(&b"one"[..]));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn notifiers_gone_without_sending_end_a_waiting_receiver() {
        let (n, mut rx) = Notifier::queued(4);
        let second = n.clone();
        let waiting = tokio::spawn(async move { rx.recv().await });
        for _ in 0..4 {
            tokio::task::yield_now().await; // the receiver waits first
        }
        drop(n);
        drop(second);
        let got = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert_eq!(got.expect("woken").expect("no panic"), None);
        let (n, mut rx) = Notifier::queued(4);
        drop(n);
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn the_capacity_bounds_the_queue() {
        let (n, mut rx) = Notifier::queued(2);
        n.send(b"1".to_vec()).await;
        n.send(b"2".to_vec()).await;
        let third = n.send(b"3".to_vec()).now_or_never();
        assert!(third.is_none(), "a full channel makes the sender wait");
        assert_eq!(rx.try_recv().as_deref(), Some(&b"1"[..]));
    }
}
