//! Server-Sent Events, read incrementally: bytes in, the `data` of each event out.
//!
//! Bytes are buffered until a line is complete (a multi-byte character split across two
//! network chunks stays whole); lines end with CRLF, LF or CR, as the SSE specification
//! allows, and a leading byte order mark is skipped. Besides `data`, the parser keeps the
//! two fields resumability needs (2025-11-25 sessions): the last event `id` (sent back as
//! `Last-Event-ID`) and `retry` (how long to wait before reconnecting); comments, `event`
//! and unknown fields are ignored. An event with empty data (a priming event) yields
//! nothing but still sets the last id. What one event may buffer is bounded.

/// What one event yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// The event's data (its `data` lines joined with `\n`).
    Data(String),
    /// An event whose data is not UTF-8: unreadable, to be skipped.
    Unreadable,
}

/// An event (with its incomplete line) grew past the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    /// The limit, in bytes.
    pub(crate) limit: usize,
}

/// The parser's state between chunks.
#[derive(Debug)]
pub(crate) struct SseParser {
    /// The current line, not yet ended.
    line: Vec<u8>,
    /// The data of the event being read.
    data: Vec<u8>,
    /// The event has a `data` field (even an empty one).
    has_data: bool,
    /// The previous chunk ended with CR: an LF starting this one ends no line.
    after_cr: bool,
    /// No line has ended yet (a byte order mark may start it).
    first_line: bool,
    /// The most one event may buffer: its data plus the line being read.
    max_event: usize,
    /// The `id` of the event being read, set when it is dispatched.
    pending_id: Option<String>,
    /// The id of the last event dispatched (priming events included).
    pub(crate) last_id: Option<String>,
    /// The reconnection delay the server asked for, in milliseconds.
    pub(crate) retry_ms: Option<u64>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A parser that refuses events larger than `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        Self {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            after_cr: false,
            first_line: true,
            max_event,
            pending_id: None,
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

    /// Reads one chunk; each event it completes is appended to `out`. After an error the
    /// stream must be abandoned.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), EventTooLarge> {
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

    fn end_line(&mut self, out: &mut Vec<Event>) {
        // Taken out (and put back, emptied) so that fields can update the parser.
        let owned = std::mem::take(&mut self.line);
        let mut line = owned.as_slice();
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
        } else if line[0] != b':' {
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(c) => {
                    let v = &line[c + 1..];
                    (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (line, &[][..]),
            };
            self.field(field, value);
        }
        self.line = owned;
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

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        if let Some(id) = self.pending_id.take() {
            self.last_id = Some(id);
        }
        let data = std::mem::take(&mut self.data);
        if std::mem::take(&mut self.has_data) && !data.is_empty() {
            out.push(String::from_utf8(data).map_or(Event::Unreadable, Event::Data));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Event, EventTooLarge, SseParser};

    fn data(events: &[&str]) -> Vec<Event> {
        events
            .iter()
            .map(|e| Event::Data((*e).to_owned()))
            .collect()
    }

    /// The events of `chunks`, fed in turn, and the error if one came.
    fn feed(max: usize, chunks: &[&[u8]]) -> (Vec<Event>, Option<EventTooLarge>) {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        for c in chunks {
            if let Err(e) = p.push(c, &mut out) {
                return (out, Some(e));
            }
        }
        (out, None)
    }

    /// Events of `stream` fed in two chunks, split at `at`.
    fn split_events(stream: &[u8], at: usize) -> Vec<Event> {
        let (out, err) = feed(1 << 20, &[&stream[..at], &stream[at..]]);
        assert_eq!(err, None);
        out
    }

    #[test]
    fn sse_parsing() {
        let (out, _) = feed(
            1 << 20,
            &[
                b": keep-alive\n\nevent: message\nda",
                b"ta: {\"a\":1}\n\n",
                b"data: x\r\ndata: y\r\n\r\n",
            ],
        );
        assert_eq!(out, data(&["{\"a\":1}", "x\ny"]));
    }

    #[test]
    fn multi_byte_characters_survive_every_chunk_boundary() {
        // 2-byte é, 3-byte €, 4-byte 🦀 (and a 3-byte CJK character).
        let text = "é€🦀語";
        let payload = format!("{{\"t\":\"{text}\"}}");
        for eol in ["\n", "\r\n", "\r"] {
            let stream = format!(": hi{eol}event: message{eol}data: {payload}{eol}{eol}");
            for at in 0..=stream.len() {
                assert_eq!(
                    split_events(stream.as_bytes(), at),
                    data(&[&payload]),
                    "line ending {eol:?}, split at byte {at}"
                );
            }
        }
    }

    #[test]
    fn every_line_ending_the_spec_allows() {
        for eol in ["\n", "\r\n", "\r"] {
            let stream = format!("data: a{eol}data: b{eol}{eol}data: c{eol}{eol}");
            for at in 0..=stream.len() {
                assert_eq!(
                    split_events(stream.as_bytes(), at),
                    data(&["a\nb", "c"]),
                    "line ending {eol:?}, split at byte {at}"
                );
            }
        }
        // Mixed, and a CR chunk followed by an empty chunk then the LF.
        let (out, _) = feed(1 << 20, &[b"data: a\r", b"", b"\ndata: b\n\r\n"]);
        assert_eq!(out, data(&["a\nb"]));
    }

    #[test]
    fn fields_as_the_spec_reads_them() {
        let stream = b"\xEF\xBB\xBFdata:no-space\ndata:  two\ndata\nid: 7\nretry: 1\n\n\
                       data:\n\n:comment\nevent: x\n\n";
        let (out, _) = feed(1 << 20, &[stream]);
        // The empty-data event yields nothing; `data` alone adds an empty line.
        assert_eq!(out, data(&["no-space\n two\n"]));
    }

    #[test]
    fn invalid_utf8_makes_only_its_event_unreadable() {
        for at in 0..40 {
            let stream = b"data: \xC3\n\ndata: \xF0\x9F\xA6\n\ndata: ok\n\n";
            let at = at.min(stream.len());
            assert_eq!(
                split_events(stream, at),
                vec![
                    Event::Unreadable,
                    Event::Unreadable,
                    Event::Data("ok".into())
                ]
            );
        }
    }

    #[test]
    fn an_event_larger_than_the_limit_is_refused() {
        // Within the limit: the data held (6 bytes) plus the line being read (7).
        let (out, err) = feed(13, &[b"data: abcdef\n", b"data: g\n\n"]);
        assert_eq!((out, err), (data(&["abcdef\ng"]), None));
        // A line that never ends.
        let (_, err) = feed(1000, &[&[b'x'; 600], &[b'y'; 600]]);
        assert_eq!(err, Some(EventTooLarge { limit: 1000 }));
        // Many data lines of one event.
        let line = b"data: 0123456789\n";
        let (out, err) = feed(1000, &vec![&line[..]; 100]);
        assert_eq!((out, err), (vec![], Some(EventTooLarge { limit: 1000 })));
        // Small events never add up: the limit is per event.
        let event = b"data: 0123456789\n\n";
        let (out, err) = feed(100, &vec![&event[..]; 100]);
        assert_eq!((out.len(), err), (100, None));
    }

    fn feed_into(p: &mut SseParser, chunks: &[&[u8]]) -> Vec<Event> {
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn ids_and_retry_are_kept_for_resumption() {
        let mut p = SseParser::new(1024);
        let got = feed_into(
            &mut p,
            &[
                b"\xEF\xBB\xBFid: a1\nretry: 500\ndata: \n\n",
                b": keep-alive\n\nevent: message\nid: a2\nda",
                b"ta: {\"x\":1}\r\n\r",
                b"\ndata: x\rdata: y\r\r",
            ],
        );
        assert_eq!(got, data(&["{\"x\":1}", "x\ny"]));
        assert_eq!(p.last_id.as_deref(), Some("a2"));
        assert_eq!(p.retry_ms, Some(500));
    }

    #[test]
    fn a_priming_event_sets_the_last_id_and_bad_fields_are_ignored() {
        let mut p = SseParser::new(1024);
        assert!(feed_into(&mut p, &[b"id: p0\ndata:\n\nretry: soon\nid: a\0b\n\n"]).is_empty());
        assert_eq!(p.last_id.as_deref(), Some("p0"));
        assert_eq!(p.retry_ms, None);
    }

    #[test]
    fn a_reconnect_drops_the_unfinished_event_and_keeps_the_cursor() {
        let mut p = SseParser::new(1024);
        assert_eq!(
            feed_into(&mut p, &[b"id: 7\ndata: {}\n\ndata: half"]).len(),
            1
        );
        p.reconnected();
        assert_eq!(feed_into(&mut p, &[b"data: new\n\n"]), data(&["new"]));
        assert_eq!(p.last_id.as_deref(), Some("7"));
    }
}
