//! Reading a request body the limit layer bounds: at most one copy, none when it came in
//! one frame.

use bytes::Bytes;
use http_body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a body could not be read.
pub(super) enum BodyError {
    TooLarge,
    Broken,
}

/// Reads a body the limit layer bounds; a body in one frame is taken without copying.
pub(super) async fn read_body<B>(body: Limited<B>) -> Result<Bytes, BodyError>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut more: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            if e.downcast_ref::<LengthLimitError>().is_some() {
                BodyError::TooLarge
            } else {
                BodyError::Broken
            }
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        match &first {
            None => first = Some(data),
            Some(f) => {
                if more.is_empty() {
                    more.extend_from_slice(f);
                }
                more.extend_from_slice(&data);
            }
        }
    }
    Ok(if more.is_empty() {
        first.unwrap_or_default()
    } else {
        Bytes::from(more)
    })
}
