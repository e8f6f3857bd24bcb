//! One account's balances, kept compact: an entry for each currency the account has held,
//! sorted by currency, inline for the first two. A dense array per account (one entry per
//! listed currency) put 20,000 accounts x 210 currencies x 24 bytes, 100 MB, behind every
//! settlement, so the balance a fill touched was always a cold line and a fresh page; an
//! account of a spot book holds two currencies, and those now sit in its own record.
//!
//! A currency without an entry has the default balance (zero, never changed). Whether an
//! entry exists is not state: equality, the state hash and images see the dense view, so an
//! entry created by a zero change and one never created are the same balance.

use smallvec::SmallVec;

use super::Balance;
use crate::ids::CurrencyId;

/// One held currency's balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    currency: CurrencyId,
    balance: Balance,
}

/// An account's balances by currency; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Balances {
    held: SmallVec<[Held; 2]>,
}

impl Balances {
    /// The balance of `currency` (the default balance if the account never held it).
    #[inline]
    pub fn get(&self, currency: CurrencyId) -> Balance {
        match self.position(currency) {
            Ok(i) => self.held[i].balance,
            Err(_) => Balance::default(),
        }
    }

    /// The balance of `currency`, given an entry if it has none yet (which allocates only
    /// when the account holds a third currency, and after that only at a new peak).
    #[inline]
    pub fn get_mut(&mut self, currency: CurrencyId) -> &mut Balance {
        let i = match self.position(currency) {
            Ok(i) => i,
            Err(i) => {
                let balance = Balance::default();
                self.held.insert(i, Held { currency, balance });
                i
            }
        };
        &mut self.held[i].balance
    }

    /// The currencies with an entry and their balances, in currency order; currencies
    /// without one have the default balance.
    pub fn held(&self) -> impl Iterator<Item = (CurrencyId, Balance)> + '_ {
        self.held.iter().map(|h| (h.currency, h.balance))
    }

    /// The balances that differ from the default, in currency order: the state itself.
    pub fn nonzero(&self) -> impl Iterator<Item = (CurrencyId, Balance)> + '_ {
        self.held().filter(|(_, b)| *b != Balance::default())
    }

    /// The highest currency with an entry, if any (checked against the listed currencies).
    pub fn highest_currency(&self) -> Option<CurrencyId> {
        self.held.last().map(|h| h.currency)
    }

    /// One balance per currency `0..currencies`, the layout of images and of the views that
    /// list every currency.
    pub fn to_dense(&self, currencies: usize) -> Vec<Balance> {
        self.dense(currencies).collect()
    }

    /// One balance per currency `0..currencies`, in order, without allocating: the
    /// dense view hashed and checked.
    pub fn dense(&self, currencies: usize) -> impl Iterator<Item = Balance> + '_ {
        let mut held = self.held.iter().peekable();
        (0..currencies).map(move |c| match held.peek() {
            Some(h) if usize::from(h.currency.0) == c => {
                held.next().map_or_else(Balance::default, |h| h.balance)
            }
            _ => Balance::default(),
        })
    }

    /// Balances from one per currency, keeping entries only for those that differ from
    /// the default.
    pub fn from_dense(dense: &[Balance]) -> Self {
        let held = dense
            .iter()
            .enumerate()
            .filter(|(_, b)| **b != Balance::default())
            .map(|(c, b)| Held {
                currency: CurrencyId(c as u16),
                balance: *b,
            })
            .collect();
        Self { held }
    }

    fn position(&self, currency: CurrencyId) -> Result<usize, usize> {
        // Two entries for most accounts: a scan beats a halving search's branches there.
        if self.held.len() <= 4 {
            for (i, h) in self.held.iter().enumerate() {
                if h.currency.0 >= currency.0 {
                    return if h.currency == currency {
                        Ok(i)
                    } else {
                        Err(i)
                    };
                }
            }
            return Err(self.held.len());
        }
        self.held
            .binary_search_by_key(&currency.0, |h| h.currency.0)
    }
}

impl PartialEq for Balances {
    fn eq(&self, other: &Self) -> bool {
        self.nonzero().eq(other.nonzero())
    }
}

impl Eq for Balances {}

impl<'de> serde::Deserialize<'de> for Balances {
    /// Older snapshots kept one balance per currency.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let dense = Vec::<Balance>::deserialize(deserializer)?;
        Ok(Self::from_dense(&dense))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn balance(available: i64) -> Balance {
        Balance {
            available,
            ..Balance::default()
        }
    }

    proptest! {
        /// Against a dense array, the layout it replaces: any sequence of writes reads back
        /// the same everywhere, and the dense round trip keeps it.
        #[test]
        fn reads_what_a_dense_array_would(
            writes in proptest::collection::vec((0u16..12, -5i64..5), 0..40),
        ) {
            let mut dense = vec![Balance::default(); 12];
            let mut compact = Balances::default();
            for (c, v) in writes {
                dense[usize::from(c)] = balance(v);
                *compact.get_mut(CurrencyId(c)) = balance(v);
            }
            for (c, expected) in dense.iter().enumerate() {
                prop_assert_eq!(compact.get(CurrencyId(c as u16)), *expected);
            }
            prop_assert_eq!(compact.to_dense(12), dense.clone());
            prop_assert_eq!(Balances::from_dense(&dense), compact.clone());
            let currencies: Vec<u16> = compact.held().map(|(c, _)| c.0).collect();
            prop_assert!(currencies.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn an_entry_set_back_to_zero_equals_one_never_made() {
        let mut touched = Balances::default();
        *touched.get_mut(CurrencyId(3)) = balance(7);
        *touched.get_mut(CurrencyId(3)) = Balance::default();
        assert_eq!(touched, Balances::default());
        assert_ne!(touched.held().count(), 0);
    }

    #[test]
    fn two_currencies_stay_inline() {
        let mut b = Balances::default();
        *b.get_mut(CurrencyId(9)) = balance(1);
        *b.get_mut(CurrencyId(0)) = balance(2);
        assert!(!b.held.spilled());
        *b.get_mut(CurrencyId(4)) = balance(3);
        assert!(b.held.spilled());
        assert_eq!(b.get(CurrencyId(4)), balance(3));
    }
}
