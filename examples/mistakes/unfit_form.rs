//! A mistake: a form type that cannot be a form (a list of strings; forms are flat and allow
//! lists only as multi-selects of enum values). It compiles; `build` fails, and what `main`
//! prints says what to do (scripts/lib/mistakes.py runs it and checks).
//!
//! expect-run: Error: `invite`: `Guests` cannot be an elicitation form: field `names` is a list, and a form allows a list only as a multi-select of enum values; make it a `Vec` of an enum of unit variants (the options), or ask for one `String`

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::mrtr::{Elicitation, form};
use sterna::server::{Context, NoArgs, Server, Tool};

#[derive(Deserialize, JsonSchema)]
struct Guests {
    names: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("hello", "0.1.0")
        .ephemeral_state_keys()
        .tool(
            Tool::new("invite")
                .ask(|_: &NoArgs| form::<Guests>("Who comes?"))
                .run(|_ctx: Context, _: NoArgs, g: Elicitation<Guests>| async move {
                    g.required().map(|g| g.names.join(", ")).unwrap_or_default()
                }),
        )
        .build()?;
    sterna::server::transport::serve_stdio(server).await?;
    Ok(())
}
