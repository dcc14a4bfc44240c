//! The demo server: `provision_database` (asks a region: an arrow-key select), `sign_up`
//! (a form of several field types, in declaration order), `deploy` (progress and log
//! messages), `redeem_voucher` (single-use: asks a confirmation, runs at most once per
//! state even when its final leg is replayed), `archive_logs`, `reindex` and `notify_team`
//! (tasks), `touch_readme` (announces a change), `echo`; a prompt, a resource (`README`, which
//! names them all) and a resource template.

use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::ReplayStore;
use sterna::server::state::StateKeys;
use sterna::server::tasks::{TaskStore, TaskSupport, TaskTakeover};
use sterna::server::{Context, Prompt, Resource, ResourceTemplate, ServerBuilder, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::meta::LoggingLevel;

/// Arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EchoArgs {
    /// The text to send back.
    pub(crate) text: String,
}

/// Arguments of `provision_database`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ProvisionArgs {
    /// Name of the database to create.
    pub(crate) name: String,
}

/// Where a database can live.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(crate) enum Region {
    /// Europe (Ireland).
    #[serde(rename = "eu-west-1")]
    EuWest1,
    /// US East (N. Virginia).
    #[serde(rename = "us-east-1")]
    UsEast1,
}

impl Region {
    /// The region's name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::EuWest1 => "eu-west-1",
            Self::UsEast1 => "us-east-1",
        }
    }
}

/// The form the user fills in (its key in `inputRequests` is `pick_region`).
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct PickRegion {
    /// The region to create the database in.
    pub(crate) region: Region,
}

/// A topic of the newsletter.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Topic {
    /// Releases.
    Releases,
    /// Security advisories.
    Security,
    /// Events.
    Events,
}

/// The sign-up form: fields in this order (name, email, age, topics, newsletter).
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SignUp {
    /// Your full name.
    pub(crate) name: String,
    /// Where we write to you.
    #[schemars(email)]
    pub(crate) email: String,
    /// Your age in years.
    #[schemars(range(min = 13, max = 130))]
    pub(crate) age: u8,
    /// What to hear about.
    pub(crate) topics: Vec<Topic>,
    /// Send the newsletter?
    pub(crate) newsletter: bool,
}

/// Arguments of `redeem_voucher`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct VoucherArgs {
    /// The voucher code.
    pub(crate) code: String,
}

/// The confirmation `redeem_voucher` asks for.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ConfirmRedeem {
    /// Redeem it now?
    pub(crate) confirm: bool,
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

/// Arguments of `deploy`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct DeployArgs {
    /// How many steps (1–50, default 5).
    pub(crate) steps: Option<u32>,
    /// Milliseconds per step (default 400).
    pub(crate) step_ms: Option<u64>,
}

/// Arguments of the `greet` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GreetArgs {
    /// Who to greet.
    pub(crate) name: String,
}

/// Variables of `sterna://notes/{topic}`.
#[derive(Debug, Deserialize)]
pub(crate) struct NoteVars {
    /// The topic.
    pub(crate) topic: String,
}

fn sign_up_tool() -> sterna::server::ToolDef {
    Tool::new("sign_up")
        .description("Signs you up; asks name, email, age, topics and the newsletter in one form")
        .ask(|_: &NoArgs| form::<SignUp>("Sign up for sterna news").key("sign_up"))
        .run(
            |_ctx: Context, _: NoArgs, form: Elicitation<SignUp>| async move {
                let s = match form {
                    Elicitation::Accepted(s) => s,
                    Elicitation::Declined => {
                        return Ok::<_, HandlerError>("Not signed up: you declined".to_owned());
                    }
                    Elicitation::Cancelled => return Ok("Not signed up: you cancelled".to_owned()),
                };
                let topics: Vec<String> = s
                    .topics
                    .iter()
                    .map(|t| format!("{t:?}").to_lowercase())
                    .collect();
                Ok(format!(
                    "Signed up {} <{}>, {}, topics [{}], newsletter {}",
                    s.name,
                    s.email,
                    s.age,
                    topics.join(", "),
                    if s.newsletter { "yes" } else { "no" }
                ))
            },
        )
}

