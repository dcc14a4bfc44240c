//! `subscriptions/listen`: the only channel for change notifications in 2026-07-28.

use crate::jsonrpc::{Method, NotificationMethod};
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::result::ResultType;
use serde::{Deserialize, Serialize};

/// Which notifications a listener wants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

/// The params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// What to listen to.
    pub notifications: SubscriptionFilter,
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
}

/// The params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// The filter the server agreed to.
    pub notifications: SubscriptionFilter,
    /// Metadata (`subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// The result that closes a subscription gracefully (`_meta.subscriptionId` set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// Metadata.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

/// `subscriptions/listen`.
#[derive(Debug)]
pub enum SubscriptionsListen {}

impl Method for SubscriptionsListen {
    const NAME: &'static str = "subscriptions/listen";
    type Params = SubscriptionsListenRequestParams;
    type Result = SubscriptionsListenResult;
}

/// `notifications/subscriptions/acknowledged`.
#[derive(Debug)]
pub enum SubscriptionsAcknowledged {}

impl NotificationMethod for SubscriptionsAcknowledged {
    const NAME: &'static str = "notifications/subscriptions/acknowledged";
    type Params = SubscriptionsAcknowledgedParams;
}
