//! A future polled only when it asked to be: [`OnWake`].
//!
//! A connection's task is woken at every read and write of its socket, and a future
//! beside the connection in the same task (its watchdog's timers and shutdown token, a
//! pushed question's deadline and cancellation) would be polled again each time, for
//! nothing: a timer re-registers its waker, a token takes its lock. Wrapped in [`OnWake`],
//! it is polled once, then only after its own waker fired.

use futures_util::task::AtomicWaker;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

pin_project_lite::pin_project! {
    /// `inner`, polled on its first poll and then only once its own waker has fired.
    pub(crate) struct OnWake<F> {
        #[pin]
        inner: F,
        flag: Arc<Flag>,
        waker: Waker,
    }
}

/// Whether the inner future's waker fired, and the task to wake when it does.
struct Flag {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Set before the task is woken: the poll that follows sees it.
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F: Future> OnWake<F> {
    pub(crate) fn new(inner: F) -> Self {
        let flag = Arc::new(Flag {
            woken: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(flag.clone());
        Self { inner, flag, waker }
    }

    /// The future inside, to change between polls (a change that needs it polled again
    /// must wake its waker).
    #[cfg_attr(
        not(all(feature = "http", feature = "legacy")),
        allow(dead_code, reason = "used by the 2025 wing over HTTP")
    )]
    pub(crate) fn inner(self: Pin<&mut Self>) -> Pin<&mut F> {
        self.project().inner
    }
}

impl<F: Future> Future for OnWake<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let me = self.project();
        // Registered before the flag is read: a wake between the two is not lost.
        me.flag.task.register(cx.waker());
        if !me.flag.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        me.inner.poll(&mut Context::from_waker(me.waker))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts its polls; ready once `ready` is set, waking through the last waker it saw.
    struct Probe {
        polls: Arc<AtomicUsize>,
        ready: Arc<AtomicBool>,
        waker: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl Future for Probe {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            if self.ready.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    fn polled_first_then_only_after_its_own_wake() {
        let polls = Arc::new(AtomicUsize::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let inner_waker = Arc::new(std::sync::Mutex::new(None::<Waker>));
        let mut f = Box::pin(OnWake::new(Probe {
            polls: polls.clone(),
            ready: ready.clone(),
            waker: inner_waker.clone(),
        }));
        let task = Arc::new(Counter::default());
        let task_waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&task_waker);
        assert!(f.as_mut().poll(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), 1, "the first poll reaches it");
        for _ in 0..5 {
            assert!(f.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(
            polls.load(Ordering::SeqCst),
            1,
            "the task's other wakes do not"
        );
        ready.store(true, Ordering::SeqCst);
        inner_waker.lock().unwrap().take().unwrap().wake();
        assert_eq!(task.0.load(Ordering::SeqCst), 1, "its wake wakes the task");
        assert!(f.as_mut().poll(&mut cx).is_ready());
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    }

    #[derive(Default)]
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}
