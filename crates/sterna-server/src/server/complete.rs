//! `completion/complete`: the registered completer of a prompt argument or a template
//! variable; no completer, no values.

use super::completion::{Completer, CompletionRequest};
use super::context::Context;
use super::core::Server;
use sterna_types::completion::Completion;

/// `completion/complete`: the registered completer of a prompt argument or a template
/// variable; no completer, no values.
pub(crate) async fn complete(
    server: &Server,
    id: sterna_types::jsonrpc::RequestId,
    meta: std::sync::Arc<sterna_types::meta::RequestMeta>,
    p: super::request::CompleteParams,
    env: super::context::RequestEnv,
) -> Option<super::outcome::Outcome> {
    use super::guard::{guarded, started};
    use super::outcome::{Completed, Outcome, Payload};
    use sterna_types::error::ErrorObject;
    let (completer, target) = completer(server, &p);
    let env = std::sync::Arc::new(env);
    let ctx = Context::from_inner(super::context::Inner::request(
        server.changes(),
        id.clone(),
        "completion/complete",
        target.into(),
        meta,
        &env,
    ));
    let completion = match completer {
        None => Ok(Completion::default()),
        Some(c) => {
            let req = CompletionRequest {
                argument: p.argument.name,
                value: p.argument.value,
                context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
            };
            match started(|| Ok(c.complete(ctx, req))) {
                Err(e) => Err(e),
                Ok(fut) => match guarded(fut, &env.cancel).await? {
                    Ok(Ok(c)) => Ok(c),
                    Ok(Err(e)) => Err(super::finalize::rpc_error(e)),
                    Err(()) => Err(ErrorObject::internal("Internal error")),
                },
            }
        }
    };
    Some(match completion {
        Ok(c) => Outcome::Complete(Completed::new(Payload::Completion(c))),
        Err(e) => Outcome::Failed(e.into()),
    })
}

fn completer<'s>(
    server: &'s Server,
    p: &super::request::CompleteParams,
) -> (Option<&'s std::sync::Arc<dyn Completer>>, String) {
    use sterna_types::completion::CompletionReference;
    match &p.reference {
        CompletionReference::Prompt { name, .. } => (
            server
                .prompt(name.as_str())
                .and_then(|e| e.completions.get(&p.argument.name)),
            name.clone(),
        ),
        CompletionReference::Resource { uri } => (
            server
                .routes()
                .templates
                .iter()
                .find(|t| t.template == *uri)
                .and_then(|t| t.completions.get(&p.argument.name)),
            uri.clone(),
        ),
    }
}
