//! The tools of the 2025-11-25 scenarios that ask the client something
//! (`tools-call-sampling`, `tools-call-elicitation`, `elicitation-sep1034-defaults`,
//! `elicitation-sep1330-enums`), written once, MRTR style: a 2026-07-28 client gets
//! `input_required`, a 2025-11-25 session gets the questions pushed as real requests.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::{form, sampling};
use sterna::server::{Context, NoArgs, ServerBuilder, Tool};
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user
    message: String,
}

/// `test_elicitation`'s form.
#[derive(Serialize, Deserialize, JsonSchema)]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// SEP-1034: a default for every primitive type; nothing is required.
#[derive(Serialize, Deserialize, JsonSchema)]
struct WithDefaults {
    /// User name
    #[schemars(extend("default" = "John Doe"))]
    name: Option<String>,
    /// User age
    #[schemars(extend("default" = 30))]
    age: Option<i64>,
    /// User score
    #[schemars(extend("default" = 95.5))]
    score: Option<f64>,
    /// User status
    #[schemars(extend("default" = "active"))]
    status: Option<Status>,
    /// Verification status
    #[schemars(extend("default" = true))]
    verified: Option<bool>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// SEP-1330: the five enum forms.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Enums {
    /// Untitled single-select
    untitled_single: Plain,
    /// Titled single-select
    titled_single: Titled,
    /// Legacy titled enum (enumNames)
    #[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
    legacy_enum: Legacy,
    /// Untitled multi-select
    untitled_multi: Vec<Plain>,
    /// Titled multi-select
    titled_multi: Vec<TitledChoice>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Plain {
    Option1,
    Option2,
    Option3,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Titled {
    #[schemars(title = "First Option")]
    Value1,
    #[schemars(title = "Second Option")]
    Value2,
    #[schemars(title = "Third Option")]
    Value3,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum TitledChoice {
    #[schemars(title = "First Choice")]
    Value1,
    #[schemars(title = "Second Choice")]
    Value2,
    #[schemars(title = "Third Choice")]
    Value3,
}

/// `action=…, content=…`, as the reference fixture words an answer.
fn described<T: Serialize>(answer: &Elicitation<T>) -> String {
    match answer {
        Elicitation::Accepted(c) => {
            let content = serde_json::to_string(c).unwrap_or_default();
            format!("action=accept, content={content}")
        }
        Elicitation::Declined => "action=decline, content={}".into(),
        Elicitation::Cancelled => "action=cancel, content={}".into(),
    }
}

pub(crate) fn tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    b.tool(
        Tool::new("test_sampling")
            .description("Asks the client's LLM to complete the prompt")
            .ask(|a: &SamplingArgs| sampling(CreateMessageRequestParams::user_text(&a.prompt, 100)))
            .run(
                |_c: Context, _: SamplingArgs, answer: CreateMessageResult| async move {
                    format!("LLM response: {}", answer.content.text())
                },
            ),
    )
    .tool(
        Tool::new("test_elicitation")
            .description("Asks the user for a username and an email address")
            .ask(|a: &ElicitationArgs| form::<UserInfo>(a.message.clone()))
            .run(
                |_c: Context, _: ElicitationArgs, info: Elicitation<UserInfo>| async move {
                    format!("User response: {}", described(&info))
                },
            ),
    )
    .tool(
        Tool::new("test_elicitation_sep1034_defaults")
            .description("Asks a form whose every field has a default (SEP-1034)")
            .ask(|_: &NoArgs| {
                form::<WithDefaults>("Please review and update the form fields with defaults")
            })
            .run(
                |_c: Context, _: NoArgs, answer: Elicitation<WithDefaults>| async move {
                    format!("Elicitation completed: {}", described(&answer))
                },
            ),
    )
    .tool(
        Tool::new("test_elicitation_sep1330_enums")
            .description("Asks a form with the five enum forms (SEP-1330)")
            .ask(|_: &NoArgs| form::<Enums>("Please pick from the enum fields"))
            .run(
                |_c: Context, _: NoArgs, answer: Elicitation<Enums>| async move {
                    format!("Elicitation completed: {}", described(&answer))
                },
            ),
    )
}
