//! What servers tell the client on their own: list changes, resource updates, completed
//! URL elicitations, progress, log messages — as typed [`ServerEvent`]s, to a callback
//! ([`ClientBuilder::on_event`](super::ClientBuilder::on_event)) and to any number of
//! receivers ([`Client::events`](super::Client::events)), from either era.

use super::transport::NotificationSink;
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna_types::notifications::{LoggingMessageNotificationParams, ProgressNotificationParams};
use tokio::sync::{Notify, broadcast};

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/prompts/list_changed`.
    PromptsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// `notifications/resources/updated` (a subscribed resource changed).
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/elicitation/complete` (2025-11-25): the out-of-band interaction of
    /// a URL elicitation finished.
    ElicitationComplete {
        /// The `elicitationId` of the URL elicitation.
        elicitation_id: String,
    },
    /// `notifications/progress`.
    Progress(ProgressNotificationParams),
    /// `notifications/message`.
    Log(LoggingMessageNotificationParams),
    /// `notifications/tasks`: a task's new state (also raised by the client itself
    /// while it follows a task, for each change it sees).
    Task(Box<sterna_types::tasks::DetailedTask>),
    /// Any other notification.
    Other {
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
}

impl ServerEvent {
    /// Reads a notification (the whole JSON-RPC message); `None` when it is not one.
    pub fn parse(message: &[u8]) -> Option<Self> {
        let v: Value = serde_json::from_slice(message).ok()?;
        let method = v.get("method")?.as_str()?.to_owned();
        if v.get("id").is_some() {
            return None;
        }
        let params = v.get("params").cloned();
        let p = params.clone().unwrap_or(Value::Null);
        let typed = match method.as_str() {
            "notifications/tools/list_changed" => Some(Self::ToolsChanged),
            "notifications/prompts/list_changed" => Some(Self::PromptsChanged),
            "notifications/resources/list_changed" => Some(Self::ResourcesChanged),
            "notifications/resources/updated" => {
                p.get("uri")
                    .and_then(Value::as_str)
                    .map(|uri| Self::ResourceUpdated {
                        uri: uri.to_owned(),
                    })
            }
            "notifications/elicitation/complete" => p
                .get("elicitationId")
                .and_then(Value::as_str)
                .map(|id| Self::ElicitationComplete {
                    elicitation_id: id.to_owned(),
                }),
            "notifications/progress" => serde_json::from_value(p).ok().map(Self::Progress),
            "notifications/message" => serde_json::from_value(p).ok().map(Self::Log),
            "notifications/tasks" => serde_json::from_value(p)
                .ok()
                .map(|t| Self::Task(Box::new(t))),
            _ => None,
        };
        Some(typed.unwrap_or(Self::Other { method, params }))
    }
}

/// A callback for events.
pub(crate) type EventCallback = Arc<dyn Fn(ServerEvent) + Send + Sync>;

/// How many completed elicitation ids are remembered (for calls waiting on them).
const REMEMBERED: usize = 256;

/// Where notifications go: the raw sink, the typed callback, the receivers, and the
/// record of completed URL elicitations.
pub(crate) struct EventHub {
    raw: Option<NotificationSink>,
    callback: Option<EventCallback>,
    sender: broadcast::Sender<ServerEvent>,
    completed: Mutex<VecDeque<String>>,
    completion: Notify,
}

impl EventHub {
    pub(crate) fn new(raw: Option<NotificationSink>, callback: Option<EventCallback>) -> Self {
        Self {
            raw,
            callback,
            sender: broadcast::channel(64).0,
            completed: Mutex::default(),
            completion: Notify::new(),
        }
    }

    /// Delivers one notification (the whole JSON-RPC message).
    pub(crate) fn deliver(&self, message: &[u8]) {
        if let Some(raw) = &self.raw {
            raw(message);
        }
        let Some(event) = ServerEvent::parse(message) else {
            return;
        };
        if let ServerEvent::ElicitationComplete { elicitation_id } = &event {
            let mut done = self.completed.lock().unwrap_or_else(|p| p.into_inner());
            if done.len() == REMEMBERED {
                done.pop_front();
            }
            done.push_back(elicitation_id.clone());
            drop(done);
            self.completion.notify_waiters();
        }
        if let Some(cb) = &self.callback {
            cb(event.clone());
        }
        let _ = self.sender.send(event);
    }

    /// A sink that delivers here (for transports that take one).
    pub(crate) fn sink(self: &Arc<Self>) -> NotificationSink {
        let me = self.clone();
        Arc::new(move |m: &[u8]| me.deliver(m))
    }

    /// A new receiver of every event from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerEvent> {
        self.sender.subscribe()
    }

    /// Waits until every id in `ids` was completed, or `limit` passed; true when all were.
    pub(crate) async fn completed(&self, ids: &[String], limit: Duration) -> bool {
        let all = || {
            let done = self.completed.lock().unwrap_or_else(|p| p.into_inner());
            let done: HashSet<&String> = done.iter().collect();
            ids.iter().all(|i| done.contains(i))
        };
        let wait = async {
            loop {
                let notified = self.completion.notified();
                if all() {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_become_events() {
        let ev = |m: &str| ServerEvent::parse(m.as_bytes());
        assert_eq!(
            ev(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#),
            Some(ServerEvent::ToolsChanged)
        );
        assert_eq!(
            ev(
                r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}"#
            ),
            Some(ServerEvent::ResourceUpdated {
                uri: "file:///a".into()
            })
        );
        assert_eq!(
            ev(
                r#"{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e1"}}"#
            ),
            Some(ServerEvent::ElicitationComplete {
                elicitation_id: "e1".into()
            })
        );
        assert!(matches!(
            ev(r#"{"jsonrpc":"2.0","method":"x/y","params":{"a":1}}"#),
            Some(ServerEvent::Other { .. })
        ));
        assert_eq!(ev(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
    }

    #[tokio::test]
    async fn a_call_can_wait_for_completed_elicitations() {
        let hub = Arc::new(EventHub::new(None, None));
        let h = hub.clone();
        let waiter = tokio::spawn(async move {
            h.completed(&["a".into(), "b".into()], Duration::from_secs(5))
                .await
        });
        for id in ["a", "zz", "b"] {
            tokio::task::yield_now().await;
            hub.deliver(format!(r#"{{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{{"elicitationId":"{id}"}}}}"#).as_bytes());
        }
        assert!(waiter.await.unwrap());
        assert!(
            !hub.completed(&["never".into()], Duration::from_millis(20))
                .await
        );
    }
}
