//! Targets on text decoders: `header_value` (the `=?base64?…?=` sentinel of `Mcp-Name` /
//! `Mcp-Param-*`), `uri_template` (matching).

use crate::server::uri_template::UriTemplate;
use std::collections::BTreeMap;
use sterna_types::header::{decode, encode};

/// Target `header_value`: decoding never panics and gives back plain values as they
/// are; every string survives encode then decode; what encode gives is a header value
/// HTTP can carry and that trimming (as the server reads headers) leaves alone.
pub(crate) fn header_value(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    let decoded = decode(&s);
    let sentinel = s.starts_with("=?base64?") && s.ends_with("?=") && s.len() >= 11;
    if !sentinel {
        assert_eq!(
            decoded.as_deref(),
            Some(s.as_ref()),
            "plain values decode as is"
        );
    }
    let e = encode(&s);
    assert_eq!(
        decode(&e).as_deref(),
        Some(s.as_ref()),
        "round trip of {s:?}"
    );
    assert_eq!(
        e.trim_matches([' ', '\t']),
        e.as_ref(),
        "{e:?} would be trimmed"
    );
    #[cfg(feature = "http")]
    assert!(
        http::HeaderValue::from_str(&e).is_ok(),
        "{e:?} is no header value"
    );
}

/// Percent-encodes every byte but unreserved characters (and `/` in reserved
/// expansions).
fn pct(value: &str, reserved: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for &b in value.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || (reserved && b == b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Expands `t` with `values` (one per variable, in order), or `None` when the
/// expansion is ambiguous: a variable's next literal occurs inside its encoded value
/// (or straddles it), so no first-match reading could recover the value.
fn expand(t: &UriTemplate, values: &mut dyn Iterator<Item = String>) -> Option<(String, Vars)> {
    let mut out = String::new();
    let mut vars = BTreeMap::new();
    let parts = t.parts();
    let mut ends = Vec::new();
    for &part in &parts {
        match part {
            (Some(lit), _) => out.push_str(lit),
            (None, Some((name, reserved))) => {
                let v = values.next()?;
                let start = out.len();
                out.push_str(&pct(&v, reserved));
                ends.push((start, out.len()));
                vars.insert(name.to_owned(), v);
            }
            (None, None) => unreachable!("a part is a literal or a variable"),
        }
    }
    // Each variable followed by a literal: that literal's first occurrence after the
    // variable's start must be right where the value ends.
    let mut var_i = 0;
    for (i, part) in parts.iter().enumerate() {
        if part.1.is_some() {
            let (start, end) = ends[var_i];
            var_i += 1;
            if let Some((Some(next), _)) = parts.get(i + 1)
                && out[start..].find(next) != Some(end - start)
            {
                return None;
            }
        }
    }
    Some((out, vars))
}

type Vars = BTreeMap<String, String>;

/// Target `uri_template`: the first line is a template, the rest a URI. Parsing and
/// matching never panic; a match binds exactly the template's variables; expanding the
/// template with values taken from the URI's tab-separated pieces (percent-encoded)
/// matches again with exactly those values, when the expansion is unambiguous.
pub(crate) fn uri_template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    let names: Vec<&str> = t.parts().iter().filter_map(|p| p.1.map(|v| v.0)).collect();
    if let Some(vars) = t.matches(uri) {
        let mut bound: Vec<&str> = vars.keys().map(String::as_str).collect();
        let mut want = names.clone();
        bound.sort_unstable();
        want.sort_unstable();
        want.dedup();
        assert_eq!(bound, want, "a match binds the template's variables");
    }
    let mut values = uri
        .split('\t')
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .cycle()
        .take(names.len());
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != names.len() {
        return; // a repeated variable must repeat its value: not generated here
    }
    if let Some((expanded, vars)) = expand(&t, &mut values) {
        assert_eq!(
            t.matches(&expanded),
            Some(vars),
            "{template:?} expanded to {expanded:?}"
        );
    }
}
