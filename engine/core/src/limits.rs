//! The engine's fixed bounds, chosen so that no balance, position, level total or time
//! computed from accepted input can leave its integer type.
//!
//! - Balances: one account's holding of one currency (available + locked) never exceeds
//!   [`MAX_BALANCE`], half of `i64::MAX`, so the sum of any two balance quantities fits.
//!   Deposits and transfers that would pass it are refused. A fill, funding payment or
//!   realised PnL cannot be refused halfway through a match, so such a credit is computed
//!   in `i128` and anything past the cap goes to the exchange's fee account in that currency
//!   (units stay conserved; reaching it takes a balance of billions of units of a currency).
//!   Every fill value a credit comes from is itself bounded: it was reserved from a balance.
//! - Orders: an amount above [`MAX_ORDER_LOTS`] is refused, prices are bounded by each
//!   instrument's `max_price`, itself at most [`MAX_PRICE`]; notional values are computed
//!   in `i128`.
//! - Time: no command may carry a time past [`TIME_HORIZON`]; time-driven work (funding
//!   settlements) is bounded per command by [`MAX_SETTLEMENTS_PER_COMMAND`].

use crate::ids::Timestamp;

/// Most balance units of one currency one account may hold, available and locked together
/// (4 x 10^18: forty billion units of an 8-decimal currency).
pub const MAX_BALANCE: i64 = 4_000_000_000_000_000_000;

/// Largest order amount, in lots of the instrument (10^15: ten billion BTC at 5 decimals).
pub const MAX_ORDER_LOTS: i64 = 1_000_000_000_000_000;

/// Largest price an instrument's range may reach, in its scaled units (10^18): a tenth of
/// `i64::MAX`, so a price plus a trailing offset, a book's price keys and the window its
/// ladder puts around them all stay inside `i64`, and no price equals the ladder's
/// "no level" key (`i64::MAX`, which an ask at that price was taken for).
pub const MAX_PRICE: i64 = 1_000_000_000_000_000_000;

/// Latest time a command may carry: 2100-01-01T00:00:00Z, a century and more inside the
/// range of nanosecond timestamps, so every period boundary computed from it still fits,
/// and before the latest time restored market data may hold.
pub const TIME_HORIZON: Timestamp = Timestamp(4_102_444_800 * 1_000_000_000);

/// Funding settlements one command may run per market. A clock that jumps further (an
/// operator's advance, a restart after a long stop) settles this many periods and skips
/// the rest unpaid: periods in which no command arrived saw no trading to fund.
pub const MAX_SETTLEMENTS_PER_COMMAND: u32 = 64;

/// An `i128` amount of balance units brought into `-MAX_BALANCE..=MAX_BALANCE`, so that a
/// value can never wrap on its way into an `i64`.
pub(crate) fn clamp_units(value: i128) -> i64 {
    value.clamp(-i128::from(MAX_BALANCE), i128::from(MAX_BALANCE)) as i64
}
