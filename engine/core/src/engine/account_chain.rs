//! Each account's live orders as a chain, newest first (mass cancels and account reads walk
//! an account's own orders, not the exchange's): the newest order by account and the links
//! by order slot, in dense tables beside the order store rather than in the order records.
//!
//! Ending an order rewrites its neighbours' links. In the records those sat in the third
//! cache line of orders nothing else was touching, so placing and ending an order on a deep
//! book cost up to three misses to memory (15 % of a deep-book run in perf); at 8 bytes a
//! slot, the table of 100,000 orders fits the 2 MB L2 cache.

use crate::ids::AccountId;
use crate::order::{NIL, Order};

/// An order's neighbours in its account's chain (`NIL`: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    /// The account's next older live order.
    pub(crate) older: u32,
    /// The account's next newer live order.
    pub(crate) newer: u32,
}

const UNLINKED: Link = Link {
    older: NIL,
    newer: NIL,
};

/// Every account's chain of live orders.
#[derive(Debug, Clone, Default)]
pub(crate) struct AccountChains {
    /// Per account: its newest live order (`NIL`: none).
    newest: Vec<u32>,
    /// Per order slot: its links (meaningful while the slot holds a chained order).
    links: Vec<Link>,
}

/// Snapshot format 6 saved the newest order per account and the links inside the orders;
/// the decoder keeps the former and [`AccountChains::rebuild`] redoes the rest.
impl<'de> serde::Deserialize<'de> for AccountChains {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let newest: Vec<u32> = serde::Deserialize::deserialize(deserializer)?;
        Ok(Self {
            newest,
            links: Vec::new(),
        })
    }
}

impl AccountChains {
    /// Makes `slot` the newest live order of `account`.
    #[inline]
    pub(crate) fn link(&mut self, account: AccountId, slot: u32) {
        let account = account.0 as usize;
        if self.newest.len() <= account {
            // Once per account, at its first order that can rest.
            self.newest.resize(account + 1, NIL);
        }
        let s = slot as usize;
        if self.links.len() <= s {
            // Only when the order store reaches a new peak (it grows the same way).
            self.links.resize(s + 1, UNLINKED);
        }
        let older = std::mem::replace(&mut self.newest[account], slot);
        if older != NIL {
            self.links[older as usize].newer = slot;
        }
        self.links[s] = Link { older, newer: NIL };
    }

    /// Takes `slot` out of `account`'s chain.
    #[inline]
    pub(crate) fn unlink(&mut self, account: AccountId, slot: u32) {
        let Link { older, newer } = self.links[slot as usize];
        if older != NIL {
            self.links[older as usize].newer = newer;
        }
        if newer != NIL {
            self.links[newer as usize].older = older;
        } else {
            self.newest[account.0 as usize] = older;
        }
    }

    /// Hints the links of the order in `slot` (nothing for a slot past the table).
    #[inline]
    pub(crate) fn hint(&self, slot: u32) {
        if let Some(link) = self.links.get(slot as usize) {
            matchbook_prefetch::line(link as *const Link as usize);
        }
    }

    /// Hints the links of the neighbours of the order in `slot`: what ending it rewrites.
    #[inline]
    pub(crate) fn hint_neighbours(&self, slot: u32) {
        if let Some(link) = self.links.get(slot as usize) {
            self.hint(link.older);
            self.hint(link.newer);
        }
    }

    /// The newest live order of `account` (`NIL`: none).
    pub(crate) fn newest(&self, account: AccountId) -> u32 {
        self.newest.get(account.0 as usize).copied().unwrap_or(NIL)
    }

    /// The links of the order in `slot` (unlinked for a slot never chained).
    pub(crate) fn link_of(&self, slot: u32) -> Link {
        self.links.get(slot as usize).copied().unwrap_or(UNLINKED)
    }

    /// Slots of `account`'s live orders, newest first.
    pub(crate) fn slots(&self, account: AccountId) -> impl Iterator<Item = u32> + '_ {
        let newest = self.newest(account);
        std::iter::successors((newest != NIL).then_some(newest), |&slot| {
            let older = self.links[slot as usize].older;
            (older != NIL).then_some(older)
        })
    }

    /// Newest order per account, for the integrity check.
    pub(crate) fn heads(&self) -> &[u32] {
        &self.newest
    }

    /// Room for links up to `slots` slots, written now (as the order store's reserve is),
    /// so chaining an order never grows the table while commands are timed.
    pub(crate) fn reserve(&mut self, slots: usize) {
        if self.links.len() < slots {
            self.links.resize(slots, UNLINKED);
        }
    }

    /// Restores saved links: `links` by slot, for `accounts` accounts. The newest order of
    /// each account is the one with no newer link; an account with two, or an unknown
    /// account, is refused.
    pub(crate) fn restore(
        &mut self,
        accounts: usize,
        links: impl Iterator<Item = (u32, AccountId, Link)>,
    ) -> Result<(), &'static str> {
        self.newest = vec![NIL; accounts];
        self.links.clear();
        for (slot, account, link) in links {
            if self.links.len() <= slot as usize {
                self.links.resize(slot as usize + 1, UNLINKED);
            }
            self.links[slot as usize] = link;
            if link.newer == NIL {
                match self.newest.get_mut(account.0 as usize) {
                    Some(newest) if *newest == NIL => *newest = slot,
                    _ => return Err("an account has two newest orders or does not exist"),
                }
            }
        }
        Ok(())
    }

    /// Rebuilds every chain from the live orders, oldest first by order number (the order
    /// they were chained in): format 6 kept the links in the orders.
    pub(crate) fn rebuild<'a>(&mut self, orders: impl Iterator<Item = (usize, &'a Order)>) {
        let mut by_number: Vec<(u64, AccountId, u32)> = orders
            .map(|(slot, o)| (o.id, o.account, slot as u32))
            .collect();
        by_number.sort_unstable();
        self.newest.iter_mut().for_each(|n| *n = NIL);
        self.links.clear();
        for (_, account, slot) in by_number {
            self.link(account, slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Under any mix of chaining and ending orders, each account's chain lists its live
        /// orders newest first, as a list per account kept in chaining order does.
        #[test]
        fn chains_list_each_accounts_orders_newest_first(
            ops in proptest::collection::vec((any::<bool>(), 0u32..4, 0usize..64), 1..300)
        ) {
            let mut chains = AccountChains::default();
            let mut model: Vec<Vec<u32>> = vec![Vec::new(); 4];
            let mut free: Vec<u32> = (0..64).rev().collect();
            for (chain, account, pick) in ops {
                let live: Vec<(u32, u32)> = (0..4u32)
                    .flat_map(|a| model[a as usize].iter().map(move |&s| (a, s)))
                    .collect();
                if chain || live.is_empty() {
                    let Some(slot) = free.pop() else { continue };
                    chains.link(AccountId(account), slot);
                    model[account as usize].push(slot);
                } else {
                    let (a, slot) = live[pick % live.len()];
                    chains.unlink(AccountId(a), slot);
                    model[a as usize].retain(|&s| s != slot);
                    free.push(slot);
                }
                for a in 0..4u32 {
                    let got: Vec<u32> = chains.slots(AccountId(a)).collect();
                    let want: Vec<u32> = model[a as usize].iter().rev().copied().collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }
}
