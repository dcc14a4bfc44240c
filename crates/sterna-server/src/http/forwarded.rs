//! The client behind a proxy: which peers may name it (`X-Forwarded-For`, or RFC 7239
//! `Forwarded`), and the one rule that reads the header, from the right, so no client can
//! name itself.

mod rfc7239;

use ipnet::IpNet;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

/// The proxies (load balancers) in front of the server whose `X-Forwarded-For` names the
/// client, so that anonymous clients behind them are told apart by their own addresses
/// (their fair shares of the stores: see [`QuotaKey`](crate::server::QuotaKey)).
///
/// Without it, every request's client is the TCP peer: behind nginx, every anonymous
/// client is nginx. With it, a request from one of these addresses is read as coming from
/// the right-most `X-Forwarded-For` entry that is not itself a trusted proxy. A client
/// writes the header too, but only to the left of what its proxy appends (nginx's
/// `$proxy_add_x_forwarded_for`, or `$remote_addr` alone), so nothing it writes is read.
/// A request from a trusted proxy whose entries up to the client are not addresses is
/// refused (400); one without the header is the proxy's own.
///
/// [`reading`](Self::reading) [`ForwardedHeader::Forwarded`] reads RFC 7239's header
/// instead (`for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`), by the same rule. Only
/// one header is read: the one your balancer appends to. The other is passed through
/// untouched, so it holds whatever the client wrote.
///
/// ```
/// use sterna_server::http::TrustedProxies;
/// let proxies: TrustedProxies = "10.0.0.0/8, 127.0.0.1".parse().unwrap();
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-forwarded-for", "203.0.113.9, 198.51.100.7, 10.1.2.3".parse().unwrap());
/// let peer = "127.0.0.1:40000".parse().unwrap();
/// let client = proxies.client(peer, &headers).unwrap();
/// assert_eq!(client.ip().to_string(), "198.51.100.7");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    nets: Arc<[IpNet]>,
    header: ForwardedHeader,
}

