//! Per-key, per-holder and per-address request limits: a fixed one-minute window counted in
//! a single atomic word (window number in the high bits, count in the low 24), so checking
//! a limit takes no lock. A fixed window admits up to twice the limit across a window
//! boundary; the public exchange's figure (about 240 a minute) is approximate in the same
//! way. Requests without a valid key are limited per client address ([`AddressWindows`]).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// Requests counted in the current minute.
#[derive(Debug, Default)]
pub struct RateWindow {
    state: AtomicU64,
}

impl RateWindow {
    /// Counts one request in minute `minute`; false when `limit` is already reached.
    pub fn admit(&self, minute: u64, limit: u32) -> bool {
        let mut current = self.state.load(Ordering::Relaxed);
        loop {
            let (window, count) = (current >> COUNT_BITS, current & COUNT_MASK);
            let count = if window == minute { count } else { 0 };
            if count >= u64::from(limit).min(COUNT_MASK) {
                return false;
            }
            let next = (minute << COUNT_BITS) | (count + 1);
            match self.state.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => current = seen,
            }
        }
    }
}

/// Most clients given a window of their own; past it, for the rest of the minute, new
/// ones share one (a flood of new addresses neither grows the table nor lifts the limit).
const MAX_TRACKED: usize = 65_536;

/// One window per client, for requests that carry no valid key: an IPv4 address, or an
/// IPv6 /64 network (the least a provider assigns one client, who may send from any of
/// its addresses).
#[derive(Debug, Default)]
pub struct AddressWindows(Mutex<Windows>);

#[derive(Debug, Default)]
struct Windows {
    by_client: HashMap<IpAddr, RateWindow>,
    /// Past a full `by_client`, for the rest of the minute: a window per network ([`network_of`])
    /// that its clients new in that minute share, so one network's flood of newcomers
    /// holds back that network's (at most as many tracked).
    by_network: HashMap<IpAddr, RateWindow>,
    /// The minute the tables were last swept of past minutes' windows (one sweep a minute).
    swept: u64,
    /// Shared by the clients that found both tables full.
    newcomers: RateWindow,
    /// Requests counted in a network's window or the newcomers' (a full table: a flood of
    /// addresses, for an operator to see).
    overflowed: u64,
}

/// The network a client is in, for the newcomers' windows of a full table: an IPv4
/// address's /24, an IPv6 network's /48 (what a site, or a free tunnel, is given).
fn network_of(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & !0xff).into()),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 80) - 1)).into()),
    }
}

impl AddressWindows {
    /// Counts one request from `ip` in minute `minute`; false when `limit` is reached.
    pub fn admit(&self, ip: IpAddr, minute: u64, limit: u32) -> bool {
        let client = crate::net::proxies::client_of(ip);
        // Nothing panics while holding the table: a poisoned one is whole, and letting
        // every request through would lift the limit.
        let mut windows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(window) = windows.by_client.get(&client) {
            return window.admit(minute, limit);
        }
        if windows.by_client.len() >= MAX_TRACKED && windows.swept != minute {
            // Only the current minute's counts matter: forget the rest.
            windows.swept = minute;
            let current = |w: &RateWindow| w.state.load(Ordering::Relaxed) >> COUNT_BITS == minute;
            windows.by_client.retain(|_, w| current(w));
            windows.by_network.retain(|_, w| current(w));
        }
        if windows.by_client.len() < MAX_TRACKED {
            return (windows.by_client.entry(client).or_default()).admit(minute, limit);
        }
        windows.overflowed += 1;
        let network = network_of(client);
        if windows.by_network.len() < MAX_TRACKED || windows.by_network.contains_key(&network) {
            return (windows.by_network.entry(network).or_default()).admit(minute, limit);
        }
        windows.newcomers.admit(minute, limit)
    }

    /// Clients with a window of their own (those of earlier minutes included until a full
    /// table is swept).
    pub fn tracked(&self) -> usize {
        let windows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        windows.by_client.len()
    }

    /// Requests counted in a network's window or the newcomers' so far.
    pub fn overflowed(&self) -> u64 {
        let windows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        windows.overflowed
    }

