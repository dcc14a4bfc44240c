//! `-32042` URLElicitationRequiredError (2025-11-25): a request that cannot go on until
//! the user completes URL elicitations out of band. The client shows each URL (with the
//! URL handler), waits for `notifications/elicitation/complete` of each, then sends the
//! request again.

use crate::events::EventHub;
use crate::handlers::UrlHandler;
use serde_json::Value;
use std::time::Duration;
use sterna_types::elicitation::{ElicitAction, ElicitUrlParams};
use sterna_types::error::{ErrorCode, ErrorObject};

/// The code of URLElicitationRequiredError.
pub(crate) const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

/// How many times one call is sent again after URL elicitations.
pub(crate) const MAX_URL_RETRIES: u32 = 3;

/// How long to wait for `notifications/elicitation/complete` before sending the request
/// again anyway (the user may have finished without the server saying so).
pub(crate) const COMPLETION_WAIT: Duration = Duration::from_secs(300);

/// One URL elicitation a `-32042` error asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Required {
    /// Its `elicitationId`.
    pub(crate) id: String,
    /// What to show.
    pub(crate) params: ElicitUrlParams,
}

/// The URL elicitations of a `-32042` error (`None` for any other error, or one without a
/// usable list).
pub(crate) fn required(e: &ErrorObject) -> Option<Vec<Required>> {
    if e.code != URL_ELICITATION_REQUIRED {
        return None;
    }
    let list = e.data.as_ref()?.get("elicitations")?.as_array()?;
    let found: Vec<Required> = list
        .iter()
        .filter_map(|el| {
            Some(Required {
                id: el.get("elicitationId")?.as_str()?.to_owned(),
                params: ElicitUrlParams {
                    message: el
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    url: el.get("url")?.as_str()?.to_owned(),
                },
            })
        })
        .collect();
    (!found.is_empty()).then_some(found)
}

/// Shows every URL with `handler`; true when the user accepted them all.
pub(crate) async fn consent(handler: &dyn UrlHandler, list: &[Required]) -> bool {
    for r in list {
        if handler.elicit_url(r.params.clone()).await.action != ElicitAction::Accept {
            return false;
        }
    }
    true
}

/// Waits (bounded) until the server said every elicitation of `list` completed.
pub(crate) async fn completion(events: &EventHub, list: &[Required], limit: Duration) {
    let ids: Vec<String> = list.iter().map(|r| r.id.clone()).collect();
    if !events.completed(&ids, limit.min(COMPLETION_WAIT)).await {
        tracing::info!(
            ?ids,
            "no notifications/elicitation/complete in time; sending the request again anyway"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_elicitations_are_read_from_the_error() {
        let e = ErrorObject::new(URL_ELICITATION_REQUIRED, "auth needed").with_data(json!({
            "elicitations": [
                {"mode": "url", "elicitationId": "e1", "url": "https://example.com/a", "message": "Sign in"},
                {"mode": "url", "url": "https://example.com/no-id"}
            ]
        }));
        let r = required(&e).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].id, "e1");
        assert_eq!(r[0].params.url, "https://example.com/a");
        assert!(required(&ErrorObject::internal("x")).is_none());
    }
}