/// The header in which trusted proxies name the client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1` (nginx, HAProxy's `forwardfor`, the cloud
    /// balancers). The default.
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1` (HAProxy's `forwarded`).
    Forwarded,
}

impl ForwardedHeader {
    /// The header's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::XForwardedFor => "X-Forwarded-For",
            Self::Forwarded => "Forwarded",
        }
    }
}

/// `x-forwarded-for` or `forwarded`, in any case.
impl FromStr for ForwardedHeader {
    type Err = UnknownForwardedHeader;

    fn from_str(s: &str) -> Result<Self, UnknownForwardedHeader> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("x-forwarded-for") {
            Ok(Self::XForwardedFor)
        } else if s.eq_ignore_ascii_case("forwarded") {
            Ok(Self::Forwarded)
        } else {
            Err(UnknownForwardedHeader(s.chars().take(64).collect()))
        }
    }
}

/// A header name that is neither `x-forwarded-for` nor `forwarded`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownForwardedHeader(pub String);

impl fmt::Display for UnknownForwardedHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not x-forwarded-for or forwarded: {:?}", self.0)
    }
}

impl std::error::Error for UnknownForwardedHeader {}

impl TrustedProxies {
    /// These networks (an address is a network of one).
    pub fn new(nets: impl IntoIterator<Item = IpNet>) -> Self {
        Self {
            nets: nets.into_iter().map(|n| n.trunc()).collect(),
            header: ForwardedHeader::default(),
        }
    }

    /// The header the proxies name the client in (default `X-Forwarded-For`).
    pub fn reading(mut self, header: ForwardedHeader) -> Self {
        self.header = header;
        self
    }

    /// No proxy is trusted (the default).
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    /// Whether `ip` is one of the proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.nets.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that came from `peer` with `headers`: `peer` itself unless
    /// it is a trusted proxy; else the right-most entry of the header read (see
    /// [`reading`](Self::reading)) that is not a trusted proxy (the left-most one when all
    /// are), with port 0. Only the entries up to the client are read, so an unreadable one
    /// left of it (the client's own) is never looked at.
    pub fn client(
        &self,
        peer: SocketAddr,
        headers: &http::HeaderMap,
    ) -> Result<SocketAddr, BadForwardedFor> {
        if !self.trusts(peer.ip()) {
            return Ok(peer);
        }
        let mut last = None;
        // Several header lines are one list, in order (RFC 9110, 5.3).
        for line in headers.get_all(self.header.name()).iter().rev() {
            let text = line
                .to_str()
                .map_err(|_| BadForwardedFor::NotText(self.header))?;
            for ip in self.entries(text) {
                let ip = ip?;
                if !self.trusts(ip) {
                    return Ok(SocketAddr::new(ip, 0));
                }
                last = Some(ip);
            }
        }
        Ok(last.map_or(peer, |ip| SocketAddr::new(ip, 0)))
    }

    /// The addresses one line names, right-most first, each read only when it is reached.
    fn entries<'a>(
        &self,
        text: &'a str,
    ) -> Box<dyn Iterator<Item = Result<IpAddr, BadForwardedFor>> + 'a> {
        match self.header {
            ForwardedHeader::XForwardedFor => Box::new(
                text.rsplit(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(address),
            ),
            ForwardedHeader::Forwarded => Box::new(rfc7239::nodes(text)),
        }
    }
}

/// An `X-Forwarded-For` entry as proxies write it: an address, or one with a port.
fn address(entry: &str) -> Result<IpAddr, BadForwardedFor> {
    ip_of(entry).ok_or_else(|| {
        let entry = entry.chars().take(64).collect();
        BadForwardedFor::NotAnAddress(ForwardedHeader::XForwardedFor, entry)
    })
}

/// The address of a node as either header writes it: `192.0.2.60`, `192.0.2.60:47011`,
/// `[2001:db8::17]` or `[2001:db8::17]:4711` (IPv4-mapped addresses as IPv4).
fn ip_of(node: &str) -> Option<IpAddr> {
    let bracketed = || {
        node.strip_prefix('[')?
            .strip_suffix(']')?
            .parse::<Ipv6Addr>()
            .ok()
    };
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| bracketed().map(IpAddr::V6))
        .map(|ip| ip.to_canonical())
}

/// `"10.0.0.0/8, 127.0.0.1"`: networks and addresses, separated by commas or spaces.
impl FromStr for TrustedProxies {
    type Err = InvalidProxy;

    fn from_str(s: &str) -> Result<Self, InvalidProxy> {
        let nets = s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse::<IpNet>()
                    .or_else(|_| p.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| InvalidProxy(p.to_owned()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::new(nets))
    }
}

/// A proxy that is neither an address nor a network (`10.0.0.0/8`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidProxy(pub String);

impl fmt::Display for InvalidProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an IP address or network (10.0.0.0/8): {:?}", self.0)
    }
}

impl std::error::Error for InvalidProxy {}

/// A trusted proxy's `X-Forwarded-For` (or `Forwarded`) that does not name the client.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BadForwardedFor {
    /// The header is not visible ASCII.
    NotText(ForwardedHeader),
    /// An entry up to the client is not an address (at most 64 characters of it).
    NotAnAddress(ForwardedHeader, String),
}

impl fmt::Display for BadForwardedFor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotText(h) => write!(f, "{} is not text", h.name()),
            Self::NotAnAddress(h, e) => write!(f, "{}: not an IP address: {e:?}", h.name()),
        }
    }
}

impl std::error::Error for BadForwardedFor {}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderMap;

    fn proxies() -> TrustedProxies {
        "10.0.0.0/8 127.0.0.1,::1".parse().unwrap()
    }

    fn client(peer: &str, lines: &[&str]) -> Result<String, BadForwardedFor> {
        let mut headers = HeaderMap::new();
        for l in lines {
            headers.append("x-forwarded-for", l.parse().unwrap());
        }
        let peer: SocketAddr = peer.parse().unwrap();
        proxies().client(peer, &headers).map(|a| a.to_string())
    }

    #[test]
    fn a_peer_that_is_no_proxy_is_the_client_whatever_it_writes() {
        let c = client("198.51.100.1:5000", &["203.0.113.9"]);
        assert_eq!(c.unwrap(), "198.51.100.1:5000");
        let c = client("198.51.100.1:5000", &["not an address"]);
        assert_eq!(c.unwrap(), "198.51.100.1:5000", "never read");
    }

    #[test]
    fn the_right_most_untrusted_entry_is_the_client() {
        let c = client("127.0.0.1:40000", &["203.0.113.9, 198.51.100.7, 10.1.2.3"]);
        assert_eq!(c.unwrap(), "198.51.100.7:0");
        // What the client wrote itself (left of its proxy's entry) is never read.
        let c = client("127.0.0.1:40000", &["garbage, 198.51.100.7"]);
        assert_eq!(c.unwrap(), "198.51.100.7:0");
        // Several lines are one list; ports and IPv4-mapped addresses are read too.
        let c = client(
            "[::1]:1",
            &["203.0.113.9", "[::ffff:198.51.100.8]:443 , 10.0.0.1"],
        );
        assert_eq!(c.unwrap(), "198.51.100.8:0");
    }

    #[test]
    fn a_proxy_without_the_header_or_with_only_proxies_is_the_furthest_known() {
        assert_eq!(client("127.0.0.1:7", &[]).unwrap(), "127.0.0.1:7");
        assert_eq!(client("127.0.0.1:7", &[" , "]).unwrap(), "127.0.0.1:7");
        assert_eq!(
            client("127.0.0.1:7", &["10.0.0.2, 10.0.0.3"]).unwrap(),
            "10.0.0.2:0"
        );
    }

    #[test]
    fn an_unreadable_entry_up_to_the_client_is_refused() {
        let e = client("127.0.0.1:7", &["198.51.100.7, unknown"]).unwrap_err();
        let xff = ForwardedHeader::XForwardedFor;
        assert_eq!(e, BadForwardedFor::NotAnAddress(xff, "unknown".into()));
        let long = "x".repeat(10_000);
        let e = client("127.0.0.1:7", &[&long]).unwrap_err();
        assert!(e.to_string().len() < 120, "{e}");
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            http::HeaderValue::from_bytes(b"198.51.100.\xff").unwrap(),
        );
        let peer = "127.0.0.1:7".parse().unwrap();
        assert_eq!(
            proxies().client(peer, &headers),
            Err(BadForwardedFor::NotText(xff))
        );
    }

    #[test]
    fn only_the_header_chosen_is_read() {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", "198.51.100.1".parse().unwrap());
        headers.append("forwarded", "for=198.51.100.5;proto=http".parse().unwrap());
        headers.append(
            "forwarded",
            "for=\"[2001:db8::7]:80\", for=10.0.0.9".parse().unwrap(),
        );
        let peer: SocketAddr = "127.0.0.1:7".parse().unwrap();
        let xff = proxies().client(peer, &headers).unwrap();
        assert_eq!(xff.to_string(), "198.51.100.1:0");
        let rfc = proxies().reading(ForwardedHeader::Forwarded);
        let c = rfc.client(peer, &headers).unwrap();
        assert_eq!(
            c.to_string(),
            "[2001:db8::7]:0",
            "the right-most untrusted node"
        );
        headers.insert("forwarded", "for=unknown".parse().unwrap());
        let e = rfc.client(peer, &headers).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Forwarded: not an IP address: \"for=unknown\""
        );
        headers.remove("forwarded");
        assert_eq!(
            rfc.client(peer, &headers).unwrap(),
            peer,
            "X-Forwarded-For is not read"
        );
        assert_eq!("Forwarded".parse(), Ok(ForwardedHeader::Forwarded));
        assert_eq!(
            " x-forwarded-for".parse(),
            Ok(ForwardedHeader::XForwardedFor)
        );
        assert!("via".parse::<ForwardedHeader>().is_err());
    }

    #[test]
    fn proxies_are_networks_or_addresses() {
        let p: TrustedProxies = "10.1.2.3/8".parse().unwrap();
        assert!(
            p.trusts("10.200.0.1".parse().unwrap()),
            "the network, truncated"
        );
        assert!(!p.trusts("11.0.0.1".parse().unwrap()));
        assert!(p.trusts("::ffff:10.0.0.1".parse().unwrap()), "IPv4-mapped");
        assert_eq!(
            "10.0.0.0/33".parse::<TrustedProxies>(),
            Err(InvalidProxy("10.0.0.0/33".into()))
        );
        assert!("nginx".parse::<TrustedProxies>().is_err());
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
    }
}
