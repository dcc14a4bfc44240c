//! The command line, declared with clap: every subcommand has `--help`, and a bad flag is
//! named in the error (exit code 2).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// A terminal client for MCP servers, 2026-07-28 (MRTR questions as real forms) and
/// 2025-11-25 (pushed questions, the same forms), with OAuth; and a demo server.
#[derive(Debug, Parser)]
#[command(name = "sterna", version, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 ok · 1 the tool returned an error result (replay: an answer \
differs from the recording) · 2 usage error · \
3 a question could not be answered (not a terminal, and no --set/--answers for it) · \
4 protocol, transport or server error · 5 refused locally (sampling) · 130 interrupted (Ctrl-C)

Environment: STERNA_LOG sets what sterna logs on stderr, as tracing directives (default \
`warn`; `info`, `debug`, `sterna_client=debug`, `sterna::wire=trace` for the raw messages). \
STERNA_CONFIG names the server config file for --server (default ./.mcp.json, then \
~/.config/sterna/mcp.json). STERNA_TOKEN_FILE: see --token-file. SSL_CERT_FILE (or \
SSL_CERT_DIR): the CA certificates (PEM) that HTTPS trusts, instead of the system's."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Open an interactive session with a server: list, describe and call tools, get
    /// prompts, read resources, listen for changes.
    #[command(
        override_usage = "sterna connect [OPTIONS] <URL>\n       sterna connect [OPTIONS] -- <COMMAND> [ARGS]...\n       sterna connect [OPTIONS] --server <NAME>"
    )]
    Connect(ConnectArgs),
    /// Call one tool and print its result; questions are answered from --set/--answers,
    /// else asked in the terminal.
    #[command(
        override_usage = "sterna call [OPTIONS] <URL> <TOOL> [ARGS_JSON]\n       sterna call [OPTIONS] <TOOL> [ARGS_JSON] -- <COMMAND> [ARGS]...\n       sterna call [OPTIONS] --server <NAME> <TOOL> [ARGS_JSON]"
    )]
    Call(CallArgs),
    /// List the server's tools (with --json: `{"tools": [...]}`, full schemas).
    #[command(override_usage = ONE_SHOT_USAGE)]
    Tools(OneShotArgs),
    /// List the server's prompts (with --json: `{"prompts": [...]}`).
    #[command(override_usage = ONE_SHOT_USAGE)]
    Prompts(OneShotArgs),
    /// List the server's resources (with --json: `{"resources": [...]}`).
    #[command(override_usage = ONE_SHOT_USAGE)]
    Resources(OneShotArgs),
    /// List the server's resource templates (with --json: `{"resourceTemplates": [...]}`).
    #[command(override_usage = ONE_SHOT_USAGE)]
    Templates(OneShotArgs),
    /// Read one resource and print its contents.
    #[command(
        override_usage = "sterna read [OPTIONS] <URL> <URI>\n       sterna read [OPTIONS] <URI> -- <COMMAND> [ARGS]...\n       sterna read [OPTIONS] --server <NAME> <URI>"
    )]
    Read(OneShotArgs),
    /// The server's skills (the skills extension): list them, show one entry, or load
    /// one — every file read verified (size, digest, frontmatter) and the checks shown
    /// (with --json: `{"skills": [...], "rejected": [...]}`, `{"skill": {...}}`, or the
    /// files verified).
    #[command(
        override_usage = "sterna skills [OPTIONS] <URL> [list | show URI | load URI]\n       sterna skills [OPTIONS] [list | show URI | load URI] -- <COMMAND> [ARGS]...\n       sterna skills [OPTIONS] --server <NAME> [list | show URI | load URI]"
    )]
    Skills(OneShotArgs),
    /// Get one prompt and print its messages; arguments as ARGS_JSON or -a NAME=VALUE.
    #[command(
        override_usage = "sterna get [OPTIONS] <URL> <PROMPT> [ARGS_JSON]\n       sterna get [OPTIONS] <PROMPT> [ARGS_JSON] -- <COMMAND> [ARGS]...\n       sterna get [OPTIONS] --server <NAME> <PROMPT> [ARGS_JSON]"
    )]
    Get(OneShotArgs),
    /// Send a session recorded with --record to a server again (the client's messages, in
    /// order; what the server issues, requestState and task ids, follows the live answers)
    /// and compare the answers with the recording.
    #[command(
        override_usage = "sterna replay [OPTIONS] <FILE> [URL]\n       sterna replay [OPTIONS] <FILE> -- <COMMAND> [ARGS]..."
    )]
    Replay(ReplayArgs),
    /// Start the demo server and complete provision_database through a real MRTR round
    /// trip, asking the region with an arrow-key select.
    Demo(DemoArgs),
    /// Run the demo server on stdio, or over Streamable HTTP.
    Serve(ServeArgs),
    /// Print a new random requestState key (base64) for STERNA_STATE_KEYS.
    Keygen,
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

const ONE_SHOT_USAGE: &str = "sterna <tools|prompts|resources|templates> [OPTIONS] <URL>\n       sterna <tools|prompts|resources|templates> [OPTIONS] -- <COMMAND> [ARGS]...\n       sterna <tools|prompts|resources|templates> [OPTIONS] --server <NAME>";

