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

/// Most addresses tracked before windows of past minutes are dropped.
const MAX_TRACKED: usize = 65_536;

/// One window per client address, for requests that carry no valid key.
#[derive(Debug, Default)]
pub struct AddressWindows(Mutex<HashMap<IpAddr, RateWindow>>);

impl AddressWindows {
    /// Counts one request from `ip` in minute `minute`; false when `limit` is reached.
    pub fn admit(&self, ip: IpAddr, minute: u64, limit: u32) -> bool {
        // Nothing panics while holding the table: a poisoned one is whole, and letting
        // every request through would lift the limit.
        let mut windows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if windows.len() >= MAX_TRACKED && !windows.contains_key(&ip) {
            // Only the current minute's counts matter: forget the rest (a flood of new
            // addresses cannot grow the table without bound).
            windows.retain(|_, w| w.state.load(Ordering::Relaxed) >> COUNT_BITS == minute);
        }
        windows.entry(ip).or_default().admit(minute, limit)
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
