//! Peers for the tests, all on 127.0.0.1 and stopped on drop: the demo server over HTTP,
//! an HTTP responder with one canned answer (an HTML error page, a 401, or silence), a
//! TLS server whose certificate nobody trusts, and a port where nothing listens.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `sterna serve --http 127.0.0.1:0`, stopped on drop.
pub(crate) struct DemoHttp {
    child: Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
}

impl DemoHttp {
    pub(crate) fn start() -> Self {
        let mut child = Command::new(crate::sterna())
            .args(["serve", "--http", "127.0.0.1:0"])
            .env("STERNA_LOG", "error")
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().trim_start_matches("listening on ").to_owned();
        Self { child, url }
    }

    /// Stops the server now (the session that uses it carries on without it).
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DemoHttp {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port on 127.0.0.1 where nothing listens (it was free a moment ago).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An HTTP server that answers every request with the same response, or (with `None`)
/// accepts connections and never answers.
pub(crate) struct Canned {
    pub(crate) port: u16,
    stop: Arc<AtomicBool>,
}

impl Canned {
    pub(crate) fn start(response: Option<String>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => match &response {
                        Some(r) => answer(conn, r),
                        None => held.push(conn),
                    },
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Self { port, stop }
    }

    /// An HTTP response with this status line, content type and body.
    pub(crate) fn response(status: &str, content_type: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Canned {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Reads a request (head and body) and sends `response`.
fn answer(mut conn: TcpStream, response: &str) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    let _ = reader.read_exact(&mut body);
    let _ = conn.write_all(response.as_bytes());
}

/// `openssl s_server` on 127.0.0.1 with a self-signed certificate made for the test.
pub(crate) struct UntrustedTls {
    child: Child,
    pub(crate) port: u16,
    dir: std::path::PathBuf,
}

impl UntrustedTls {
    pub(crate) fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("sterna-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args([
                "-subj",
                "/CN=127.0.0.1",
                "-keyout",
                "key.pem",
                "-out",
                "cert.pem",
            ])
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1"])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl is installed");
        assert!(status.success(), "openssl req");
        let port = free_port();
        let child = Command::new("openssl")
            .args(["s_server", "-quiet", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-cert", "cert.pem", "-key", "key.pem"])
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server starts");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        Self { child, port, dir }
    }
}

impl Drop for UntrustedTls {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
