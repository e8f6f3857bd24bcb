//! Look-ahead: where the records a command will read first lie, so that a host holding the
//! next command can have the CPU fetch them while the current one runs.
//!
//! On a book larger than the caches, the order a move or cancel names, its reservation,
//! its account's balances and its holder's record are misses the matching thread waits for
//! one after another, since a command is too long for the processor to reach the next
//! one's loads by itself. The core only computes addresses: plain numbers, nothing is read
//! through them but the account's dense entry, and a wrong one costs a wasted fetch, never
//! a wrong result. The hint itself is `matchbook-prefetch`'s
//! (one instruction the core's `forbid(unsafe_code)` rules out here).

use super::Engine;
use crate::command::Command;
use crate::fixed::Price;
use crate::ids::{AccountId, OrderRef};
use crate::order::Side;

/// Addresses of the cache lines a command reads first; 0 where there is none. A plain
/// record rather than a list: built and read on every command of a host that looks
/// ahead, a fixed-capacity vector (`arrayvec`, tried first) cost 60 instructions a
/// command where this costs about 15.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lookahead {
    /// The first line of the order's record (what matching, amending and cancelling read).
    pub order: usize,
    /// Its second line, where the reservation is (with balances only).
    pub reservation: usize,
    /// The account's balances, the first and the last line they span (with balances
    /// only; the two held inline take 72 bytes, so two lines).
    pub balances: [usize; 2],
    /// The account's holder record, where its open orders are counted (entering or
    /// ending an order changes it): with many accounts a miss of its own, found through
    /// the account's dense entry.
    pub holder: usize,
}

impl Lookahead {
    /// Every address named (0 where there is none).
    pub fn addresses(&self) -> [usize; 5] {
        [
            self.order,
            self.reservation,
            self.balances[0],
            self.balances[1],
            self.holder,
        ]
    }

    /// Asks the CPU for every line named.
    #[inline]
    pub fn hint(&self) {
        for address in self.addresses() {
            hint_at(address);
        }
    }
}

/// Asks the CPU for the line at `address`; nothing for 0 (none known), since a hint at
/// address 0 may still cost a page walk.
#[inline]
fn hint_at(address: usize) {
    if address != 0 {
        matchbook_prefetch::line(address);
    }
}

/// Live orders and accounts together (weighted) from which hints pay. Below it their
/// records (a few hundred bytes each) stay in the private caches, and the hints were pure
/// cost: their addresses and prefetches took some 110 instructions a command on
/// exchange-core's book of 1,000 orders and 2,000 accounts, book only.
pub(crate) const HINT_FROM: usize = 8_192;

/// How many orders an account weighs with balances on: each command then also reads its
/// account's balances and holder, and a fill the fee windows. Calibrated by alternating
/// rounds on a quiet host, with balances: hints off were 4-6 % faster on exchange-core
/// and price-jumps (1,000 orders, 2,000 accounts), on cancel-heavy (5,000 orders) even to
/// 4 % slower; two puts the line between them.
pub(crate) const ACCOUNT_WEIGHT_WITH_BALANCES: usize = 2;

/// Whether hints pay for an engine holding `orders` live orders and `accounts` accounts,
/// with balances enforced or not.
#[inline]
pub(crate) fn hints_pay(orders: usize, accounts: usize, balances: bool) -> bool {
    let weight = if balances {
        ACCOUNT_WEIGHT_WITH_BALANCES
    } else {
        1
    };
    orders + accounts * weight >= HINT_FROM
}

impl Engine {
    /// Addresses of what `command` will read first: the order it names (with balances,
    /// also the record's second line, where its reservation is, and its account's
    /// balances), or for a new order the record it will take and its account's balances;
    /// in both cases the account's holder record, where open orders are counted.
    /// Meant for a host that applies commands in a row: hinting the next command's lines
    /// before applying the current one overlaps their misses with the current command's
    /// work. Reads no record but the account's dense entry (to find its holder): only the
    /// command, where the stores lie and their sizes.
    pub fn lookahead(&self, command: &Command) -> Lookahead {
        match command {
            Command::AmendOrder { account, order, .. }
            | Command::CancelOrder { account, order } => self.lookahead_order(*account, *order),
            Command::PlaceOrder(order) => self.lookahead_new_order(order.account),
            _ => Lookahead::default(),
        }
    }

