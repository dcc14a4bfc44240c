//! Comparing a proof's `htu` with the resource's URL (RFC 9449 §4.3): query and fragment
//! ignored, then syntax-based and scheme-based normalization (RFC 3986 §6.2.2, §6.2.3):
//! lowercase scheme and host, no default port, an empty path as `/`, percent-encodings in
//! uppercase and unreserved characters decoded, dot segments removed.

/// The normalized form of an absolute `http(s)` URL, or `None` when it is not one (or
/// carries user information).
pub(crate) fn normalize(url: &str) -> Option<String> {
    let url = &url[..url.find(['?', '#']).unwrap_or(url.len())];
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.contains('@') {
        return None;
    }
    let (host, port) = host_and_port(authority)?;
    let host = percent_normalized(host)?.to_ascii_lowercase();
    let port = match port {
        Some(p) if p != default_port => format!(":{p}"),
        _ => String::new(),
    };
    let path = if path.is_empty() { "/" } else { path };
    let path = without_dot_segments(&percent_normalized(path)?);
    Some(format!("{scheme}://{host}{port}{path}"))
}

/// The host (an IPv6 literal keeps its brackets) and the port, if any.
fn host_and_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')? + 1;
        let (host, after) = authority.split_at(end);
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None | Some("") => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((host, port))
}

/// Percent-encodings in uppercase, unreserved characters decoded; `None` for a broken
/// `%`.
fn percent_normalized(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            let c = s[i..].chars().next()?;
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let hex = s.get(i + 1..i + 3)?;
        let value = u8::from_str_radix(hex, 16).ok()?;
        if value.is_ascii_alphanumeric() || b"-._~".contains(&value) {
            out.push(value as char);
        } else {
            out.push_str(&format!("%{value:02X}"));
        }
        i += 3;
    }
    Some(out)
}

/// RFC 3986 §5.2.4 for an absolute path.
fn without_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." | ".." => {
                if *segment == ".." {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn equivalent_spellings_compare_equal() {
        let canonical = normalize("https://mcp.example.com/mcp").unwrap();
        for same in [
            "https://mcp.example.com/mcp",
            "HTTPS://MCP.Example.COM/mcp",
            "https://mcp.example.com:443/mcp",
            "https://mcp.example.com/mcp?session=1#frag",
            "https://mcp.example.com/%6Dcp",
            "https://mcp.example.com/a/../mcp",
            "https://mcp.example.com/./mcp",
        ] {
            assert_eq!(normalize(same).as_deref(), Some(&*canonical), "{same}");
        }
        for other in [
            "https://mcp.example.com/MCP",
            "https://mcp.example.com/mcp/",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com:8443/mcp",
            "https://other.example.com/mcp",
        ] {
            assert_ne!(normalize(other).as_deref(), Some(&*canonical), "{other}");
        }
        assert_eq!(normalize("http://h").as_deref(), Some("http://h/"));
        assert_eq!(
            normalize("http://h:80/a%2fb").as_deref(),
            Some("http://h/a%2Fb")
        );
        assert_eq!(
            normalize("http://[::1]:8080/mcp").as_deref(),
            Some("http://[::1]:8080/mcp")
        );
        for bad in [
            "ftp://h/x",
            "http://user@h/x",
            "http:///x",
            "http://h:x/",
            "/mcp",
            "http://h/%zz",
            "http://h/%4",
        ] {
            assert_eq!(normalize(bad), None, "{bad}");
        }
    }
}
