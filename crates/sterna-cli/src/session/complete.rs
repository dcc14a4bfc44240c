//! Tab completion for the session: commands, then tool, prompt and resource names.

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::sync::{Arc, Mutex};

/// The session's commands.
pub(crate) const COMMANDS: &[&str] = &[
    "call",
    "describe",
    "exit",
    "get",
    "help",
    "json",
    "listen",
    "prompts",
    "quit",
    "read",
    "resources",
    "templates",
    "tools",
];

/// The names the server offers, refreshed by the session.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names {
    pub(crate) tools: Vec<String>,
    pub(crate) prompts: Vec<String>,
    pub(crate) resources: Vec<String>,
    pub(crate) templates: Vec<String>,
}

/// The rustyline helper.
#[derive(Debug)]
pub(crate) struct Completion {
    pub(crate) names: Arc<Mutex<Names>>,
}

impl Completion {
    fn candidates(&self, command: &str) -> Vec<String> {
        let n = self.names.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match command {
            "call" => n.tools,
            "get" => n.prompts,
            "describe" => n.tools.into_iter().chain(n.prompts).collect(),
            "read" => n.resources.into_iter().chain(n.templates).collect(),
            "listen" => ["tools", "prompts", "resources"]
                .iter()
                .map(|s| s.to_string())
                .chain(n.resources)
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl Completer for Completion {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(' ').map_or(0, |i| i + 1);
        let prefix = &before[start..];
        let pool: Vec<String> = match before[..start].split_whitespace().next() {
            None => COMMANDS.iter().map(|s| s.to_string()).collect(),
            Some(command) => self.candidates(command),
        };
        let pairs = pool
            .into_iter()
            .filter(|c| c.starts_with(prefix))
            .map(|c| Pair {
                display: c.clone(),
                replacement: c,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {}

impl Validator for Completion {}

impl Helper for Completion {}
