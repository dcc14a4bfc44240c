//! What a request acts on — the tool, prompt or resource the server will run — read from
//! the request as decoded for execution (either era), never from the raw bytes: the
//! authorization step and the method see one value.

/// The target of a request, as the method that runs it will see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// `tools/call` of this tool.
    Tool(&'a str),
    /// `prompts/get` of this prompt.
    Prompt(&'a str),
    /// `resources/read` of this URI.
    Resource(&'a str),
    /// Any other method (lists, discovery, completions, tasks …): no per-target rule.
    Untargeted,
}

impl<'a> Target<'a> {
    /// The target of `method` named `name` (tool or prompt name, resource URI).
    pub(crate) fn of(method: &str, name: Option<&'a str>) -> Self {
        match (method, name) {
            ("tools/call", Some(n)) => Self::Tool(n),
            ("prompts/get", Some(n)) => Self::Prompt(n),
            ("resources/read", Some(n)) => Self::Resource(n),
            _ => Self::Untargeted,
        }
    }

    /// The name or URI, if the request has a target.
    pub(crate) fn name(&self) -> Option<&'a str> {
        match *self {
            Self::Tool(n) | Self::Prompt(n) | Self::Resource(n) => Some(n),
            Self::Untargeted => None,
        }
    }
}