    /// Hints the lines `command` will read first ([`Engine::lookahead`], then
    /// [`Lookahead::hint`]) when hints pay ([`Engine::hints_pay`]): called with the next
    /// command before applying the current one.
    #[inline]
    pub fn hint_ahead(&self, command: &Command) {
        if self.hinting {
            self.lookahead(command).hint();
        }
    }

    /// Whether asking the CPU ahead for the lines a command will read pays at this
    /// engine's size (live orders and accounts, as of the last command applied): on a
    /// book and an account base that fit the private caches the hints only cost. The
    /// engine's own hints follow it; a host that looks ahead ([`Engine::lookahead`]) asks
    /// it first.
    #[inline]
    pub fn hints_pay(&self) -> bool {
        self.hinting
    }

    /// [`Engine::lookahead`] of a new order of `account`: the record it will take (and its
    /// account's balances), for a host that has not built the command yet.
    #[inline]
    pub fn lookahead_new_order(&self, account: AccountId) -> Lookahead {
        Lookahead {
            reservation: 0,
            ..self.lines(self.orders.vacant_key(), account)
        }
    }

    /// [`Engine::lookahead`] of an amend or a cancel of `order` by `account`, for a host
    /// that has not built the command yet.
    #[inline]
    pub fn lookahead_order(&self, account: AccountId, order: OrderRef) -> Lookahead {
        self.lines(order.slot as usize, account)
    }

    /// Hints the first line of the order record in `slot` (nothing for `NIL` or a slot past
    /// the store): for the matching loop, the maker after the one it fills.
    #[inline]
    pub(super) fn hint_record(&self, slot: u32) {
        if !self.hinting {
            return;
        }
        hint_at(self.orders.record_address(slot as usize));
    }

    /// Hints what an order joining book `b`'s level of `side` at `price` will write: the
    /// level's record and its last order's (as the ladder noted them), and the record of
    /// `leaving`, a level it leaves first (`NIL`: none). Each is a miss on a deep book or
    /// many books, and the level's would otherwise be waited for before its last order's.
    #[inline(always)]
    pub(super) fn hint_join(&self, b: usize, side: Side, price: Price, leaving: u32) {
        if !self.hinting {
            return;
        }
        let book = &self.books[b];
        let (level, tail) = book.join_hint(side, price);
        hint_at(book.level_address(level));
        hint_at(book.level_address(leaving));
        hint_at(self.orders.record_address(tail as usize));
    }

    #[inline]
    fn lines(&self, slot: usize, account: AccountId) -> Lookahead {
        let order = self.orders.record_address(slot);
        let holder = self.holder_address(account);
        if !self.enforce_balances {
            return Lookahead {
                order,
                holder,
                ..Lookahead::default()
            };
        }
        Lookahead {
            order,
            reservation: if order == 0 { 0 } else { order + 64 },
            balances: self.balances_address(account),
            holder,
        }
    }

    /// Address of `account`'s holder record (0 for an unknown account). Reads the
    /// account's dense entry (8 bytes an account, cached where the holders are not).
    #[inline]
    fn holder_address(&self, account: AccountId) -> usize {
        (self.accounts.core.get(account.0 as usize))
            .and_then(|core| self.accounts.holders.get(core.holder.0 as usize))
            .map_or(0, |record| record as *const _ as usize)
    }

    /// Addresses of the first and last byte of `account`'s balances (0 for an unknown
    /// account).
    #[inline]
    fn balances_address(&self, account: AccountId) -> [usize; 2] {
        self.accounts
            .accounts
            .get(account.0 as usize)
            .map_or([0; 2], |record| {
                let first = &record.balances as *const _ as usize;
                [first, first + std::mem::size_of_val(&record.balances) - 1]
            })
    }
}

#[cfg(test)]
mod tests;
