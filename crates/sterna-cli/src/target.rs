//! Connecting to a server: a URL (Streamable HTTP) or a command (stdio child), with the
//! handlers that decide the capabilities declared on every request.

use crate::answers::Answers;
use crate::cli::ClientOpts;
use crate::exit::CliError;
use crate::fulfil::Answerer;
use crate::notify::Notices;
use crate::ui::Ui;
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, ClientBuilder, ClientError, EraMode, Refusal, TransportError};
use sterna::types::elicitation::{
    ElicitFormParams, ElicitRequestParams, ElicitResult, ElicitUrlParams,
};
use sterna::types::mrtr::{InputRequest, InputResponse};
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

/// Registers the handlers; they decide the capabilities declared (sampling only when it
/// can be answered).
fn with_handlers(builder: ClientBuilder, answerer: &Answerer) -> ClientBuilder {
    let (a1, a2, a3) = (answerer.clone(), answerer.clone(), answerer.clone());
    let builder = builder
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
                match a
                    .answer("url", &InputRequest::Elicit(ElicitRequestParams::Url(u)))
                    .await
                {
                    Ok(InputResponse::Elicit(e)) => e,
                    _ => ElicitResult::cancel(),
                }
            }
        })
        .roots(answerer.roots());
    if !answerer.can_sample() {
        return builder;
    }
    builder.on_sample(move |p: CreateMessageRequestParams| {
        let a = a3.clone();
        async move {
            match a.answer("sample", &InputRequest::Sample(p)).await {
                Ok(InputResponse::Sample(s)) => Ok(s),
                Ok(_) => Err(Refusal::new("no answer")),
                Err(e) => Err(Refusal::new(e.to_string())),
            }
        }
    })
}

/// The client over the target's transport.
fn open(
    target: &Target,
    opts: &ClientOpts,
    builder: ClientBuilder,
    ui: &Ui,
) -> Result<Client, CliError> {
    match target {
        Target::Http(url) => {
            let mut t = HttpTransport::builder(url);
            for h in &opts.headers {
                let (n, v) = h.split_once(':').ok_or_else(|| {
                    CliError::Usage(format!("--header {h:?}: expected NAME: VALUE"))
                })?;
                t = t.header(n.trim(), v.trim());
            }
            if let Some(oauth) = crate::oauth::for_http(opts, ui)? {
                t = t.oauth(oauth);
            }
            let t = t
                .build()
                .map_err(|e| CliError::Usage(format!("{url}: {e}")))?;
            Ok(builder.build(t))
        }
        Target::Stdio(cmd) => {
            let (program, args) = cmd
                .split_first()
                .ok_or_else(|| CliError::Usage("-- needs a command".into()))?;
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            builder.spawn_stdio(command).map_err(|e| {
                CliError::Client(ClientError::Transport(TransportError::Io(
                    std::io::Error::new(e.kind(), format!("cannot start {program}: {e}")),
                )))
            })
        }
    }
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
        roots,
        target.label(),
    );
    let notices = Notices::start(ui.clone());
    let era = match opts.era.as_str() {
        "modern" => EraMode::Modern,
        "legacy" => EraMode::Legacy,
        _ => EraMode::Auto,
    };
    let builder = Client::builder("sterna", env!("CARGO_PKG_VERSION"))
        .era(era)
        .tasks(true)
        .on_notification(notices.sink());
    let client = open(target, opts, with_handlers(builder, &answerer), &ui)?;
    let log_level = (opts.log_level != "none").then(|| opts.log_level.clone());
    Ok(Conn {
        client,
        answerer,
        notices,
        ui,
        log_level,
    })
}
