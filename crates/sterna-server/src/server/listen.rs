//! `subscriptions/listen`: acknowledgement, then the opted-in change notifications, each
//! tagged with the subscription id, until the client goes away (nothing more is sent) or
//! the server closes the subscription (a closing result is sent).

use super::changes::Change;
use super::context::RequestEnv;
use super::core::Server;
use super::quota::QuotaKey;
use super::request::params;
use super::response::Response;
use serde::Deserialize;
use serde_json::value::{RawValue, to_raw_value};
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::{NotificationRef, RequestId};
use sterna_types::meta::{NotificationMeta, ResultMeta};
use sterna_types::notifications::{NotificationParams, ResourceUpdatedNotificationParams};
use sterna_types::result::ResultType;
use sterna_types::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenResult,
};
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize)]
struct ListenParams {
    notifications: SubscriptionFilter,
}

fn wants(filter: &SubscriptionFilter, change: &Change) -> bool {
    match change {
        Change::ToolsListChanged => filter.tools_list_changed == Some(true),
        Change::PromptsListChanged => filter.prompts_list_changed == Some(true),
        Change::ResourcesListChanged => filter.resources_list_changed == Some(true),
        Change::ResourceUpdated(uri) => filter
            .resource_subscriptions
            .as_ref()
            .is_some_and(|subs| subs.iter().any(|s| s == uri)),
    }
}

fn encode(id: &RequestId, change: &Change) -> Vec<u8> {
    let meta = Some(NotificationMeta {
        subscription_id: Some(id.clone()),
        ..NotificationMeta::default()
    });
    match change {
        Change::ToolsListChanged => notification(
            "notifications/tools/list_changed",
            &NotificationParams { meta },
        ),
        Change::PromptsListChanged => notification(
            "notifications/prompts/list_changed",
            &NotificationParams { meta },
        ),
        Change::ResourcesListChanged => notification(
            "notifications/resources/list_changed",
            &NotificationParams { meta },
        ),
        Change::ResourceUpdated(uri) => notification(
            "notifications/resources/updated",
            &ResourceUpdatedNotificationParams {
                uri: uri.clone(),
                meta,
            },
        ),
    }
}

fn notification<P: serde::Serialize>(method: &str, params: &P) -> Vec<u8> {
    serde_json::to_vec(&NotificationRef { method, params }).expect("notifications serialize")
}

/// Keeps only what this server can send: list changes of the lists it has.
fn agreed(server: &Server, asked: SubscriptionFilter) -> SubscriptionFilter {
    let lists = server.lists();
    let keep = |asked: Option<bool>, offered: bool| asked.filter(|&a| a && offered);
    SubscriptionFilter {
        tools_list_changed: keep(asked.tools_list_changed, lists.tools.is_some()),
        prompts_list_changed: keep(asked.prompts_list_changed, lists.prompts.is_some()),
        resources_list_changed: keep(asked.resources_list_changed, lists.resources.is_some()),
        resource_subscriptions: asked
            .resource_subscriptions
            .filter(|s| !s.is_empty() && lists.resources.is_some()),
    }
}

pub(crate) async fn listen(
    server: &Server,
    id: RequestId,
    raw: Option<&RawValue>,
    env: RequestEnv,
) -> Option<Response> {
    let p: ListenParams = match params(raw) {
        Ok(p) => p,
        Err(e) => return Some(Response::error(Some(id), e)),
    };
    let Some(notifier) = env.notifier.clone() else {
        return Some(Response::error(
            Some(id),
            ErrorObject::internal("subscriptions/listen needs a transport that can stream"),
        ));
    };
    // Held until the stream ends, however it ends.
    let _place = match server.listeners().take(QuotaKey::of(&env.principal)) {
        Ok(place) => place,
        Err(e) => return Some(Response::error(Some(id), e)),
    };
    let filter = agreed(server, p.notifications);
    let mut changes = server.changes().subscribe();
    let ack = SubscriptionsAcknowledgedParams {
        notifications: filter.clone(),
        meta: Some(NotificationMeta {
            subscription_id: Some(id.clone()),
            ..NotificationMeta::default()
        }),
    };
    notifier
        .send(notification(
            "notifications/subscriptions/acknowledged",
            &ack,
        ))
        .await;
    let closing = server.closing().clone();
    loop {
        tokio::select! {
            biased;
            _ = env.cancel.cancelled() => return None,
            _ = closing.cancelled() => break,
            change = changes.recv() => match change {
                Ok(c) if wants(&filter, &c) => notifier.send(encode(&id, &c)).await,
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(skipped = n, "a listener fell behind; sending list changes conservatively");
                    for c in [Change::ToolsListChanged, Change::PromptsListChanged, Change::ResourcesListChanged] {
                        if wants(&filter, &c) {
                            notifier.send(encode(&id, &c)).await;
                        }
                    }
                }
                Err(RecvError::Closed) => break,
            },
        }
    }
    let result = SubscriptionsListenResult {
        result_type: ResultType::Complete,
        meta: ResultMeta {
            server_info: Some(server.shared_info().clone()),
            subscription_id: Some(id.clone()),
            ..ResultMeta::default()
        },
    };
    Some(Response::ok(
        id,
        to_raw_value(&result).expect("results serialize"),
    ))
}
