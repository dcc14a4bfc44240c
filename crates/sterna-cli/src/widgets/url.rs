//! URL elicitation: the full URL and its host shown prominently, consent asked, the
//! browser opened only on yes.

use super::{Stop, bold};
use inquire::Confirm;
use sterna::types::elicitation::{ElicitResult, ElicitUrlParams};

/// The host of `url` and whether it carries user info (`user@host`, a phishing trick).
pub(crate) fn host(url: &str) -> (String, bool) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    match authority.rsplit_once('@') {
        Some((_, h)) => (h.to_owned(), true),
        None => (authority.to_owned(), false),
    }
}

/// Shows the URL and asks before opening it.
pub(crate) fn consent(server: &str, req: &ElicitUrlParams) -> ElicitResult {
    let (host, userinfo) = host(&req.url);
    eprintln!(
        "\n{} {} asks you to open a page: {}",
        bold("?"),
        bold(server),
        req.message
    );
    eprintln!("  host: {}", bold(&host));
    eprintln!("  url:  {}", req.url);
    if host.split('.').any(|label| label.starts_with("xn--")) {
        eprintln!(
            "  warning: the host is Punycode (international characters): check it is the site you expect"
        );
    }
    if userinfo {
        eprintln!("  warning: the URL hides a user name before the host; the real host is {host}");
    }
    if !req.url.starts_with("https://") {
        eprintln!("  warning: not https");
    }
    let answer = Confirm::new(&format!("Open {host} in your browser?"))
        .with_default(false)
        .with_help_message("y opens it · n or Esc declines · Ctrl-C cancels")
        .prompt()
        .map_err(Stop::from);
    match answer {
        Ok(true) => {
            match open(&req.url) {
                Ok(()) => {
                    eprintln!("  → opened; the server learns the outcome when the call is retried")
                }
                Err(e) => eprintln!("  → could not start a browser ({e}); open the URL yourself"),
            }
            ElicitResult::accept(Default::default())
        }
        Ok(false) | Err(Stop::Decline) => ElicitResult::decline(),
        Err(_) => ElicitResult::cancel(),
    }
}

/// Opens `url` in the user's browser: `$BROWSER`, else `xdg-open` (`open` on macOS).
fn open(url: &str) -> std::io::Result<()> {
    let program = std::env::var("BROWSER").unwrap_or_else(|_| {
        if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        }
        .to_owned()
    });
    std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_of_urls() {
        assert_eq!(
            super::host("https://a.example/x?y"),
            ("a.example".into(), false)
        );
        assert_eq!(
            super::host("https://bank.com@evil.example/"),
            ("evil.example".into(), true)
        );
    }
}
