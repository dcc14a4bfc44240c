//! Failures, explained (in a pseudo-terminal, as a user sees them): each message names
//! the cause (connection refused to host:port, DNS, the certificate problem, a timeout,
//! the stdio server's exit) and, for the common mistakes, what to try.

use crate::peers::{Canned, DemoHttp, UntrustedTls, free_port};
use crate::screen::{Screen, show};
use crate::sterna;

fn fails(args: &[&str], wants: &[&str], title: &str) -> String {
    let mut s = Screen::spawn(args);
    s.wait_for(wants[0]);
    let code = s.exit_code();
    let screen = s.contents();
    show(title, &screen);
    for w in wants {
        assert!(screen.contains(w), "{w:?} missing:\n{screen}");
    }
    assert_eq!(code, 4, "{screen}");
    screen
}

#[test]
fn a_dead_port_is_named_with_host_and_port() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let at = format!("connection refused by 127.0.0.1:{port}: nothing listens there");
    fails(
        &["tools", &url],
        &[&at, "hint: is the server running, and on this port?"],
        "a dead port",
    );
}

#[test]
fn an_unresolvable_host_is_a_dns_failure() {
    // A 64-letter label: the resolver refuses it without asking any DNS server.
    let host = format!("{}.invalid", "a".repeat(64));
    let url = format!("http://{host}/mcp");
    fails(
        &["tools", &url],
        &[
            "sterna: cannot resolve the host name aaaa",
            "(DNS): failed to lookup address",
            "hint: is the host name in the URL right?",
        ],
        "DNS",
    );
}

#[test]
fn an_untrusted_certificate_is_named() {
    let tls = UntrustedTls::start();
    let url = format!("https://127.0.0.1:{}/mcp", tls.port);
    let at = format!(
        "TLS with 127.0.0.1:{} failed: invalid peer certificate",
        tls.port
    );
    fails(
        &["tools", &url],
        &[
            &at,
            "hint: the certificate is signed by an authority this machine does not trust",
        ],
        "an untrusted certificate",
    );
}

#[test]
fn a_server_that_never_answers_times_out_with_a_hint() {
    let silent = Canned::start(None);
    fails(
        &["tools", &silent.url()],
        &[
            "no answer to server/discover within 5s",
            "hint: nothing came back from",
        ],
        "a silent server",
    );
}

#[test]
fn a_url_without_mcp_gets_the_path_hint() {
    let server = DemoHttp::start();
    let root = server.url.trim_end_matches("mcp").to_owned();
    let screen = fails(
        &["tools", &root],
        &["HTTP 404 from", "hint: is the endpoint path /mcp?"],
        "a 404",
    );
    assert!(
        !screen.contains("unreadable message"),
        "no warning about it:\n{screen}"
    );
}

#[test]
fn an_html_page_is_summarised_in_one_line() {
    let page = "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head>\n<body><h1>Error response</h1><p>Error code: 501</p></body></html>\n";
    let web = Canned::start(Some(Canned::response(
        "501 Not Implemented",
        "text/html",
        page,
    )));
    let screen = fails(
        &["tools", &web.url()],
        &[
            "HTTP 501 from",
            "an HTML page titled \"Error response\", not JSON-RPC",
            "hint: the server does not implement POST: not an MCP server",
        ],
        "an HTML page",
    );
    assert!(
        !screen.contains("<h1>"),
        "the page is not printed:\n{screen}"
    );
}

#[test]
fn a_401_points_to_oauth_and_the_header() {
    let web = Canned::start(Some(Canned::response(
        "401 Unauthorized",
        "application/json",
        r#"{"error":"unauthorized"}"#,
    )));
    fails(
        &["tools", "--no-oauth", &web.url()],
        &[
            "HTTP 401 from",
            "hint: the server wants authorization",
            "--header 'Authorization: Bearer",
        ],
        "a 401",
    );
}

#[test]
fn a_crashing_stdio_server_shows_its_stderr_and_exit_status() {
    let script = "echo 'fatal: cannot read /etc/weather.toml' >&2; exit 3";
    let screen = fails(
        &["tools", "--", "sh", "-c", script],
        &[
            "the server process exited (exit status: 3) before answering",
            "server│ fatal: cannot read /etc/weather.toml",
            "server│ (the server process exited: exit status: 3)",
        ],
        "a crashing stdio server",
    );
    assert!(
        !screen.contains("within 30s") && !screen.contains("within 5s"),
        "{screen}"
    );
}

#[test]
fn a_stdio_servers_stderr_is_shown_while_it_runs() {
    // The demo server warns on stderr about its ephemeral key (at STERNA_LOG=warn).
    let mut s = Screen::spawn(&["tools", "--env", "STERNA_LOG=warn", "--", sterna(), "serve"]);
    let screen = s.wait_for("provision_database");
    show("a server's stderr", &screen);
    assert!(
        screen.contains("server│")
            && screen.contains("WARN sterna_server::server::builder: requestState"),
        "{screen}"
    );
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn list_commands_show_errors_after_the_server_died() {
    let mut server = DemoHttp::start();
    let url = server.url.clone();
    let mut s = Screen::spawn(&["connect", "--history", "/dev/null", &url]);
    s.wait_for("sterna-demo>");
    s.send("tools\r");
    s.wait_for("provision_database — Creates a database");
    server.kill();
    for what in ["tools", "prompts", "templates"] {
        s.send(&format!("{what}\r"));
        let screen = s.wait_for("error: connection refused by 127.0.0.1:");
        assert!(!screen.contains(&format!("(no {what})")), "{screen}");
        s.send("\x0c"); // Ctrl-L: a clear screen for the next one
    }
    show("a list after the server died", &s.contents());
    s.send("quit\r");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn https_to_a_plain_http_server_is_named() {
    let server = DemoHttp::start();
    let url = server.url.replace("http://", "https://");
    fails(
        &["tools", &url],
        &[
            "failed: received corrupt message",
            "hint: the server does not speak TLS on this port: try http://",
        ],
        "https:// to an http:// server",
    );
}
