//! `tasks/get`, `tasks/update`, `tasks/cancel`. The extension's gate ran before
//! (`dispatch.rs`); here: the params, then the lookup (every id that cannot be served
//! gets the same `-32602`).

use super::ops::not_found;
use super::record::now_ms;
use crate::server::context::RequestEnv;
use crate::server::core::Server;
use crate::server::request::TaskParams;
use crate::server::response::Response;
use serde_json::value::{RawValue, to_raw_value};
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::ResultMeta;
use sterna_types::result::{EmptyResult, ResultType};
use sterna_types::tasks::GetTaskResult;

impl Server {
    /// Serves one `tasks/*` request.
    pub(crate) async fn task_method(
        &self,
        id: RequestId,
        method: &str,
        p: TaskParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let body = match p.task_id() {
            None => Err(ErrorObject::invalid_params("taskId must be a string")),
            Some(task) => match method {
                "tasks/get" => self.get_task(&task, &env).await,
                "tasks/update" => self.update_task(&task, &p, &env).await,
                _ => self.cancel_task(&task, &env).await,
            },
        };
        Some(Response::with(id, body))
    }

    fn principal_of(env: &RequestEnv) -> &str {
        env.principal.id().unwrap_or("")
    }

    async fn get_task(&self, task: &str, env: &RequestEnv) -> Result<Box<RawValue>, ErrorObject> {
        let tasks = self.inner.tasks.as_ref().ok_or_else(not_found)?;
        let audience = &self.inner.info.name;
        let (rec, _) = tasks.find(task, audience, Self::principal_of(env)).await?;
        let result = GetTaskResult {
            result_type: ResultType::Complete,
            task: rec.detailed(task),
            meta: self.result_meta(),
        };
        Ok(to_raw_value(&result).expect("results serialize"))
    }

    async fn update_task(
        &self,
        task: &str,
        p: &TaskParams<'_>,
        env: &RequestEnv,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let tasks = self.inner.tasks.as_ref().ok_or_else(not_found)?;
        let responses = crate::server::round::input_responses(&p.input_responses)?;
        let audience = &self.inner.info.name;
        let now = now_ms();
        let (rec, ready) = tasks
            .modify(task, audience, Self::principal_of(env), |r| {
                r.answer(&responses, now)
            })
            .await?;
        if ready == Some(true) {
            self.start_run(task.to_owned(), rec.run, env.principal.clone());
        }
        Ok(self.ack())
    }

    async fn cancel_task(
        &self,
        task: &str,
        env: &RequestEnv,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let tasks = self.inner.tasks.as_ref().ok_or_else(not_found)?;
        let audience = &self.inner.info.name;
        let now = now_ms();
        let (_, cancelled) = tasks
            .modify(task, audience, Self::principal_of(env), |r| {
                r.cancel(now).then_some(())
            })
            .await?;
        if cancelled.is_some() {
            tracing::debug!(task = super::short(task), "task cancelled");
            if let Some((_, token)) = tasks.running().get(task) {
                token.cancel();
            }
        }
        Ok(self.ack())
    }

    fn result_meta(&self) -> Option<ResultMeta> {
        Some(ResultMeta {
            server_info: Some(self.inner.info.clone()),
            ..ResultMeta::default()
        })
    }

    /// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
    fn ack(&self) -> Box<RawValue> {
        let ack = EmptyResult {
            result_type: ResultType::Complete,
            meta: self.result_meta(),
        };
        to_raw_value(&ack).expect("results serialize")
    }
}
