//! Tools: registration and the erased handler.

use super::context::Context;
use super::handler::{Handler, IntoToolResult, Produced};
use super::typemap::TypeMap;
use crate::definition::{ArgsError, DefinitionError, Unfit};
use crate::mrtr::{First, Question};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::marker::PhantomData;
use std::sync::Arc;
use sterna_types::content::Icon;
use sterna_types::tools::{CallToolResult, ToolAnnotations};

/// A tool to register: a name, a description, a handler.
///
/// ```
/// use sterna_server::{Context, Tool};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Args { text: String }
/// let echo = Tool::new("echo")
///     .description("Echoes the text back")
///     .handler(|_ctx: Context, args: Args| async move { args.text });
/// ```
///
/// The arguments type gives the tool's `inputSchema` (JSON Schema 2020-12, derived with
/// `schemars`); calls are decoded into it, and bad arguments are answered with `-32602`.
#[derive(Debug, Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Option<Vec<Icon>>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) single_use: bool,
    pub(crate) unsolicited: bool,
    pub(crate) schema: Option<Map<String, Value>>,
    /// Settings wings keep on the tool (see [`Tool::task`]).
    pub(crate) settings: TypeMap,
}

/// A tool with its handler, ready for [`ServerBuilder::tool`](crate::server::ServerBuilder::tool).
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) input_schema: Result<Map<String, Value>, DefinitionError>,
    pub(crate) handler: Arc<dyn ErasedTool>,
    /// Built with `ask(..).run(..)`: the questions are declared.
    pub(crate) declared: bool,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("tool", &self.tool).finish()
    }
}

impl Tool {
    /// A tool named `name` (`[A-Za-z0-9_.-]{1,128}`).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            annotations: None,
            icons: None,
            meta: None,
            single_use: false,
            unsolicited: false,
            schema: None,
            settings: TypeMap::default(),
        }
    }

    /// Publishes this `inputSchema` instead of the one derived from the arguments type
    /// (for schemas Rust types cannot express; take `serde_json::Map` as arguments, or a
    /// type that decodes what the schema allows). Its root must be `type: object`.
    pub fn input_schema(mut self, schema: Map<String, Value>) -> Self {
        self.schema = Some(schema);
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// A display name.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, a: ToolAnnotations) -> Self {
        self.annotations = Some(a);
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Tool `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Each `requestState` this tool issues can be redeemed at most once: a retry with a
    /// state already consumed is refused with `-32602`, even under concurrent retries.
    /// Needs a [`ReplayStore`](crate::state::ReplayStore) on the server (an in-memory one
    /// is used by default; share one across replicas).
    pub fn single_use(mut self) -> Self {
        self.single_use = true;
        self
    }

    /// Accepts answers the client sends **before being asked** (on a first call, without
    /// `requestState`), as long as each one validates against the question the tool asks
    /// under that key.
    ///
    /// By default an answer counts only when it answers a question this server asked in
    /// this flow, proven by the verified `requestState`; anything else is ignored and the
    /// question asked. Opt in only for tools where a pre-filled answer is as good as one
    /// the user gave when asked (never for confirmations or single-use tools: combining
    /// this with [`single_use`](Self::single_use) fails the server build).
    pub fn accept_unsolicited_answers(mut self) -> Self {
        self.unsolicited = true;
        self
    }

    /// Sets the handler: `async fn(Context, Args) -> impl IntoToolResult`.
    pub fn handler<A, H, R>(self, handler: H) -> ToolDef
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        H: Handler<A, R>,
        R: IntoToolResult + 'static,
    {
        let input_schema = match &self.schema {
            Some(s) if s.get("type").and_then(Value::as_str) == Some("object") => Ok(s.clone()),
            Some(_) => Err(DefinitionError::Arguments {
                field: None,
                unfit: Unfit::NotAnObject,
            }),
            None => input_schema::<A>(),
        };
        ToolDef {
            tool: self,
            input_schema,
            handler: Arc::new(Typed {
                handler,
                _p: PhantomData,
            }),
            declared: false,
        }
    }

    /// Declares the questions the tool needs, built from its arguments. Every question
    /// missing an answer is asked in one round; the body given to [`Asking::run`] runs
    /// only when all are answered. A tuple asks several questions at once.
    ///
    /// ```
    /// use sterna_server::mrtr::{Elicitation, form};
    /// use sterna_server::{Context, Tool};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Args { name: String }
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Region { region: String }
    /// let tool = Tool::new("provision_database")
    ///     .description("Creates a database in the region the user picks")
    ///     .ask(|args: &Args| form::<Region>(format!("Where should {} live?", args.name)))
    ///     .run(|_ctx: Context, args: Args, region: Elicitation<Region>| async move {
    ///         let region = region.required()?;
    ///         Ok::<_, sterna_server::HandlerError>(format!("Created {} in {}", args.name, region.region))
    ///     });
    /// ```
    pub fn ask<A, F, Q>(self, questions: F) -> Asking<A, First<F, Q>>
    where
        F: Fn(&A) -> Q + Send + Sync + 'static,
        Q: Question + 'static,
    {
        Asking::new(self, First::new(questions))
    }
}

