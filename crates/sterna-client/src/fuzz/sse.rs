//! Target `sse`: the client's SSE parser.

use crate::transport::sse::{Event, EventTooLarge, SseParser};

/// Events and the error, if any, of `data` cut into `chunks`.
fn parse_in(max: usize, data: &[u8], cuts: &[usize]) -> (Vec<Event>, Option<EventTooLarge>) {
    let mut p = SseParser::new(max);
    let mut out = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&data.len())) {
        if let Err(e) = p.push(&data[from..to], &mut out) {
            return (out, Some(e));
        }
        from = to;
    }
    (out, None)
}

/// Target `sse`: any bytes, chunked three ways (whole, byte by byte, at positions the
/// bytes choose), give the same events and the same error; no event holds a CR.
pub(crate) fn sse(data: &[u8]) {
    let max = 16 + data.len() % 512;
    let whole = parse_in(max, data, &[]);
    let bytes: Vec<usize> = (1..data.len()).collect();
    assert_eq!(whole, parse_in(max, data, &bytes), "byte by byte");
    let chosen: Vec<usize> = (1..data.len())
        .filter(|&i| data[i - 1].is_multiple_of(5))
        .collect();
    assert_eq!(
        whole,
        parse_in(max, data, &chosen),
        "cut at chosen positions"
    );
    for e in &whole.0 {
        if let Event::Data(d) = e {
            assert!(!d.contains('\r') && !d.is_empty(), "{d:?}");
        }
    }
}
