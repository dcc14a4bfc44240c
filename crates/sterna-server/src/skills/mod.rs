//! The `io.modelcontextprotocol/skills` extension (SEP-2640), a wing: serve a folder of
//! Agent Skills (and skills defined in code) with `skills/list`, `skills/get`,
//! `resources/directory/read`, and their files through `resources/read`, to 2026-07-28
//! requests and 2025-11-25 sessions alike.
//!
//! Disabled unless the author plugs a catalog in ([`ServerBuilder::skills`](crate::server::ServerBuilder::skills)): it then
//! declares `extensions["io.modelcontextprotocol/skills"]` (inline settings) and
//! `resources`, in both eras.
//!
//! ```no_run
//! # fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use sterna_server::{Server, skills::Skills};
//! let skills = Skills::from_dir("./skills")?; // errors name the file at fault
//! let server = Server::builder("docs", "1.0.0")
//!     .ephemeral_state_keys()
//!     .skills(skills.clone())
//!     .build()?;
//! // Later (a signal, an admin call): re-read the folder; list_changed if it changed.
//! let changed = skills.reload_blocking()?;
//! # let _ = (server, changed); Ok(()) }
//! ```

mod catalog;
mod def;
mod error;
mod load;
mod methods;
mod mime;
mod settings;
mod wing;

pub use def::SkillDef;
pub use error::{SkillsError, SkillsErrorKind};

use crate::server::changes::{Change, Changes};
use crate::server::{typemap::TypeMap, wing::Wings};
use catalog::Catalog;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;
use sterna_types::result::CacheScope;
use sterna_types::skills::Skill;

/// A catalog of skills to serve: loaded from folders and [definitions](SkillDef),
/// re-loadable while the server runs. Cheap to clone (one catalog shared).
#[derive(Clone)]
pub struct Skills {
    inner: Arc<Inner>,
}

struct Inner {
    config: SkillsBuilder,
    now: RwLock<Arc<Catalog>>,
    changes: OnceLock<Changes>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills")
            .field("dirs", &self.inner.config.dirs)
            .field("catalog", &*self.catalog())
            .finish()
    }
}

/// How a [`Skills`] catalog is loaded and served.
#[derive(Clone, Debug)]
pub struct SkillsBuilder {
    dirs: Vec<PathBuf>,
    defs: Vec<SkillDef>,
    directory_read: bool,
    cache: (Duration, CacheScope),
    page_size: Option<usize>,
    max_bytes: u64,
}

impl Default for SkillsBuilder {
    fn default() -> Self {
        Self {
            dirs: Vec::new(),
            defs: Vec::new(),
            directory_read: true,
            cache: (Duration::ZERO, CacheScope::Private),
            page_size: None,
            max_bytes: 256 * 1024 * 1024,
        }
    }
}

impl SkillsBuilder {
    /// Serves the skills of a folder (each folder below it holding a SKILL.md).
    pub fn dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.dirs.push(path.into());
        self
    }

    /// Serves a skill defined in code.
    pub fn skill(mut self, def: SkillDef) -> Self {
        self.defs.push(def);
        self
    }

    /// Whether `resources/directory/read` is served and declared (default: yes).
    pub fn directory_read(mut self, on: bool) -> Self {
        self.directory_read = on;
        self
    }

    /// `ttlMs`/`cacheScope` of `skills/list` and `skills/get` on 2026-07-28 (default 0,
    /// private: hosts re-fetch entries whenever they need them).
    pub fn cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.cache = (ttl, scope);
        self
    }

    /// Entries per page of `skills/list` and children per page of a directory read
    /// (default: the server's page size).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// The most bytes all the skills may hold in memory together (default 256 MiB); the
    /// file that crosses it is named in the error.
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Loads the catalog (every error names the file at fault).
    pub fn load(self) -> Result<Skills, SkillsError> {
        let catalog = self.catalog()?;
        Ok(Skills {
            inner: Arc::new(Inner {
                config: self,
                now: RwLock::new(Arc::new(catalog)),
                changes: OnceLock::new(),
            }),
        })
    }

    fn catalog(&self) -> Result<Catalog, SkillsError> {
        let mut budget = self.max_bytes;
        let mut built = Vec::new();
        for dir in &self.dirs {
            built.extend(load::load_dir(dir, &mut budget, self.max_bytes)?);
        }
        for def in &self.defs {
            built.push(def.clone().build()?);
        }
        Catalog::build(built)
    }
}

impl Skills {
    /// How to load a catalog (folders, skills in code, options).
    pub fn builder() -> SkillsBuilder {
        SkillsBuilder::default()
    }

    /// Loads the skills of one folder, with the default options.
    pub fn from_dir(path: impl Into<PathBuf>) -> Result<Self, SkillsError> {
        Self::builder().dir(path).load()
    }

    /// The entries served now (ordered by URI).
    pub fn entries(&self) -> Vec<Skill> {
        self.catalog().entries.clone()
    }

    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.inner
            .now
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn config(&self) -> &SkillsBuilder {
        &self.inner.config
    }

    /// Loads the folders and definitions again and swaps the new catalog in whole. If
    /// the entries changed, announces `notifications/resources/list_changed` to this
    /// process's listeners (2026-07-28 streams and 2025-11-25 sessions). Returns whether
    /// they changed. On error the catalog being served stays. Blocking file I/O: call
    /// it off the async threads (or use [`reload`](Self::reload)).
    pub fn reload_blocking(&self) -> Result<bool, SkillsError> {
        let fresh = self.inner.config.catalog()?;
        let changed = {
            let mut now = self.inner.now.write().unwrap_or_else(|p| p.into_inner());
            let changed = now.fingerprint != fresh.fingerprint;
            *now = Arc::new(fresh);
            changed
        };
        if changed {
            tracing::info!(
                skills = self.catalog().entries.len(),
                "skills reloaded: the catalog changed"
            );
            if let Some(changes) = self.inner.changes.get() {
                // Each replica reloads its own folder and tells its own listeners.
                changes.announce_local(Change::ResourcesListChanged);
            }
        }
        Ok(changed)
    }

    /// [`reload_blocking`](Self::reload_blocking) on a blocking thread.
    pub async fn reload(&self) -> Result<bool, SkillsError> {
        let me = self.clone();
        match tokio::task::spawn_blocking(move || me.reload_blocking()).await {
            Ok(r) => r,
            Err(e) => match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                // The runtime is shutting down: nothing was swapped.
                Err(_) => Err(SkillsError::new(
                    self.inner.config.dirs.first().cloned().unwrap_or_default(),
                    SkillsErrorKind::Io(std::io::Error::other("the reload was cancelled")),
                )),
            },
        }
    }
}

/// Adds the skills wing when a catalog was plugged in.
pub(crate) fn register(
    wings: &mut Wings<crate::server::Server>,
    settings: &TypeMap,
    page_size: usize,
) {
    if let Some(skills) = settings.get::<Skills>() {
        let page = skills.config().page_size.unwrap_or(page_size);
        wings.add(wing::SkillsWing::new(skills.clone(), page));
    }
}
