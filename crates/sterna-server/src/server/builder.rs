//! Building a server.

use super::changes::Changes;
use super::core::{Parts, Server};
use super::lists::Lists;
use super::prompt::PromptDef;
use super::registry::Registry;
use super::resource::ResourceDef;
use super::tool::ToolDef;
use super::typemap::TypeMap;
use super::wing::{Era, Wings};
use crate::error::BuildError;
use crate::state::{
    MemoryReplayStore, ReplayStore, StateConfig, StateKeys, StateStore, StoreStates,
};
use std::sync::Arc;
use std::time::Duration;
use sterna_types::meta::{Implementation, SharedImplementation};
use sterna_types::result::CacheScope;

/// The builder state before `requestState` keys are chosen: [`build`](ServerBuilder::build)
/// is not available yet. A server cannot exist without deciding how its states are
/// protected.
#[derive(Debug, Clone, Copy)]
pub struct NeedsKeys;

/// The builder state whose keys are chosen ([`StateKeys`]): the one that can
/// [`build`](ServerBuilder::build). Sealed; it exists so that building without keys is a
/// compile error that says what to add.
#[diagnostic::on_unimplemented(
    message = "the server's `requestState` keys are not chosen yet: call `.state_keys(…)` before `.build()`",
    label = "`.build()` needs `.state_keys(…)` or `.ephemeral_state_keys()` earlier in this chain",
    note = "a fleet, or a server whose flows must survive a restart: `.state_keys(StateKeys::from_env(\"STERNA_STATE_KEYS\")?)` with keys from `sterna keygen`",
    note = "one process on its own (stdio, tests): `.ephemeral_state_keys()`"
)]
pub trait KeysChosen: sealed::Sealed {}

impl KeysChosen for StateKeys {}

mod sealed {
    use super::{ServerBuilder, StateKeys};

    /// Keeps [`KeysChosen`](super::KeysChosen) to [`StateKeys`].
    pub trait Sealed: Sized {
        /// The builder, with its keys as [`StateKeys`].
        fn chosen(builder: ServerBuilder<Self>) -> ServerBuilder<StateKeys>;
    }

    impl Sealed for StateKeys {
        fn chosen(builder: ServerBuilder<StateKeys>) -> ServerBuilder<StateKeys> {
            builder
        }
    }
}

/// Builds a [`Server`]. Call [`state_keys`](Self::state_keys) (or
/// [`ephemeral_state_keys`](Self::ephemeral_state_keys)), register tools, prompts and
/// resources, then [`build`](ServerBuilder::build).
pub struct ServerBuilder<K = NeedsKeys> {
    info: Implementation,
    instructions: Option<String>,
    keys: K,
    ttl: Duration,
    skew: Duration,
    max_state_len: usize,
    replay: Option<Arc<dyn ReplayStore>>,
    store: Option<(Arc<dyn StateStore>, StoreStates)>,
    max_stored_len: usize,
    page_size: usize,
    cache: (Duration, CacheScope),
    tools: Vec<ToolDef>,
    prompts: Vec<PromptDef>,
    resources: Vec<ResourceDef>,
    changes: Changes,
    listens_per_principal: usize,
    /// Settings of the wings (each keeps its own type here).
    pub(crate) settings: TypeMap,
}

impl<K> std::fmt::Debug for ServerBuilder<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish()
    }
}

impl ServerBuilder<NeedsKeys> {
    pub(crate) fn new(info: Implementation) -> Self {
        Self {
            info,
            instructions: None,
            keys: NeedsKeys,
            ttl: Duration::from_secs(600),
            skew: Duration::from_secs(5),
            max_state_len: 64 * 1024,
            replay: None,
            store: None,
            max_stored_len: 1 << 20,
            page_size: 100,
            cache: (Duration::from_secs(60), CacheScope::Public),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            changes: Changes::default(),
            listens_per_principal: super::places::DEFAULT_LISTENS_PER_PRINCIPAL,
            settings: TypeMap::default(),
        }
    }
}

