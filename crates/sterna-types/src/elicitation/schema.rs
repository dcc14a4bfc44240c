//! The `requestedSchema` of a form: a flat object of primitive fields, and how each
//! kind of field is written on the wire.

use crate::JsonObject;
use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `requestedSchema` of a form: a flat object of primitive fields.
///
/// Field order is kept as given (it is the order a client shows the fields in).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ElicitSchema {
    /// `$schema`, if given.
    pub schema: Option<String>,
    /// The fields, in order.
    pub properties: Vec<(String, PrimitiveSchema)>,
    /// Names of the required fields.
    pub required: Option<Vec<String>>,
}

impl ElicitSchema {
    /// The schema of field `name`.
    pub fn property(&self, name: &str) -> Option<&PrimitiveSchema> {
        self.properties
            .iter()
            .find_map(|(k, v)| (k == name).then_some(v))
    }

    /// Is field `name` required?
    pub fn is_required(&self, name: &str) -> bool {
        self.required
            .as_ref()
            .is_some_and(|r| r.iter().any(|n| n == name))
    }
}

struct Properties<'a>(&'a [(String, PrimitiveSchema)]);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for ElicitSchema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(sc) = &self.schema {
            m.serialize_entry("$schema", sc)?;
        }
        m.serialize_entry("type", "object")?;
        m.serialize_entry("properties", &Properties(&self.properties))?;
        if let Some(r) = &self.required {
            m.serialize_entry("required", r)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for ElicitSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(rename = "$schema", default)]
            schema: Option<String>,
            #[serde(rename = "type")]
            ty: String,
            properties: PropertiesDe,
            #[serde(default)]
            required: Option<Vec<String>>,
        }
        struct PropertiesDe(Vec<(String, PrimitiveSchema)>);
        impl<'de> Deserialize<'de> for PropertiesDe {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = PropertiesDe;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a map of field schemas")
                    }
                    fn visit_map<A: de::MapAccess<'de>>(
                        self,
                        mut a: A,
                    ) -> Result<PropertiesDe, A::Error> {
                        let mut out = Vec::new();
                        while let Some((k, v)) = a.next_entry::<String, PrimitiveSchema>()? {
                            out.push((k, v));
                        }
                        Ok(PropertiesDe(out))
                    }
                }
                d.deserialize_map(V)
            }
        }
        let raw = Raw::deserialize(d)?;
        if raw.ty != "object" {
            return Err(de::Error::custom("requestedSchema type must be \"object\""));
        }
        Ok(Self {
            schema: raw.schema,
            properties: raw.properties.0,
            required: raw.required,
        })
    }
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveSchema {
    /// A string.
    String(StringSchema),
    /// A number or an integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One value out of a list.
    SingleSelect(SingleSelectSchema),
    /// Several values out of a list.
    MultiSelect(MultiSelectSchema),
}

/// Formats a string field may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// An e-mail address.
    Email,
    /// A URI.
    Uri,
    /// A date (`YYYY-MM-DD`).
    Date,
    /// A date and time (RFC 3339).
    DateTime,
}

/// A string field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `number` or `integer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberKind {
    /// Any number.
    Number,
    /// An integer.
    Integer,
}

/// A number field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub kind: NumberKind,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Inclusive minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Inclusive maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<f64>,
}

/// A boolean field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BooleanSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// An option with a value and a display label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TitledOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label.
    pub title: String,
}

/// The options of a select field.
#[derive(Debug, Clone, PartialEq)]
pub enum EnumOptions {
    /// `enum: [..]`.
    Untitled(Vec<String>),
    /// `oneOf` / `anyOf` of `{const, title}`.
    Titled(Vec<TitledOption>),
    /// `enum` with the legacy `enumNames` (single select only).
    LegacyTitled {
        /// The values.
        values: Vec<String>,
        /// Their labels.
        names: Vec<String>,
    },
}

impl EnumOptions {
    /// Does `value` belong to the options?
    pub fn contains(&self, value: &str) -> bool {
        match self {
            Self::Untitled(v) | Self::LegacyTitled { values: v, .. } => {
                v.iter().any(|x| x == value)
            }
            Self::Titled(o) => o.iter().any(|x| x.value == value),
        }
    }

    /// The values, in order.
    pub fn values(&self) -> Vec<&str> {
        match self {
            Self::Untitled(v) | Self::LegacyTitled { values: v, .. } => {
                v.iter().map(String::as_str).collect()
            }
            Self::Titled(o) => o.iter().map(|x| x.value.as_str()).collect(),
        }
    }
}

/// A single-select field.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleSelectSchema {
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// The options.
    pub options: EnumOptions,
    /// Default value.
    pub default: Option<String>,
}

/// A multi-select field.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiSelectSchema {
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// The options (never [`EnumOptions::LegacyTitled`]).
    pub options: EnumOptions,
    /// Minimum number of values.
    pub min_items: Option<u64>,
    /// Maximum number of values.
    pub max_items: Option<u64>,
    /// Default values.
    pub default: Option<Vec<String>>,
}

