//! The client a request comes from, for the per-client limits: its connection's peer, or,
//! when that peer is one of the operator's trusted proxies (a TLS terminator or load
//! balancer in front of the exchange), the address that proxy recorded in the header the
//! operator says its proxies write: `X-Forwarded-For` (the default) or the standard
//! `Forwarded`. The header is read only from a trusted peer, and only the one configured
//! (a proxy that writes one passes the other on as the client sent it), so a client
//! cannot name itself another address to escape its limits.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use axum::http::HeaderMap;

/// An address or a network of addresses (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    base: IpAddr,
    prefix: u8,
}

/// Why a network could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0:?}: an address or a network such as 10.0.0.0/8 or fd00::/8")]
pub struct BadNetwork(String);

impl FromStr for Network {
    type Err = BadNetwork;

    fn from_str(text: &str) -> Result<Self, BadNetwork> {
        let bad = || BadNetwork(text.to_owned());
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let base: IpAddr = address.trim().parse().map_err(|_| bad())?;
        let bits = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= bits)
                .ok_or_else(bad)?,
            None => bits,
        };
        Ok(Self { base, prefix })
    }
}

impl Network {
    /// Whether `ip` is in this network (an IPv4 address mapped into IPv6 counts as the
    /// IPv4 one).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.base, ip.to_canonical()) {
            (IpAddr::V4(base), IpAddr::V4(ip)) => same_prefix(
                u32::from(base).into(),
                u32::from(ip).into(),
                self.prefix,
                32,
            ),
            (IpAddr::V6(base), IpAddr::V6(ip)) => {
                same_prefix(base.into(), ip.into(), self.prefix, 128)
            }
            _ => false,
        }
    }
}

fn same_prefix(a: u128, b: u128, prefix: u8, bits: u8) -> bool {
    let shift = u32::from(bits - prefix);
    // A shift of the whole width compares nothing: every address is in a /0.
    a.checked_shr(shift).unwrap_or(0) == b.checked_shr(shift).unwrap_or(0)
}

/// The client an address stands for, for the per-client limits: an IPv4 address (also
/// when mapped into IPv6), or the /64 network of an IPv6 one (the least a provider
/// assigns one client, who may send from any address in it).
pub(crate) fn client_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        v4 => v4,
    }
}

/// Which header the trusted proxies record the client in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: 203.0.113.7, 10.0.0.5` (nginx, most load balancers).
    #[default]
    XForwardedFor,
    /// `Forwarded: for=203.0.113.7, for="[2001:db8::1]:4711"` (RFC 7239).
    Forwarded,
}

/// Why a header name could not be read as one of [`ForwardedHeader`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0:?}: X-Forwarded-For or Forwarded")]
pub struct BadForwardedHeader(String);

impl FromStr for ForwardedHeader {
    type Err = BadForwardedHeader;

    fn from_str(name: &str) -> Result<Self, BadForwardedHeader> {
        match name.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(Self::XForwardedFor),
            "forwarded" => Ok(Self::Forwarded),
            _ => Err(BadForwardedHeader(name.to_owned())),
        }
    }
}

impl ForwardedHeader {
    /// Both headers, to drop whichever a client wrote when relaying its request.
    pub const ALL: [ForwardedHeader; 2] = [Self::XForwardedFor, Self::Forwarded];

    /// The header's name, as sent.
    pub fn name(self) -> &'static str {
        match self {
            Self::XForwardedFor => "x-forwarded-for",
            Self::Forwarded => "forwarded",
        }
    }

    /// The header's value naming `client` as the hop it was reached from.
    pub fn value_for(self, client: IpAddr) -> String {
        match (self, client) {
            (Self::XForwardedFor, client) => client.to_string(),
            (Self::Forwarded, IpAddr::V4(v4)) => format!("for={v4}"),
            (Self::Forwarded, IpAddr::V6(v6)) => format!("for=\"[{v6}]\""),
        }
    }

    /// The addresses of one value of the header, nearest hop first; `None` where an
    /// entry is not an address.
    fn hops(self, value: &str) -> Vec<Option<IpAddr>> {
        match self {
            Self::XForwardedFor => value
                .rsplit(',')
                .map(|entry| forwarded_address(entry.trim()))
                .collect(),
            Self::Forwarded => crate::net::forwarded::nodes_from_the_right(value).collect(),
        }
    }
}

