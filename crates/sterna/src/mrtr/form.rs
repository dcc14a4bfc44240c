//! Forms from Rust types: the flat elicitation schema derived with `schemars`, and the
//! validation of submitted values against it.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use sterna_types::elicitation::{
    BooleanSchema, ElicitSchema, EnumOptions, MultiSelectSchema, NumberKind, NumberSchema,
    PrimitiveSchema, SingleSelectSchema, StringFormat, StringSchema, TitledOption,
};

/// A form type's schema, with the digest of its JSON (for pinning answers).
#[derive(Debug)]
pub(crate) struct FormSpec {
    pub(crate) schema: ElicitSchema,
    pub(crate) digest: [u8; 32],
}

type Cache = RwLock<HashMap<TypeId, Result<Arc<FormSpec>, String>>>;

/// The flat form schema of `T`, derived once per type and cached.
///
/// Fields keep the order the type declares them in (see [`declared_order`]), so a form
/// reads the way its author wrote it. A type that does not fit the elicitation subset
/// (nested objects, arrays of anything but enum values, maps, unions) is an error that
/// names the field.
pub(crate) fn form_schema<T: JsonSchema + DeserializeOwned + 'static>()
-> Result<Arc<FormSpec>, String> {
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
            let json = serde_json::to_vec(&schema).expect("schemas serialize");
            Arc::new(FormSpec {
                schema,
                digest: Sha256::digest(&json).into(),
            })
        })
        .map_err(|e| format!("{} cannot be an elicitation form: {e}", T::schema_name()));
    cache
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, built.clone());
    built
}

fn convert(root: &Value) -> Result<ElicitSchema, String> {
    let obj = root.as_object().ok_or("the schema is not an object")?;
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err("a form is a struct with named fields".into());
    }
    let empty = Map::new();
    let props = match obj.get("properties") {
        Some(Value::Object(p)) => p,
        None => &empty,
        Some(_) => return Err("properties is not an object".into()),
    };
    let mut properties = Vec::with_capacity(props.len());
    for (name, schema) in props {
        let field = field(schema).map_err(|e| format!("field `{name}`: {e}"))?;
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
fn single_type(o: &Map<String, Value>) -> Result<Option<String>, String> {
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
                _ => Err("a field must have one type".into()),
            }
        }
        Some(_) => Err("invalid type".into()),
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

