//! The loopback redirect for CLIs and desktop apps (RFC 8252 §7.3): listen on
//! `127.0.0.1`, show (and optionally open) the authorization URL, receive the redirect
//! that echoes the request's `state` (others are answered 400 and ignored).

use super::error::UiError;
use super::ui::{AuthorizationRequest, AuthorizationResponse, AuthorizationUi};
use futures_util::future::BoxFuture;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PAGE: &str = "<!doctype html><meta charset=utf-8><title>Authorized</title>\
<p>Authorization received. You can close this window and return to the application.";

const STRAY: &str = "<!doctype html><meta charset=utf-8><title>Not accepted</title>\
<p>This redirect does not belong to the authorization in progress; it was ignored.";

/// What one request to the listener was.
enum Hit {
    /// Another path (a favicon …): 404.
    Elsewhere,
    /// The callback path with another `state`, or none (someone else's redirect, or a
    /// forged one): 400, and the wait goes on.
    Stray,
    /// The redirect that echoes our `state`.
    Ours(AuthorizationResponse),
}

/// Listens on `127.0.0.1` for the redirect; prints the authorization URL on stderr (and
/// opens it in the browser if asked).
#[derive(Debug)]
pub struct LoopbackRedirect {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    path: String,
    open_browser: bool,
    timeout: Duration,
}

impl LoopbackRedirect {
    /// Binds `127.0.0.1` on a port the system picks; the redirect URI is
    /// `http://127.0.0.1:<port>/callback`.
    pub fn bind() -> io::Result<Self> {
        Self::bind_port(0)
    }

    /// Binds `127.0.0.1:<port>` (for authorization servers that need a fixed redirect
    /// URI).
    pub fn bind_port(port: u16) -> io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        Ok(Self {
            listener,
            addr,
            path: "/callback".into(),
            open_browser: false,
            timeout: Duration::from_secs(300),
        })
    }

    /// Also opens the URL in the default browser (`xdg-open`, `open`, or `rundll32
    /// url.dll,FileProtocolHandler` on Windows; started directly, never through a shell).
    pub fn open_browser(mut self, yes: bool) -> Self {
        self.open_browser = yes;
        self
    }

    /// How long to wait for the user (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn run(&self, request: &AuthorizationRequest) -> Result<AuthorizationResponse, UiError> {
        let listener =
            tokio::net::TcpListener::from_std(self.listener.try_clone().map_err(UiError::Io)?)
                .map_err(UiError::Io)?;
        eprintln!(
            "Open this URL in a browser to authorize:\n\n  {}\n",
            request.url
        );
        if self.open_browser {
            super::browser::open(&request.url);
        }
        tokio::time::timeout(self.timeout, self.receive(&listener, &request.state))
            .await
            .map_err(|_| UiError::Timeout)?
    }

    async fn receive(
        &self,
        listener: &tokio::net::TcpListener,
        state: &str,
    ) -> Result<AuthorizationResponse, UiError> {
        loop {
            let (mut stream, _) = listener.accept().await.map_err(UiError::Io)?;
            let Some(target) = read_target(&mut stream).await else {
                continue;
            };
            let hit = self.classify(&target, state);
            let (status, body) = match &hit {
                Hit::Elsewhere => ("404 Not Found", ""),
                Hit::Stray => ("400 Bad Request", STRAY),
                Hit::Ours(_) => ("200 OK", PAGE),
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
            match hit {
                Hit::Ours(response) => return Ok(response),
                Hit::Stray => tracing::warn!("ignored a redirect with a wrong or missing state"),
                Hit::Elsewhere => {}
            }
        }
    }

    fn classify(&self, target: &str, state: &str) -> Hit {
        if target.split('?').next() != Some(self.path.as_str()) {
            return Hit::Elsewhere;
        }
        let url = format!("http://{}{target}", self.addr);
        let response = AuthorizationResponse::from_redirect(&url);
        if !state.is_empty() && response.state.as_deref() == Some(state) {
            Hit::Ours(response)
        } else {
            Hit::Stray
        }
    }
}

/// The request target of a `GET` (its head read, at most 8 KiB).
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 8192 {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let mut line = head.lines().next()?.split(' ');
    (line.next()? == "GET").then_some(())?;
    line.next().map(str::to_owned)
}

impl AuthorizationUi for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, UiError>> {
        Box::pin(self.run(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(addr: SocketAddr, target: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn receives_the_redirect_on_loopback() {
        let ui = LoopbackRedirect::bind()
            .unwrap()
            .timeout(Duration::from_secs(10));
        let uri = ui.redirect_uri();
        assert!(
            uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"),
            "{uri}"
        );
        let addr = ui.addr;
        let browser = tokio::spawn(async move {
            let other = get(addr, "/favicon.ico").await;
            assert!(other.starts_with("HTTP/1.1 404"), "{other}");
            get(
                addr,
                "/callback?code=c1&state=s1&iss=https%3A%2F%2Fas.example",
            )
            .await
        });
        let request = AuthorizationRequest {
            url: "https://as.example/authorize?x=1&state=s1".into(),
            redirect_uri: uri,
            state: "s1".into(),
        };
        let r = ui.authorize(&request).await.unwrap();
        assert_eq!(r.code.unwrap().expose(), "c1");
        assert_eq!(r.state.as_deref(), Some("s1"));
        assert_eq!(r.iss.as_deref(), Some("https://as.example"));
        assert!(browser.await.unwrap().starts_with("HTTP/1.1 200"));
    }

    /// A callback with another `state` (or none) is answered 400 and ignored: the login
    /// goes on and ends with the callback that echoes our `state`.
    #[tokio::test]
    async fn ignores_callbacks_with_a_wrong_or_missing_state() {
        let ui = LoopbackRedirect::bind()
            .unwrap()
            .timeout(Duration::from_secs(10));
        let addr = ui.addr;
        let browser = tokio::spawn(async move {
            for forged in [
                "/callback?code=evil&state=s2",
                "/callback?code=evil",
                "/callback?error=access_denied&state=s11",
                "/callback?code=evil&state=",
            ] {
                let answer = get(addr, forged).await;
                assert!(answer.starts_with("HTTP/1.1 400"), "{forged}: {answer}");
            }
            get(addr, "/callback?code=good&state=s1").await
        });
        let request = AuthorizationRequest {
            url: "https://as.example/authorize?state=s1".into(),
            redirect_uri: ui.redirect_uri(),
            state: "s1".into(),
        };
        let r = ui.authorize(&request).await.unwrap();
        assert_eq!(r.code.unwrap().expose(), "good");
        assert_eq!(r.state.as_deref(), Some("s1"));
        assert!(browser.await.unwrap().starts_with("HTTP/1.1 200"));
    }

    #[tokio::test]
    async fn gives_up_after_its_timeout() {
        let ui = LoopbackRedirect::bind()
            .unwrap()
            .timeout(Duration::from_millis(50));
        let request = AuthorizationRequest {
            url: "https://as.example/authorize?state=s1".into(),
            redirect_uri: ui.redirect_uri(),
            state: "s1".into(),
        };
        assert!(matches!(
            ui.authorize(&request).await,
            Err(UiError::Timeout)
        ));
    }
}
