//! The `for` of each element of an RFC 7239 `Forwarded` header, from the right:
//! `for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711"`. Commas and semicolons
//! inside quoted strings separate nothing.

use super::ForwardedHeader::Forwarded;
use super::{BadForwardedFor, ip_of};
use std::net::IpAddr;

/// The nodes the elements of one header line name, right-most first, each read only when
/// it is reached: an address each, or the refusal of an element that names none (no `for`,
/// two of them, `unknown`, an obfuscated `_name`). A line whose quotes never close is
/// refused whole: a quote a client left open would otherwise swallow what its proxy
/// appended.
pub(super) fn nodes(line: &str) -> impl Iterator<Item = Result<IpAddr, BadForwardedFor>> + '_ {
    let elements = split_unquoted(line, ',');
    let refused = elements.is_none().then(|| Err(unreadable(line)));
    let nodes = elements
        .unwrap_or_default()
        .into_iter()
        .rev()
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| node_of(e).ok_or_else(|| unreadable(e)));
    refused.into_iter().chain(nodes)
}

fn unreadable(element: &str) -> BadForwardedFor {
    BadForwardedFor::NotAnAddress(Forwarded, element.chars().take(64).collect())
}

/// The address of an element's single `for` pair.
fn node_of(element: &str) -> Option<IpAddr> {
    let mut found = None;
    for pair in split_unquoted(element, ';')? {
        let Some((name, value)) = pair.split_once('=') else {
            if pair.trim().is_empty() {
                continue;
            }
            return None;
        };
        if !name.trim().eq_ignore_ascii_case("for") {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(ip_of(&unquote(value.trim())?)?);
    }
    found
}

/// `text` cut at each `sep` outside double quotes (a backslash escapes inside them);
/// `None` when a quote is left open.
fn split_unquoted(text: &str, sep: char) -> Option<Vec<&str>> {
    let (mut parts, mut start, mut quoted, mut escaped) = (Vec::new(), 0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    (!quoted).then_some(parts)
}

/// A token as it is, or a quoted string's content (`None`: the quote never ends).
fn unquote(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        return Some(value.to_owned());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Vec<Result<String, String>> {
        nodes(line)
            .map(|r| r.map(|ip| ip.to_string()).map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn each_element_names_its_node_right_most_first() {
        assert_eq!(
            read("for=192.0.2.60;proto=http;by=203.0.113.43, For=\"[2001:db8:cafe::17]:4711\""),
            [Ok("2001:db8:cafe::17".into()), Ok("192.0.2.60".into())]
        );
        assert_eq!(read("for=\"192.0.2.43:47011\""), [Ok("192.0.2.43".into())]);
        assert_eq!(
            read("for=\"[::ffff:198.51.100.8]\""),
            [Ok("198.51.100.8".into())]
        );
        assert_eq!(
            read("for=198.51.100.9;host=\"a,b;c\""),
            [Ok("198.51.100.9".into())],
            "separators inside quotes separate nothing"
        );
        assert_eq!(read(" , "), Vec::<Result<String, String>>::new());
    }

    #[test]
    fn an_element_that_names_no_address_is_refused() {
        for bad in [
            "for=unknown",
            "for=_hidden",
            "proto=https",
            "for=198.51.100.1;for=198.51.100.2",
            "for=\"198.51.100.1",
            "for=[2001:db8::1]:x",
            "for",
        ] {
            let r = read(bad);
            assert!(
                r[0].as_ref().is_err_and(|e| e.starts_with("Forwarded:")),
                "{bad}: {r:?}"
            );
        }
        // A quote the client leaves open cannot swallow what its proxy appends.
        let swallowed = read("for=198.51.100.1;x=\", for=\"[2001:db8::1]\"");
        assert!(swallowed[0].is_err(), "{swallowed:?}");
        assert_eq!(swallowed.len(), 1);
        let escaped = read("for=198.51.100.1;x=\"a\\\", for=198.51.100.7");
        assert!(escaped[0].is_err(), "{escaped:?}");
        let long = format!("for={}", "x".repeat(10_000));
        assert!(read(&long)[0].as_ref().unwrap_err().len() < 120);
    }
}
