//! Form values: typed from text, checked against the requested schema, with the reason
//! when they do not fit (shown next to the field, or in the error of a scripted run).

use serde_json::{Number, Value};
use sterna::types::elicitation::{EnumOptions, NumberKind, PrimitiveSchema, StringFormat};

/// The options of an enum as (value, label) pairs; the label is the title when there is one.
pub(crate) fn options(o: &EnumOptions) -> Vec<(String, String)> {
    match o {
        EnumOptions::Untitled(v) => v.iter().map(|x| (x.clone(), x.clone())).collect(),
        EnumOptions::Titled(t) => t
            .iter()
            .map(|x| (x.value.clone(), x.title.clone()))
            .collect(),
        EnumOptions::LegacyTitled { values, names } => values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), names.get(i).unwrap_or(v).clone()))
            .collect(),
    }
}

/// The option `text` names, by value or (ignoring case) by title — as the server wrote it
/// or as it is displayed (without a final period).
fn option(o: &EnumOptions, text: &str) -> Result<String, String> {
    let all = options(o);
    let text = text.trim();
    all.iter()
        .find(|(v, _)| v == text)
        .or_else(|| {
            all.iter().find(|(_, l)| {
                l.eq_ignore_ascii_case(text) || l.trim_end_matches('.').eq_ignore_ascii_case(text)
            })
        })
        .map(|(v, _)| v.clone())
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|(v, _)| v.as_str()).collect();
            format!("{text:?} is not one of: {}", names.join(", "))
        })
}

/// The field's value from text (typed by the user, or given with `--set`).
pub(crate) fn parse_text(field: &PrimitiveSchema, text: &str) -> Result<Value, String> {
    let value = match field {
        PrimitiveSchema::String(_) => Value::String(text.to_owned()),
        PrimitiveSchema::Number(n) => number(n.kind, text.trim())?,
        PrimitiveSchema::Boolean(_) => Value::Bool(boolean(text)?),
        PrimitiveSchema::SingleSelect(s) => Value::String(option(&s.options, text.trim())?),
        PrimitiveSchema::MultiSelect(m) => Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| option(&m.options, t).map(Value::String))
                .collect::<Result<_, _>>()?,
        ),
    };
    check(field, &value)?;
    Ok(value)
}

/// A JSON value given for the field (from `--answers`): strings are read as text, the
/// rest must already have the field's type.
pub(crate) fn coerce(field: &PrimitiveSchema, v: &Value) -> Result<Value, String> {
    match v {
        Value::String(s) if !matches!(field, PrimitiveSchema::String(_)) => parse_text(field, s),
        _ => check(field, v).map(|()| v.clone()),
    }
}

fn boolean(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "1" | "on" => Ok(true),
        "false" | "no" | "n" | "0" | "off" => Ok(false),
        _ => Err(format!("{text:?} is not yes/no (true/false)")),
    }
}

fn number(kind: NumberKind, text: &str) -> Result<Value, String> {
    if kind == NumberKind::Integer {
        return text
            .parse::<i64>()
            .map(|i| Value::Number(i.into()))
            .map_err(|_| format!("{text:?} is not a whole number"));
    }
    let f: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Value::Number(i.into()));
    }
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| format!("{text:?} is not a finite number"))
}

fn range(x: f64, min: Option<f64>, max: Option<f64>, what: &str) -> Result<(), String> {
    match (min, max) {
        (Some(lo), _) if x < lo => Err(format!("{what} at least {lo}")),
        (_, Some(hi)) if x > hi => Err(format!("{what} at most {hi}")),
        _ => Ok(()),
    }
}