fn redeem_tool() -> sterna::server::ToolDef {
    Tool::new("redeem_voucher")
        .description("Redeems a voucher once: asks a confirmation; a replayed answer is refused")
        .single_use()
        .ask(|a: &VoucherArgs| form::<ConfirmRedeem>(format!("Redeem voucher {}?", a.code)))
        .run(
            |_ctx: Context, a: VoucherArgs, ok: Elicitation<ConfirmRedeem>| async move {
                if !ok.required()?.confirm {
                    return Ok::<_, HandlerError>(format!("Voucher {} kept", a.code));
                }
                Ok(format!("Redeemed voucher {}", a.code))
            },
        )
}

/// The arguments of `archive_logs`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ArchiveArgs {
    /// The service whose logs to archive.
    pub(crate) service: String,
}

/// How long archived logs are kept.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Retention {
    /// Days to keep the archive.
    #[schemars(range(min = 1, max = 3650))]
    pub(crate) days: u32,
}

/// A long job that runs as a task when the client declares the tasks extension (and as a
/// plain MRTR call otherwise): it asks for the retention mid-flight, then archives.
fn archive_tool() -> sterna::server::ToolDef {
    Tool::new("archive_logs")
        .description("Archives a service's logs; runs as a task for clients that declare tasks")
        .task(TaskSupport::Optional)
        .handler(|ctx: Context, a: ArchiveArgs| async move {
            let question = format!("Keep the {} archive for how many days?", a.service);
            let keep = ctx.elicit::<Retention>(question).await?;
            let days = keep.required()?.days;
            // After the last answer: the side effect, once.
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok::<_, HandlerError>(format!("Archived {} logs for {days} days", a.service))
        })
}

/// The arguments of `reindex`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ReindexArgs {
    /// How long it takes, in seconds (1–600, default 10).
    pub(crate) seconds: Option<u64>,
}

/// A long job without questions: a task for clients that declare the extension (to try
/// following and cancelling one), a plain call otherwise. Rebuilding an index twice
/// leaves one index, so a task whose replica died runs again on another replica.
fn reindex_tool() -> sterna::server::ToolDef {
    Tool::new("reindex")
        .description("Rebuilds the search index; a long task (to try Ctrl-C: tasks/cancel)")
        .task(TaskSupport::Optional)
        .task_takeover(TaskTakeover::Rerun)
        .handler(|_ctx: Context, a: ReindexArgs| async move {
            let seconds = a.seconds.unwrap_or(10).clamp(1, 600);
            tokio::time::sleep(Duration::from_secs(seconds)).await;
            tracing::info!(target: "sterna_demo::effects", tool = "reindex", "side effect: the index was rebuilt");
            format!("Reindexed in {seconds} s")
        })
}

/// The arguments of `notify_team`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NotifyArgs {
    /// How long it takes before the message goes out, in seconds (1–600, default 10).
    pub(crate) seconds: Option<u64>,
}

/// A long job that is not idempotent (a second run would send a second message): a task
/// whose replica died mid-run fails instead of running twice.
fn notify_tool() -> sterna::server::ToolDef {
    Tool::new("notify_team")
        .description("Sends the team a message after a while; a long task that never runs twice")
        .task(TaskSupport::Optional)
        .handler(|_ctx: Context, a: NotifyArgs| async move {
            let seconds = a.seconds.unwrap_or(10).clamp(1, 600);
            tokio::time::sleep(Duration::from_secs(seconds)).await;
            tracing::info!(target: "sterna_demo::effects", tool = "notify_team", "side effect: the team was notified");
            "Notified the team".to_owned()
        })
}

fn deploy_tool() -> sterna::server::ToolDef {
    Tool::new("deploy")
        .description("Pretends to deploy: reports progress and log messages")
        .handler(|ctx: Context, a: DeployArgs| async move {
            let steps = a.steps.unwrap_or(5).clamp(1, 50);
            let pause = Duration::from_millis(a.step_ms.unwrap_or(400).min(5_000));
            ctx.log(LoggingLevel::Info, format!("deploying in {steps} steps"))
                .await;
            for i in 1..=steps {
                tokio::time::sleep(pause).await;
                ctx.progress(f64::from(i), Some(f64::from(steps)), Some("deploying"))
                    .await;
            }
            ctx.log(LoggingLevel::Notice, "deployed").await;
            format!("Deployed in {steps} steps")
        })
}

