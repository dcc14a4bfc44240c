//! The demo server: `echo` and the seed's `provision_database`, which asks the user which
//! region to create the database in.

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::mrtr::form;
use sterna::server::{Context, ServerBuilder, Tool};
use sterna::{Elicitation, HandlerError, Server, StateKeys};

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

/// Registers the demo tools on a builder.
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
}

/// The demo server with the given keys.
pub(crate) fn build(keys: StateKeys) -> Server {
    tools(Server::builder("sterna-demo", env!("CARGO_PKG_VERSION")))
        .state_keys(keys)
        .instructions("Use provision_database to create a database; it asks the user for a region.")
        .build()
        .expect("the demo server is valid")
}