fn put<M: SerializeMap, T: Serialize + ?Sized>(
    m: &mut M,
    k: &str,
    v: Option<&T>,
) -> Result<(), M::Error> {
    match v {
        Some(v) => m.serialize_entry(k, v),
        None => Ok(()),
    }
}

impl Serialize for PrimitiveSchema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(x) => Tagged("string", x).serialize(s),
            Self::Number(x) => x.serialize(s),
            Self::Boolean(x) => Tagged("boolean", x).serialize(s),
            Self::SingleSelect(x) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("type", "string")?;
                put(&mut m, "title", x.title.as_ref())?;
                put(&mut m, "description", x.description.as_ref())?;
                match &x.options {
                    EnumOptions::Untitled(v) => m.serialize_entry("enum", v)?,
                    EnumOptions::Titled(o) => m.serialize_entry("oneOf", o)?,
                    EnumOptions::LegacyTitled { values, names } => {
                        m.serialize_entry("enum", values)?;
                        m.serialize_entry("enumNames", names)?;
                    }
                }
                put(&mut m, "default", x.default.as_ref())?;
                m.end()
            }
            Self::MultiSelect(x) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("type", "array")?;
                put(&mut m, "title", x.title.as_ref())?;
                put(&mut m, "description", x.description.as_ref())?;
                put(&mut m, "minItems", x.min_items.as_ref())?;
                put(&mut m, "maxItems", x.max_items.as_ref())?;
                match &x.options {
                    EnumOptions::Titled(o) => {
                        m.serialize_entry("items", &serde_json::json!({ "anyOf": o }))?
                    }
                    EnumOptions::Untitled(v) | EnumOptions::LegacyTitled { values: v, .. } => m
                        .serialize_entry(
                            "items",
                            &serde_json::json!({ "type": "string", "enum": v }),
                        )?,
                }
                put(&mut m, "default", x.default.as_ref())?;
                m.end()
            }
        }
    }
}

/// Serializes `{"type": tag, ..inner}`.
struct Tagged<'a, T>(&'static str, &'a T);

impl<T: Serialize> Serialize for Tagged<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct W<'a, T> {
            #[serde(rename = "type")]
            ty: &'static str,
            #[serde(flatten)]
            inner: &'a T,
        }
        W {
            ty: self.0,
            inner: self.1,
        }
        .serialize(s)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SelectDe {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "enum")]
    enum_values: Option<Vec<String>>,
    #[serde(default)]
    enum_names: Option<Vec<String>>,
    #[serde(default)]
    one_of: Option<Vec<TitledOption>>,
    #[serde(default)]
    default: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MultiDe {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    items: MultiItemsDe,
    #[serde(default)]
    min_items: Option<u64>,
    #[serde(default)]
    max_items: Option<u64>,
    #[serde(default)]
    default: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MultiItemsDe {
    #[serde(default, rename = "enum")]
    enum_values: Option<Vec<String>>,
    #[serde(default)]
    any_of: Option<Vec<TitledOption>>,
}

impl<'de> Deserialize<'de> for PrimitiveSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = JsonObject::deserialize(d)?;
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let value = Value::Object(v);
        match ty.as_str() {
            "string" if value.get("enum").is_some() || value.get("oneOf").is_some() => {
                let s = SelectDe::deserialize(&value).map_err(de::Error::custom)?;
                let options = match (s.enum_values, s.enum_names, s.one_of) {
                    (Some(values), Some(names), None) => {
                        EnumOptions::LegacyTitled { values, names }
                    }
                    (Some(values), None, None) => EnumOptions::Untitled(values),
                    (None, None, Some(o)) => EnumOptions::Titled(o),
                    _ => {
                        return Err(de::Error::custom(
                            "a select field needs exactly one of enum or oneOf",
                        ));
                    }
                };
                Ok(Self::SingleSelect(SingleSelectSchema {
                    title: s.title,
                    description: s.description,
                    options,
                    default: s.default,
                }))
            }
            "string" => StringSchema::deserialize(&value)
                .map(Self::String)
                .map_err(de::Error::custom),
            "number" | "integer" => NumberSchema::deserialize(&value)
                .map(Self::Number)
                .map_err(de::Error::custom),
            "boolean" => BooleanSchema::deserialize(&value)
                .map(Self::Boolean)
                .map_err(de::Error::custom),
            "array" => {
                let m = MultiDe::deserialize(&value).map_err(de::Error::custom)?;
                let options = match (m.items.enum_values, m.items.any_of) {
                    (Some(v), None) => EnumOptions::Untitled(v),
                    (None, Some(o)) => EnumOptions::Titled(o),
                    _ => {
                        return Err(de::Error::custom(
                            "a multi-select field needs items.enum or items.anyOf",
                        ));
                    }
                };
                Ok(Self::MultiSelect(MultiSelectSchema {
                    title: m.title,
                    description: m.description,
                    options,
                    min_items: m.min_items,
                    max_items: m.max_items,
                    default: m.default,
                }))
            }
            other => Err(de::Error::custom(format_args!(
                "unsupported form field type {other:?} (forms are flat: string, number, integer, boolean, enums)"
            ))),
        }
    }
}
