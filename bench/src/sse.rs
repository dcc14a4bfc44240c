//! An incremental reader of server-sent events (the WHATWG event-stream format): bytes go
//! in as they arrive, complete events come out. Lines may end in `\n`, `\r\n` or `\r`
//! (sse-starlette writes `\r\n`); comments are skipped; `data:` lines are joined with `\n`.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `id:` field, if the event had one.
    pub id: Option<String>,
    /// The `data:` lines joined with `\n`; `None` for an event without data or with
    /// empty data (a priming event carries only an id).
    pub data: Option<String>,
}

/// Parses an event stream fed in chunks.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    /// Where the next unread line starts in `buf`.
    pos: usize,
    pending: Event,
    seen_field: bool,
}

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes received from the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete event, if the bytes received so far hold one.
    pub fn next_event(&mut self) -> Option<Event> {
        while let Some((start, end, next)) = self.next_line() {
            self.pos = next;
            if start == end {
                if std::mem::take(&mut self.seen_field) {
                    let e = std::mem::take(&mut self.pending);
                    // An empty `data:` (sterna's priming events) counts as no data.
                    return Some(Event {
                        id: e.id,
                        data: e.data.filter(|d| !d.is_empty()),
                    });
                }
                continue;
            }
            if field(&mut self.pending, &self.buf[start..end]) {
                self.seen_field = true;
            }
        }
        if self.pos > 64 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        None
    }

    /// Bounds of the next complete line (start, end without terminator, start of the next);
    /// a `\r` at the very end of the buffer waits for the byte after it.
    fn next_line(&self) -> Option<(usize, usize, usize)> {
        let rest = &self.buf[self.pos..];
        let i = rest.iter().position(|&b| b == b'\n' || b == b'\r')?;
        let end = self.pos + i;
        if rest[i] == b'\n' {
            return Some((self.pos, end, end + 1));
        }
        match rest.get(i + 1) {
            None => None,
            Some(b'\n') => Some((self.pos, end, end + 2)),
            Some(_) => Some((self.pos, end, end + 1)),
        }
    }
}

/// Applies one non-empty line to the event being read, in place (no copy of the line);
/// `false` for a comment, which is no field.
fn field(pending: &mut Event, line: &[u8]) -> bool {
    if line.starts_with(b":") {
        return false;
    }
    let (name, value) = match line.iter().position(|&b| b == b':') {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, &b""[..]),
    };
    let value = value.strip_prefix(b" ").unwrap_or(value);
    match name {
        b"data" => {
            let value = String::from_utf8_lossy(value);
            match &mut pending.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(&value);
                }
                None => pending.data = Some(value.into_owned()),
            }
        }
        b"id" => pending.id = Some(String::from_utf8_lossy(value).into_owned()),
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Event> {
        let mut p = Parser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c);
            while let Some(e) = p.next_event() {
                out.push(e);
            }
        }
        out
    }

    fn ev(id: Option<&str>, data: Option<&str>) -> Event {
        Event {
            id: id.map(str::to_owned),
            data: data.map(str::to_owned),
        }
    }

    #[test]
    fn lf_events_with_a_priming_event_and_a_comment() {
        let got = all(&[b"id: 1\ndata: \n\n: keep-alive\n\nid: 2\ndata: {\"a\":1}\n\n"]);
        assert_eq!(
            got,
            vec![ev(Some("1"), None), ev(Some("2"), Some("{\"a\":1}"))]
        );
    }

    #[test]
    fn crlf_events_split_anywhere_between_chunks() {
        let stream =
            b"event: message\r\ndata: {\"x\":2}\r\n\r\nevent: message\r\ndata: {\"y\":3}\r\n\r\n";
        for cut in 0..stream.len() {
            let got = all(&[&stream[..cut], &stream[cut..]]);
            assert_eq!(
                got,
                vec![ev(None, Some("{\"x\":2}")), ev(None, Some("{\"y\":3}"))],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn multi_line_data_is_joined_and_lone_cr_ends_a_line() {
        let got = all(&[b"data: a\rdata:b\r\rdata: c\n\n"]);
        assert_eq!(got, vec![ev(None, Some("a\nb")), ev(None, Some("c"))]);
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        assert_eq!(all(&[b"data: {\"a\":1}\n"]), vec![]);
    }
}
