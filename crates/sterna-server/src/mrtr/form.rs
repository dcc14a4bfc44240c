//! Forms from Rust types: the flat elicitation schema derived with `schemars`, and the
//! validation of submitted values against it.

use crate::definition::{DefinitionError, Unfit};
use crate::fast_map::FastMap;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::any::TypeId;
use std::sync::{Arc, OnceLock, RwLock};
use sterna_types::elicitation::{
    BooleanSchema, ElicitSchema, EnumOptions, MultiSelectSchema, NumberKind, NumberSchema,
    PrimitiveSchema, SingleSelectSchema, StringFormat, StringSchema, TitledOption,
};

/// A form type's schema: typed (to validate answers), written once as JSON (each question
/// copies it as it is), the digest of that JSON (for pinning answers), and the key its
/// questions get when the handler names none (from the type's name).
#[derive(Debug)]
pub(crate) struct FormSpec {
    pub(crate) schema: ElicitSchema,
    pub(crate) json: Box<RawValue>,
    pub(crate) digest: [u8; 32],
    pub(crate) default_key: String,
}

type Cache = RwLock<FastMap<TypeId, Result<Arc<FormSpec>, DefinitionError>>>;

/// The flat form schema of `T`, derived once per type and cached.
///
/// Fields keep the order the type declares them in (see [`declared_order`]), so a form
/// reads the way its author wrote it. A type that does not fit the elicitation subset
/// (nested objects, arrays of anything but enum values, maps, unions) is an error that
/// names the field.
///
/// [`declared_order`]: super::order::declared_order
pub(crate) fn form_schema<T: JsonSchema + DeserializeOwned + 'static>()
-> Result<Arc<FormSpec>, DefinitionError> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(hit) = cache.read().unwrap_or_else(|p| p.into_inner()).get(&id) {
        return hit.clone();
    }
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema = settings
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let built = convert(schema.as_value())
        .map(|mut schema| {
            if let Some(order) = super::order::declared_order::<T>() {
                super::order::sort_properties(&mut schema.properties, order);
            }
            use sha2::{Digest, Sha256};
            let json = serde_json::value::to_raw_value(&schema).expect("schemas serialize");
            Arc::new(FormSpec {
                digest: Sha256::digest(json.get()).into(),
                json,
                schema,
                default_key: snake_case(std::any::type_name::<T>()),
            })
        })
        .map_err(|(field, unfit)| DefinitionError::Form {
            form: T::schema_name().into_owned(),
            field,
            unfit,
        });
    cache
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, built.clone());
    built
}

/// The default key of a form type's questions: its name, in snake case.
fn snake_case(type_name: &str) -> String {
    let short = type_name.split('<').next().unwrap_or(type_name);
    let short = short.rsplit("::").next().unwrap_or(short);
    let mut out = String::with_capacity(short.len() + 4);
    for (i, c) in short.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        }
    }
    if out.is_empty() { "input".into() } else { out }
}

fn convert(root: &Value) -> Result<ElicitSchema, (Option<String>, Unfit)> {
    let whole = |u| (None, u);
    let obj = root.as_object().ok_or(whole(Unfit::NotAnObject))?;
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err(whole(Unfit::NotAnObject));
    }
    let empty = Map::new();
    let props = match obj.get("properties") {
        Some(Value::Object(p)) => p,
        None => &empty,
        Some(_) => return Err(whole(Unfit::NotAnObject)),
    };
    let mut properties = Vec::with_capacity(props.len());
    for (name, schema) in props {
        let field = field(schema).map_err(|u| (Some(name.clone()), u))?;
        properties.push((name.clone(), field));
    }
    let required = obj.get("required").and_then(Value::as_array).map(|r| {
        r.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });
    Ok(ElicitSchema {
        schema: None,
        properties,
        required: required.filter(|r| !r.is_empty()),
    })
}

fn text(o: &Map<String, Value>, k: &str) -> Option<String> {
    o.get(k).and_then(Value::as_str).map(str::to_owned)
}

/// The JSON type of a field, unwrapping `Option<T>` (`["T", "null"]` or `anyOf [T, null]`).
fn single_type(o: &Map<String, Value>) -> Result<Option<String>, Unfit> {
    match o.get("type") {
        None => Ok(None),
        Some(Value::String(t)) => Ok(Some(t.clone())),
        Some(Value::Array(ts)) => {
            let non_null: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            match non_null.as_slice() {
                [one] => Ok(Some((*one).to_owned())),
                _ => Err(Unfit::NoSingleType),
            }
        }
        Some(_) => Err(Unfit::NoSingleType),
    }
}

