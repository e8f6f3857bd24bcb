//! The encoding of the commands that are not an order's: holders, accounts, funds,
//! instrument states, index prices, liquidations, dead-man switches, the passing of time.

use matchbook_core::Command;
use matchbook_core::{AccountId, CurrencyId, HolderId, InstrumentId, Price};

use super::{DecodeError, KINDS, Reader, STATES, STPS, TAG_AT, Writer, index_of};

/// Writes a command that is not an order's ([`encode_order_command`] writes those).
pub(super) fn encode_operation(w: &mut Writer<'_>, command: &Command) {
    match command {
        Command::CreateHolder => w.u8(1),
        Command::CreateSubaccount { holder, name, kind } => {
            w.u8(2);
            w.u32(holder.0);
            w.u8(index_of(&KINDS, kind));
            write_name(w, name);
        }
        Command::CloseSubaccount { account } => {
            w.u8(3);
            w.u32(account.0);
        }
        Command::Deposit {
            account: a,
            currency: c,
            amount,
        } => write_funds(w, 4, *a, *c, *amount),
        Command::Withdraw {
            account: a,
            currency: c,
            amount,
        } => write_funds(w, 5, *a, *c, *amount),
        Command::SetBlpThreshold {
            account: a,
            currency: c,
            amount,
        } => write_funds(w, 7, *a, *c, *amount),
        Command::SetDerisk { account, on } => {
            w.u8(6);
            w.u32(account.0);
            w.u8(u8::from(*on));
        }
        Command::Transfer {
            holder,
            source,
            destination,
            currency,
            amount,
        } => {
            w.u8(8);
            w.u32(holder.0);
            w.u32(source.0);
            w.u32(destination.0);
            w.u16(currency.0);
            w.i64(*amount);
        }
        Command::SetStpMode { account, mode } => {
            w.u8(9);
            w.u32(account.0);
            w.u8(index_of(&STPS, mode));
        }
        Command::SetInstrumentState { instrument, state } => {
            w.u8(10);
            w.u16(instrument.0);
            w.u8(index_of(&STATES, state));
        }
        Command::SetIndexPrice { instrument, price } => {
            w.u8(16);
            w.u16(instrument.0);
            w.i64(price.0);
        }
        Command::Liquidate { account } => {
            w.u8(17);
            w.u32(account.0);
        }
        Command::AdvanceTime => w.u8(18),
        Command::SetCancelAllAfter { account, timeout } => {
            w.u8(19);
            w.u32(account.0);
            w.u64(*timeout);
        }
        Command::PlaceOrder(_)
        | Command::PlaceOco { .. }
        | Command::PlaceBracket { .. }
        | Command::AmendOrder { .. }
        | Command::CancelOrder { .. }
        | Command::CancelByClientId { .. }
        | Command::CancelAll { .. } => {}
    }
}

/// Writes a name as its length (u16) and its bytes, cut at 65,535 bytes.
fn write_name(w: &mut Writer<'_>, name: &str) {
    let bytes = name.as_bytes();
    w.u16(u16::try_from(bytes.len()).unwrap_or(u16::MAX));
    w.0.extend_from_slice(&bytes[..bytes.len().min(usize::from(u16::MAX))]);
}

/// Writes a command on an amount of one currency of one account (deposit, withdrawal,
/// block-liquidation threshold) under `tag`.
fn write_funds(w: &mut Writer<'_>, tag: u8, account: AccountId, currency: CurrencyId, amount: i64) {
    w.u8(tag);
    w.u32(account.0);
    w.u16(currency.0);
    w.i64(amount);
}

/// Reads the command of `tag` that is not an order's.
pub(super) fn decode_operation(tag: u8, r: &mut Reader<'_>) -> Result<Command, DecodeError> {
    let bytes = r.bytes;
    Ok(match tag {
        1 => Command::CreateHolder,
        2 => {
            let holder = HolderId(r.u32()?);
            let kind = r.pick(&KINDS)?;
            let len = usize::from(r.u16()?);
            let end = r.at.checked_add(len).ok_or(DecodeError::Truncated)?;
            let name = bytes.get(r.at..end).ok_or(DecodeError::Truncated)?;
            r.at = end;
            let name = String::from_utf8(name.to_vec()).map_err(|_| DecodeError::BadText)?;
            Command::CreateSubaccount { holder, name, kind }
        }
        3 => Command::CloseSubaccount {
            account: AccountId(r.u32()?),
        },
        tag @ (4 | 5 | 7) => {
            let (account, currency, amount) = (AccountId(r.u32()?), CurrencyId(r.u16()?), r.i64()?);
            match tag {
                4 => Command::Deposit {
                    account,
                    currency,
                    amount,
                },
                5 => Command::Withdraw {
                    account,
                    currency,
                    amount,
                },
                _ => Command::SetBlpThreshold {
                    account,
                    currency,
                    amount,
                },
            }
        }
        6 => Command::SetDerisk {
            account: AccountId(r.u32()?),
            on: r.flag()?,
        },
        8 => Command::Transfer {
            holder: HolderId(r.u32()?),
            source: AccountId(r.u32()?),
            destination: AccountId(r.u32()?),
            currency: CurrencyId(r.u16()?),
            amount: r.i64()?,
        },
        9 => Command::SetStpMode {
            account: AccountId(r.u32()?),
            mode: r.pick(&STPS)?,
        },
        10 => Command::SetInstrumentState {
            instrument: InstrumentId(r.u16()?),
            state: r.pick(&STATES)?,
        },
        16 => Command::SetIndexPrice {
            instrument: InstrumentId(r.u16()?),
            price: Price(r.i64()?),
        },
        17 => Command::Liquidate {
            account: AccountId(r.u32()?),
        },
        18 => Command::AdvanceTime,
        19 => Command::SetCancelAllAfter {
            account: AccountId(r.u32()?),
            timeout: r.u64()?,
        },
        v => return Err(DecodeError::Unknown(v, TAG_AT)),
    })
}
