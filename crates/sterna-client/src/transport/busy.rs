//! A server that says it is busy — `429 Too Many Requests` or `503 Service Unavailable`
//! with `Retry-After` — did not run the request: it is sent again after the wait it names,
//! at most [`MAX_AGAIN`] times. Without `Retry-After` (a share that will not free up soon,
//! such as a client's sessions), or with a wait over [`MAX_WAIT`], the refusal is the
//! answer.

use http::header::RETRY_AFTER;
use http::{Response, StatusCode};
use std::time::Duration;

/// How many times one request is sent again.
pub(super) const MAX_AGAIN: usize = 3;
/// The longest wait asked for that is waited for.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(10);

/// The wait a busy answer asks for (`Retry-After` in seconds; an HTTP date is not read).
pub(super) fn wait_of<B>(response: &Response<B>) -> Option<Duration> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::SERVICE_UNAVAILABLE {
        return None;
    }
    let seconds: u64 = response
        .headers()
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds)).filter(|w| *w <= MAX_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, retry_after: Option<&str>) -> Response<()> {
        let mut r = Response::builder().status(status);
        if let Some(v) = retry_after {
            r = r.header(RETRY_AFTER, v);
        }
        r.body(()).unwrap()
    }

    #[test]
    fn only_a_busy_status_with_a_short_retry_after_is_waited_for() {
        assert_eq!(
            wait_of(&answer(429, Some("1"))),
            Some(Duration::from_secs(1))
        );
        assert_eq!(wait_of(&answer(503, Some(" 0 "))), Some(Duration::ZERO));
        assert_eq!(wait_of(&answer(429, None)), None, "no Retry-After");
        assert_eq!(wait_of(&answer(500, Some("1"))), None, "not busy");
        assert_eq!(wait_of(&answer(429, Some("3600"))), None, "too long");
        assert_eq!(wait_of(&answer(429, Some("-1"))), None);
        let date = "Wed, 21 Oct 2026 07:28:00 GMT";
        assert_eq!(
            wait_of(&answer(503, Some(date))),
            None,
            "a date is not read"
        );
    }
}