impl<K> ServerBuilder<K> {
    /// The keys that seal `requestState` (shared by every replica; see [`StateKeys`]).
    pub fn state_keys(self, keys: StateKeys) -> ServerBuilder<StateKeys> {
        ServerBuilder {
            info: self.info,
            instructions: self.instructions,
            keys,
            ttl: self.ttl,
            skew: self.skew,
            max_state_len: self.max_state_len,
            replay: self.replay,
            store: self.store,
            max_stored_len: self.max_stored_len,
            page_size: self.page_size,
            cache: self.cache,
            tools: self.tools,
            prompts: self.prompts,
            resources: self.resources,
            changes: self.changes,
            listens_per_principal: self.listens_per_principal,
            settings: self.settings,
        }
    }

    /// A random key for this process only: states do not survive a restart and cannot be
    /// opened by another replica. Fine for stdio servers and tests; logged as a warning
    /// when the server is built.
    pub fn ephemeral_state_keys(self) -> ServerBuilder<StateKeys> {
        self.state_keys(StateKeys::ephemeral())
    }

    /// How long a `requestState` stays valid (default 10 minutes).
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Leeway for clock differences between replicas when checking a state's times
    /// (default 5 s).
    pub fn state_clock_skew(mut self, skew: Duration) -> Self {
        self.skew = skew;
        self
    }

    /// The longest `requestState` accepted, in bytes (default 64 KiB). Longer ones are
    /// refused before any decoding.
    pub fn max_state_len(mut self, len: usize) -> Self {
        self.max_state_len = len;
        self
    }

    /// Where single-use tools record consumed states (default: in memory, this process
    /// only). Give every replica the same shared store.
    pub fn replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.replay = Some(store);
        self
    }

    /// Stored-state mode: keeps the sealed payload of states in `store` (shared by every
    /// replica) when `when` says so, and gives the client a 71-character reference instead.
    /// The reference's MAC is checked before the store is asked; what the store returns is
    /// checked exactly like an inline state. References are accepted whatever `when` says
    /// (so switching to [`StoreStates::Never`] breaks no flow in flight). Default: no store,
    /// every state inline.
    ///
    /// When the store cannot be reached, requests that need it fail with `-32603` and
    /// succeed again once it is back.
    pub fn state_store(mut self, store: Arc<dyn StateStore>, when: StoreStates) -> Self {
        self.store = Some((store, when));
        self
    }

    /// The longest sealed payload kept in the state store, in bytes (default 1 MiB).
    pub fn max_stored_state_len(mut self, len: usize) -> Self {
        self.max_stored_len = len;
        self
    }

    /// Guidance for the model, returned by `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// A display name for the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Items per page of `tools/list` and the other lists (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Caching hint of cacheable results (`ttlMs`, `cacheScope`); default 60 s, public.
    /// Use [`CacheScope::Private`] when lists or resources differ by caller.
    pub fn cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.cache = (ttl, scope);
        self
    }

    /// The handle that announces changes to `subscriptions/listen` streams; clone it into
    /// handlers that change what the server offers.
    pub fn changes(&self) -> Changes {
        self.changes.clone()
    }

    /// How many `subscriptions/listen` streams one client (an authenticated principal, or
    /// an anonymous peer address: see [`QuotaKey`](super::QuotaKey)) may hold open at once
    /// in this process (default [`DEFAULT_LISTENS_PER_PRINCIPAL`](super::DEFAULT_LISTENS_PER_PRINCIPAL),
    /// 16). One more is refused with `-32603` and `data: {"limit": "listens_per_principal"}`;
    /// each stream that ends gives its place back.
    pub fn listens_per_principal(mut self, n: usize) -> Self {
        self.listens_per_principal = n.max(1);
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Registers a resource or a resource template.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.resources.push(resource);
        self
    }
}

