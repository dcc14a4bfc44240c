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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnObject => f.write_str("not a struct with named fields"),
            Self::Nested => f.write_str("nested objects are not allowed: forms are flat"),
            Self::Referenced => f.write_str("recursive or referenced types are not flat"),
            Self::NoSingleType => f.write_str("a field must have exactly one type"),
            Self::Type(t) => write!(f, "type {t:?} is not allowed here"),
            Self::Format(t) => write!(f, "string format {t:?} is not allowed in forms"),
            Self::Options => f.write_str("options must be strings (unit enum variants)"),
            Self::Array => f.write_str("arrays are only multi-selects of enum values"),
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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Form {
                form,
                field: Some(x),
                unfit,
            } => {
                write!(
                    f,
                    "{form} cannot be an elicitation form: field `{x}`: {unfit}"
                )
            }
            Self::Form {
                form,
                field: None,
                unfit,
            } => {
                write!(f, "{form} cannot be an elicitation form: {unfit}")
            }
            Self::Arguments {
                field: Some(x),
                unfit,
            } => write!(f, "argument `{x}`: {unfit}"),
            Self::Arguments { field: None, unfit } => write!(f, "arguments: {unfit}"),
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