/// Whether `v` fits the field; the reason when not.
pub(crate) fn check(field: &PrimitiveSchema, v: &Value) -> Result<(), String> {
    match field {
        PrimitiveSchema::String(s) => {
            let t = v.as_str().ok_or("expected text")?;
            let n = t.chars().count() as f64;
            let as_f = |x: Option<u64>| x.map(|x| x as f64);
            range(
                n,
                as_f(s.min_length),
                as_f(s.max_length),
                "must have length",
            )
            .map_err(|e| format!("{e} characters"))?;
            s.format.map_or(Ok(()), |f| format_ok(f, t))
        }
        PrimitiveSchema::Number(n) => {
            let x = v.as_f64().ok_or("expected a number")?;
            if n.kind == NumberKind::Integer && x.fract() != 0.0 {
                return Err("must be a whole number".into());
            }
            range(x, n.minimum, n.maximum, "must be")
        }
        PrimitiveSchema::Boolean(_) => v.as_bool().map(|_| ()).ok_or("expected yes or no".into()),
        PrimitiveSchema::SingleSelect(s) => {
            let t = v.as_str().ok_or("expected one of the options")?;
            option(&s.options, t).map(|_| ())
        }
        PrimitiveSchema::MultiSelect(m) => {
            let items = v.as_array().ok_or("expected a list of options")?;
            for x in items {
                let t = x.as_str().ok_or("expected option names")?;
                option(&m.options, t)?;
            }
            let as_f = |x: Option<u64>| x.map(|x| x as f64);
            range(
                items.len() as f64,
                as_f(m.min_items),
                as_f(m.max_items),
                "choose",
            )
        }
    }
}

fn format_ok(f: StringFormat, t: &str) -> Result<(), String> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |s: &str| {
        let p: Vec<&str> = s.split('-').collect();
        p.len() == 3 && digits(p[0], 4) && digits(p[1], 2) && digits(p[2], 2)
    };
    let ok = match f {
        StringFormat::Email => t
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.') && !t.contains(' ')),
        StringFormat::Uri => t.split_once(':').is_some_and(|(s, rest)| {
            !rest.is_empty() && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        }),
        StringFormat::Date => date(t),
        StringFormat::DateTime => t
            .split_once(['T', 't', ' '])
            .is_some_and(|(d, time)| date(d) && time.len() >= 9 && time.as_bytes()[2] == b':'),
    };
    let name = match f {
        StringFormat::Email => "an email address (name@example.com)",
        StringFormat::Uri => "a URI (scheme:…)",
        StringFormat::Date => "a date (YYYY-MM-DD)",
        StringFormat::DateTime => "a date-time (YYYY-MM-DDTHH:MM:SSZ)",
    };
    ok.then_some(()).ok_or_else(|| format!("must be {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(v: Value) -> PrimitiveSchema {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_is_typed_by_the_schema() {
        let age = field(json!({"type": "integer", "minimum": 13}));
        assert_eq!(parse_text(&age, "42").unwrap(), json!(42));
        assert!(parse_text(&age, "4.5").unwrap_err().contains("whole"));
        assert!(parse_text(&age, "12").unwrap_err().contains("at least 13"));
        let ok = field(json!({"type": "boolean"}));
        assert_eq!(parse_text(&ok, "yes").unwrap(), json!(true));
        let tags = field(json!({"type": "array", "items": {"anyOf": [
            {"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]}}));
        assert_eq!(parse_text(&tags, "a, beta").unwrap(), json!(["a", "b"]));
        let region = field(json!({"type": "string", "oneOf": [
            {"const": "eu-west-1", "title": "Europe (Ireland)."}]}));
        assert_eq!(
            parse_text(&region, "Europe (Ireland)").unwrap(),
            json!("eu-west-1")
        );
        assert_eq!(
            parse_text(&region, "europe (ireland).").unwrap(),
            json!("eu-west-1")
        );
        assert!(parse_text(&tags, "c").unwrap_err().contains("not one of"));
        let email = field(json!({"type": "string", "format": "email"}));
        assert!(parse_text(&email, "nope").unwrap_err().contains("email"));
        assert_eq!(coerce(&age, &json!("20")).unwrap(), json!(20));
        assert!(coerce(&ok, &json!(1)).is_err());
    }
}
