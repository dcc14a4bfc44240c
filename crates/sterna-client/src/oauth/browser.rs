//! Opening the authorization URL in the user's browser: a program started directly, with
//! the URL as one argument of its own, never through a shell (where `&` or `|` in a URL
//! would start another command).

use std::process::{Command, Stdio};

/// The platforms that open URLs differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Platform {
    /// `open <url>`.
    MacOs,
    /// `rundll32 url.dll,FileProtocolHandler <url>` (the URL handler of the shell, without
    /// `cmd.exe`).
    Windows,
    /// `xdg-open <url>` (Linux, the BSDs).
    Other,
}

impl Platform {
    /// The platform compiled for.
    pub(crate) fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::MacOs
        } else if cfg!(windows) {
            Self::Windows
        } else {
            Self::Other
        }
    }
}

/// A program and its arguments, started without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    pub(crate) program: &'static str,
    pub(crate) args: Vec<String>,
}

/// How to open `url` on `platform`; `None` unless it is an `http://` or `https://` URL
/// (a `file:` URL or an argument starting with `-` is never handed to the opener).
pub(crate) fn launch(platform: Platform, url: &str) -> Option<Launch> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return None;
    }
    let (program, mut args) = match platform {
        Platform::MacOs => ("open", Vec::new()),
        Platform::Windows => ("rundll32", vec!["url.dll,FileProtocolHandler".to_owned()]),
        Platform::Other => ("xdg-open", Vec::new()),
    };
    args.push(url.to_owned());
    Some(Launch { program, args })
}

/// Opens `url` in the default browser, if it can (failures are logged at debug level:
/// the URL is printed for the user anyway).
pub(crate) fn open(url: &str) {
    let Some(launch) = launch(Platform::current(), url) else {
        tracing::debug!("not opening a URL that is not http(s)");
        return;
    };
    let spawned = Command::new(launch.program)
        .args(&launch.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "could not open a browser");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "https://as.example/authorize?a=1&calc.exe&b=\"x y\"|whoami^&c=%20";

    #[test]
    fn the_url_is_one_argument_and_no_shell_is_involved() {
        for platform in [Platform::MacOs, Platform::Windows, Platform::Other] {
            let l = launch(platform, HOSTILE).unwrap();
            assert_eq!(l.args.last().map(String::as_str), Some(HOSTILE));
            assert_eq!(l.args.iter().filter(|a| a.contains("calc")).count(), 1);
            for shell in ["cmd", "cmd.exe", "sh", "bash", "powershell", "start"] {
                assert!(!l.program.eq_ignore_ascii_case(shell), "{platform:?}");
                assert!(!l.args.iter().any(|a| a.eq_ignore_ascii_case(shell)));
            }
        }
        assert_eq!(
            launch(Platform::Windows, HOSTILE).unwrap(),
            Launch {
                program: "rundll32",
                args: vec!["url.dll,FileProtocolHandler".into(), HOSTILE.into()],
            }
        );
        assert_eq!(launch(Platform::MacOs, HOSTILE).unwrap().program, "open");
        assert_eq!(
            launch(Platform::Other, HOSTILE).unwrap().program,
            "xdg-open"
        );
    }

    #[test]
    fn only_http_urls_are_opened() {
        for url in [
            "file:///etc/passwd",
            "-e https://x",
            "javascript:alert(1)",
            "",
            "\\\\host\\share",
        ] {
            assert_eq!(launch(Platform::Windows, url), None, "{url}");
            assert_eq!(launch(Platform::Other, url), None, "{url}");
        }
        assert!(launch(Platform::Other, "HTTP://127.0.0.1:1/a").is_some());
    }
}
