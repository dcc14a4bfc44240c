//! Why a tool, prompt or resource cannot be served: found when the server is built (or
//! when a question type is declared), never when a user meets it.

use std::fmt;
use sterna_types::mirror::{AnnotationError, HeaderProblem};

/// What is wrong with a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefinitionError {
    /// A form type that does not fit the flat subset elicitation forms allow.
    Form {
        /// The form type's name.
        form: String,
        /// The field at fault (`None`: the type as a whole).
        field: Option<String>,
        /// What does not fit.
        unfit: Unfit,
    },
    /// An arguments type (or a published `inputSchema`) that is not an object schema, or
    /// prompt arguments that are not all strings.
    Arguments {
        /// The argument at fault (`None`: the type as a whole).
        field: Option<String>,
        /// What does not fit.
        unfit: Unfit,
    },
    /// A URI template this server cannot match.
    UriTemplate {
        /// The template.
        template: String,
        /// Why.
        problem: TemplateProblem,
    },
    /// An `x-mcp-header` annotation that cannot be mirrored into a header.
    HeaderAnnotation {
        /// Where in the schema (a JSON pointer), or the header name when it is a duplicate.
        at: String,
        /// Why.
        problem: HeaderProblem,
    },
}

/// Why a schema does not fit where it is used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unfit {
    /// Not a struct with named fields (a JSON object schema).
    NotAnObject,
    /// A nested object: forms are flat.
    Nested,
    /// A referenced or recursive type.
    Referenced,
    /// More than one type, or none.
    NoSingleType,
    /// A JSON type not allowed here (`null`, `object` in a form …).
    Type(String),
    /// A string format forms do not allow.
    Format(String),
    /// Enum options that are not strings, or variants that are not unit variants.
    Options,
    /// An array that is not a multi-select of enum values.
    Array,
}

/// Why a URI template cannot be matched.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateProblem {
    /// A `{` without its `}`, or a stray `}`.
    Unbalanced,
    /// An expression other than `{name}` or `{+name}`.
    Expression(String),
    /// Two variables side by side: where one ends is ambiguous.
    AdjacentVariables,
}

impl fmt::Display for Unfit {
    /// What is wrong, as the end of "field `x` is …" (or "it is …" for the whole type).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnObject => f.write_str("not a struct with named fields"),
            Self::Nested => f.write_str("a nested object, and forms are flat"),
            Self::Referenced => f.write_str("a recursive or referenced type, and forms are flat"),
            Self::NoSingleType => f.write_str("not of exactly one type"),
            Self::Type(t) => write!(f, "of JSON type {t:?}, which is not allowed here"),
            Self::Format(t) => write!(f, "a string of format {t:?}, which forms do not allow"),
            Self::Options => f.write_str("an enum whose options are not all strings"),
            Self::Array => f.write_str(
                "a list, and a form allows a list only as a multi-select of enum values",
            ),
        }
    }
}

/// The types a form field may have, for the remedies below.
const FIELD_TYPES: &str = "`String`, a number, `bool`, or an enum of unit variants (a select); \
                           an `Option` of one of them makes the field optional";

impl Unfit {
    /// What to do about it, in a form.
    fn form_remedy(&self) -> String {
        match self {
            Self::NotAnObject => {
                "derive `JsonSchema` on a struct with named fields, one per form field".into()
            }
            Self::Nested => "move the inner struct's fields up into the form, or ask for them \
                             with a second form"
                .into(),
            Self::Referenced | Self::NoSingleType | Self::Type(_) => {
                format!("give the field one of the types forms allow: {FIELD_TYPES}")
            }
            Self::Format(_) => "forms allow the string formats email, uri, date and date-time: \
                                drop the format or use one of them"
                .into(),
            Self::Options => {
                "make it an enum of unit variants (`#[serde(rename = \"…\")]` sets each value)"
                    .into()
            }
            Self::Array => {
                "make it a `Vec` of an enum of unit variants (the options), or ask for one `String`"
                    .into()
            }
        }
    }
}

