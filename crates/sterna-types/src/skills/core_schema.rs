//! The YAML 1.2 core schema's typing of scalars: plain scalars resolve to null, booleans,
//! integers (decimal, `0o`, `0x`) and floats by their exact spellings, anything else to a
//! string; quoted and block scalars are strings; a core tag (`!!str` …) forces its type.

use super::frontmatter_error::FrontmatterError;
use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

/// A scalar typed by the core schema (only plain scalars are typed; quoted and block
/// scalars are strings), or by its core tag.
pub(super) fn scalar(
    text: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value, FrontmatterError> {
    let Some(tag) = tag else {
        return if style == ScalarStyle::Plain {
            plain(text)
        } else {
            Ok(Value::String(text.to_owned()))
        };
    };
    let bad = || FrontmatterError::UnsupportedTag(format!("{tag} {text:?}"));
    if tag.handle == "!" && tag.suffix.is_empty() {
        return Ok(Value::String(text.to_owned()));
    }
    if !tag.is_yaml_core_schema() {
        return Err(FrontmatterError::UnsupportedTag(tag.to_string()));
    }
    let typed = plain(text)?;
    match tag.suffix.as_str() {
        "str" => Ok(Value::String(text.to_owned())),
        "int" if typed.is_i64() || typed.is_u64() => Ok(typed),
        "float" if typed.is_number() => Ok(typed),
        "bool" if typed.is_boolean() => Ok(typed),
        "null" if typed.is_null() => Ok(typed),
        _ => Err(bad()),
    }
}

/// The core schema's resolution of a plain scalar.
fn plain(t: &str) -> Result<Value, FrontmatterError> {
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(oct) = t.strip_prefix("0o").filter(|s| digits(s, 8)) {
        return Ok(int(u64::from_str_radix(oct, 8).ok(), oct, 8));
    }
    if let Some(hex) = t.strip_prefix("0x").filter(|s| digits(s, 16)) {
        return Ok(int(u64::from_str_radix(hex, 16).ok(), hex, 16));
    }
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits(unsigned, 10) {
        if let Ok(i) = t.parse::<i64>() {
            return Ok(Value::from(i));
        }
        return float(t.parse().unwrap_or(f64::INFINITY), t);
    }
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(t, ".nan" | ".NaN" | ".NAN") {
        return Err(FrontmatterError::NotJson(t.to_owned()));
    }
    if is_float(unsigned) {
        return float(t.parse().unwrap_or(f64::NAN), t);
    }
    Ok(Value::String(t.to_owned()))
}

fn int(v: Option<u64>, digits: &str, radix: u32) -> Value {
    match v {
        Some(v) => Value::from(v),
        None => Value::from(digits.chars().fold(0f64, |a, c| {
            a * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        })),
    }
}

fn float(f: f64, text: &str) -> Result<Value, FrontmatterError> {
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| FrontmatterError::NotJson(text.to_owned()))
}

/// `\.[0-9]+|[0-9]+(\.[0-9]*)?` then an optional exponent (the sign already stripped).
fn is_float(s: &str) -> bool {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty()),
        None => !mantissa.is_empty() && digits(mantissa),
    };
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exp_ok
}