/// Options of every command that talks to a server.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClientOpts {
    /// The server named NAME in the config file (`mcpServers`, as MCP hosts and the
    /// Inspector write it: `command`/`args`/`env`, or `url`/`headers`).
    #[arg(long, value_name = "NAME")]
    pub(crate) server: Option<String>,
    /// The config file for --server (default: $STERNA_CONFIG, else ./.mcp.json, else
    /// ~/.config/sterna/mcp.json).
    #[arg(long, value_name = "FILE", env = "STERNA_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// An environment variable for a server started with -- COMMAND; repeatable.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
    pub(crate) envs: Vec<String>,
    /// Print every JSON-RPC message on stderr as it is sent (→) or received (←), with
    /// timings, MRTR rounds and pushed requests labelled, secrets redacted.
    #[arg(long)]
    pub(crate) wire: bool,
    /// Write every JSON-RPC message to FILE as JSON Lines (secrets redacted), for
    /// `sterna replay` or a bug report.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// A directory to expose as a root (file:// URI); repeatable. Default: the current
    /// directory.
    #[arg(long = "root", value_name = "DIR")]
    pub(crate) roots: Vec<PathBuf>,
    /// Answer sampling requests with this shell command: it gets the request as JSON on
    /// stdin and prints the result (CreateMessageResult JSON, or plain text) on stdout.
    #[arg(long, value_name = "CMD")]
    pub(crate) sampling_cmd: Option<String>,
    /// The lowest level of log messages the server should send (none to ask for none).
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = [
        "none", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"])]
    pub(crate) log_level: String,
    /// An HTTP header for every request, e.g. "Authorization: Bearer …"; repeatable.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// Never ask in the terminal, even when there is one (as if stdin were not a terminal).
    #[arg(long)]
    pub(crate) no_input: bool,
    /// Where OAuth tokens and client registrations are kept (created 0600). Default:
    /// $XDG_CONFIG_HOME/sterna/tokens.json, else ~/.config/sterna/tokens.json.
    #[arg(long, value_name = "FILE", env = "STERNA_TOKEN_FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// The protocol era to speak: auto (probe with server/discover, fall back to
    /// 2025-11-25), modern (2026-07-28 only) or legacy (2025-11-25: initialize, a session,
    /// pushed questions).
    #[arg(long, value_name = "ERA", default_value = "auto", value_parser = ["auto", "modern", "legacy"])]
    pub(crate) era: String,
    /// Never authorize with OAuth: a server that answers 401 fails the command (exit 4).
    /// (Also off when an Authorization header is given with -H.)
    #[arg(long)]
    pub(crate) no_oauth: bool,
    /// An OAuth client id registered beforehand with the authorization server (default:
    /// register dynamically, or as the server's metadata allows).
    #[arg(long, value_name = "ID")]
    pub(crate) client_id: Option<String>,
}

/// `sterna connect`.
#[derive(Debug, Args)]
pub(crate) struct ConnectArgs {
    /// The server's Streamable HTTP endpoint (http://host:port/mcp).
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// A server to start as a child process and speak to over its stdio.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// Print results as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Where to keep the line history (default: ~/.sterna_history).
    #[arg(long, value_name = "FILE")]
    pub(crate) history: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) client: ClientOpts,
}

/// `sterna call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// URL TOOL [ARGS_JSON] over HTTP; TOOL [ARGS_JSON] with `-- COMMAND` over stdio.
    #[arg(value_name = "URL|TOOL", num_args = 1..=3, required = true)]
    pub(crate) positional: Vec<String>,
    /// A server to start as a child process and speak to over its stdio.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// A tool argument, typed by the tool's inputSchema (numbers, booleans, JSON for
    /// arrays and objects); repeatable.
    #[arg(long = "arg", short = 'a', value_name = "NAME=VALUE")]
    pub(crate) args: Vec<String>,
    /// An answer to a form field: FIELD=VALUE, or QUESTION.FIELD=VALUE; typed by the
    /// requested schema (comma-separated for multi-selects); repeatable.
    #[arg(long = "set", short = 's', value_name = "FIELD=VALUE")]
    pub(crate) sets: Vec<String>,
    /// Answers in a JSON file: {"question_key": {"field": value}, "field": value,
    /// "other_key": "decline"}.
    #[arg(long, value_name = "FILE")]
    pub(crate) answers: Option<PathBuf>,
    /// Print the result as JSON on stdout (and nothing else there).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) client: ClientOpts,
}

/// `sterna tools|prompts|resources|templates|read|get`.
#[derive(Debug, Args)]
pub(crate) struct OneShotArgs {
    /// [URL] then what the command needs (URI; PROMPT [ARGS_JSON]).
    #[arg(value_name = "URL|ARGS", num_args = 0..=3)]
    pub(crate) positional: Vec<String>,
    /// A server to start as a child process and speak to over its stdio.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// A prompt argument (`get`); repeatable.
    #[arg(long = "arg", short = 'a', value_name = "NAME=VALUE")]
    pub(crate) args: Vec<String>,
    /// Print the result as JSON on stdout (and nothing else there).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) client: ClientOpts,
}