fn options(o: &Map<String, Value>) -> Result<Option<EnumOptions>, String> {
    if let Some(Value::Array(values)) = o.get("enum") {
        let v: Option<Vec<String>> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
        return v
            .map(|v| Some(EnumOptions::Untitled(v)))
            .ok_or_else(|| "enum values must be strings".into());
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
            return Err("only unit enum variants can be options".into());
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

fn field(schema: &Value) -> Result<PrimitiveSchema, String> {
    let o = schema.as_object().ok_or("not a schema object")?;
    if o.contains_key("$ref") {
        return Err("recursive or referenced types are not flat".into());
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
    let title = text(o, "title");
    let description = text(o, "description");
    let ty = single_type(o)?;
    if let Some(opts) = options(o)? {
        if ty.as_deref().is_some_and(|t| t != "string") {
            return Err("enum options must be strings".into());
        }
        return Ok(PrimitiveSchema::SingleSelect(SingleSelectSchema {
            title,
            description,
            options: opts,
            default: text(o, "default"),
        }));
    }
    match ty.as_deref() {
        Some("string") => Ok(PrimitiveSchema::String(StringSchema {
            title,
            description,
            min_length: o.get("minLength").and_then(Value::as_u64),
            max_length: o.get("maxLength").and_then(Value::as_u64),
            format: match o.get("format").and_then(Value::as_str) {
                None => None,
                Some("email") => Some(StringFormat::Email),
                Some("uri") => Some(StringFormat::Uri),
                Some("date") => Some(StringFormat::Date),
                Some("date-time") => Some(StringFormat::DateTime),
                Some(other) => {
                    return Err(format!("string format {other:?} is not allowed in forms"));
                }
            },
            default: text(o, "default"),
        })),
        Some(t @ ("number" | "integer")) => Ok(PrimitiveSchema::Number(NumberSchema {
            kind: if t == "integer" {
                NumberKind::Integer
            } else {
                NumberKind::Number
            },
            title,
            description,
            minimum: o.get("minimum").and_then(Value::as_f64),
            maximum: o.get("maximum").and_then(Value::as_f64),
            default: o.get("default").and_then(Value::as_f64),
        })),
        Some("boolean") => Ok(PrimitiveSchema::Boolean(BooleanSchema {
            title,
            description,
            default: o.get("default").and_then(Value::as_bool),
        })),
        Some("array") => {
            let items = o
                .get("items")
                .and_then(Value::as_object)
                .ok_or("arrays in forms must list enum options")?;
            let opts = options(items)?.ok_or("arrays in forms are multi-selects of enum values")?;
            Ok(PrimitiveSchema::MultiSelect(MultiSelectSchema {
                title,
                description,
                options: opts,
                min_items: o.get("minItems").and_then(Value::as_u64),
                max_items: o.get("maxItems").and_then(Value::as_u64),
                default: o
                    .get("default")
                    .and_then(|d| serde_json::from_value(d.clone()).ok()),
            }))
        }
        Some("object") => Err("nested objects are not allowed: forms are flat".into()),
        Some(other) => Err(format!("type {other:?} is not allowed in forms")),
        None => Err("the field has no single primitive type".into()),
    }
}

/// Checks submitted form values against the schema. On success returns the content with
/// `null`s of optional fields removed, ready to decode.
pub(crate) fn validate(
    schema: &ElicitSchema,
    content: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::with_capacity(content.len());
    for (name, field) in &schema.properties {
        match content.get(name) {
            None | Some(Value::Null) => {
                if schema.is_required(name) {
                    return Err(format!("`{name}` is required"));
                }
            }
            Some(v) => {
                check_field(field, v).map_err(|e| format!("`{name}`: {e}"))?;
                out.insert(name.clone(), v.clone());
            }
        }
    }
    Ok(out)
}

fn check_field(field: &PrimitiveSchema, v: &Value) -> Result<(), String> {
    match field {
        PrimitiveSchema::String(s) => {
            let t = v.as_str().ok_or("expected a string")?;
            let n = t.chars().count() as u64;
            if s.min_length.is_some_and(|m| n < m) || s.max_length.is_some_and(|m| n > m) {
                return Err("length out of range".into());
            }
            if let Some(f) = s.format {
                check_format(f, t)?;
            }
            Ok(())
        }
        PrimitiveSchema::Number(s) => {
            let x = v.as_f64().ok_or("expected a number")?;
            if s.kind == NumberKind::Integer && !(v.is_i64() || v.is_u64() || x.fract() == 0.0) {
                return Err("expected an integer".into());
            }
            if s.minimum.is_some_and(|m| x < m) || s.maximum.is_some_and(|m| x > m) {
                return Err("out of range".into());
            }
            Ok(())
        }
        PrimitiveSchema::Boolean(_) => v
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| "expected a boolean".into()),
        PrimitiveSchema::SingleSelect(s) => {
            let t = v.as_str().ok_or("expected a string")?;
            if s.options.contains(t) {
                Ok(())
            } else {
                Err(format!("{t:?} is not one of the options"))
            }
        }
        PrimitiveSchema::MultiSelect(s) => {
            let a = v.as_array().ok_or("expected an array")?;
            for x in a {
                let t = x.as_str().ok_or("expected strings")?;
                if !s.options.contains(t) {
                    return Err(format!("{t:?} is not one of the options"));
                }
            }
            let n = a.len() as u64;
            if s.min_items.is_some_and(|m| n < m) || s.max_items.is_some_and(|m| n > m) {
                return Err("number of choices out of range".into());
            }
            Ok(())
        }
    }
}

fn check_format(f: StringFormat, t: &str) -> Result<(), String> {
    let ok = match f {
        StringFormat::Email => t.split_once('@').is_some_and(|(a, b)| {
            !a.is_empty() && b.contains('.') && !t.contains(char::is_whitespace)
        }),
        StringFormat::Uri => t.split_once(':').is_some_and(|(scheme, _)| {
            let mut c = scheme.chars();
            c.next().is_some_and(|x| x.is_ascii_alphabetic())
                && c.all(|x| x.is_ascii_alphanumeric() || "+-.".contains(x))
        }),
        StringFormat::Date => is_date(t.as_bytes()),
        StringFormat::DateTime => is_date_time(t.as_bytes()),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not a valid {f:?}"))
    }
}

/// The decimal value of `b`, if every byte is an ASCII digit. Works on bytes: answers are
/// client text, and slicing a `str` at a byte offset inside a character would panic.
fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

/// RFC 3339 `full-date`: `YYYY-MM-DD`.
fn is_date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    matches!(
        (digits(&b[..4]), digits(&b[5..7]), digits(&b[8..10])),
        (Some(_), Some(m), Some(d)) if (1..=12).contains(&m) && (1..=31).contains(&d)
    )
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn is_date_time(b: &[u8]) -> bool {
    if b.len() < 20 || !is_date(&b[..10]) || !matches!(b[10], b'T' | b't' | b' ') {
        return false;
    }
    let (time, mut rest) = b[11..].split_at(8);
    let hms = time[2] == b':'
        && time[5] == b':'
        && matches!(
            (digits(&time[..2]), digits(&time[3..5]), digits(&time[6..8])),
            (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60
        );
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    let offset = match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => matches!(
            (digits(&[*h1, *h2]), digits(&[*m1, *m2])),
            (Some(h), Some(m)) if h < 24 && m < 60
        ),
        _ => false,
    };
    hms && offset
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Region {
        #[serde(rename = "eu-west-1")]
        EuWest1,
        #[serde(rename = "us-east-1")]
        UsEast1,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Form {
        /// Where to create it
        region: Region,
        #[schemars(length(min = 1, max = 5))]
        label: Option<String>,
        replicas: u8,
        confirm: bool,
        tags: Vec<Region>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: String,
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
        let err = form_schema::<Nested>().unwrap_err();
        assert!(err.contains("inner") && err.contains("flat"), "{err}");
    }

    #[test]
    fn validates_answers() {
        let s = &form_schema::<Form>().unwrap().schema;
        let ok = json!({"region": "eu-west-1", "replicas": 2, "confirm": true, "tags": [], "label": null});
        assert!(validate(s, ok.as_object().unwrap()).is_ok());
        for bad in [
            json!({"region": "mars-1", "replicas": 2, "confirm": true, "tags": []}),
            json!({"region": "eu-west-1", "replicas": 2.5, "confirm": true, "tags": []}),
            json!({"region": "eu-west-1", "replicas": 2, "confirm": "yes", "tags": []}),
            json!({"region": "eu-west-1", "replicas": 2, "confirm": true}),
            json!({"region": "eu-west-1", "replicas": 2, "confirm": true, "tags": [], "label": "toolong"}),
            json!({"replicas": 2, "confirm": true, "tags": []}),
        ] {
            assert!(validate(s, bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_never_panic_on_multibyte_text() {
        // One ASCII letter then ten `é`: byte 10 falls inside a character.
        let hostile = format!("a{}", "é".repeat(10));
        for f in [
            StringFormat::Date,
            StringFormat::DateTime,
            StringFormat::Email,
            StringFormat::Uri,
        ] {
            assert!(check_format(f, &hostile).is_err());
            assert!(check_format(f, "éééééééééééééééééééééé").is_err());
            assert!(check_format(f, "").is_err());
        }
    }

    #[test]
    fn date_time_format() {
        for ok in [
            "2026-07-28T10:00:00Z",
            "2026-07-28t10:00:00.123z",
            "2026-07-28 23:59:60+02:00",
            "2026-07-28T00:00:00.5-11:30",
        ] {
            assert!(check_format(StringFormat::DateTime, ok).is_ok(), "{ok}");
        }
        for bad in [
            "2026-07-28T10:00:00",
            "2026-07-28T10:00Z",
            "2026-07-28T24:00:00Z",
            "2026-13-28T10:00:00Z",
            "2026-07-28T10:00:00.Z",
            "2026-07-28T10:00:00+0200",
            "2026-07-28X10:00:00Z",
            "2026-07-28T10:00:00Zjunk",
        ] {
            assert!(check_format(StringFormat::DateTime, bad).is_err(), "{bad}");
        }
        assert!(check_format(StringFormat::Date, "2026-07-28").is_ok());
        assert!(check_format(StringFormat::Date, "2026-7-28").is_err());
    }
}
