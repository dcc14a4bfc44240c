//! Resources and resource templates: registration and the erased handler.

use super::completion::{Completer, CompletionRequest, IntoCompletion, boxed_completer};
use super::context::Context;
use super::handler::{Handler, IntoResourceResult, Produced};
use super::uri_template::UriTemplate;
use crate::definition::{ArgsError, DefinitionError};
use crate::mrtr::{First, Question};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::content::{Annotations, Icon};
use sterna_types::resources::{
    ReadResourceResult, Resource as WireResource, ResourceTemplate as WireTemplate,
};
use sterna_types::result::CacheScope;

/// Common descriptive fields of resources and templates.
#[derive(Debug, Clone, Default)]
pub(crate) struct Describe {
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) annotations: Option<Annotations>,
    pub(crate) icons: Option<Vec<Icon>>,
    pub(crate) cache: Option<(Duration, CacheScope)>,
}

macro_rules! describe_methods {
    () => {
        /// Display name.
        pub fn title(mut self, t: impl Into<String>) -> Self {
            self.describe.title = Some(t.into());
            self
        }

        /// Description.
        pub fn description(mut self, d: impl Into<String>) -> Self {
            self.describe.description = Some(d.into());
            self
        }

        /// MIME type (also used for `String` / `Vec<u8>` handler results).
        pub fn mime_type(mut self, m: impl Into<String>) -> Self {
            self.describe.mime_type = Some(m.into());
            self
        }

        /// Annotations.
        pub fn annotations(mut self, a: Annotations) -> Self {
            self.describe.annotations = Some(a);
            self
        }

        /// Icons.
        pub fn icons(mut self, icons: Vec<Icon>) -> Self {
            self.describe.icons = Some(icons);
            self
        }

        /// Caching hint for reads (`ttlMs`, `cacheScope`); defaults to the server's.
        pub fn cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
            self.describe.cache = Some((ttl, scope));
            self
        }
    };
}

/// A resource with a fixed URI.
#[derive(Debug, Clone)]
pub struct Resource {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) size: Option<u64>,
    pub(crate) describe: Describe,
}

/// A family of resources matching a URI template (`{var}`, `{+var}`); the handler gets
/// the variables, decoded into its argument type.
pub struct ResourceTemplate {
    pub(crate) template: String,
    pub(crate) name: String,
    pub(crate) describe: Describe,
    pub(crate) completions: BTreeMap<String, Arc<dyn Completer>>,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template)
            .finish()
    }
}

/// A resource (or template) with its handler, ready for
/// [`ServerBuilder::resource`](crate::server::ServerBuilder::resource).
pub struct ResourceDef {
    pub(crate) kind: ResourceKind,
    pub(crate) describe: Describe,
    pub(crate) handler: Arc<dyn ErasedResource>,
    pub(crate) error: Option<DefinitionError>,
}

pub(crate) enum ResourceKind {
    Fixed {
        uri: String,
        name: String,
        size: Option<u64>,
    },
    Template {
        template: String,
        parsed: Option<UriTemplate>,
        name: String,
        completions: BTreeMap<String, Arc<dyn Completer>>,
    },
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ResourceKind::Fixed { uri, .. } => write!(f, "ResourceDef({uri})"),
            ResourceKind::Template { template, .. } => write!(f, "ResourceDef({template})"),
        }
    }
}

impl ResourceDef {
    pub(crate) fn name(&self) -> &str {
        match &self.kind {
            ResourceKind::Fixed { uri, .. } => uri,
            ResourceKind::Template { template, .. } => template,
        }
    }

    pub(crate) fn wire_resource(&self) -> Option<WireResource> {
        let ResourceKind::Fixed { uri, name, size } = &self.kind else {
            return None;
        };
        let d = &self.describe;
        Some(WireResource {
            uri: uri.clone(),
            name: name.clone(),
            title: d.title.clone(),
            description: d.description.clone(),
            mime_type: d.mime_type.clone(),
            size: *size,
            annotations: d.annotations.clone(),
            icons: d.icons.clone(),
            meta: None,
        })
    }

    pub(crate) fn wire_template(&self) -> Option<WireTemplate> {
        let ResourceKind::Template { template, name, .. } = &self.kind else {
            return None;
        };
        let d = &self.describe;
        Some(WireTemplate {
            uri_template: template.clone(),
            name: name.clone(),
            title: d.title.clone(),
            description: d.description.clone(),
            mime_type: d.mime_type.clone(),
            annotations: d.annotations.clone(),
            icons: d.icons.clone(),
            meta: None,
        })
    }
}

