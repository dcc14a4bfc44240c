//! Prompts: registration and the erased handler.

use super::completion::{Completer, IntoCompletion, boxed_completer};
use super::context::Context;
use super::handler::{Handler, IntoPromptResult, Produced};
use crate::definition::{ArgsError, DefinitionError, Unfit};
use crate::mrtr::{First, Question};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;
use sterna_types::content::Icon;
use sterna_types::prompts::{GetPromptResult, PromptArgument};

/// A prompt to register.
///
/// The arguments type (a struct of `String` / `Option<String>` fields) gives the prompt's
/// argument list: names, descriptions (from doc comments) and which are required.
pub struct Prompt {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) icons: Option<Vec<Icon>>,
    pub(crate) completions: BTreeMap<String, Arc<dyn Completer>>,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt").field("name", &self.name).finish()
    }
}

/// A prompt with its handler, ready for [`ServerBuilder::prompt`](crate::server::ServerBuilder::prompt).
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) arguments: Result<Vec<PromptArgument>, DefinitionError>,
    pub(crate) handler: Arc<dyn ErasedPrompt>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef")
            .field("prompt", &self.prompt)
            .finish()
    }
}

impl Prompt {
    /// A prompt named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            icons: None,
            completions: BTreeMap::new(),
        }
    }

    /// What the prompt is for.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// A display name.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Completes values of argument `argument` (`completion/complete`).
    pub fn complete<F, Fut, R>(mut self, argument: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context, super::completion::CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        self.completions.insert(argument.into(), boxed_completer(f));
        self
    }

    /// Sets the handler: `async fn(Context, Args) -> impl IntoPromptResult`.
    pub fn handler<A, H, R>(self, handler: H) -> PromptDef
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        H: Handler<A, R>,
        R: IntoPromptResult + 'static,
    {
        PromptDef {
            prompt: self,
            arguments: prompt_arguments::<A>(),
            handler: Arc::new(Typed {
                handler,
                _p: PhantomData,
            }),
        }
    }

    /// Declares the questions the prompt needs; see [`Tool::ask`](crate::server::Tool::ask).
    pub fn ask<A, F, Q>(self, questions: F) -> AskingPrompt<A, First<F, Q>>
    where
        F: Fn(&A) -> Q + Send + Sync + 'static,
        Q: Question + 'static,
    {
        AskingPrompt::new(self, First::new(questions))
    }
}

super::asking::asking!(
    /// A prompt with declared questions; see [`Prompt::ask`].
    AskingPrompt,
    Prompt,
    PromptDef,
    IntoPromptResult,
    [DeserializeOwned + JsonSchema + Send + 'static]
);

impl Prompt {
    fn unusable(self, reason: DefinitionError) -> PromptDef {
        PromptDef {
            prompt: self,
            arguments: Err(reason),
            handler: Arc::new(Unusable),
        }
    }
}

pub(crate) trait ErasedPrompt: Send + Sync {
    fn call(
        &self,
        ctx: Context,
        args: BTreeMap<String, String>,
    ) -> Result<BoxFuture<'static, Produced<GetPromptResult>>, ArgsError>;
}

struct Typed<A, H, R> {
    handler: H,
    _p: PhantomData<fn(A) -> R>,
}

impl<A, H, R> ErasedPrompt for Typed<A, H, R>
where
    A: DeserializeOwned + Send + 'static,
    H: Handler<A, R>,
    R: IntoPromptResult + 'static,
{
    fn call(
        &self,
        ctx: Context,
        args: BTreeMap<String, String>,
    ) -> Result<BoxFuture<'static, Produced<GetPromptResult>>, ArgsError> {
        let obj: serde_json::Map<String, Value> = args
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let args = A::deserialize(Value::Object(obj)).map_err(ArgsError::Decode)?;
        Ok(Box::pin(
            self.handler.call(ctx, args).map(|r| r.into_prompt()),
        ))
    }
}

struct Unusable;

impl ErasedPrompt for Unusable {
    fn call(
        &self,
        _: Context,
        _: BTreeMap<String, String>,
    ) -> Result<BoxFuture<'static, Produced<GetPromptResult>>, ArgsError> {
        Err(ArgsError::Unusable)
    }
}

fn prompt_arguments<A: JsonSchema>() -> Result<Vec<PromptArgument>, DefinitionError> {
    let schema = super::tool::input_schema::<A>()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, p) in props {
            let ty = p.get("type");
            let is_string = match ty {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(ts)) => ts.iter().all(|t| t == "string" || t == "null"),
                _ => false,
            };
            if !is_string {
                return Err(DefinitionError::Arguments {
                    field: Some(name.clone()),
                    unfit: Unfit::Type("string only".into()),
                });
            }
            out.push(PromptArgument {
                name: name.clone(),
                title: p.get("title").and_then(Value::as_str).map(str::to_owned),
                description: p
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                required: Some(required.contains(&name.as_str())),
            });
        }
    }
    Ok(out)
}

impl PromptDef {
    /// Declared questions change nothing for a prompt (only a tool's may be taken over).
    pub(crate) fn declared(self) -> Self {
        self
    }
}
