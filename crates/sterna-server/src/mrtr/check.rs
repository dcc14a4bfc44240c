//! Checking submitted form values against the schema that was asked (every value is
//! client text: checked on bytes, never sliced at an offset that could split a character).

use serde_json::{Map, Value};
use sterna_types::elicitation::{ElicitSchema, NumberKind, PrimitiveSchema, StringFormat};

/// Checks submitted form values against the schema. On success returns the content with
/// `null`s of optional fields removed and whole numbers of integer fields written as JSON
/// integers (`2.0` → `2`), ready to decode.
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
                let v = match field {
                    PrimitiveSchema::Number(s) if s.kind == NumberKind::Integer => {
                        integer(v).unwrap_or_else(|| v.clone())
                    }
                    _ => v.clone(),
                };
                out.insert(name.clone(), v);
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
            if s.kind == NumberKind::Integer && integer(v).is_none() {
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

/// A whole number as a JSON integer (`2.0` → `2`, so that integer types decode it);
/// `None` when it is not whole or does not fit in 64 bits.
fn integer(v: &Value) -> Option<Value> {
    if v.is_i64() || v.is_u64() {
        return Some(v.clone());
    }
    let x = v.as_f64()?;
    if x.fract() != 0.0 {
        return None;
    }
    // 2^64 and -2^63 are exact as f64; `as` then converts without loss.
    if (0.0..18_446_744_073_709_551_616.0).contains(&x) {
        Some(Value::from(x as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&x) {
        Some(Value::from(x as i64))
    } else {
        None
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
    use crate::mrtr::form::fixtures::Form;
    use crate::mrtr::form::form_schema;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

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
    fn whole_numbers_of_integer_fields_decode() {
        #[derive(Deserialize, JsonSchema)]
        struct Count {
            n: u8,
            m: i32,
        }
        let s = &form_schema::<Count>().unwrap().schema;
        let given = json!({"n": 2.0, "m": -3.0});
        let out = validate(s, given.as_object().unwrap()).unwrap();
        assert_eq!(Value::Object(out.clone()), json!({"n": 2, "m": -3}));
        let c: Count = serde_json::from_value(Value::Object(out)).unwrap();
        assert_eq!((c.n, c.m), (2, -3));
        for bad in [json!({"n": 2.5, "m": 1}), json!({"n": 1, "m": 1e300})] {
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