/// The text of `sterna://readme`: everything the demo server offers (a test checks that it
/// names every tool `tools/list` lists).
const README: &str = "The sterna demo server (MCP 2026-07-28; 2025-11-25 clients too).
Tools:
  provision_database  asks a region (a select), then creates the database
  sign_up             a form of five field types
  deploy              progress and log messages (steps, step_ms)
  redeem_voucher      single-use: its confirmed state is redeemed at most once
  archive_logs        asks a retention mid-flight; a task for clients that declare tasks
  reindex             a long task that asks nothing (try cancelling it)
  notify_team         a task that must not run twice (never taken over)
  touch_readme        announces that sterna://readme changed (for subscriptions/listen)
  echo                returns the text it is given
Prompt: greet. Resources: sterna://readme, the template sterna://notes/{topic}.
";

/// Registers the demo tools, prompt and resources on a builder.
pub(crate) fn tools<K>(builder: ServerBuilder<K>) -> ServerBuilder<K> {
    builder
        .tool(
            Tool::new("echo")
                .description("Returns the text it is given")
                .handler(|_ctx: Context, args: EchoArgs| async move { args.text }),
        )
        .tool(
            Tool::new("provision_database")
                .description("Creates a database in the region the user picks")
                .ask(|args: &ProvisionArgs| {
                    form::<PickRegion>(format!("Which region should {} be created in?", args.name))
                })
                .run(
                    |_ctx: Context, args: ProvisionArgs, pick: Elicitation<PickRegion>| async move {
                        let pick = pick.required()?;
                        // The body runs once, with every answer present: the place for side effects.
                        Ok::<_, HandlerError>(format!(
                            "Created {} in {}",
                            args.name,
                            pick.region.as_str()
                        ))
                    },
                ),
        )
        .tool(sign_up_tool())
        .tool(redeem_tool())
        .tool(
            Tool::new("touch_readme")
                .description("Announces that sterna://readme changed (to try `listen`)")
                .handler(|ctx: Context, _: NoArgs| async move {
                    ctx.changes().resource_updated("sterna://readme");
                    "Announced an update of sterna://readme"
                }),
        )
        .tool(deploy_tool())
        .tool(archive_tool())
        .tool(reindex_tool())
        .tool(notify_tool())
        .prompt(
            Prompt::new("greet")
                .description("A greeting for someone")
                .handler(|_ctx: Context, a: GreetArgs| async move {
                    format!("Write a warm greeting for {}.", a.name)
                }),
        )
        .resource(
            Resource::new("sterna://readme", "readme")
                .description("What this demo server offers")
                .mime_type("text/plain")
                .handler(|_ctx: Context, _: NoArgs| async move { README.to_owned() }),
        )
        .resource(
            ResourceTemplate::new("sterna://notes/{topic}", "notes")
                .description("A note on a topic")
                .mime_type("text/plain")
                .handler(|_ctx: Context, v: NoteVars| async move {
                    format!("Notes on {}: nothing yet.", v.topic)
                }),
        )
}

/// The demo server with the given keys, recording consumed single-use states in `replay`
/// and task records in `tasks` (default: in this process's memory), with running tasks'
/// leases of `lease` (default 30 s).
pub(crate) fn build(
    keys: StateKeys,
    replay: Option<Arc<dyn ReplayStore>>,
    tasks: Option<Arc<dyn TaskStore>>,
    lease: Option<Duration>,
    skills: Option<sterna::server::skills::Skills>,
) -> Server {
    let builder = tools(Server::builder("sterna-demo", env!("CARGO_PKG_VERSION")))
        .state_keys(keys)
        .instructions(
            "Use provision_database to create a database; it asks the user for a region.",
        );
    let builder = match replay {
        Some(store) => builder.replay_store(store),
        None => builder,
    };
    let builder = match tasks {
        Some(store) => builder.task_store(store),
        None => builder,
    };
    let builder = match lease {
        Some(lease) => builder.task_lease(lease),
        None => builder,
    };
    let builder = match skills {
        Some(skills) => builder.skills(skills),
        None => builder,
    };
    builder.build().expect("the demo server is valid")
}
