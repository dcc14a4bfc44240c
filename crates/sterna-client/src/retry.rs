//! What the client does when an attempt fails, as a policy in the manner of
//! `tower::retry::Policy`: it may rewrite the request for the next attempt, and a budget
//! per kind of failure caps the attempts.

use super::error::{ClientError, TransportError};
use sterna_types::error::{ErrorCode, ErrorObject};

/// One attempt's request, as the policy may rewrite it.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    /// The protocol version the attempt declares.
    pub(crate) version: String,
}

/// How an attempt failed.
#[derive(Debug)]
pub(crate) enum Failure {
    Transport(TransportError),
    Server(ErrorObject),
    Client(ClientError),
}

impl From<Failure> for ClientError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Transport(e) => ClientError::Transport(e),
            Failure::Server(e) => ClientError::Server(e),
            Failure::Client(e) => e,
        }
    }
}

/// What to do before the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Send again (with a new id, and the request as the policy rewrote it).
    Retry,
    /// Refresh the tools' header annotations (`tools/list`), then send again.
    RefreshTools,
}

/// The client's retry policy:
/// * a response stream that broke is re-issued with a new id (twice at most);
/// * `-32022` switches to a version both sides support (once);
/// * `-32020` on `tools/call` refreshes the `x-mcp-header` annotations (once).
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    method_is_call: bool,
    broken: u8,
    version: u8,
    headers: u8,
}

impl Policy {
    pub(crate) fn new(method: &str) -> Self {
        Self {
            method_is_call: method == "tools/call",
            broken: 2,
            version: 1,
            headers: 1,
        }
    }

    /// Decides after a failed attempt: the next step (having rewritten `attempt`), or the
    /// error to return.
    pub(crate) fn retry(
        &mut self,
        attempt: &mut Attempt,
        failure: Failure,
    ) -> Result<Next, ClientError> {
        match failure {
            Failure::Transport(TransportError::StreamBroken) if take(&mut self.broken) => {
                tracing::debug!("response stream broke; re-issuing with a new id");
                Ok(Next::Retry)
            }
            Failure::Server(e)
                if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && take(&mut self.version) =>
            {
                attempt.version = common_version(&e)?;
                Ok(Next::Retry)
            }
            Failure::Server(e)
                if e.code == ErrorCode::HEADER_MISMATCH
                    && self.method_is_call
                    && take(&mut self.headers) =>
            {
                tracing::debug!("header mismatch; refreshing tools/list and retrying once");
                Ok(Next::RefreshTools)
            }
            other => Err(other.into()),
        }
    }
}

/// Spends one unit of a budget; false when it is spent.
fn take(budget: &mut u8) -> bool {
    let left = *budget > 0;
    *budget = budget.saturating_sub(1);
    left
}

/// The newest version this client speaks among those a `-32022` error lists.
fn common_version(e: &ErrorObject) -> Result<String, ClientError> {
    let supported: Vec<String> = e
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default();
    sterna_types::version::MODERN_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s == *v))
        .map(|v| (*v).to_owned())
        .ok_or(ClientError::Incompatible { supported })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attempt() -> Attempt {
        Attempt {
            version: "2026-07-28".into(),
        }
    }

    #[test]
    fn budgets_cap_each_kind_of_retry() {
        let mut p = Policy::new("tools/call");
        let mut a = attempt();
        for _ in 0..2 {
            let f = Failure::Transport(TransportError::StreamBroken);
            assert_eq!(p.retry(&mut a, f).unwrap(), Next::Retry);
        }
        let f = Failure::Transport(TransportError::StreamBroken);
        assert!(p.retry(&mut a, f).is_err());
        let mismatch = || Failure::Server(ErrorObject::header_mismatch("x"));
        assert_eq!(p.retry(&mut a, mismatch()).unwrap(), Next::RefreshTools);
        assert!(p.retry(&mut a, mismatch()).is_err());
        // Not a tools/call: header mismatches are not retried.
        let mut p = Policy::new("prompts/get");
        assert!(p.retry(&mut a, mismatch()).is_err());
    }

    #[test]
    fn a_version_error_rewrites_the_attempt() {
        let mut p = Policy::new("tools/list");
        let mut a = Attempt {
            version: "2099-01-01".into(),
        };
        let e = ErrorObject::unsupported_version(&["2026-07-28"], "2099-01-01");
        assert_eq!(
            p.retry(&mut a, Failure::Server(e.clone())).unwrap(),
            Next::Retry
        );
        assert_eq!(a.version, "2026-07-28");
        // Once only.
        assert!(p.retry(&mut a, Failure::Server(e)).is_err());
        let mut p = Policy::new("tools/list");
        let e = ErrorObject::unsupported_version(&["1999-01-01"], "2026-07-28")
            .with_data(json!({"supported": ["1999-01-01"], "requested": "2026-07-28"}));
        assert!(matches!(
            p.retry(&mut a, Failure::Server(e)),
            Err(ClientError::Incompatible { .. })
        ));
    }
}