impl<K> ServerBuilder<K> {
    /// Builds the server: checks every registration and pre-renders what never changes
    /// (list pages, the discover result).
    ///
    /// Only once the keys are chosen: without [`state_keys`](Self::state_keys) (or
    /// [`ephemeral_state_keys`](Self::ephemeral_state_keys)) this does not compile, and the
    /// compiler says what to add (error `E0277`, "the server's `requestState` keys are not
    /// chosen yet: call `.state_keys(…)` before `.build()`"):
    ///
    /// ```compile_fail,E0277
    /// let server = sterna_server::Server::builder("no-keys", "1.0.0").build();
    /// ```
    pub fn build(self) -> Result<Server, BuildError>
    where
        K: KeysChosen,
    {
        K::chosen(self).finish()
    }
}

impl ServerBuilder<StateKeys> {
    /// [`build`](ServerBuilder::build), once the keys are known.
    fn finish(mut self) -> Result<Server, BuildError> {
        if self.keys.is_ephemeral() {
            tracing::warn!(
                server = %self.info.name,
                "requestState is sealed with an ephemeral per-process key: flows cannot \
                 survive a restart or move to another replica (set state keys to share them)"
            );
        }
        let single_use = self.tools.iter().any(|t| t.tool.single_use);
        let mut state = StateConfig::new(self.keys);
        state.ttl = self.ttl;
        state.skew = self.skew;
        state.max_len = self.max_state_len;
        state.max_stored_len = self.max_stored_len;
        if let Some((store, when)) = self.store {
            state.store = Some(crate::metrics::stores::state(store));
            state.store_when = when;
        }
        state.replay = match self.replay {
            Some(r) => Some(r),
            None if single_use => {
                Some(Arc::new(MemoryReplayStore::default()) as Arc<dyn crate::state::ReplayStore>)
            }
            None => None,
        }
        .map(crate::metrics::stores::replay);
        let info = SharedImplementation::new(self.info.clone());
        let mut registry = Registry::default();
        for def in std::mem::take(&mut self.tools) {
            registry.add_tool(def)?;
        }
        for def in std::mem::take(&mut self.prompts) {
            registry.add_prompt(def)?;
        }
        for def in std::mem::take(&mut self.resources) {
            registry.add_resource(def)?;
        }
        let (routes, catalog) = registry.finish();
        let base = WingBase {
            settings: &self.settings,
            routes: &routes,
            catalog: &catalog,
            state: &state,
            info: &info,
            instructions: self.instructions.as_deref(),
            page_size: self.page_size,
        };
        let wings = base.wings();
        let mut capabilities = catalog.capabilities();
        wings.capabilities(Era::Modern, &mut capabilities);
        let lists = Lists::build(
            &info,
            self.instructions.as_deref(),
            self.cache,
            self.page_size,
            &catalog,
            capabilities,
            wings.versions(),
        );
        let metrics = crate::metrics::RequestMetrics::new(wings.all_methods());
        Ok(Server::from_parts(Parts {
            info,
            state,
            routes,
            lists,
            cache: self.cache,
            changes: self.changes,
            listeners: super::places::Places::new(
                self.listens_per_principal,
                super::places::LISTENS,
            ),
            wings,
            metrics,
        }))
    }
}

/// What the wings are built from (each wing reads its part).
#[cfg_attr(
    not(all(feature = "legacy", feature = "tasks")),
    allow(dead_code, reason = "read by the wings compiled in")
)]
struct WingBase<'a> {
    settings: &'a TypeMap,
    routes: &'a super::routes::Routes,
    catalog: &'a super::lists::Catalog,
    state: &'a StateConfig,
    info: &'a SharedImplementation,
    instructions: Option<&'a str>,
    page_size: usize,
}

impl WingBase<'_> {
    /// The wings this server is built with (each decides from its settings and the
    /// routes whether it takes part).
    fn wings(&self) -> Wings<Server> {
        #[allow(unused_mut, reason = "no wing compiled in adds to it")]
        let mut wings = Wings::default();
        #[cfg(feature = "tasks")]
        crate::tasks::register(
            &mut wings,
            self.settings,
            self.routes,
            self.state,
            self.info,
        );
        #[cfg(feature = "skills")]
        crate::skills::register(&mut wings, self.settings, self.page_size);
        #[cfg(feature = "legacy")]
        crate::legacy::register(
            &mut wings,
            self.settings,
            self.catalog,
            self.instructions,
            self.page_size,
        );
        wings
    }
}
