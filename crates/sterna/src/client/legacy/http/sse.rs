//! Server-Sent Events as a 2025-11-25 session reads them: the `data` of each event, and
//! the two fields resumability needs — the last event `id` (sent back as `Last-Event-ID`)
//! and `retry` (how long to wait before reconnecting).
//!
//! Parsed on bytes: a character split across chunks stays whole; lines end with CRLF, LF
//! or CR; a leading byte order mark is skipped; comments and unknown fields are ignored;
//! an event with empty data (a priming event) yields nothing but still sets the last id.
//! What one event may buffer is bounded.

/// The parser's state between chunks.
#[derive(Debug)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    pending_id: Option<String>,
    after_cr: bool,
    first_line: bool,
    max_event: usize,
    /// The id of the last event dispatched (priming events included).
    pub(crate) last_id: Option<String>,
    /// The reconnection delay the server asked for, in milliseconds.
    pub(crate) retry_ms: Option<u64>,
}

/// An event (with its incomplete line) grew past the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    /// The limit, in bytes.
    pub(crate) limit: usize,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A parser that refuses events larger than `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        Self {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            pending_id: None,
            after_cr: false,
            first_line: true,
            max_event,
            last_id: None,
            retry_ms: None,
        }
    }

    /// Starts reading a new connection (a reconnect): an unfinished line or event of the
    /// old one is dropped; the last id and `retry` are kept.
    pub(crate) fn reconnected(&mut self) {
        self.line.clear();
        self.data.clear();
        self.has_data = false;
        self.pending_id = None;
        self.after_cr = false;
        self.first_line = true;
    }

    /// Reads one chunk; the data of each event it completes is appended to `out` (events
    /// whose data is not UTF-8 are skipped). After an error the stream must be abandoned.
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<String>,
    ) -> Result<(), EventTooLarge> {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.extend_line(&rest[..i])?;
            self.end_line(out);
            let cr = rest[i] == b'\r';
            rest = &rest[i + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.extend_line(rest)
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), EventTooLarge> {
        let held = self.line.len() + self.data.len();
        if held.saturating_add(bytes.len()) > self.max_event {
            return Err(EventTooLarge {
                limit: self.max_event,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        let line = std::mem::take(&mut self.line);
        let mut l = line.as_slice();
        if std::mem::take(&mut self.first_line) {
            l = l.strip_prefix(BOM).unwrap_or(l);
        }
        if l.is_empty() {
            self.dispatch(out);
        } else if l[0] != b':' {
            let (field, value) = match l.iter().position(|&b| b == b':') {
                Some(c) => {
                    let v = &l[c + 1..];
                    (&l[..c], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (l, &[][..]),
            };
            self.field(field, value);
        }
        self.line = line;
        self.line.clear();
    }

    fn field(&mut self, field: &[u8], value: &[u8]) {
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            // An id with NUL is ignored, as the SSE specification says.
            b"id" if !value.contains(&0) => {
                self.pending_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<String>) {
        if let Some(id) = self.pending_id.take() {
            self.last_id = Some(id);
        }
        let data = std::mem::take(&mut self.data);
        if std::mem::take(&mut self.has_data) && !data.is_empty() {
            match String::from_utf8(data) {
                Ok(s) => out.push(s),
                Err(_) => tracing::warn!("skipping an SSE event whose data is not UTF-8"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(p: &mut SseParser, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn events_ids_and_retry() {
        let mut p = SseParser::new(1024);
        let got = feed(
            &mut p,
            &[
                b"\xEF\xBB\xBFid: a1\nretry: 500\ndata: \n\n",
                b": keep-alive\n\nevent: message\nid: a2\nda",
                b"ta: {\"x\":1}\r\n\r",
                b"\ndata: x\rdata: y\r\r",
            ],
        );
        assert_eq!(got, vec!["{\"x\":1}", "x\ny"]);
        assert_eq!(p.last_id.as_deref(), Some("a2"));
        assert_eq!(p.retry_ms, Some(500));
    }

    #[test]
    fn a_priming_event_sets_the_last_id_and_bad_fields_are_ignored() {
        let mut p = SseParser::new(1024);
        assert!(feed(&mut p, &[b"id: p0\ndata:\n\nretry: soon\nid: a\0b\n\n"]).is_empty());
        assert_eq!(p.last_id.as_deref(), Some("p0"));
        assert_eq!(p.retry_ms, None);
    }

    #[test]
    fn split_characters_and_limits() {
        let mut p = SseParser::new(1024);
        let text = "data: é\n\n".as_bytes();
        let got = feed(&mut p, &[&text[..7], &text[7..]]);
        assert_eq!(got, vec!["é"]);
        let mut small = SseParser::new(8);
        let mut out = Vec::new();
        assert_eq!(
            small.push(b"data: 0123456789\n\n", &mut out),
            Err(EventTooLarge { limit: 8 })
        );
    }

    #[test]
    fn a_reconnect_drops_the_unfinished_event_and_keeps_the_cursor() {
        let mut p = SseParser::new(1024);
        assert!(feed(&mut p, &[b"id: 7\ndata: {}\n\ndata: half"]).len() == 1);
        p.reconnected();
        assert_eq!(feed(&mut p, &[b"data: new\n\n"]), vec!["new"]);
        assert_eq!(p.last_id.as_deref(), Some("7"));
    }
}
