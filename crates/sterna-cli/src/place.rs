//! Where the server is: a Streamable HTTP endpoint or a command on stdio.

/// Where the server is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A Streamable HTTP endpoint, and headers for every request (from the config file).
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A command to start, spoken to over its stdio, with environment variables.
    Stdio {
        command: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<std::path::PathBuf>,
    },
}

impl Target {
    /// A Streamable HTTP endpoint.
    pub(crate) fn http(url: &str) -> Self {
        Self::Http {
            url: url.to_owned(),
            headers: Vec::new(),
        }
    }

    /// A command on stdio.
    pub(crate) fn stdio(command: Vec<String>) -> Self {
        Self::Stdio {
            command,
            env: Vec::new(),
            cwd: None,
        }
    }

    /// How to name it to the user.
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Http { url, .. } => url.clone(),
            Self::Stdio { command, .. } => command.join(" "),
        }
    }
}
