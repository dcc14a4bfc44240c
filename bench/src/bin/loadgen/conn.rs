//! A worker's connection: its own HTTP/1.1 keep-alive connection, or a stream handle on
//! the one HTTP/2 connection (prior-knowledge h2c) all workers share (`--h2`).

use super::Opts;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The HTTP/2 connection all workers share.
pub(crate) type Shared = http2::SendRequest<Full<Bytes>>;

/// Where a worker sends its requests.
pub(crate) enum Conn {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(Shared),
}

async fn tcp(o: &Opts) -> Result<TokioIo<tokio::net::TcpStream>, String> {
    let tcp = tokio::net::TcpStream::connect((o.host.as_str(), o.port))
        .await
        .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    Ok(TokioIo::new(tcp))
}

/// Opens the shared HTTP/2 connection (prior knowledge).
pub(crate) async fn shared(o: &Opts) -> Result<Shared, String> {
    let (sender, conn) = http2::handshake(TokioExecutor::new(), tcp(o).await?)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    Ok(sender)
}

/// A worker's connection: a new HTTP/1.1 one, or a handle on the shared HTTP/2 one.
pub(crate) async fn connect(o: &Opts) -> Result<Conn, String> {
    if let Some(h2) = &o.h2 {
        return Ok(Conn::H2(h2.clone()));
    }
    let (sender, conn) = http1::handshake(tcp(o).await?)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    Ok(Conn::H1(sender))
}

impl Conn {
    /// Sends `req` once the connection can take it. HTTP/2 requests carry the scheme and
    /// authority in their URI (`:scheme`, `:authority`).
    pub(crate) async fn send(
        &mut self,
        o: &Opts,
        mut req: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, String> {
        let e = |e: hyper::Error| e.to_string();
        match self {
            Self::H1(s) => {
                s.ready().await.map_err(e)?;
                s.send_request(req).await.map_err(e)
            }
            Self::H2(s) => {
                let uri = format!("http://{}:{}{}", o.host, o.port, req.uri());
                *req.uri_mut() = uri
                    .parse()
                    .map_err(|e: http::uri::InvalidUri| e.to_string())?;
                req.headers_mut().remove("host");
                s.ready().await.map_err(e)?;
                s.send_request(req).await.map_err(e)
            }
        }
    }
}
