//! The failures of a message on its way: [`TransportError`] and the [`ConfigError`] of
//! a transport set up wrongly — and, with `oauth`, the [`OAuthError`] that can stop a
//! request and its [`HttpFailure`], which carries a `TransportError` back. These types
//! contain each other, so they live in one file; `OAuthError` and `HttpFailure` are
//! public as `oauth::…`, next to the other OAuth categories (`oauth/error.rs`).

#[cfg(feature = "oauth")]
pub use auth::{HttpFailure, OAuthError};

use std::fmt;

/// A transport failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportError {
    /// The transport was configured wrongly (a URL it cannot use, a header value HTTP
    /// cannot carry).
    Config(ConfigError),
    /// An I/O error (a child process, a socket).
    Io(std::io::Error),
    /// The HTTP connection failed (connect, TLS, a malformed response).
    Connection(Box<dyn std::error::Error + Send + Sync>),
    /// An HTTP status that carried no JSON-RPC answer.
    Http {
        /// The status code.
        status: u16,
        /// The body, as text (cut to 1 KiB).
        body: String,
    },
    /// The response stream broke before the response arrived (the request is lost; the
    /// client re-issues it with a new id).
    StreamBroken,
    /// The connection or process is closed.
    Closed,
    /// The server's answer was larger than the client accepts.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// OAuth could not authorize the request.
    #[cfg(feature = "oauth")]
    Auth(Box<OAuthError>),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(e) => write!(f, "{e}"),
            Self::Io(e) => write!(f, "I/O: {e}"),
            Self::Connection(e) => write!(f, "connection: {e}"),
            Self::Http { status, body } => write!(f, "HTTP {status}: {body}"),
            Self::StreamBroken => f.write_str("the response stream broke before the response"),
            Self::Closed => f.write_str("the connection is closed"),
            Self::TooLarge { limit } => write!(f, "the answer is larger than {limit} bytes"),
            #[cfg(feature = "oauth")]
            Self::Auth(e) => write!(f, "authorization: {e}"),
        }
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Connection(e) => Some(e.as_ref()),
            #[cfg(feature = "oauth")]
            Self::Auth(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// A transport setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The URL does not parse, or its scheme is not supported.
    Url {
        /// The URL given.
        url: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A header name or value HTTP cannot carry.
    Header {
        /// The header's name.
        name: String,
    },
    /// TLS cannot be set up (an unreadable root certificate, a build without `tls`).
    Tls {
        /// Why.
        reason: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url { url, reason } => write!(f, "cannot use the URL {url}: {reason}"),
            Self::Header { name } => write!(f, "the header {name} has an invalid name or value"),
            Self::Tls { reason } => write!(f, "TLS: {reason}"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The OAuth failures that contain a [`TransportError`] (and are contained by one).
#[cfg(feature = "oauth")]
mod auth {
    use super::TransportError;
    use crate::oauth::{
        DiscoveryError, GaveUp as OAuthGaveUp, Rejection, ServerError, StoreError, UiError,
    };
    use std::fmt;

    /// Why the client could not obtain (or keep) authorization.
    #[derive(Debug)]
    #[non_exhaustive]
    pub enum OAuthError {
        /// Discovery found nothing usable (no protected-resource metadata, no
        /// authorization-server metadata, no way to register).
        Discovery(DiscoveryError),
        /// Something the client was given failed a security check and was refused.
        Rejected(Rejection),
        /// An authorization or token endpoint answered with an OAuth error.
        Server(ServerError),
        /// An HTTP exchange with an authorization server or the resource's metadata failed.
        Http(HttpFailure),
        /// The user-facing step (browser, redirect listener) failed.
        Ui(UiError),
        /// The token store failed.
        Store(StoreError),
        /// Signing a DPoP proof or a client assertion failed, or a key is unusable.
        Key(jsonwebtoken::errors::Error),
        /// The client stopped asking: the server keeps refusing after the allowed number of
        /// authorizations.
        GaveUp(OAuthGaveUp),
    }

    impl fmt::Display for OAuthError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Self::Discovery(e) => write!(f, "discovery: {e}"),
                Self::Rejected(e) => write!(f, "rejected: {e}"),
                Self::Server(e) => write!(f, "authorization server: {e}"),
                Self::Http(e) => write!(f, "{e}"),
                Self::Ui(e) => write!(f, "authorization step: {e}"),
                Self::Store(e) => write!(f, "token store: {e}"),
                Self::Key(e) => write!(f, "key: {e}"),
                Self::GaveUp(e) => write!(f, "gave up: {e}"),
            }
        }
    }

    impl std::error::Error for OAuthError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            match self {
                Self::Http(e) => Some(e),
                Self::Ui(e) => Some(e),
                Self::Store(e) => Some(e),
                Self::Key(e) => Some(e),
                _ => None,
            }
        }
    }

    /// An HTTP exchange that failed.
    #[derive(Debug)]
    #[non_exhaustive]
    pub enum HttpFailure {
        /// The request could not be sent or the answer read.
        Transport {
            /// The URL.
            url: String,
            /// What failed.
            source: TransportError,
        },
        /// The URL cannot be used.
        BadUrl {
            /// The URL.
            url: String,
        },
        /// An unexpected status.
        Status {
            /// The URL.
            url: String,
            /// The status code.
            status: u16,
        },
        /// No answer in time.
        Timeout {
            /// The URL.
            url: String,
        },
    }

    impl fmt::Display for HttpFailure {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Self::Transport { url, source } => write!(f, "{url}: {source}"),
                Self::BadUrl { url } => write!(f, "cannot use the URL {url}"),
                Self::Status { url, status } => write!(f, "{url}: HTTP {status}"),
                Self::Timeout { url } => write!(f, "{url}: no answer in time"),
            }
        }
    }

    impl std::error::Error for HttpFailure {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            match self {
                Self::Transport { source, .. } => Some(source),
                _ => None,
            }
        }
    }

    impl From<DiscoveryError> for OAuthError {
        fn from(e: DiscoveryError) -> Self {
            Self::Discovery(e)
        }
    }

    impl From<Rejection> for OAuthError {
        fn from(e: Rejection) -> Self {
            Self::Rejected(e)
        }
    }

    impl From<HttpFailure> for OAuthError {
        fn from(e: HttpFailure) -> Self {
            Self::Http(e)
        }
    }

    impl From<UiError> for OAuthError {
        fn from(e: UiError) -> Self {
            Self::Ui(e)
        }
    }

    impl From<StoreError> for OAuthError {
        fn from(e: StoreError) -> Self {
            Self::Store(e)
        }
    }

    impl From<jsonwebtoken::errors::Error> for OAuthError {
        fn from(e: jsonwebtoken::errors::Error) -> Self {
            Self::Key(e)
        }
    }

    impl From<jsonwebtoken::errors::ErrorKind> for OAuthError {
        fn from(e: jsonwebtoken::errors::ErrorKind) -> Self {
            Self::Key(e.into())
        }
    }

    impl From<OAuthGaveUp> for OAuthError {
        fn from(e: OAuthGaveUp) -> Self {
            Self::GaveUp(e)
        }
    }
}
