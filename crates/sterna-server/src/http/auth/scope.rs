//! Which scopes a request needs: some for every request, more for particular tools,
//! prompts or resources, with hierarchies (`admin` implies `write` …).

use crate::server::AccessGrant;
use crate::server::target::Target;
use std::collections::{HashMap, HashSet};

/// The scopes requests need, judged by [`AuthLayer`](super::AuthLayer) after
/// authentication. A request whose token lacks one gets `403` with
/// `WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope this
/// operation needs>", resource_metadata="…"`, so the client can step up.
///
/// ```
/// use sterna_server::http::auth::ScopePolicy;
/// let policy = ScopePolicy::new()
///     .always(["mcp:read"])
///     .tool("provision_database", ["mcp:write"])
///     .implies("mcp:admin", ["mcp:read", "mcp:write"]);
/// # let _ = policy;
/// ```
///
/// The tool (prompt, resource) is judged by the endpoint on the request **as decoded to
/// run it** — the same value, in either era, that the method then runs — so a request
/// cannot pass under another tool's requirements, and a request whose target cannot be
/// read never runs. (2026-07-28 requests also name it in `Mcp-Name`; the endpoint
/// refuses a request whose header and body disagree.) The rules apply where
/// [`AuthLayer`](super::AuthLayer) wraps sterna's endpoint ([`McpService`](crate::http::McpService)).
#[derive(Debug, Clone, Default)]
pub struct ScopePolicy {
    always: Vec<String>,
    targets: HashMap<(Kind, String), Vec<String>>,
    implies: HashMap<String, Vec<String>>,
}

/// What a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// The kind and name of a request's target (`None`: no per-target rule applies).
    fn of(target: Target<'_>) -> Option<(Self, &str)> {
        match target {
            Target::Tool(n) => Some((Self::Tool, n)),
            Target::Prompt(n) => Some((Self::Prompt, n)),
            Target::Resource(n) => Some((Self::Resource, n)),
            Target::Untargeted => None,
        }
    }
}

fn strings<I, S>(scopes: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    scopes.into_iter().map(Into::into).collect()
}

impl ScopePolicy {
    /// No requirement at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// Scopes every request needs (also named in the `401` challenge).
    pub fn always<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always.extend(strings(scopes));
        self
    }

    /// Scopes a `tools/call` of the tool `name` needs, besides [`always`](Self::always).
    pub fn tool<I, S>(self, name: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rule(Kind::Tool, name.into(), strings(scopes))
    }

    /// Scopes a `prompts/get` of the prompt `name` needs.
    pub fn prompt<I, S>(self, name: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rule(Kind::Prompt, name.into(), strings(scopes))
    }

    /// Scopes a `resources/read` of exactly `uri` needs.
    pub fn resource<I, S>(self, uri: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rule(Kind::Resource, uri.into(), strings(scopes))
    }

    /// A token holding `scope` also counts as holding `implied` (transitively).
    pub fn implies<I, S>(mut self, scope: impl Into<String>, implied: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.implies
            .entry(scope.into())
            .or_default()
            .extend(strings(implied));
        self
    }

    fn rule(mut self, kind: Kind, name: String, scopes: Vec<String>) -> Self {
        self.targets.entry((kind, name)).or_default().extend(scopes);
        self
    }

    /// Whether some rule depends on the target (then the body must be read).
    pub(crate) fn has_target_rules(&self) -> bool {
        !self.targets.is_empty()
    }

    /// The scopes every request needs.
    pub(crate) fn base(&self) -> Vec<&str> {
        dedup(self.always.iter().map(String::as_str))
    }

    /// The scopes a request for `target` needs: the base ones and the target's, each once.
    pub(crate) fn required(&self, target: Target<'_>) -> Vec<&str> {
        let specific =
            Kind::of(target).and_then(|(kind, name)| self.targets.get(&(kind, name.to_owned())));
        dedup(
            self.always
                .iter()
                .chain(specific.into_iter().flatten())
                .map(String::as_str),
        )
    }

    /// Whether `grant` covers every scope of `required` (directly or through
    /// [`implies`](Self::implies)). No grant covers nothing but the empty set.
    pub(crate) fn satisfied(&self, grant: Option<&AccessGrant>, required: &[&str]) -> bool {
        if required.is_empty() {
            return true;
        }
        let Some(grant) = grant else {
            return false;
        };
        let held = self.closure(grant.scopes());
        required.iter().all(|s| held.contains(s))
    }

    /// The granted scopes and everything they imply.
    fn closure<'a>(&'a self, granted: impl Iterator<Item = &'a str>) -> HashSet<&'a str> {
        let mut held = HashSet::new();
        let mut todo: Vec<&str> = granted.collect();
        while let Some(s) = todo.pop() {
            if held.insert(s)
                && let Some(more) = self.implies.get(s)
            {
                todo.extend(more.iter().map(String::as_str));
            }
        }
        held
    }
}

fn dedup<'a>(scopes: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in scopes {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str) -> Target<'_> {
        Target::Tool(tool)
    }

    #[test]
    fn requirements_add_up_and_hierarchies_count() {
        let p = ScopePolicy::new()
            .always(["read"])
            .tool("drop", ["write", "read"])
            .implies("admin", ["write"])
            .implies("write", ["read"]);
        assert_eq!(p.required(Target::Untargeted), ["read"]);
        assert_eq!(p.required(call("drop")), ["read", "write"]);
        assert_eq!(p.required(call("other")), ["read"]);
        assert_eq!(p.required(Target::Prompt("drop")), ["read"]);
        let grant = |s: &[&str]| AccessGrant::new("i", "s").with_scopes(s.iter().copied());
        assert!(p.satisfied(Some(&grant(&["admin"])), &["read", "write"]));
        assert!(!p.satisfied(Some(&grant(&["read"])), &["read", "write"]));
        assert!(!p.satisfied(None, &["read"]));
        assert!(p.satisfied(None, &[]));
    }
}