/// `sterna replay`.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The recording (from --record), then the server's URL unless it is -- COMMAND or
    /// the recording's own target.
    #[arg(value_name = "FILE", num_args = 1..=2, required = true)]
    pub(crate) positional: Vec<String>,
    /// A server to start as a child process and speak to over its stdio.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// How long to wait for each answer the recording had, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "30")]
    pub(crate) wait: u64,
    /// Print only the summary, not every message.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// An environment variable for a server started with -- COMMAND; repeatable.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
    pub(crate) envs: Vec<String>,
    /// An HTTP header for every request; repeatable.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
}

/// `sterna demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Run the exchange over Streamable HTTP instead of stdio.
    #[arg(long)]
    pub(crate) http: bool,
    /// Answer the region question without asking (needed when not on a terminal).
    #[arg(long, value_parser = ["eu-west-1", "us-east-1"])]
    pub(crate) region: Option<String>,
    /// The name of the database to create.
    #[arg(long, default_value = "orders")]
    pub(crate) name: String,
}

/// `sterna serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "State keys: STERNA_STATE_KEYS=\"<sealing>,<verify-only>...\" \
(base64, from `sterna keygen`); the same list on every replica of a fleet. Without it, an \
ephemeral key that only this process can open."
)]
pub(crate) struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// Share single-use states, 2025-11-25 sessions and list/resource changes with the
    /// other replicas of a fleet through this Redis (redis://HOST:PORT/DB, or
    /// redis+cluster://HOST:PORT,HOST:PORT/ for a Redis Cluster).
    #[arg(long, value_name = "URL", env = "STERNA_REDIS_URL", requires = "http")]
    pub(crate) redis: Option<String>,
    /// The name of this replica: sent as `x-sterna-replica` on every response and logged
    /// with every message.
    #[arg(long, value_name = "NAME", env = "STERNA_REPLICA", requires = "http")]
    pub(crate) replica: Option<String>,
    /// Serve this replica's metrics at GET /metrics on the same listener (Prometheus text
    /// format: requests, rounds, state sizes, store latency, bus lag, refusals).
    #[arg(long, env = "STERNA_METRICS", requires = "http")]
    pub(crate) metrics: bool,
    /// How long a running task's lease lasts, in seconds: a task whose replica died is
    /// taken over by another replica this long after its last renewal.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30.0,
        env = "STERNA_TASK_LEASE"
    )]
    pub(crate) task_lease: f64,
    /// How many consumed single-use states one client (a principal, or an anonymous
    /// address) may hold until they expire, in memory or in Redis: each `redeem_voucher`
    /// it completes holds one. Beyond it its single-use calls get -32603 naming
    /// per_principal; other clients are served.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1000,
        env = "STERNA_SINGLE_USE_SHARE"
    )]
    pub(crate) single_use_share: usize,
    /// Trust only the CA certificates (PEM) in this file for a rediss:// Redis's
    /// certificate, instead of the platform's roots.
    #[arg(long, value_name = "PEM", env = "STERNA_REDIS_CA", requires = "redis")]
    pub(crate) redis_ca: Option<std::path::PathBuf>,
    /// Acknowledge a single-use consumption only once this many replicas of its Redis
    /// primary have it (WAIT): 1 where a replica can be promoted (a cluster with
    /// replicas, a managed Redis with failover).
    #[arg(
        long,
        value_name = "N",
        env = "STERNA_REDIS_REPLICAS",
        default_value_t = 0,
        requires = "redis"
    )]
    pub(crate) redis_replicas: u32,
    /// The key prefix in Redis (several fleets on one Redis).
    #[arg(
        long,
        value_name = "PREFIX",
        env = "STERNA_REDIS_PREFIX",
        default_value = "sterna",
        requires = "redis"
    )]
    pub(crate) redis_prefix: String,
    /// Also serve the skills of this folder (the skills extension: each folder below it
    /// holding a SKILL.md is a skill); SIGHUP re-reads it and announces a change.
    #[arg(long, value_name = "DIR")]
    pub(crate) skills: Option<PathBuf>,
    /// The load balancers in front of this server (addresses or networks, e.g.
    /// 127.0.0.1,10.0.0.0/8): their X-Forwarded-For names the client, so anonymous
    /// clients behind them hold fair shares of their own.
    #[arg(
        long,
        value_name = "NETS",
        env = "STERNA_TRUSTED_PROXIES",
        requires = "http"
    )]
    pub(crate) trusted_proxies: Option<sterna::server::http::TrustedProxies>,
    /// The header those load balancers name the client in: x-forwarded-for (the default)
    /// or forwarded (RFC 7239). Only that one is read; the other holds what clients wrote.
    #[arg(
        long,
        value_name = "HEADER",
        env = "STERNA_FORWARDED_HEADER",
        requires = "trusted_proxies"
    )]
    pub(crate) forwarded_header: Option<sterna::server::http::ForwardedHeader>,
}
