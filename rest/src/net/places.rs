//! Who holds a listener's places: each open connection under its client (an IPv4 address
//! or an IPv6 /64 network), with a handle through which the listener can ask it to close.
//! A client may hold at most its share; and when every place is taken, a client holding
//! fewer than the largest holder gets one of that holder's, an idle one first, so a few
//! addresses that took every place early cannot keep everyone else out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

use futures_util::task::AtomicWaker;

/// One open connection's place, as the listener sees it.
#[derive(Debug, Default)]
pub struct Place {
    /// The listener asked the connection to close (it closes at its next read or write).
    closing: AtomicBool,
    /// Between requests (or not yet started one): closing it cuts no request short.
    idle: AtomicBool,
    /// The connection's task, woken when it is asked to close.
    waker: AtomicWaker,
}

impl Place {
    /// Whether the connection is between requests.
    pub fn set_idle(&self, idle: bool) {
        self.idle.store(idle, Ordering::Relaxed);
    }

    /// Whether the listener asked this connection to close; `waker` hears when it does.
    pub fn asked_to_close(&self, waker: &Waker) -> bool {
        self.waker.register(waker);
        self.closing.load(Ordering::Acquire)
    }

    fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.waker.wake();
    }

    fn open(&self) -> bool {
        !self.closing.load(Ordering::Acquire)
    }
}

/// Open connections per client.
#[derive(Debug, Default)]
pub struct Places(Mutex<HashMap<IpAddr, Vec<Arc<Place>>>>);

impl Places {
    /// Takes a place for the client of `ip` if it holds fewer than `cap` connections.
    pub fn take(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<AddressSlot> {
        let ip = crate::net::proxies::client_of(ip);
        // Nothing panics while holding the table: a poisoned one is whole, and refusing
        // would shut the listener for everyone.
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let held = open.entry(ip).or_default();
        if held.len() >= cap {
            return None;
        }
        let place = Arc::new(Place::default());
        held.push(place.clone());
        Some(AddressSlot {
            table: self.clone(),
            ip,
            place,
        })
    }

    /// Asks one connection of the client holding the most (open and not already asked)
    /// to close, if that client holds at least two more than the client of `ip`, which
    /// holds fewer than `cap`: an idle one if it has any, else its oldest. Whether one
    /// was asked.
    pub fn make_room_for(&self, ip: IpAddr, cap: usize) -> bool {
        let ip = crate::net::proxies::client_of(ip);
        let open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let live = |held: &Vec<Arc<Place>>| held.iter().filter(|p| p.open()).count();
        let mine = open.get(&ip).map_or(0, live);
        let Some(most) = open.values().max_by_key(|held| live(held)) else {
            return false;
        };
        if mine >= cap || live(most) < mine + 2 {
            return false;
        }
        let idle = most
            .iter()
            .find(|p| p.open() && p.idle.load(Ordering::Relaxed));
        match idle.or_else(|| most.iter().find(|p| p.open())) {
            Some(place) => {
                place.close();
                true
            }
            None => false,
        }
    }
}

/// One connection's place among its client's; given back when dropped.
#[derive(Debug)]
pub struct AddressSlot {
    table: Arc<Places>,
    ip: IpAddr,
    place: Arc<Place>,
}

impl AddressSlot {
    /// The place, for the connection to publish its state and hear a request to close.
    pub fn place(&self) -> &Place {
        &self.place
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.table.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = open.get_mut(&self.ip) {
            held.retain(|p| !Arc::ptr_eq(p, &self.place));
            if held.is_empty() {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Addresses of one IPv6 /64 are one client: rotating through them takes no more
    /// than its share of the listener's connections.
    #[test]
    fn an_ipv6_network_holds_one_share_of_connections() {
        let table = Arc::new(Places::default());
        let host = |h: u16| IpAddr::from([0x2001, 0xdb8, 0, 7, 0, 0, 0, h]);
        let slots: Vec<_> = (1..=5).filter_map(|h| table.take(host(h), 3)).collect();
        assert_eq!(slots.len(), 3);
        let other = IpAddr::from([0x2001, 0xdb8, 0, 8, 0, 0, 0, 1]);
        assert!(table.take(other, 3).is_some(), "another /64");
        drop(slots);
        assert!(table.take(host(9), 3).is_some(), "places given back");
    }

    /// Room is made from the largest holder, an idle connection first, and only for a
    /// client holding at least two fewer (and fewer than its share).
    #[test]
    fn room_comes_from_the_largest_holder_and_its_idle_connections_first() {
        let table = Arc::new(Places::default());
        let [big, small, new] = [[10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 3]].map(IpAddr::from);
        let held: Vec<_> = (0..3).filter_map(|_| table.take(big, 8)).collect();
        let theirs = table.take(small, 8).expect("a place");
        held[2].place().set_idle(true);
        let waker = Waker::noop();
        assert!(table.make_room_for(new, 8), "3 against 0");
        let asked: Vec<_> = held
            .iter()
            .map(|s| s.place().asked_to_close(waker))
            .collect();
        assert_eq!(asked, [false, false, true], "the idle one");
        assert!(!theirs.place().asked_to_close(waker));
        // Now 2 open against 1 (the small holder): both hold the most, neither two more
        // than a client holding 1.
        assert!(!table.make_room_for(small, 8));
        assert!(table.make_room_for(new, 8), "2 against 0: the oldest");
        assert!(held[0].place().asked_to_close(waker));
        assert!(!table.make_room_for(new, 0), "no share at all");
        drop(held);
        assert!(!table.make_room_for(new, 8), "1 against 0");
    }
}
