//! Elicitation: asking the user, through a form (a flat schema) or a URL.

use crate::JsonObject;
use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod schema;

pub use schema::{
    BooleanSchema, ElicitSchema, EnumOptions, MultiSelectSchema, NumberKind, NumberSchema,
    PrimitiveSchema, SingleSelectSchema, StringFormat, StringSchema, TitledOption,
};

/// The params of `elicitation/create`: form mode or URL mode.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitRequestParams {
    /// Form mode (also when `mode` is absent).
    Form(ElicitFormParams),
    /// URL mode.
    Url(ElicitUrlParams),
}

/// A form: a message and a flat schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitFormParams {
    /// Whether `"mode": "form"` is written out (absent means form too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What to ask.
    pub message: String,
    /// The fields.
    pub requested_schema: ElicitSchema,
}

/// The literal `"form"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FormMode {
    /// `"form"`.
    Form,
}

/// URL mode: the user is sent to a page (for secrets, payments, third-party sign-in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitUrlParams {
    /// What the user is asked to do.
    pub message: String,
    /// The page to open.
    pub url: String,
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Form(f) => f.serialize(s),
            Self::Url(u) => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("mode", "url")?;
                m.serialize_entry("message", &u.message)?;
                m.serialize_entry("url", &u.url)?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Buffered raw, not as a `Value` (which sorts keys), so the form's fields keep
        // the order the server sent them in.
        #[derive(Deserialize)]
        struct Mode {
            #[serde(default)]
            mode: Option<Value>,
        }
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        let text = raw.get();
        let mode: Mode = serde_json::from_str(text).map_err(de::Error::custom)?;
        match mode.mode {
            None => serde_json::from_str(text)
                .map(Self::Form)
                .map_err(de::Error::custom),
            Some(Value::String(m)) if m == "form" => serde_json::from_str(text)
                .map(Self::Form)
                .map_err(de::Error::custom),
            Some(Value::String(m)) if m == "url" => serde_json::from_str(text)
                .map(Self::Url)
                .map_err(de::Error::custom),
            Some(other) => Err(de::Error::custom(format_args!(
                "unknown elicitation mode {other}"
            ))),
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form) or consented to open the URL (URL mode).
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only): strings, numbers, booleans or
    /// arrays of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
}

impl ElicitResult {
    /// An `accept` with content.
    pub fn accept(content: JsonObject) -> Self {
        Self {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// A `decline`.
    pub fn decline() -> Self {
        Self {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// A `cancel`.
    pub fn cancel() -> Self {
        Self {
            action: ElicitAction::Cancel,
            content: None,
        }
    }
}
