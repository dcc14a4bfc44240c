//! Notifications: progress, logging, cancellation and change notifications.

use crate::jsonrpc::{NotificationMethod, RequestId};
use crate::meta::{LoggingLevel, NotificationMeta, ProgressToken};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far (increases).
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// The params of `notifications/message` (deprecated logging feature).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Logger name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON.
    pub data: Value,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// The params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel.
    pub request_id: RequestId,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Params with only `_meta` (list-changed notifications).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// The params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// The resource that changed.
    pub uri: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

macro_rules! notification {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $ty {}
        impl NotificationMethod for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
        }
    };
}

notification!(
    /// `notifications/progress`.
    Progress, "notifications/progress", ProgressNotificationParams
);
notification!(
    /// `notifications/message`.
    LoggingMessage, "notifications/message", LoggingMessageNotificationParams
);
notification!(
    /// `notifications/cancelled`.
    Cancelled, "notifications/cancelled", CancelledNotificationParams
);
notification!(
    /// `notifications/tools/list_changed`.
    ToolListChanged, "notifications/tools/list_changed", NotificationParams
);
notification!(
    /// `notifications/prompts/list_changed`.
    PromptListChanged, "notifications/prompts/list_changed", NotificationParams
);
notification!(
    /// `notifications/resources/list_changed`.
    ResourceListChanged, "notifications/resources/list_changed", NotificationParams
);
notification!(
    /// `notifications/resources/updated`.
    ResourceUpdated, "notifications/resources/updated", ResourceUpdatedNotificationParams
);
