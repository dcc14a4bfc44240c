//! List and resource changes as a 2025-11-25 session reads them: the notifications of
//! the 2025 revisions (no subscription id; resource updates only for subscribed URIs).

use crate::server::Change;

/// The 2025 notification for a change, if this session should get it.
pub(crate) fn notification(change: &Change, subscribed: impl Fn(&str) -> bool) -> Option<Vec<u8>> {
    let (method, params) = match change {
        Change::ToolsListChanged => ("notifications/tools/list_changed", None),
        Change::PromptsListChanged => ("notifications/prompts/list_changed", None),
        Change::ResourcesListChanged => ("notifications/resources/list_changed", None),
        Change::ResourceUpdated(uri) if subscribed(uri) => (
            "notifications/resources/updated",
            Some(serde_json::json!({ "uri": uri })),
        ),
        Change::ResourceUpdated(_) => return None,
    };
    let mut msg = serde_json::json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        msg["params"] = p;
    }
    Some(serde_json::to_vec(&msg).expect("notifications serialize"))
}