super::asking::asking!(
    /// A tool with declared questions; see [`Tool::ask`].
    Asking,
    Tool,
    ToolDef,
    IntoToolResult,
    [DeserializeOwned + JsonSchema + Send + 'static]
);

impl Tool {
    fn unusable(self, reason: DefinitionError) -> ToolDef {
        ToolDef {
            tool: self,
            input_schema: Err(reason),
            handler: Arc::new(Unusable),
            declared: false,
        }
    }
}

impl ToolDef {
    /// Marks the questions as declared (`ask(..).run(..)`).
    pub(crate) fn declared(mut self) -> Self {
        self.declared = true;
        self
    }
}

pub(crate) trait ErasedTool: Send + Sync {
    /// Decodes the arguments and starts the handler. `Err` is a message for `-32602`.
    fn call(
        &self,
        ctx: Context,
        args: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, Produced<CallToolResult>>, ArgsError>;

    /// Decodes the arguments only (a wing taking the call over checks them first).
    fn check(&self, args: Option<&RawValue>) -> Result<(), ArgsError>;
}

struct Typed<A, H, R> {
    handler: H,
    _p: PhantomData<fn(A) -> R>,
}

impl<A, H, R> ErasedTool for Typed<A, H, R>
where
    A: DeserializeOwned + Send + 'static,
    H: Handler<A, R>,
    R: IntoToolResult + 'static,
{
    fn call(
        &self,
        ctx: Context,
        args: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, Produced<CallToolResult>>, ArgsError> {
        let args: A = decode_args(args)?;
        Ok(Box::pin(
            self.handler.call(ctx, args).map(|r| r.into_tool()),
        ))
    }

    fn check(&self, args: Option<&RawValue>) -> Result<(), ArgsError> {
        decode_args::<A>(args).map(drop)
    }
}

struct Unusable;

impl ErasedTool for Unusable {
    fn call(
        &self,
        _: Context,
        _: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, Produced<CallToolResult>>, ArgsError> {
        Err(ArgsError::Unusable)
    }

    fn check(&self, _: Option<&RawValue>) -> Result<(), ArgsError> {
        Err(ArgsError::Unusable)
    }
}

/// Decodes tool arguments: absent (or `null`) reads as `{}`; anything but an object is
/// refused.
pub(crate) fn decode_args<A: DeserializeOwned>(args: Option<&RawValue>) -> Result<A, ArgsError> {
    match args {
        None => serde_json::from_str("{}"),
        Some(raw) => {
            let text = raw.get().trim_start();
            if text == "null" {
                serde_json::from_str("{}")
            } else if !text.starts_with('{') {
                return Err(ArgsError::NotAnObject);
            } else {
                serde_json::from_str(raw.get())
            }
        }
    }
    .map_err(ArgsError::Decode)
}

/// The JSON Schema of `A` as a tool input schema: 2020-12 (the default dialect, so no
/// `$schema`), root type `object`.
pub(crate) fn input_schema<A: JsonSchema>() -> Result<Map<String, Value>, DefinitionError> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<A>();
    let not_an_object = DefinitionError::Arguments {
        field: None,
        unfit: Unfit::NotAnObject,
    };
    let Value::Object(mut obj) = schema.to_value() else {
        return Err(not_an_object);
    };
    obj.remove("title");
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err(not_an_object);
    }
    Ok(obj)
}
