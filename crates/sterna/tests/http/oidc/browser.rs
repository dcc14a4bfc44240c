//! A headless browser for the authorization endpoint: GETs without following redirects,
//! a cookie jar (the provider's interaction and session cookies), form POSTs.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

struct Cookie {
    name: String,
    value: String,
    path: String,
}

pub struct Browser {
    client: Client<HttpConnector, Full<Bytes>>,
    jar: Vec<Cookie>,
}

pub struct Hop {
    pub status: StatusCode,
    /// The absolute `Location`, if any.
    pub location: Option<String>,
    pub body: String,
}

impl Browser {
    pub fn new() -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build(HttpConnector::new()),
            jar: Vec::new(),
        }
    }

    /// One GET, redirects not followed.
    pub async fn get(&mut self, url: &str) -> Hop {
        let req = self
            .request("GET", url)
            .body(Full::new(Bytes::new()))
            .unwrap();
        self.send(url, req).await
    }

    /// A form POST, answered with JSON.
    pub async fn post_form(&mut self, url: &str, fields: &[(&str, &str)]) -> (StatusCode, Value) {
        let body = fields
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let req = self
            .request("POST", url)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let hop = self.send(url, req).await;
        let json = serde_json::from_str(&hop.body)
            .unwrap_or_else(|e| panic!("{url} answered {} with {e}: {}", hop.status, hop.body));
        (hop.status, json)
    }

    fn request(&self, method: &str, url: &str) -> http::request::Builder {
        let path = url.parse::<http::Uri>().unwrap().path().to_owned();
        let cookies: Vec<String> = self
            .jar
            .iter()
            .filter(|c| path_matches(&c.path, &path))
            .map(|c| format!("{}={}", c.name, c.value))
            .collect();
        let mut b = Request::builder().method(method).uri(url);
        if !cookies.is_empty() {
            b = b.header(COOKIE, cookies.join("; "));
        }
        b
    }

    async fn send(&mut self, url: &str, req: Request<Full<Bytes>>) -> Hop {
        let resp = self.client.request(req).await.unwrap();
        for set in resp.headers().get_all(SET_COOKIE) {
            self.store(set.to_str().unwrap());
        }
        let status = resp.status();
        let location = resp
            .headers()
            .get(LOCATION)
            .map(|l| absolute(url, l.to_str().unwrap()));
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        Hop {
            status,
            location,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    fn store(&mut self, header: &str) {
        let mut attrs = header.split(';').map(str::trim);
        let Some((name, value)) = attrs.next().and_then(|kv| kv.split_once('=')) else {
            return;
        };
        let mut path = "/".to_owned();
        let mut expired = false;
        for a in attrs {
            let lower = a.to_ascii_lowercase();
            if lower.starts_with("path=") {
                path = a[5..].to_owned();
            }
            expired |=
                lower == "max-age=0" || (lower.starts_with("expires=") && lower.contains("1970"));
        }
        self.jar.retain(|c| !(c.name == name && c.path == path));
        if !expired {
            self.jar.push(Cookie {
                name: name.to_owned(),
                value: value.to_owned(),
                path,
            });
        }
    }
}

/// RFC 6265 §5.1.4 path-match.
fn path_matches(cookie: &str, request: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request[cookie.len()..].starts_with('/')))
}

/// `location` resolved against `base` (absolute, or an absolute path).
fn absolute(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let uri: http::Uri = base.parse().unwrap();
    format!(
        "{}://{}{location}",
        uri.scheme_str().unwrap(),
        uri.authority().unwrap()
    )
}

pub fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The query parameters of `url`, decoded.
pub fn query(url: &str) -> Vec<(String, String)> {
    url.split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (form_decode(k), form_decode(v)))
        .collect()
}
