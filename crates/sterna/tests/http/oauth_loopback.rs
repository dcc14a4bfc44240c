//! The OAuth client with the loopback redirect, end to end against the mock: a browser
//! that first lands forged callbacks (another `state`, no `state`) on the listener, then
//! the authorization server's real redirect. The forged ones are answered 400 and the
//! flow redeems the real code.

use crate::oauth_mock;
use futures_util::future::BoxFuture;
use sterna::client::Client;
use sterna::client::oauth::{
    AuthorizationRequest, AuthorizationResponse, AuthorizationUi, LoopbackRedirect, OAuth, UiError,
};
use sterna::client::transport::HttpTransport;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// GETs an absolute `http://host:port/path?query` URL; the status line and the
/// `location` header, if any.
async fn get(url: &str) -> (String, Option<String>) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, target) = rest.split_at(rest.find('/').unwrap());
    let mut s = tokio::net::TcpStream::connect(authority).await.unwrap();
    let head = format!("GET {target} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status = out.lines().next().unwrap_or("").to_owned();
    let location = out
        .lines()
        .find_map(|l| l.strip_prefix("location: ").map(str::to_owned));
    (status, location)
}

/// A browser that forges two callbacks before following the real redirect.
struct ForgingBrowser {
    inner: LoopbackRedirect,
}

impl AuthorizationUi for ForgingBrowser {
    fn redirect_uri(&self) -> String {
        self.inner.redirect_uri()
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, UiError>> {
        let url = request.url.clone();
        let callback = self.inner.redirect_uri();
        tokio::spawn(async move {
            let (status, location) = get(&url).await;
            assert!(status.contains(" 302 "), "{status}");
            for forged in [
                format!("{callback}?code=code-FORGED&state=forged"),
                format!("{callback}?code=code-FORGED"),
            ] {
                let (status, _) = get(&forged).await;
                assert!(status.starts_with("HTTP/1.1 400"), "{forged}: {status}");
            }
            let (status, _) = get(&location.unwrap()).await;
            assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        });
        self.inner.authorize(request)
    }
}

#[tokio::test]
async fn forged_callbacks_do_not_end_the_login() {
    let mock = oauth_mock::start().await;
    let ui = ForgingBrowser {
        inner: LoopbackRedirect::bind()
            .unwrap()
            .timeout(std::time::Duration::from_secs(20)),
    };
    let oauth = OAuth::authorization_code(ui)
        .client_name("oauth-test")
        .build();
    let transport = HttpTransport::builder(&mock.mcp_url())
        .oauth(oauth)
        .build()
        .unwrap();
    let c = Client::builder("oauth-test", "1.0.0").build(transport);
    let tools = c.list_tools().await;
    assert!(tools.is_ok(), "{tools:?}");
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen.redeemed, ["code-SECRET-1"]);
}
