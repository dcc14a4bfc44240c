//! Connecting to a server: a URL (Streamable HTTP) or a command (stdio child), with the
//! handlers that decide the capabilities declared on every request.

use crate::answers::Answers;
use crate::cli::ClientOpts;
use crate::exit::CliError;
use crate::fulfil::Answerer;
use crate::notify::Notices;
pub(crate) use crate::place::Target;
use crate::ui::Ui;
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, ClientBuilder, ClientError, EraMode, Refusal, TransportError};
use sterna::types::elicitation::{
    ElicitFormParams, ElicitRequestParams, ElicitResult, ElicitUrlParams,
};
use sterna::types::mrtr::{InputRequest, InputResponse};
use sterna::types::sampling::CreateMessageRequestParams;

/// `--env KEY=VALUE`.
pub(crate) fn env_var(kv: &str) -> Result<(String, String), CliError> {
    kv.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| CliError::Usage(format!("--env {kv}: expected KEY=VALUE")))
}

/// `--header 'NAME: VALUE'`.
pub(crate) fn header(h: &str) -> Result<(&str, &str), CliError> {
    h.split_once(':')
        .map(|(n, v)| (n.trim(), v.trim()))
        .ok_or_else(|| CliError::Usage(format!("--header {h:?}: expected NAME: VALUE")))
}

/// The target (`--server NAME`, `-- COMMAND`, or a URL as the first word) and the words
/// left for the command. `--env` is added to a stdio target.
pub(crate) fn resolve(
    positional: &[String],
    command: &[String],
    opts: &ClientOpts,
) -> Result<(Target, Vec<String>), CliError> {
    let (mut target, rest) = match (&opts.server, command.is_empty(), positional.split_first()) {
        (Some(_), false, _) => {
            return Err(CliError::Usage(
                "give --server NAME or -- COMMAND, not both".into(),
            ));
        }
        (Some(name), true, _) => (
            crate::config::lookup(opts.config.as_deref(), name)?,
            positional.to_vec(),
        ),
        (None, false, _) => (Target::stdio(command.to_vec()), positional.to_vec()),
        (None, true, Some((url, rest))) if url.contains("://") => {
            (Target::http(url), rest.to_vec())
        }
        (None, true, first) => {
            return Err(CliError::Usage(format!(
                "where is the server? Give its URL (http://HOST:PORT/mcp), -- COMMAND [ARGS] to \
                 start it on stdio, or --server NAME from a config file{}",
                first.map_or(String::new(), |(w, _)| format!(" ({w:?} is not a URL)"))
            )));
        }
    };
    for kv in &opts.envs {
        let (k, v) = env_var(kv)?;
        match &mut target {
            Target::Stdio { env, .. } => env.push((k, v)),
            Target::Http { .. } => {
                return Err(CliError::Usage(
                    "--env is for a server started with -- COMMAND (HTTP servers take --header)"
                        .into(),
                ));
            }
        }
    }
    Ok((target, rest))
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
    /// Where the server is.
    pub(crate) target: Target,
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
        Target::Http { url, headers } => {
            let mut t = HttpTransport::builder(url);
            for (n, v) in headers {
                t = t.header(n, v);
            }
            for h in &opts.headers {
                let (n, v) = header(h)?;
                t = t.header(n, v);
            }
            let fixed_token = headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
            if !fixed_token && let Some(oauth) = crate::oauth::for_http(opts, ui)? {
                t = t.oauth(oauth);
            }
            let t = t
                .build()
                .map_err(|e| CliError::Usage(format!("{url}: {e}")))?;
            Ok(builder.build(t))
        }
        Target::Stdio {
            command: cmd,
            env,
            cwd,
        } => {
            let (program, args) = cmd
                .split_first()
                .ok_or_else(|| CliError::Usage("-- needs a command".into()))?;
            let mut command = tokio::process::Command::new(program);
            command.args(args).envs(env.iter().map(|(k, v)| (k, v)));
            if let Some(dir) = cwd {
                command.current_dir(dir);
            }
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
    crate::explain::set_target(target);
    let ui = Ui::new(opts.no_input);
    if let Some(path) = &opts.record {
        crate::wire::global()
            .record_to(path, &target.label())
            .map_err(|e| CliError::Usage(format!("--record {}: {e}", path.display())))?;
    }
    if opts.wire {
        crate::wire::global().set_shown(true);
    }
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
        target: target.clone(),
    })
}