impl Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            size: None,
            describe: Describe::default(),
        }
    }

    describe_methods!();

    /// Size in bytes, if known.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// Sets the handler: `async fn(Context, NoArgs) -> impl IntoResourceResult`.
    pub fn handler<A, H, R>(self, handler: H) -> ResourceDef
    where
        A: DeserializeOwned + Send + 'static,
        H: Handler<A, R>,
        R: IntoResourceResult + 'static,
    {
        ResourceDef {
            kind: ResourceKind::Fixed {
                uri: self.uri,
                name: self.name,
                size: self.size,
            },
            describe: self.describe,
            handler: typed(handler),
            error: None,
        }
    }

    /// Declares the questions reading this resource needs; see
    /// [`Tool::ask`](crate::server::Tool::ask). The plan gets the (empty) variables.
    pub fn ask<A, F, Q>(self, questions: F) -> AskingResource<A, First<F, Q>>
    where
        F: Fn(&A) -> Q + Send + Sync + 'static,
        Q: Question + 'static,
    {
        AskingResource::new(ResourceBase::Fixed(self), First::new(questions))
    }
}

impl ResourceTemplate {
    /// Resources matching `template` (RFC 6570 `{var}` / `{+var}`).
    pub fn new(template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            template: template.into(),
            name: name.into(),
            describe: Describe::default(),
            completions: BTreeMap::new(),
        }
    }

    describe_methods!();

    /// Completes values of variable `variable` (`completion/complete`).
    pub fn complete<F, Fut, R>(mut self, variable: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context, CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        self.completions.insert(variable.into(), boxed_completer(f));
        self
    }

    /// Sets the handler: `async fn(Context, Vars) -> impl IntoResourceResult`, where
    /// `Vars` decodes from the template's variables (a struct of `String` fields, or a
    /// `BTreeMap<String, String>`).
    pub fn handler<A, H, R>(self, handler: H) -> ResourceDef
    where
        A: DeserializeOwned + Send + 'static,
        H: Handler<A, R>,
        R: IntoResourceResult + 'static,
    {
        let parsed = UriTemplate::parse(&self.template);
        let error = parsed
            .as_ref()
            .err()
            .map(|problem| DefinitionError::UriTemplate {
                template: self.template.clone(),
                problem: problem.clone(),
            });
        ResourceDef {
            kind: ResourceKind::Template {
                template: self.template,
                parsed: parsed.ok(),
                name: self.name,
                completions: self.completions,
            },
            describe: self.describe,
            handler: typed(handler),
            error,
        }
    }

    /// Declares the questions reading these resources needs; see
    /// [`Tool::ask`](crate::server::Tool::ask).
    pub fn ask<A, F, Q>(self, questions: F) -> AskingResource<A, First<F, Q>>
    where
        F: Fn(&A) -> Q + Send + Sync + 'static,
        Q: Question + 'static,
    {
        AskingResource::new(ResourceBase::Template(self), First::new(questions))
    }
}

/// What an asking resource builds on: a fixed resource or a template.
#[derive(Debug)]
pub enum ResourceBase {
    /// A fixed resource.
    Fixed(Resource),
    /// A template.
    Template(ResourceTemplate),
}

impl ResourceBase {
    fn handler<A, H, R>(self, handler: H) -> ResourceDef
    where
        A: DeserializeOwned + Send + 'static,
        H: Handler<A, R>,
        R: IntoResourceResult + 'static,
    {
        match self {
            Self::Fixed(r) => r.handler(handler),
            Self::Template(t) => t.handler(handler),
        }
    }

    fn unusable(self, reason: DefinitionError) -> ResourceDef {
        let mut def = self.handler(|_: Context, _: super::handler::NoArgs| async { String::new() });
        def.error = Some(reason);
        def
    }
}

super::asking::asking!(
    /// A resource (or template) with declared questions; see [`Resource::ask`].
    AskingResource,
    ResourceBase,
    ResourceDef,
    IntoResourceResult,
    [DeserializeOwned + Send + 'static]
);

pub(crate) trait ErasedResource: Send + Sync {
    fn call(
        &self,
        ctx: Context,
        uri: String,
        mime: Option<String>,
        vars: BTreeMap<String, String>,
    ) -> Result<BoxFuture<'static, Produced<ReadResourceResult>>, ArgsError>;
}

struct Typed<A, H, R> {
    handler: H,
    _p: PhantomData<fn(A) -> R>,
}

fn typed<A, H, R>(handler: H) -> Arc<dyn ErasedResource>
where
    A: DeserializeOwned + Send + 'static,
    H: Handler<A, R>,
    R: IntoResourceResult + 'static,
{
    Arc::new(Typed {
        handler,
        _p: PhantomData,
    })
}

impl<A, H, R> ErasedResource for Typed<A, H, R>
where
    A: DeserializeOwned + Send + 'static,
    H: Handler<A, R>,
    R: IntoResourceResult + 'static,
{
    fn call(
        &self,
        ctx: Context,
        uri: String,
        mime: Option<String>,
        vars: BTreeMap<String, String>,
    ) -> Result<BoxFuture<'static, Produced<ReadResourceResult>>, ArgsError> {
        let obj: serde_json::Map<String, Value> = vars
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let args = A::deserialize(Value::Object(obj)).map_err(ArgsError::Decode)?;
        Ok(Box::pin(
            self.handler
                .call(ctx, args)
                .map(move |r| r.into_resource(&uri, mime.as_deref())),
        ))
    }
}

impl ResourceDef {
    /// Declared questions change nothing for a resource (only a tool's may be taken over).
    pub(crate) fn declared(self) -> Self {
        self
    }
}
