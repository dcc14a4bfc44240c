//! A server that says it is busy — `429 Too Many Requests` or `503 Service Unavailable`
//! with `Retry-After` — did not run the request: it is sent again after the wait it names,
//! at most [`MAX_AGAIN`] times. Without `Retry-After` (a share that will not free up soon,
//! such as a client's sessions), or with a wait over [`MAX_WAIT`] (in seconds or until an
//! HTTP date), the refusal is the answer.

use http::header::RETRY_AFTER;
use http::{Response, StatusCode};
use std::time::{Duration, SystemTime};

/// How many times one request is sent again.
pub(super) const MAX_AGAIN: usize = 3;
/// The longest wait asked for that is waited for.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(10);

/// The wait a busy answer asks for: `Retry-After` in seconds, or an HTTP date (a date
/// past is no wait).
pub(super) fn wait_of<B>(response: &Response<B>) -> Option<Duration> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::SERVICE_UNAVAILABLE {
        return None;
    }
    let value = response.headers().get(RETRY_AFTER)?.to_str().ok()?.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => until(httpdate::parse_http_date(value).ok()?),
    };
    Some(wait).filter(|w| *w <= MAX_WAIT)
}

/// How long until `at` (nothing when it is past).
fn until(at: SystemTime) -> Duration {
    at.duration_since(SystemTime::now()).unwrap_or_default()
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
        assert_eq!(wait_of(&answer(429, Some("soon"))), None, "unreadable");
    }

    #[test]
    fn an_http_date_is_the_wait_until_it() {
        let at = |secs: i64| {
            let now = std::time::SystemTime::now();
            let t = if secs >= 0 {
                now + Duration::from_secs(secs as u64)
            } else {
                now - Duration::from_secs(secs.unsigned_abs())
            };
            httpdate::fmt_http_date(t)
        };
        let soon = wait_of(&answer(503, Some(&at(5)))).expect("5 s ahead is waited for");
        assert!(
            soon > Duration::from_secs(3) && soon <= Duration::from_secs(5),
            "{soon:?}"
        );
        assert_eq!(
            wait_of(&answer(429, Some(&at(-60)))),
            Some(Duration::ZERO),
            "past"
        );
        assert_eq!(wait_of(&answer(429, Some(&at(3600)))), None, "too far");
        let obsolete = "Wednesday, 21-Oct-26 07:28:00 GMT";
        assert_eq!(wait_of(&answer(429, Some(obsolete))), Some(Duration::ZERO));
    }
}
