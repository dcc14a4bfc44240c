//! Matching URIs against RFC 6570 templates (`{var}` and `{+var}` expressions).

use crate::definition::TemplateProblem;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+var}`) may match `/`, `?` and `#`.
    Var {
        name: String,
        reserved: bool,
    },
}

/// A part as the fuzz target sees it: a literal, or a variable's name and whether it is
/// reserved.
#[cfg(feature = "fuzzing")]
pub(crate) type PartView<'a> = (Option<&'a str>, Option<(&'a str, bool)>);

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    pub(crate) fn parse(template: &str) -> Result<Self, TemplateProblem> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..].find('}').ok_or(TemplateProblem::Unbalanced)? + open;
            let expr = &rest[open + 1..close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(n) => (true, n),
                None => (false, expr),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(TemplateProblem::Expression(expr.to_owned()));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err(TemplateProblem::AdjacentVariables);
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return Err(TemplateProblem::Unbalanced);
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The parts in order: `(Some(literal), None)` or `(None, Some((name, reserved)))`.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn parts(&self) -> Vec<PartView<'_>> {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Literal(l) => (Some(l.as_str()), None),
                Part::Var { name, reserved } => (None, Some((name.as_str(), *reserved))),
            })
            .collect()
    }

    /// The variables of `uri`, when it matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut rest = uri;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var { name, reserved } => {
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || (!reserved && value.contains(['/', '?', '#'])) {
                        return None;
                    }
                    vars.insert(name.clone(), percent_decode(value)?);
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            // Exactly two hex digits (`from_str_radix` alone would take `%+1`).
            let hex = b.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.matches("test://template/123/data").unwrap()["id"], "123");
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/123/datax").is_none());
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///a/b%20c.txt").unwrap()["path"],
            "a/b c.txt"
        );
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
        assert!(UriTemplate::parse("x://{?q}").is_err());
    }

    #[test]
    fn percent_escapes_are_two_hex_digits() {
        let t = UriTemplate::parse("x://{a}").unwrap();
        assert_eq!(t.matches("x://%41%2f").unwrap()["a"], "A/");
        for bad in [
            "x://%+1", "x://%-1", "x://% 1", "x://%4", "x://%G1", "x://%é",
        ] {
            assert!(t.matches(bad).is_none(), "{bad}");
        }
    }
}