impl fmt::Display for TemplateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unbalanced => f.write_str("unbalanced braces"),
            Self::Expression(e) => write!(
                f,
                "unsupported expression {{{e}}} (use {{name}} or {{+name}})"
            ),
            Self::AdjacentVariables => f.write_str("two adjacent variables cannot be matched"),
        }
    }
}

impl fmt::Display for DefinitionError {
    /// What is wrong, then what to do about it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Form { form, field, unfit } => {
                write!(f, "`{form}` cannot be an elicitation form: ")?;
                match field {
                    Some(x) => write!(f, "field `{x}` is {unfit}")?,
                    None => write!(f, "it is {unfit}")?,
                }
                write!(f, "; {}", unfit.form_remedy())
            }
            Self::Arguments {
                field: Some(x),
                unfit: Unfit::Type(_),
            } => write!(
                f,
                "argument `{x}` is not a string: prompt arguments are strings; make it a \
                 `String` (or an `Option<String>`)"
            ),
            Self::Arguments {
                field: Some(x),
                unfit,
            } => write!(f, "argument `{x}` is {unfit}"),
            Self::Arguments {
                field: None,
                unfit: Unfit::NotAnObject,
            } => f.write_str(
                "the arguments type does not describe a JSON object: take a struct with named \
                 fields (or `NoArgs` for none)",
            ),
            Self::Arguments { field: None, unfit } => write!(f, "the arguments type is {unfit}"),
            Self::UriTemplate { template, problem } => {
                write!(f, "URI template {template:?}: {problem}")
            }
            Self::HeaderAnnotation { at, problem } => write!(f, "x-mcp-header at {at}: {problem}"),
        }
    }
}

impl std::error::Error for DefinitionError {}

/// Why a request's arguments cannot be decoded (answered with `-32602`).
#[derive(Debug)]
pub(crate) enum ArgsError {
    /// Tool arguments that are not a JSON object.
    NotAnObject,
    /// Arguments that do not decode into the handler's type.
    Decode(serde_json::Error),
    /// The definition was refused at build time (never reached: the build fails).
    Unusable,
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnObject => f.write_str("arguments must be an object"),
            Self::Decode(e) => write!(f, "{e}"),
            Self::Unusable => f.write_str("this definition is not usable"),
        }
    }
}

impl From<AnnotationError> for DefinitionError {
    fn from(e: AnnotationError) -> Self {
        DefinitionError::HeaderAnnotation {
            at: e.at,
            problem: e.problem,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::mrtr::{Elicitation, form};
    use crate::{BuildError, Context, NoArgs, Server, Tool};

    /// A form the user would fill in for a tool, whose `names` field is a list of strings.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Guests {
        #[allow(dead_code, reason = "the schema is what the test is about")]
        names: Vec<String>,
    }

    fn unfit_form() -> BuildError {
        Server::builder("s", "1")
            .ephemeral_state_keys()
            .tool(
                Tool::new("invite")
                    .ask(|_: &NoArgs| form::<Guests>("Who comes?"))
                    .run(|_c: Context, _: NoArgs, _g: Elicitation<Guests>| async { "x" }),
            )
            .build()
            .unwrap_err()
    }

    /// What `fn main() -> Result<(), Box<dyn Error>>` prints when the build fails (`{:?}`)
    /// and what `{}` shows: a sentence that says what to do, not a dump of the enum.
    #[test]
    fn an_unfit_form_reads_as_an_instruction() {
        let want = "`invite`: `Guests` cannot be an elicitation form: field `names` is a list, \
                    and a form allows a list only as a multi-select of enum values; make it a \
                    `Vec` of an enum of unit variants (the options), or ask for one `String`";
        let err = unfit_form();
        assert_eq!(err.to_string(), want);
        let boxed: Box<dyn std::error::Error> = Box::new(err.clone());
        assert_eq!(format!("{boxed:?}"), want);
        // The structure is still there for `{:#?}`.
        assert!(format!("{err:#?}").contains("unfit: Array"), "{err:#?}");
    }
}
