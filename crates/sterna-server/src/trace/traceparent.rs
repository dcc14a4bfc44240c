//! W3C Trace Context `traceparent`, parsed strictly: anything that is not a valid header
//! is ignored (never an error; the request is served without a remote parent).

use std::fmt;

/// A valid W3C `traceparent`: `00-<trace id: 32 hex>-<parent id: 16 hex>-<flags: 2 hex>`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace id (never all zero).
    pub trace_id: [u8; 16],
    /// The caller's span id (never all zero).
    pub parent_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl fmt::Debug for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceParent({self})")
    }
}

impl fmt::Display for TraceParent {
    /// The header value, version 00.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        hex(f, &self.trace_id)?;
        f.write_str("-")?;
        hex(f, &self.parent_id)?;
        write!(f, "-{:02x}", self.flags)
    }
}

fn hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
}

/// Lowercase hex digits only (the specification forbids uppercase).
fn unhex<const N: usize>(s: &[u8]) -> Option<[u8; N]> {
    if s.len() != N * 2 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in s.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

impl TraceParent {
    /// Parses a `traceparent` header value. Version `00` must be exactly 55 characters;
    /// a later version is read by its first 55 (followed by the end or `-`); version `ff`,
    /// uppercase hex and all-zero ids are invalid.
    pub fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if b.len() < 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
            return None;
        }
        let [version] = unhex::<1>(&b[..2])?;
        match version {
            0xff => return None,
            0 if b.len() != 55 => return None,
            _ if b.len() > 55 && b[55] != b'-' => return None,
            _ => {}
        }
        let trace_id = unhex::<16>(&b[3..35])?;
        let parent_id = unhex::<8>(&b[36..52])?;
        let [flags] = unhex::<1>(&b[53..55])?;
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(Self {
            trace_id,
            parent_id,
            flags,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::TraceParent;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn valid_ones_round_trip() {
        let tp = TraceParent::parse(GOOD).unwrap();
        assert_eq!(tp.trace_id[0], 0x4b);
        assert_eq!(tp.parent_id[7], 0xb7);
        assert_eq!(tp.flags, 1);
        assert_eq!(tp.to_string(), GOOD);
        // A later version: its first 55 characters, then more fields.
        let v1 = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra";
        assert!(TraceParent::parse(v1).is_some());
    }

    #[test]
    fn malformed_ones_are_ignored() {
        let bad = [
            "",
            "00",
            &GOOD[..54],
            &format!("{GOOD}-"),
            &format!("{GOOD}0"),
            &GOOD.to_uppercase(),
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "0-04bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\u{e9}",
        ];
        for b in bad {
            assert_eq!(TraceParent::parse(b), None, "{b:?}");
        }
    }
}
