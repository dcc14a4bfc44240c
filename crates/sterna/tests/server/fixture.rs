//! The server every test talks to.

use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::{form, roots, sampling, url};
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Prompt, Resource, ResourceTemplate, ServerBuilder, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::elicitation::{
    ElicitFormParams, ElicitRequestParams, ElicitSchema, FormMode, PrimitiveSchema, StringSchema,
};
use sterna::types::mrtr::Outcome;
use sterna::types::mrtr::{InputRequest, InputRequiredResult, InputResponse};
use sterna::types::sampling::CreateMessageRequestParams;
use sterna::types::tools::CallToolResult;

#[derive(Deserialize, JsonSchema)]
pub struct ProvisionArgs {
    pub name: String,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, Debug)]
pub enum Region {
    #[serde(rename = "eu-west-1")]
    EuWest1,
    #[serde(rename = "us-east-1")]
    UsEast1,
}

#[derive(Deserialize, JsonSchema)]
pub struct PickRegion {
    pub region: Region,
}

#[derive(Deserialize, JsonSchema)]
pub struct UserName {
    pub name: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Color {
    pub color: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Confirm {
    pub ok: bool,
}

#[derive(Deserialize, JsonSchema)]
pub struct Nested {
    pub inner: UserName,
}

#[derive(Default)]
pub struct Counters {
    /// Side effects of the declarative provision body.
    pub provisioned: AtomicUsize,
    /// Entries into the staged (two-stage) declarative body.
    pub staged_body: AtomicUsize,
    /// Redemptions of the single-use tool.
    pub redeemed: AtomicUsize,
    /// Slow handlers dropped before finishing.
    pub slow_dropped: AtomicUsize,
    /// Bodies of the tool that accepts unsolicited answers.
    pub prefilled: AtomicUsize,
    /// The version the `rolling` tool puts in its first question.
    pub question_version: AtomicUsize,
    /// Completions of the imperative three-round `wizard`.
    pub wizard_done: AtomicUsize,
}

struct DropGuard(Arc<Counters>, bool);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.1 {
            self.0.slow_dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn region_name(r: Region) -> &'static str {
    match r {
        Region::EuWest1 => "eu-west-1",
        Region::UsEast1 => "us-east-1",
    }
}

pub fn server() -> (Server, Arc<Counters>) {
    server_with(|b| b)
}

pub fn server_with(
    configure: impl FnOnce(ServerBuilder<StateKeys>) -> ServerBuilder<StateKeys>,
) -> (Server, Arc<Counters>) {
    let c = Arc::new(Counters::default());
    let builder = Server::builder("fixture", "1.0.0").state_keys(StateKeys::ephemeral());
    let builder = tools(builder, &c);
    (configure(builder).build().expect("fixture builds"), c)
}

fn tools(b: ServerBuilder<StateKeys>, c: &Arc<Counters>) -> ServerBuilder<StateKeys> {
    let provisioned = c.clone();
    let staged = c.clone();
    let redeemed = c.clone();
    let slow = c.clone();
    let prefilled = c.clone();
    let rolling = c.clone();
    let wizard = c.clone();
    b.tool(
        Tool::new("provision_database")
            .description("declarative, one question")
            .ask(|a: &ProvisionArgs| form::<PickRegion>(format!("Which region for {}?", a.name)))
            .run(
                move |_ctx: Context, a: ProvisionArgs, pick: Elicitation<PickRegion>| {
                    let c = provisioned.clone();
                    async move {
                        let pick = pick.required()?;
                        c.provisioned.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, HandlerError>(format!(
                            "Created {} in {}",
                            a.name,
                            region_name(pick.region)
                        ))
                    }
                },
            ),
    )
    .tool(
        Tool::new("two_questions")
            .description("declarative, two independent questions in one round")
            .ask(|_: &NoArgs| {
                (
                    form::<UserName>("Your name?").key("user_name"),
                    form::<Color>("Favourite colour?"),
                )
            })
            .run(
                |_ctx: Context,
                 _: NoArgs,
                 (name, color): (Elicitation<UserName>, Elicitation<Color>)| async move {
                    match (name, color) {
                        (Elicitation::Accepted(n), Elicitation::Accepted(c)) => {
                            format!("{} likes {}", n.name, c.color)
                        }
                        _ => "declined".to_owned(),
                    }
                },
            ),
    )
    .tool(
        Tool::new("staged")
            .description("declarative, a question that depends on the first answer")
            .ask(|_: &NoArgs| form::<UserName>("Your name?"))
            .then_ask(|_: &NoArgs, name: &Elicitation<UserName>| {
                let who = match name {
                    Elicitation::Accepted(n) => n.name.clone(),
                    _ => "stranger".into(),
                };
                form::<Color>(format!("Favourite colour, {who}?"))
            })
            .run(
                move |_ctx: Context,
                      _: NoArgs,
                      (name, color): (Elicitation<UserName>, Elicitation<Color>)| {
                    let c = staged.clone();
                    async move {
                        c.staged_body.fetch_add(1, Ordering::SeqCst);
                        let (n, col) = (name.required()?, color.required()?);
                        Ok::<_, HandlerError>(format!("{} likes {}", n.name, col.color))
                    }
                },
            ),
    )
    .tool(
        Tool::new("wizard")
            .description("imperative, three rounds")
            .handler(move |ctx: Context, _: NoArgs| {
                let c = wizard.clone();
                async move {
                    let name = ctx.elicit::<UserName>("Your name?").await?.required()?;
                    let color = ctx
                        .ask(form::<Color>(format!("Favourite colour, {}?", name.name)))
                        .await?
                        .required()?;
                    let ok = ctx.elicit::<Confirm>("Save it?").await?.required()?;
                    c.wizard_done.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(format!(
                        "{} likes {} (saved: {})",
                        name.name, color.color, ok.ok
                    ))
                }
            }),
    )
    .tool(
        Tool::new("decline_aware")
            .description("reports what the user did")
            .handler(|ctx: Context, _: NoArgs| async move {
                Ok::<_, HandlerError>(match ctx.elicit::<UserName>("Your name?").await? {
                    Elicitation::Accepted(n) => format!("accepted {}", n.name),
                    Elicitation::Declined => "declined".to_owned(),
                    Elicitation::Cancelled => "cancelled".to_owned(),
                })
            }),
    )
    .tool(
        Tool::new("needs_sampling")
            .description("requires sampling")
            .handler(|ctx: Context, _: NoArgs| async move {
                let r = ctx
                    .sample(CreateMessageRequestParams::user_text("Say hi", 10))
                    .await?;
                Ok::<_, HandlerError>(r.content.text())
            }),
    )
    .tool(
        Tool::new("needs_url")
            .description("requires URL elicitation; says the out-of-band step is done")
            .handler(|ctx: Context, _: NoArgs| async move {
                let r = ctx
                    .elicit_url("Sign in", "https://example.com/connect")
                    .await?;
                ctx.complete_url_elicitation("url").await;
                Ok::<_, HandlerError>(format!("{r:?}"))
            }),
    )
    .tool(
        Tool::new("adaptive")
            .description("asks only what the client can answer")
            .handler(|ctx: Context, _: NoArgs| async move {
                let (name, greeting, rts) = ctx
                    .ask((
                        form::<UserName>("Your name?").optional(),
                        sampling(CreateMessageRequestParams::user_text("Greet", 20)).optional(),
                        roots().optional(),
                    ))
                    .await?;
                Ok::<_, HandlerError>(format!(
                    "name={} greeting={} roots={}",
                    name.and_then(Elicitation::accepted)
                        .map(|n| n.name)
                        .unwrap_or("-".into()),
                    greeting.map(|g| g.content.text()).unwrap_or("-".into()),
                    rts.map(|r| r.len().to_string()).unwrap_or("-".into()),
                ))
            }),
    )
    .tool(
        Tool::new("redeem")
            .description("single-use")
            .single_use()
            .ask(|_: &NoArgs| form::<Confirm>("Redeem the voucher?"))
            .run(move |_ctx: Context, _: NoArgs, ok: Elicitation<Confirm>| {
                let c = redeemed.clone();
                async move {
                    ok.required()?;
                    let n = c.redeemed.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok::<_, HandlerError>(format!("redeemed #{n}"))
                }
            }),
    )
    .tool(
        Tool::new("low_level")
            .description("builds its own InputRequiredResult")
            .handler(|ctx: Context, _: NoArgs| async move {
                if let (Some(state), Some(InputResponse::Elicit(answer))) =
                    (ctx.raw_state(), ctx.input_response("confirm"))
                {
                    let content = serde_json::to_string(&answer.content).unwrap();
                    return Outcome::Complete(CallToolResult::text(format!(
                        "state={state} answer={content}"
                    )));
                }
                let schema = ElicitSchema {
                    schema: None,
                    properties: vec![(
                        "ok".into(),
                        PrimitiveSchema::String(StringSchema::default()),
                    )],
                    required: None,
                };
                Outcome::InputRequired(
                    InputRequiredResult::new()
                        .with_request(
                            "confirm",
                            InputRequest::Elicit(ElicitRequestParams::Form(ElicitFormParams {
                                mode: Some(FormMode::Form),
                                message: "ok?".into(),
                                requested_schema: schema,
                            })),
                        )
                        .with_state("my-own-state-42"),
                )
            }),
    )
    .tool(
        Tool::new("progress")
            .description("reports progress and logs")
            .handler(|ctx: Context, _: NoArgs| async move {
                for i in 1..=3 {
                    ctx.progress(f64::from(i), Some(3.0), Some("working")).await;
                }
                ctx.log(sterna::types::meta::LoggingLevel::Info, "done")
                    .await;
                "finished"
            }),
    )
    .tool(
        Tool::new("slow")
            .description("waits until cancelled")
            .handler(move |_ctx: Context, _: NoArgs| {
                let c = slow.clone();
                async move {
                    let mut guard = DropGuard(c, false);
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    guard.1 = true;
                    "woke up"
                }
            }),
    )
    .tool(Tool::new("panics").description("panics").handler(
        |_ctx: Context, _: NoArgs| async move {
            if true {
                panic!("boom");
            }
            "unreachable"
        },
    ))
    .tool(
        Tool::new("fails")
            .description("returns a tool error")
            .handler(|_ctx: Context, _: NoArgs| async move {
                Err::<String, _>(std::io::Error::other("disk full"))
            }),
    )
    .tool(
        Tool::new("mirrored")
            .description("arguments mirrored into Mcp-Param-* headers")
            .handler(|_ctx: Context, a: Mirrored| async move {
                format!("{} {:?} {:?}", a.region, a.limit, a.verbose)
            }),
    )
    .tool(
        Tool::new("announce")
            .description("announces a tool list change")
            .handler(|ctx: Context, _: NoArgs| async move {
                ctx.changes().tools_list_changed();
                "announced"
            }),
    )
    .tool(
        Tool::new("add")
            .description("typed arguments")
            .handler(|_ctx: Context, a: AddArgs| async move { format!("{}", a.a + a.b) }),
    )
    .tool(
        Tool::new("typed_state")
            .description("keeps its own typed state across rounds")
            .handler(|ctx: Context, _: NoArgs| async move {
                #[derive(serde::Serialize, Deserialize)]
                struct Mine {
                    started_at_round: u32,
                    ticket: String,
                }
                let previous: Option<Mine> = ctx.state()?;
                if previous.is_none() {
                    ctx.set_state(&Mine {
                        started_at_round: ctx.round(),
                        ticket: "T-77".into(),
                    });
                }
                let ok = ctx.elicit::<Confirm>("Go on?").await?.required()?;
                let mine = previous.expect("the state of round 1 comes back in round 2");
                Ok::<_, HandlerError>(format!(
                    "ticket {} from round {} (ok={}) now round {}",
                    mine.ticket,
                    mine.started_at_round,
                    ok.ok,
                    ctx.round()
                ))
            }),
    )
    .tool(
        Tool::new("dated")
            .description("declarative, a date-time field")
            .ask(|_: &NoArgs| form::<When>("When?"))
            .run(|_ctx: Context, _: NoArgs, when: Elicitation<When>| async move {
                let w = when.required()?;
                Ok::<_, HandlerError>(format!("at {}", w.at))
            }),
    )
    .tool(
        Tool::new("ask_panics")
            .description("its ask closure panics when told to")
            .ask(|a: &Boom| {
                assert!(!a.boom, "the ask closure blew up");
                form::<Confirm>("Sure?")
            })
            .run(|_ctx: Context, _: Boom, ok: Elicitation<Confirm>| async move {
                Ok::<_, HandlerError>(format!("ok={}", ok.required()?.ok))
            }),
    )
    .tool(
        Tool::new("then_ask_panics")
            .description("its second-stage ask closure panics")
            .ask(|_: &NoArgs| form::<Confirm>("Sure?"))
            .then_ask(|_: &NoArgs, _: &Elicitation<Confirm>| -> sterna::server::mrtr::FormQuestion<Color> {
                panic!("the then_ask closure blew up")
            })
            .run(|_ctx: Context, _: NoArgs, _: (Elicitation<Confirm>, Elicitation<Color>)| async move {
                "unreachable"
            }),
    )
    .tool(
        Tool::new("sample_with_tools")
            .description("asks for tool-enabled sampling")
            .handler(|ctx: Context, _: NoArgs| async move {
                let mut p = CreateMessageRequestParams::user_text("Use a tool", 10);
                p.tool_choice = Some(sterna::types::sampling::ToolChoice {
                    mode: Some("auto".into()),
                });
                let r = ctx.sample(p).await?;
                Ok::<_, HandlerError>(r.content.text())
            }),
    )
    .tool(
        Tool::new("prefillable")
            .description("accepts answers given before being asked")
            .accept_unsolicited_answers()
            .ask(|_: &NoArgs| form::<UserName>("Your name?").key("user_name"))
            .run(move |_ctx: Context, _: NoArgs, name: Elicitation<UserName>| {
                let c = prefilled.clone();
                async move {
                    c.prefilled.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(format!("hello {}", name.required()?.name))
                }
            }),
    )
    .tool(
        Tool::new("rolling")
            .description("its first question changes when the server is upgraded")
            .handler(move |ctx: Context, _: NoArgs| {
                let v = rolling.question_version.load(Ordering::SeqCst);
                async move {
                    let ok = ctx
                        .ask(form::<Confirm>(format!("Deploy v{v}?")))
                        .await?
                        .required()?;
                    let color = ctx.elicit::<Color>("Colour?").await?.required()?;
                    Ok::<_, HandlerError>(format!("v{v} ok={} {}", ok.ok, color.color))
                }
            }),
    )
    .tool(
        Tool::new("essay")
            .description("three rounds of long answers")
            .handler(|ctx: Context, _: NoArgs| async move {
                let mut all = String::new();
                for part in 1..=3 {
                    let t = ctx
                        .ask(form::<Text>(format!("Part {part}?")).key(format!("part{part}")))
                        .await?
                        .required()?;
                    all.push_str(&t.text);
                }
                Ok::<_, HandlerError>(format!("{} chars", all.chars().count()))
            }),
    )
    .prompt(
        Prompt::new("with_completion")
            .description("completes its argument")
            .complete(
                "language",
                |_ctx: Context, req: sterna::server::CompletionRequest| async move {
                    ["rust", "ruby", "python"]
                        .iter()
                        .filter(|l| l.starts_with(&req.value))
                        .map(|l| l.to_string())
                        .collect::<Vec<_>>()
                },
            )
            .handler(|_ctx: Context, a: LangArgs| async move { format!("Write {}", a.language) }),
    )
    .prompt(
        Prompt::new("greeting")
            .description("asks for context first")
            .ask(|_: &NoArgs| form::<UserName>("Who is it for?").key("user_context"))
            .run(
                |_ctx: Context, _: NoArgs, name: Elicitation<UserName>| async move {
                    let n = name.required()?;
                    Ok::<_, HandlerError>(format!("Write a greeting for {}", n.name))
                },
            ),
    )
    .prompt(
        Prompt::new("completion_hazards")
            .description("completers that panic or ask")
            .complete("sync_panic", |_ctx: Context, _req: sterna::server::CompletionRequest| {
                if true {
                    panic!("completer blew up before its future");
                }
                async { Vec::<String>::new() }
            })
            .complete("async_panic", |_ctx: Context, _req: sterna::server::CompletionRequest| async move {
                if true {
                    panic!("completer future blew up");
                }
                Vec::<String>::new()
            })
            .complete("asks", |ctx: Context, _req: sterna::server::CompletionRequest| async move {
                let n = ctx.elicit::<UserName>("Who?").await?;
                Ok::<_, HandlerError>(vec![format!("{}", n.accepted().is_some())])
            })
            .handler(|_ctx: Context, a: HazardArgs| async move {
                format!("{} {} {}", a.sync_panic, a.async_panic, a.asks)
            }),
    )
    .resource(
        Resource::new("test://static", "static")
            .mime_type("text/plain")
            .handler(|_ctx: Context, _: NoArgs| async move { "static text".to_owned() }),
    )
    .resource(
        ResourceTemplate::new("test://secret/{id}", "secret")
            .mime_type("text/plain")
            .ask(|_: &Vars| form::<Confirm>("Reveal the secret?"))
            .run(
                |_ctx: Context, v: Vars, ok: Elicitation<Confirm>| async move {
                    let ok = ok.required()?;
                    Ok::<_, HandlerError>(format!("secret {} revealed={}", v.id, ok.ok))
                },
            ),
    )
}

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

#[derive(Deserialize)]
pub struct Vars {
    pub id: String,
}

/// A tool whose form type is not flat: registration must fail.
pub fn nested_form_tool() -> sterna::server::ToolDef {
    Tool::new("nested")
        .ask(|_: &NoArgs| form::<Nested>("?"))
        .run(|_ctx: Context, _: NoArgs, _n: Elicitation<Nested>| async move { "x" })
}

/// Unused (keeps the URL constructor exercised in docs).
#[allow(dead_code)]
pub fn url_question() -> sterna::server::mrtr::UrlQuestion {
    url("Sign in", "https://example.com")
}

/// `provision_database` alone (for servers built elsewhere).
pub fn provision_tool() -> sterna::server::ToolDef {
    Tool::new("provision_database")
        .ask(|a: &ProvisionArgs| form::<PickRegion>(format!("Which region for {}?", a.name)))
        .run(
            |_ctx: Context, a: ProvisionArgs, pick: Elicitation<PickRegion>| async move {
                let pick = pick.required()?;
                Ok::<_, HandlerError>(format!(
                    "Created {} in {}",
                    a.name,
                    region_name(pick.region)
                ))
            },
        )
}

#[derive(Deserialize, JsonSchema)]
pub struct LangArgs {
    /// A programming language.
    pub language: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Mirrored {
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    #[schemars(extend("x-mcp-header" = "Limit"))]
    pub limit: Option<i64>,
    #[schemars(extend("x-mcp-header" = "Verbose"))]
    pub verbose: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
pub struct When {
    #[schemars(extend("format" = "date-time"))]
    pub at: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Boom {
    #[serde(default)]
    pub boom: bool,
}

#[derive(Deserialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct HazardArgs {
    pub sync_panic: String,
    pub async_panic: String,
    pub asks: String,
}
