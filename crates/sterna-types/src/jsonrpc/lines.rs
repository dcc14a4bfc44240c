//! The stdio transport's framing: one JSON-RPC message per line (feature `stdio`).
//!
//! A line longer than the reader's limit, or not UTF-8, is an item ([`Line::TooLong`],
//! [`Line::NotUtf8`]) rather than a decoder error: a `FramedRead` ends its stream at its
//! decoder's first error, so one bad line would end the whole session. The line itself
//! is skipped, and the line after it is read as usual.

use std::io;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, LinesCodec, LinesCodecError};

/// A line of a stdio stream, or why it cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line (without its `\n` or `\r\n`).
    Text(String),
    /// A line longer than the limit: skipped up to its end.
    TooLong,
    /// A line that is not UTF-8: skipped.
    NotUtf8,
}

/// The decoder of a stdio stream's lines (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Lines(LinesCodec);

impl Lines {
    /// Lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Self(LinesCodec::new_with_max_length(max))
    }

    fn sort(line: Result<Option<String>, LinesCodecError>) -> io::Result<Option<Line>> {
        match line {
            Ok(l) => Ok(l.map(Line::Text)),
            Err(LinesCodecError::MaxLineLengthExceeded) => Ok(Some(Line::TooLong)),
            Err(LinesCodecError::Io(e)) if e.kind() == io::ErrorKind::InvalidData => {
                Ok(Some(Line::NotUtf8))
            }
            Err(LinesCodecError::Io(e)) => Err(e),
        }
    }
}

impl Decoder for Lines {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        Self::sort(self.0.decode(buf))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        Self::sort(self.0.decode_eof(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_an_item_and_the_next_line_is_read() {
        let mut lines = Lines::new(8);
        let mut buf = BytesMut::from(&b"0123456789abc\n\xff\xfe\nok\r\nlast"[..]);
        let mut got = Vec::new();
        while let Some(l) = lines.decode(&mut buf).unwrap() {
            got.push(l);
        }
        got.extend(lines.decode_eof(&mut buf).unwrap());
        let text = |s: &str| Line::Text(s.to_owned());
        assert_eq!(
            got,
            [Line::TooLong, Line::NotUtf8, text("ok"), text("last")]
        );
    }
}