fn unwrap_nullable(o: &Map<String, Value>) -> Option<&Map<String, Value>> {
    let variants = o.get("anyOf").or_else(|| o.get("oneOf"))?.as_array()?;
    let non_null: Vec<&Value> = variants
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    (non_null.len() == 1 && variants.len() == 2)
        .then(|| non_null[0].as_object())
        .flatten()
}

fn options(o: &Map<String, Value>) -> Result<Option<EnumOptions>, Unfit> {
    if let Some(Value::Array(values)) = o.get("enum") {
        let v: Option<Vec<String>> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
        let values = v.ok_or(Unfit::Options)?;
        // The legacy labels (`enumNames`, added with `#[schemars(extend(..))]`), one per value.
        return match o.get("enumNames") {
            None => Ok(Some(EnumOptions::Untitled(values))),
            Some(Value::Array(names)) if names.len() == values.len() => {
                let names: Option<Vec<String>> = names
                    .iter()
                    .map(|n| n.as_str().map(str::to_owned))
                    .collect();
                let names = names.ok_or(Unfit::Options)?;
                Ok(Some(EnumOptions::LegacyTitled { values, names }))
            }
            Some(_) => Err(Unfit::Options),
        };
    }
    let Some(Value::Array(variants)) = o.get("oneOf").or_else(|| o.get("anyOf")) else {
        return Ok(None);
    };
    let mut titled = Vec::with_capacity(variants.len());
    let mut any_title = false;
    for v in variants {
        let Some(c) = v.get("const").and_then(Value::as_str) else {
            if v.get("type").and_then(Value::as_str) == Some("null") {
                continue;
            }
            return Err(Unfit::Options);
        };
        let title = v
            .get("title")
            .or_else(|| v.get("description"))
            .and_then(Value::as_str);
        any_title |= title.is_some();
        titled.push(TitledOption {
            value: c.to_owned(),
            title: title.unwrap_or(c).to_owned(),
        });
    }
    Ok(Some(if any_title {
        EnumOptions::Titled(titled)
    } else {
        EnumOptions::Untitled(titled.into_iter().map(|t| t.value).collect())
    }))
}

fn field(schema: &Value) -> Result<PrimitiveSchema, Unfit> {
    let o = schema.as_object().ok_or(Unfit::NoSingleType)?;
    if o.contains_key("$ref") {
        return Err(Unfit::Referenced);
    }
    if let Some(inner) = unwrap_nullable(o) {
        let mut merged = inner.clone();
        for k in ["title", "description", "default"] {
            if let Some(v) = o.get(k) {
                merged.insert(k.into(), v.clone());
            }
        }
        return field(&Value::Object(merged));
    }
    let ty = single_type(o)?;
    if let Some(opts) = options(o)? {
        if ty.as_deref().is_some_and(|t| t != "string") {
            return Err(Unfit::Options);
        }
        return Ok(PrimitiveSchema::SingleSelect(SingleSelectSchema {
            title: text(o, "title"),
            description: text(o, "description"),
            options: opts,
            default: text(o, "default"),
        }));
    }
    match ty.as_deref() {
        Some("string") => string_field(o),
        Some(t @ ("number" | "integer")) => Ok(number_field(o, t == "integer")),
        Some("boolean") => Ok(PrimitiveSchema::Boolean(BooleanSchema {
            title: text(o, "title"),
            description: text(o, "description"),
            default: o.get("default").and_then(Value::as_bool),
        })),
        Some("array") => multi_select_field(o),
        Some("object") => Err(Unfit::Nested),
        Some(other) => Err(Unfit::Type(other.to_owned())),
        None => Err(Unfit::NoSingleType),
    }
}

fn string_field(o: &Map<String, Value>) -> Result<PrimitiveSchema, Unfit> {
    let format = match o.get("format").and_then(Value::as_str) {
        None => None,
        Some("email") => Some(StringFormat::Email),
        Some("uri") => Some(StringFormat::Uri),
        Some("date") => Some(StringFormat::Date),
        Some("date-time") => Some(StringFormat::DateTime),
        Some(other) => return Err(Unfit::Format(other.to_owned())),
    };
    Ok(PrimitiveSchema::String(StringSchema {
        title: text(o, "title"),
        description: text(o, "description"),
        min_length: o.get("minLength").and_then(Value::as_u64),
        max_length: o.get("maxLength").and_then(Value::as_u64),
        format,
        default: text(o, "default"),
    }))
}