/// The proxies whose forwarding header is believed (none by default), and which header
/// that is. Cheap to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    networks: Arc<[Network]>,
    header: ForwardedHeader,
}

impl TrustedProxies {
    /// Trusts `networks`, whose `X-Forwarded-For` names the client.
    pub fn new(networks: Vec<Network>) -> Self {
        Self {
            networks: networks.into(),
            header: ForwardedHeader::default(),
        }
    }

    /// The same proxies, read from `header` instead.
    pub fn reading(self, header: ForwardedHeader) -> Self {
        Self { header, ..self }
    }

    /// The header these proxies record the client in.
    pub fn header(&self) -> ForwardedHeader {
        self.header
    }

    /// Whether a connection from `ip` is a trusted proxy's.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.networks.iter().any(|n| n.contains(ip))
    }

    /// The client of a request that came over a connection from `peer`: `peer` itself
    /// unless it is trusted; otherwise the nearest address in the configured header (read
    /// from the right, where each proxy appends the address it was reached from) that is
    /// not a trusted proxy's. An entry that is not an address stops the walk at the proxy
    /// that wrote it: the client is then that proxy, as if it had sent the request itself.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = peer;
        if !self.trusts(client) {
            return client;
        }
        let values = headers.get_all(self.header.name()).iter().rev();
        for value in values {
            let Ok(text) = value.to_str() else {
                return client;
            };
            for hop in self.header.hops(text) {
                let Some(address) = hop else {
                    return client;
                };
                client = address;
                if !self.trusts(client) {
                    return client;
                }
            }
        }
        client
    }
}

