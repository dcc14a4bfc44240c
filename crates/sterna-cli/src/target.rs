//! Connecting to a server: a URL (Streamable HTTP) or a command (stdio child), with the
//! handlers that decide the capabilities declared on every request.

use crate::answers::Answers;
use crate::cli::ClientOpts;
use crate::exit::CliError;
use crate::fulfil::Answerer;
use crate::notify::Notices;
use crate::ui::Ui;
use sterna::client::{Client, ClientError, Refusal, transport::HttpTransport};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult, ElicitUrlParams};
use sterna::types::sampling::CreateMessageRequestParams;

/// Where the server is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A command to start, spoken to over its stdio.
    Stdio(Vec<String>),
}

impl Target {
    /// How to name it to the user.
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Http(url) => url.clone(),
            Self::Stdio(cmd) => cmd.join(" "),
        }
    }
}

/// A connected client and everything that answers and shows for it.
#[derive(Debug, Clone)]
pub(crate) struct Conn {
    pub(crate) client: Client,
    pub(crate) answerer: Answerer,
    pub(crate) notices: Notices,
    pub(crate) ui: Ui,
    /// `io.modelcontextprotocol/logLevel` for every call (`None`: no log messages).
    pub(crate) log_level: Option<String>,
}

/// Connects to `target` (a child process starts here; HTTP connects on first use).
pub(crate) fn connect(
    target: &Target,
    opts: &ClientOpts,
    answers: Answers,
) -> Result<Conn, CliError> {
    let ui = Ui::new(opts.no_input);
    let roots = crate::roots::roots(&opts.roots)?;
    let answerer = Answerer::new(
        ui.clone(),
        answers,
        opts.sampling_cmd.clone(),
        roots.clone(),
        target.label(),
    );
    let notices = Notices::start(ui.clone());
    let (a1, a2, a3) = (answerer.clone(), answerer.clone(), answerer.clone());
    let mut builder = Client::builder("sterna", env!("CARGO_PKG_VERSION"))
        .on_elicit(move |f: ElicitFormParams| {
            let a = a1.clone();
            async move {
                a.form("form", &f)
                    .await
                    .unwrap_or_else(|_| ElicitResult::cancel())
            }
        })
        .on_elicit_url(move |u: ElicitUrlParams| {
            let a = a2.clone();
            async move {
                let q = sterna::types::mrtr::InputRequests::from([(
                    "url".to_owned(),
                    sterna::types::mrtr::InputRequest::Elicit(
                        sterna::types::elicitation::ElicitRequestParams::Url(u),
                    ),
                )]);
                match a.round(&q).await.ok().and_then(|mut r| r.remove("url")) {
                    Some(sterna::types::mrtr::InputResponse::Elicit(e)) => e,
                    _ => ElicitResult::cancel(),
                }
            }
        })
        .roots(roots)
        .on_notification(notices.sink());
    if answerer.can_sample() {
        builder = builder.on_sample(move |p: CreateMessageRequestParams| {
            let a = a3.clone();
            async move {
                let q = sterna::types::mrtr::InputRequests::from([(
                    "sample".to_owned(),
                    sterna::types::mrtr::InputRequest::Sample(p),
                )]);
                match a.round(&q).await {
                    Ok(mut r) => match r.remove("sample") {
                        Some(sterna::types::mrtr::InputResponse::Sample(s)) => Ok(s),
                        _ => Err(Refusal::new("no answer")),
                    },
                    Err(e) => Err(Refusal::new(e.to_string())),
                }
            }
        });
    }
    let client = match target {
        Target::Http(url) => {
            let mut t =
                HttpTransport::new(url).map_err(|e| CliError::Usage(format!("{url}: {e}")))?;
            for h in &opts.headers {
                let (n, v) = h.split_once(':').ok_or_else(|| {
                    CliError::Usage(format!("--header {h:?}: expected NAME: VALUE"))
                })?;
                t = t
                    .header(n.trim(), v.trim())
                    .map_err(|e| CliError::Usage(format!("--header {h:?}: {e}")))?;
            }
            builder.build(t)
        }
        Target::Stdio(cmd) => {
            let (program, args) = cmd
                .split_first()
                .ok_or_else(|| CliError::Usage("-- needs a command".into()))?;
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            builder.spawn_stdio(command).map_err(|e| {
                CliError::Client(ClientError::Transport(sterna::client::TransportError::Io(
                    format!("cannot start {program}: {e}"),
                )))
            })?
        }
    };
    let log_level = (opts.log_level != "none").then(|| opts.log_level.clone());
    Ok(Conn {
        client,
        answerer,
        notices,
        ui,
        log_level,
    })
}