fn number_field(o: &Map<String, Value>, integer: bool) -> PrimitiveSchema {
    PrimitiveSchema::Number(NumberSchema {
        kind: if integer {
            NumberKind::Integer
        } else {
            NumberKind::Number
        },
        title: text(o, "title"),
        description: text(o, "description"),
        minimum: o.get("minimum").and_then(Value::as_f64),
        maximum: o.get("maximum").and_then(Value::as_f64),
        default: o.get("default").and_then(Value::as_f64),
    })
}

fn multi_select_field(o: &Map<String, Value>) -> Result<PrimitiveSchema, Unfit> {
    let items = o
        .get("items")
        .and_then(Value::as_object)
        .ok_or(Unfit::Array)?;
    let opts = options(items)?.ok_or(Unfit::Array)?;
    Ok(PrimitiveSchema::MultiSelect(MultiSelectSchema {
        title: text(o, "title"),
        description: text(o, "description"),
        options: opts,
        min_items: o.get("minItems").and_then(Value::as_u64),
        max_items: o.get("maxItems").and_then(Value::as_u64),
        default: o
            .get("default")
            .and_then(|d| serde_json::from_value(d.clone()).ok()),
    }))
}

#[cfg(test)]
pub(crate) mod fixtures {
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    pub(crate) enum Region {
        #[serde(rename = "eu-west-1")]
        EuWest1,
        #[serde(rename = "us-east-1")]
        UsEast1,
    }

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only its schema is used")]
    pub(crate) struct Form {
        /// Where to create it
        region: Region,
        #[schemars(length(min = 1, max = 5))]
        label: Option<String>,
        replicas: u8,
        confirm: bool,
        tags: Vec<Region>,
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::Form;
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only its schema is used")]
    struct Nested {
        inner: Inner,
    }

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only its schema is used")]
    struct Inner {
        x: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only its schema is used")]
    struct Legacy {
        #[schemars(extend("enumNames" = ["Europe", "America"]))]
        region: super::fixtures::Region,
    }

    #[derive(Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only its schema is used")]
    struct Mismatched {
        #[schemars(extend("enumNames" = ["Europe"]))]
        region: super::fixtures::Region,
    }

    #[test]
    fn enum_names_give_a_legacy_titled_select() {
        let s = form_schema::<Legacy>().unwrap();
        let v = serde_json::to_value(&s.schema).unwrap();
        assert_eq!(
            v["properties"]["region"],
            json!({"type": "string", "enum": ["eu-west-1", "us-east-1"], "enumNames": ["Europe", "America"]})
        );
        let back: ElicitSchema = serde_json::from_value(v).unwrap();
        assert_eq!(back, s.schema, "the legacy form round-trips");
        let err = form_schema::<Mismatched>().unwrap_err().to_string();
        assert!(err.contains("region"), "{err}");
    }

    #[test]
    fn derives_flat_schema() {
        let s = form_schema::<Form>().unwrap();
        let v = serde_json::to_value(&s.schema).unwrap();
        assert_eq!(
            v["properties"]["region"]["enum"],
            json!(["eu-west-1", "us-east-1"])
        );
        assert_eq!(
            v["properties"]["region"]["description"],
            "Where to create it"
        );
        assert_eq!(v["properties"]["label"]["type"], "string");
        assert_eq!(v["properties"]["label"]["maxLength"], 5);
        assert_eq!(v["properties"]["replicas"]["type"], "integer");
        assert_eq!(v["properties"]["tags"]["items"]["enum"][0], "eu-west-1");
        let req: Vec<&str> = v["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert!(req.contains(&"region") && !req.contains(&"label"));
        let err = form_schema::<Nested>().unwrap_err().to_string();
        assert!(err.contains("inner") && err.contains("flat"), "{err}");
    }

    #[test]
    fn default_keys() {
        assert_eq!(snake_case("my_crate::forms::PickRegion"), "pick_region");
        assert_eq!(snake_case("Region"), "region");
        assert_eq!(snake_case("a::Wrapper<b::Inner>"), "wrapper");
    }
}