/// An entry of `X-Forwarded-For`: an address, possibly with a port (`192.0.2.1:4711`,
/// `[2001:db8::1]:4711`).
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("address")
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", v.parse().expect("header value"));
        }
        headers
    }

    fn proxies(networks: &[&str]) -> TrustedProxies {
        TrustedProxies::new(
            networks
                .iter()
                .map(|n| n.parse().expect("network"))
                .collect(),
        )
    }

    #[test]
    fn networks_are_read_and_matched_by_their_prefix() {
        let n: Network = "10.0.0.0/8".parse().expect("v4 network");
        assert!(n.contains(ip("10.200.1.2")) && !n.contains(ip("11.0.0.1")));
        assert!(n.contains(ip("::ffff:10.1.1.1")), "an IPv4-mapped address");
        let one: Network = "127.0.0.1".parse().expect("one address");
        assert!(one.contains(ip("127.0.0.1")) && !one.contains(ip("127.0.0.2")));
        let v6: Network = "fd00::/8".parse().expect("v6 network");
        assert!(v6.contains(ip("fd12::1")) && !v6.contains(ip("fe80::1")));
        let all: Network = "0.0.0.0/0".parse().expect("every v4 address");
        assert!(all.contains(ip("203.0.113.9")) && !all.contains(ip("2001:db8::1")));
        for bad in [
            "10.0.0.0/33",
            "fd00::/129",
            "10.0.0/8",
            "localhost",
            "10.0.0.0/x",
            "",
        ] {
            assert_eq!(bad.parse::<Network>(), Err(BadNetwork(bad.into())), "{bad}");
        }
    }

    #[test]
    fn the_header_is_read_only_from_a_trusted_peer() {
        let trusted = proxies(&["127.0.0.1"]);
        let headers = forwarded(&["203.0.113.7"]);
        assert_eq!(trusted.client(ip("127.0.0.1"), &headers), ip("203.0.113.7"));
        assert_eq!(
            trusted.client(ip("198.51.100.1"), &headers),
            ip("198.51.100.1"),
            "anyone else's header is ignored"
        );
        assert_eq!(
            TrustedProxies::default().client(ip("127.0.0.1"), &headers),
            ip("127.0.0.1"),
            "no proxy is trusted by default"
        );
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn the_client_is_the_nearest_address_that_is_not_a_trusted_proxy() {
        let trusted = proxies(&["127.0.0.1", "10.0.0.0/8"]);
        let peer = ip("127.0.0.1");
        // What the client wrote itself (the leftmost entries) is not believed.
        let chain = forwarded(&["1.1.1.1, 203.0.113.7, 10.0.0.5"]);
        assert_eq!(trusted.client(peer, &chain), ip("203.0.113.7"));
        let split = forwarded(&["1.1.1.1", "203.0.113.7", "10.0.0.5"]);
        assert_eq!(
            trusted.client(peer, &split),
            ip("203.0.113.7"),
            "one header a hop"
        );
        let ported = forwarded(&["[2001:db8::9]:4711, 192.0.2.1:80"]);
        assert_eq!(trusted.client(peer, &ported), ip("192.0.2.1"));
        let all_proxies = forwarded(&["10.0.0.9, 10.0.0.5"]);
        assert_eq!(trusted.client(peer, &all_proxies), ip("10.0.0.9"));
        let garbled = forwarded(&["203.0.113.7, unknown, 10.0.0.5"]);
        assert_eq!(
            trusted.client(peer, &garbled),
            ip("10.0.0.5"),
            "the proxy that wrote what is not an address"
        );
    }

    #[test]
    fn only_the_configured_header_names_the_client() {
        let standard = proxies(&["127.0.0.1", "10.0.0.0/8"]).reading(ForwardedHeader::Forwarded);
        let peer = ip("127.0.0.1");
        let mut headers = forwarded(&["198.51.100.99"]);
        headers.append(
            "forwarded",
            "for=1.1.1.1, for=\"[2001:db8::9]:4711\";proto=https, for=10.0.0.5"
                .parse()
                .expect("header value"),
        );
        assert_eq!(standard.client(peer, &headers), ip("2001:db8::9"));
        assert_eq!(
            proxies(&["127.0.0.1", "10.0.0.0/8"]).client(peer, &headers),
            ip("198.51.100.99"),
            "X-Forwarded-For, the default, with Forwarded passed on as the client wrote it"
        );
        let unknown: HeaderMap = [(
            axum::http::header::FORWARDED,
            "for=203.0.113.7, for=unknown"
                .parse()
                .expect("header value"),
        )]
        .into_iter()
        .collect();
        assert_eq!(
            standard.client(peer, &unknown),
            peer,
            "the proxy that wrote it"
        );
    }

    #[test]
    fn a_relayed_client_reads_back_as_itself_in_either_header() {
        for header in [ForwardedHeader::XForwardedFor, ForwardedHeader::Forwarded] {
            let trusted = proxies(&["127.0.0.1"]).reading(header);
            for client in ["203.0.113.7", "2001:db8::1"] {
                let value = header.value_for(ip(client));
                let headers: HeaderMap = [(
                    axum::http::HeaderName::from_static(header.name()),
                    value.parse().expect("header value"),
                )]
                .into_iter()
                .collect();
                assert_eq!(
                    trusted.client(ip("127.0.0.1"), &headers),
                    ip(client),
                    "{value}"
                );
            }
        }
        assert_eq!("Forwarded".parse(), Ok(ForwardedHeader::Forwarded));
        assert_eq!(
            " x-forwarded-for ".parse(),
            Ok(ForwardedHeader::XForwardedFor)
        );
        assert!("X-Real-IP".parse::<ForwardedHeader>().is_err());
    }
}
