//! OAuth with `sterna call`: a server that answers 401 sends the CLI through discovery,
//! dynamic registration and the authorization code flow with PKCE over the loopback
//! redirect (this test plays the browser); the token is cached in `--token-file` (mode
//! 0600) and the next run needs no login. `--no-oauth` fails with the 401 instead.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna::server::Server;
use sterna::server::http::{HttpConfig, McpService};
use sterna::server::state::StateKeys;
use sterna::server::{Context, Tool};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tower_service::Service;

/// What the mock authorization server saw.
#[derive(Debug, Default)]
struct Seen {
    registrations: u32,
    authorizations: u32,
    tokens: HashSet<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// An authorization server (issuer `<base>/as`) and a protected MCP endpoint (`<base>/mcp`)
/// on one loopback port.
async fn start_mock() -> (SocketAddr, Arc<Mutex<Seen>>) {
    let server = Server::builder("protected", "1.0.0")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("echo")
                .description("echo")
                .handler(|_c: Context, a: EchoArgs| async move { a.text }),
        )
        .build()
        .unwrap();
    let mcp = McpService::new(server, HttpConfig::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (s, mcp) = (s.clone(), mcp.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let (s, mcp) = (s.clone(), mcp.clone());
                    async move { Ok::<_, std::convert::Infallible>(handle(addr, &s, mcp, req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    (addr, seen)
}

fn reply(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

fn form(body: &[u8]) -> HashMap<String, String> {
    form_urlencoded::parse(body).into_owned().collect()
}

async fn handle(
    addr: SocketAddr,
    seen: &Mutex<Seen>,
    mut mcp: McpService,
    req: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    let base = format!("http://{addr}");
    let issuer = format!("{base}/as");
    let query = parts.uri.query().unwrap_or("").to_owned();
    match (parts.method.as_str(), parts.uri.path()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => reply(
            StatusCode::OK,
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [issuer]}),
        ),
        ("GET", "/.well-known/oauth-authorization-server/as") => reply(
            StatusCode::OK,
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true,
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        ("POST", "/as/register") => {
            seen.lock().unwrap().registrations += 1;
            reply(
                StatusCode::CREATED,
                json!({"client_id": "sterna-cli-test", "token_endpoint_auth_method": "none"}),
            )
        }
        ("GET", "/as/authorize") => {
            let q = form(query.as_bytes());
            assert_eq!(q["code_challenge_method"], "S256");
            assert_eq!(q["resource"], format!("{base}/mcp"));
            seen.lock().unwrap().authorizations += 1;
            let mut to = form_urlencoded::Serializer::new(format!("{}?", q["redirect_uri"]));
            to.append_pair("code", "the-code")
                .append_pair("state", &q["state"])
                .append_pair("iss", &issuer);
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", to.finish())
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
        ("POST", "/as/token") => {
            let f = form(&body);
            assert_eq!(f["grant_type"], "authorization_code");
            assert_eq!(f["code"], "the-code");
            assert!(!f["code_verifier"].is_empty());
            let token = format!("token-{}", seen.lock().unwrap().tokens.len() + 1);
            seen.lock().unwrap().tokens.insert(token.clone());
            reply(
                StatusCode::OK,
                json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
            )
        }
        ("POST", "/mcp") => {
            let token = parts
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            if !token.is_some_and(|t| seen.lock().unwrap().tokens.contains(t)) {
                let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
                return Response::builder()
                    .status(StatusCode::UNAUTHORIZED)
                    .header(
                        "www-authenticate",
                        format!(r#"Bearer resource_metadata="{prm}""#),
                    )
                    .body(Full::new(Bytes::new()))
                    .unwrap();
            }
            let mut req = Request::builder().method("POST").uri("/mcp");
            for (k, v) in &parts.headers {
                req = req.header(k, v);
            }
            let response = mcp.call(req.body(Full::new(body)).unwrap()).await.unwrap();
            let (p, b) = response.into_parts();
            let bytes = b.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
            Response::from_parts(p, Full::new(bytes))
        }
        _ => reply(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
    }
}

/// A browser, as far as this flow needs one: GET `url`, return the response head.
async fn browser_get(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("a loopback http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut tcp = TcpStream::connect(host).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).await.unwrap();
    response
}

/// Runs `sterna call <mcp> echo` with `extra` flags; when it prints an authorization URL,
/// plays the browser (follows the authorization server's redirect to the loopback
/// listener). Returns (exit code, stdout, stderr).
async fn run_cli(mcp: &str, extra: &[&str]) -> (i32, String, String) {
    let mut child = tokio::process::Command::new(crate::sterna())
        .args([
            "call",
            mcp,
            "echo",
            r#"{"text":"hi through OAuth"}"#,
            "--json",
        ])
        .args(extra)
        .env("STERNA_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let run = async {
        let mut err = String::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(at) = line
                .find("http://")
                .filter(|_| line.contains("/as/authorize?"))
            {
                let head = browser_get(line[at..].trim()).await;
                let location = head
                    .lines()
                    .find_map(|l| l.strip_prefix("location: "))
                    .expect("the authorization server redirects")
                    .trim()
                    .to_owned();
                assert!(browser_get(&location).await.starts_with("HTTP/1.1 200"));
            }
            err.push_str(&line);
            err.push('\n');
        }
        let mut out = String::new();
        stdout.read_to_string(&mut out).await.unwrap();
        let status = child.wait().await.unwrap();
        (status.code().unwrap_or(-1), out, err)
    };
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("sterna call finishes within 60 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_authorizes_with_oauth_and_caches_the_token_in_the_file() {
    let (addr, seen) = start_mock().await;
    let mcp = format!("http://{addr}/mcp");
    let dir = std::env::temp_dir().join(format!("sterna-cli-oauth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file = dir.join("tokens.json");
    let file_arg = file.to_str().unwrap();

    let (code, out, err) = run_cli(&mcp, &["--token-file", file_arg]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(out.contains("hi through OAuth"), "{out}");
    assert!(
        err.contains("Open this URL in a browser to authorize"),
        "{err}"
    );
    let cached = std::fs::read_to_string(&file).expect("the token file is written");
    assert!(cached.contains("token-1"), "{cached}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }

    // The next run uses the cached token: no registration, no login.
    let (code, out, err) = run_cli(&mcp, &["--token-file", file_arg]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(out.contains("hi through OAuth"), "{out}");
    assert!(!err.contains("authorize"), "no second login: {err}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!((seen.registrations, seen.authorizations), (1, 1));
    }

    // Without OAuth the 401 is an error (exit 4).
    let (code, _, err) = run_cli(&mcp, &["--no-oauth"]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("401"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_given_with_dash_h_reaches_the_server() {
    let (addr, seen) = start_mock().await;
    let mcp = format!("http://{addr}/mcp");
    seen.lock().unwrap().tokens.insert("static-token".into());
    let bearer = "Authorization: Bearer static-token";
    let (code, out, err) = run_cli(&mcp, &["--no-oauth", "--header", bearer]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(out.contains("hi through OAuth"), "{out}");
    // The one-shot list commands send it too.
    let out = tokio::process::Command::new(crate::sterna())
        .args(["tools", &mcp, "--json", "--no-oauth", "-H", bearer])
        .env("STERNA_LOG", "warn")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("\"echo\""), "{stdout}");
    // A wrong token in the header is the server's 401, not a login.
    let wrong = "Authorization: Bearer wrong";
    let (code, _, err) = run_cli(&mcp, &["--no-oauth", "-H", wrong]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("401"), "{err}");
    let seen = seen.lock().unwrap();
    assert_eq!(
        (seen.registrations, seen.authorizations),
        (0, 0),
        "no login"
    );
}
