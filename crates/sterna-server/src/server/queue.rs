//! A request's notifications on their way to the stream that carries them: a bounded queue
//! with one receiving end, made with the request in one allocation (its buffer comes with
//! the first notification). A general channel costs more to make and to end (tokio's
//! aligns its state to a cache line, which the allocator serves on its slow path), and a
//! request needs none of what that buys: one reader, a handful of messages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::sync::Notify;

/// The sending end; a clone is another sender. The queue closes when the last one goes.
pub(crate) struct Sender(Arc<Shared>);

/// The receiving end. Once it goes, senders return at once and what they send is dropped.
pub(crate) struct Receiver(Arc<Shared>);

struct Shared {
    state: Mutex<State>,
    /// Wakes a sender waiting for room (or for the receiver to go).
    room: Notify,
}

struct State {
    items: VecDeque<Vec<u8>>,
    capacity: usize,
    senders: usize,
    receiving: bool,
    /// The receiver waiting for a message, or for the last sender to go.
    waker: Option<Waker>,
}

/// A queue holding up to `capacity` messages (at least one).
pub(crate) fn queue(capacity: usize) -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            capacity: capacity.max(1),
            senders: 1,
            receiving: true,
            waker: None,
        }),
        room: Notify::new(),
    });
    (Sender(shared.clone()), Receiver(shared))
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sender {
    /// Queues `item`, waiting while the queue is full; dropped if the receiver is gone.
    /// Cancel-safe: a send dropped while it waits has queued nothing.
    pub(crate) async fn send(&self, item: Vec<u8>) {
        let mut item = Some(item);
        loop {
            let room = self.0.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            if self.try_send(&mut item) {
                return;
            }
            room.await;
        }
    }

    /// Queues the item unless the queue is full (false); drops it if the receiver is gone.
    fn try_send(&self, item: &mut Option<Vec<u8>>) -> bool {
        let mut state = self.0.lock();
        if !state.receiving {
            return true;
        }
        if state.items.len() >= state.capacity {
            return false;
        }
        state.items.extend(item.take());
        let waker = state.waker.take();
        drop(state);
        if let Some(w) = waker {
            w.wake();
        }
        true
    }
}

impl Clone for Sender {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        Self(self.0.clone())
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders -= 1;
        let waker = if state.senders == 0 {
            state.waker.take()
        } else {
            None
        };
        drop(state);
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl Receiver {
    /// The next message; `None` once every sender is gone and everything sent was read.
    pub(crate) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        let mut state = self.0.lock();
        if let Some(item) = self.pop(&mut state) {
            return Poll::Ready(Some(item));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The next message. Cancel-safe: nothing is taken until it is returned.
    pub(crate) async fn recv(&mut self) -> Option<Vec<u8>> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// A message already sent, if any.
    pub(crate) fn try_recv(&mut self) -> Option<Vec<u8>> {
        let mut state = self.0.lock();
        self.pop(&mut state)
    }

    /// Whether nothing was sent that is still to be read.
    #[cfg(feature = "legacy")]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.lock().items.is_empty()
    }

    /// Takes the oldest message; a sender waiting for room may go on.
    fn pop(&self, state: &mut State) -> Option<Vec<u8>> {
        let was_full = state.items.len() >= state.capacity;
        let item = state.items.pop_front()?;
        if was_full {
            self.0.room.notify_one();
        }
        Some(item)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let items = {
            let mut state = self.0.lock();
            state.receiving = false;
            std::mem::take(&mut state.items)
        };
        drop(items);
        self.0.room.notify_waiters();
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use std::time::Duration;

    #[tokio::test]
    async fn a_full_queue_makes_senders_wait_until_a_message_is_read() {
        let (tx, mut rx) = queue(1);
        tx.send(b"1".to_vec()).await;
        let second = tx.clone();
        let waiting = tokio::spawn(async move { second.send(b"2".to_vec()).await });
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "full: the second send waits");
        assert_eq!(rx.try_recv().as_deref(), Some(&b"1"[..]));
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("room made: the send goes on")
            .expect("no panic");
        assert_eq!(rx.try_recv().as_deref(), Some(&b"2"[..]));
    }

    #[tokio::test]
    async fn senders_waiting_for_room_return_when_the_receiver_goes() {
        let (tx, rx) = queue(1);
        tx.send(b"1".to_vec()).await;
        let waiting = tokio::spawn(async move { tx.send(b"2".to_vec()).await });
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        drop(rx);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the receiver went: the send returns")
            .expect("no panic");
    }

    #[tokio::test]
    async fn a_send_after_the_receiver_went_returns_at_once() {
        let (tx, rx) = queue(1);
        drop(rx);
        for _ in 0..3 {
            assert!(tx.send(b"x".to_vec()).now_or_never().is_some());
        }
    }

    #[tokio::test]
    async fn a_send_dropped_while_it_waits_queues_nothing() {
        let (tx, mut rx) = queue(1);
        tx.send(b"1".to_vec()).await;
        assert!(tx.send(b"2".to_vec()).now_or_never().is_none());
        assert_eq!(rx.try_recv().as_deref(), Some(&b"1"[..]));
        assert_eq!(rx.try_recv(), None, "the dropped send left nothing");
    }

    #[tokio::test]
    async fn messages_come_in_order_then_none_when_every_sender_is_gone() {
        let (tx, mut rx) = queue(8);
        let other = tx.clone();
        tx.send(b"1".to_vec()).await;
        other.send(b"2".to_vec()).await;
        drop(tx);
        assert_eq!(rx.recv().await.as_deref(), Some(&b"1"[..]));
        drop(other);
        assert_eq!(rx.recv().await.as_deref(), Some(&b"2"[..]));
        assert_eq!(rx.recv().await, None);
    }
}