    #[cfg(test)]
    fn networks(&self) -> usize {
        let windows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        windows.by_network.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_has_its_own_window() {
        let windows = AddressWindows::default();
        let (a, b) = (IpAddr::from([127, 0, 0, 1]), IpAddr::from([127, 0, 0, 2]));
        assert_eq!((0..10).filter(|_| windows.admit(a, 3, 4)).count(), 4);
        assert!(windows.admit(b, 3, 4), "another address is not held back");
        assert!(windows.admit(a, 4, 4), "a new minute starts a new count");
    }

    /// An IPv6 client holds a /64 (or more) and can send from any address in it: the
    /// network is the client. An IPv4 address mapped into IPv6 is its IPv4 address.
    #[test]
    fn an_ipv6_network_of_64_bits_is_one_client() {
        let windows = AddressWindows::default();
        let net = |host: u16| IpAddr::from([0x2001, 0xdb8, 0, 7, 0, 0, 0, host]);
        assert_eq!((1..=10).filter(|&h| windows.admit(net(h), 3, 4)).count(), 4);
        let other = IpAddr::from([0x2001, 0xdb8, 0, 8, 0, 0, 0, 1]);
        assert!(windows.admit(other, 3, 4), "another /64 is another client");
        let v4: IpAddr = "192.0.2.9".parse().expect("v4");
        let mapped: IpAddr = "::ffff:192.0.2.9".parse().expect("mapped");
        assert_eq!(
            [v4, mapped, v4, mapped, v4]
                .iter()
                .filter(|&&ip| windows.admit(ip, 3, 4))
                .count(),
            4
        );
    }

    /// More new addresses in a minute than the table holds: the table stops growing, the
    /// newcomers of one network share one window (so together they get one client's
    /// limit), and the addresses already known keep theirs; the next minute sweeps the
    /// table once.
    #[test]
    fn a_flood_of_new_addresses_shares_one_window_past_the_table_size() {
        let windows = AddressWindows::default();
        let address = |n: u32| IpAddr::from((10u32 << 24 | n).to_be_bytes());
        let known = address(0);
        assert!(windows.admit(known, 5, 3));
        for n in 1..MAX_TRACKED as u32 {
            assert!(windows.admit(address(n), 5, 3));
        }
        let one_network = |host: u8| IpAddr::from([11, 0, 0, host]);
        let newcomers = (0..=u8::MAX)
            .filter(|&host| windows.admit(one_network(host), 5, 3))
            .count();
        assert_eq!(newcomers, 3, "one window among them");
        assert_eq!(windows.tracked(), MAX_TRACKED);
        assert!(
            windows.admit(known, 5, 3),
            "a known address keeps its own window"
        );
        assert!(
            windows.admit(address(MAX_TRACKED as u32 + 5_000), 6, 3),
            "a new minute"
        );
        assert_eq!(
            windows.tracked(),
            1,
            "swept once: only this minute's address is left"
        );
    }

    /// One IPv6 /48 (a tunnel broker hands one out for free) holds 65,536 /64 networks,
    /// enough to fill the table in a minute. Past it, a newcomer shares the window of its
    /// /48 (an IPv4 one, of its /24) with the rest of that network, and a newcomer from
    /// another network still gets a window: they all shared one, so a flood went on from a
    /// second /48 and shut every new client out for the rest of the minute.
    #[test]
    fn a_full_table_sends_newcomers_to_their_networks_window_not_one_for_all() {
        let windows = AddressWindows::default();
        let in_48 = |net: u16, subnet: u16| IpAddr::from([0x2001, 0xdb8, net, subnet, 0, 0, 0, 1]);
        for subnet in 0..=u16::MAX {
            assert!(windows.admit(in_48(0, subnet), 5, 3));
        }
        assert_eq!(windows.tracked(), MAX_TRACKED);
        let flood = (0..1_000)
            .filter(|&subnet| windows.admit(in_48(1, subnet), 5, 3))
            .count();
        assert_eq!(flood, 3, "the second /48's newcomers share its window");
        assert_eq!(
            windows.overflowed(),
            1_000,
            "each counted for the operator to see"
        );
        let newcomer = in_48(2, 0);
        assert_eq!(
            (0..5).filter(|_| windows.admit(newcomer, 5, 3)).count(),
            3,
            "a newcomer from another network has a window of its own"
        );
        let v4 = |host: u8| IpAddr::from([192, 0, 2, host]);
        assert_eq!(
            (0..9).filter(|&h| windows.admit(v4(h), 5, 3)).count(),
            3,
            "one /24"
        );
        assert!(
            windows.admit(IpAddr::from([198, 51, 100, 1]), 5, 3),
            "another /24"
        );
        assert_eq!(windows.tracked(), MAX_TRACKED, "the table did not grow");
        // Networks new in the minute fill their table too; past it, the rest share one.
        let network = |n: u32| IpAddr::from([0x3fff, (n >> 16) as u16, n as u16, 0, 0, 0, 0, 1]);
        let mut n = 0;
        while windows.networks() < MAX_TRACKED {
            assert!(windows.admit(network(n), 5, 3));
            n += 1;
        }
        let last = (n..n + 100)
            .filter(|&m| windows.admit(network(m), 5, 3))
            .count();
        assert_eq!(last, 3, "one window among the networks past both tables");
    }

    #[test]
    fn admits_the_limit_then_refuses_until_the_next_minute() {
        let w = RateWindow::default();
        assert_eq!((0..10).filter(|_| w.admit(7, 4)).count(), 4);
        assert!(!w.admit(7, 4));
        assert!(w.admit(8, 4), "a new minute starts a new count");
    }

    #[test]
    fn counts_exactly_under_contention() {
        let w = std::sync::Arc::new(RateWindow::default());
        let admitted: usize = (0..4)
            .map(|_| {
                let w = w.clone();
                std::thread::spawn(move || (0..1000).filter(|_| w.admit(1, 1500)).count())
            })
            .map(|t| t.join().expect("thread"))
            .sum();
        assert_eq!(admitted, 1500);
    }
}
