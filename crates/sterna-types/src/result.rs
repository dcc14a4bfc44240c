//! `resultType`, the caching scope and the empty result.
//!
//! Every 2026-07-28 result carries `resultType`. The three methods that may ask the client
//! for input (`tools/call`, `prompts/get`, `resources/read`) answer either their normal
//! result (`"complete"`) or an [`InputRequiredResult`](crate::mrtr::InputRequiredResult) (`"input_required"`). The two are
//! told apart by the **value** of `resultType` only: an absent value means `complete`
//! (older servers), any other value is an error for the reader.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The value of `resultType`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// A final result.
    #[default]
    Complete,
    /// An [`InputRequiredResult`](crate::mrtr::InputRequiredResult).
    InputRequired,
    /// A task handle (`CreateTaskResult` of the `io.modelcontextprotocol/tasks`
    /// extension, see [`crate::tasks`]); only on a `tools/call` that declared it.
    Task,
}

impl ResultType {
    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Task => "task",
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        match s.as_ref() {
            "complete" => Ok(Self::Complete),
            "input_required" => Ok(Self::InputRequired),
            "task" => Ok(Self::Task),
            other => Err(de::Error::custom(format_args!(
                "unsupported resultType {other:?}"
            ))),
        }
    }
}

/// Caching scope of a cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// May be shared across authorization contexts.
    Public,
    /// Must not be shared across authorization contexts.
    Private,
}

/// A result with no content (`{"resultType":"complete"}` plus `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyResult {
    /// Always `complete`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::meta::ResultMeta>,
}
