//! The stable binary encoding of commands in journal records: a one-byte tag per command
//! kind, then its fields in a fixed order, integers little-endian, options as a presence
//! byte, lists and names length-prefixed. Tags and field orders never change once
//! written; a new command kind takes a new tag, a new field a new record version.

use matchbook_core::InstrumentState;
use matchbook_core::account::AccountKind;
use matchbook_core::fixed::{Price, Qty};
use matchbook_core::{AccountId, InstrumentId, OrderRef, Timestamp, Uuid};
use matchbook_core::{
    BracketExits, NewOrder, OrderType, Side, StpMode, TimeInForce, Trail, TriggerRef,
};
use matchbook_core::{CancelScope, Command};

mod operations;

use operations::{decode_operation, encode_operation};

/// Why a record's payload could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The payload ended inside a field.
    #[error("payload truncated")]
    Truncated,
    /// An unknown tag or enum value.
    #[error("unknown value {0} at payload byte {1}")]
    Unknown(u8, usize),
    /// Bytes left over after the command.
    #[error("trailing bytes")]
    Trailing,
    /// A name that is not UTF-8.
    #[error("name is not UTF-8")]
    BadText,
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.i64(v);
            }
            None => self.u8(0),
        }
    }
    fn opt_u128(&mut self, v: Option<u128>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.u128(v);
            }
            None => self.u8(0),
        }
    }
    fn order_ref(&mut self, o: OrderRef) {
        self.u64(o.id);
        self.u32(o.slot);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let end = self.at.checked_add(N).ok_or(DecodeError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(DecodeError::Truncated)?;
        self.at = end;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.take()?))
    }
    fn u128(&mut self) -> Result<u128, DecodeError> {
        Ok(u128::from_le_bytes(self.take()?))
    }
    fn flag(&mut self) -> Result<bool, DecodeError> {
        let at = self.at;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(DecodeError::Unknown(v, at)),
        }
    }
    fn opt_i64(&mut self) -> Result<Option<i64>, DecodeError> {
        Ok(if self.flag()? {
            Some(self.i64()?)
        } else {
            None
        })
    }
    fn opt_u128(&mut self) -> Result<Option<u128>, DecodeError> {
        Ok(if self.flag()? {
            Some(self.u128()?)
        } else {
            None
        })
    }
    fn order_ref(&mut self) -> Result<OrderRef, DecodeError> {
        Ok(OrderRef {
            id: self.u64()?,
            slot: self.u32()?,
        })
    }
    /// One of `values`, by index.
    fn pick<T: Copy>(&mut self, values: &[T]) -> Result<T, DecodeError> {
        let at = self.at;
        let v = self.u8()?;
        values
            .get(usize::from(v))
            .copied()
            .ok_or(DecodeError::Unknown(v, at))
    }
}

const SIDES: [Side; 2] = [Side::Buy, Side::Sell];
const TYPES: [OrderType; 8] = OrderType::ALL;
const REFERENCES: [TriggerRef; 2] = [TriggerRef::LastPrice, TriggerRef::MarkPrice];
const TIFS: [TimeInForce; 5] = [
    TimeInForce::GoodTillCancelled,
    TimeInForce::ImmediateOrCancelled,
    TimeInForce::FillOrKill,
    TimeInForce::PostOnly,
    TimeInForce::GoodTillTime,
];
const STPS: [StpMode; 4] = [
    StpMode::None,
    StpMode::CancelNewest,
    StpMode::CancelOldest,
    StpMode::CancelBoth,
];
const KINDS: [AccountKind; 3] = [
    AccountKind::Regular,
    AccountKind::InstantTrade,
    AccountKind::Blp,
];
const STATES: [InstrumentState; 4] = [
    InstrumentState::Active,
    InstrumentState::PostOnly,
    InstrumentState::Suspended,
    InstrumentState::Closed,
];

fn index_of<T: PartialEq>(values: &[T], v: &T) -> u8 {
    values.iter().position(|x| x == v).unwrap_or(0) as u8
}

/// The fields of an order entry that every format has.
fn write_order(w: &mut Writer<'_>, o: &NewOrder) {
    w.u32(o.account.0);
    w.u16(o.instrument.0);
    w.u8(index_of(&SIDES, &o.side));
    w.u8(index_of(&TYPES, &o.order_type));
    w.u8(index_of(&TIFS, &o.time_in_force));
    w.opt_i64(o.price.map(|p| p.0));
    w.opt_i64(o.trigger_price.map(|p| p.0));
    w.i64(o.amount.0);
    w.opt_i64(o.expire_at.map(|t| t.0));
    w.opt_u128(o.client_id.map(|c| c.0));
    match o.stp {
        Some(mode) => {
            w.u8(1);
            w.u8(index_of(&STPS, &mode));
        }
        None => w.u8(0),
    }
    w.u8(u8::from(o.reduce_only));
}

/// Reads what [`write_order`] wrote; the trigger terms default.
fn read_order(r: &mut Reader<'_>) -> Result<NewOrder, DecodeError> {
    Ok(NewOrder {
        account: AccountId(r.u32()?),
        instrument: InstrumentId(r.u16()?),
        side: r.pick(&SIDES)?,
        order_type: r.pick(&TYPES)?,
        time_in_force: r.pick(&TIFS)?,
        price: r.opt_i64()?.map(Price),
        trigger_price: r.opt_i64()?.map(Price),
        trigger_ref: TriggerRef::LastPrice,
        trail: None,
        limit_offset: None,
        display: None,
        amount: Qty(r.i64()?),
        expire_at: r.opt_i64()?.map(Timestamp),
        client_id: r.opt_u128()?.map(Uuid),
        stp: if r.flag()? {
            Some(r.pick(&STPS)?)
        } else {
            None
        },
        reduce_only: r.flag()?,
    })
}

/// Whether an order needs tag 20's extensions.
fn is_extended(o: &NewOrder) -> bool {
    o.trigger_ref != TriggerRef::LastPrice
        || o.trail.is_some()
        || o.limit_offset.is_some()
        || o.display.is_some()
}

/// The extensions of tag 20: trigger reference, trail, limit offset, display.
fn write_extensions(w: &mut Writer<'_>, o: &NewOrder) {
    w.u8(index_of(&REFERENCES, &o.trigger_ref));
    match o.trail {
        None => w.u8(0),
        Some(Trail::Price(p)) => {
            w.u8(1);
            w.i64(p.0);
        }
        Some(Trail::Bps(bps)) => {
            w.u8(2);
            w.u32(bps);
        }
    }
    w.opt_i64(o.limit_offset.map(|p| p.0));
    w.opt_i64(o.display.map(|q| q.0));
}

/// An order with the extensions [`write_extensions`] wrote after it.
fn read_extended(r: &mut Reader<'_>) -> Result<NewOrder, DecodeError> {
    let mut o = read_order(r)?;
    o.trigger_ref = r.pick(&REFERENCES)?;
    let at = r.at;
    o.trail = match r.u8()? {
        0 => None,
        1 => Some(Trail::Price(Price(r.i64()?))),
        2 => Some(Trail::Bps(r.u32()?)),
        v => return Err(DecodeError::Unknown(v, at)),
    };
    o.limit_offset = r.opt_i64()?.map(Price);
    o.display = r.opt_i64()?.map(Qty);
    Ok(o)
}

/// Appends the encoding of `command` to `out`.
pub fn encode(command: &Command, out: &mut Vec<u8>) {
    let mut w = Writer(out);
    if !encode_order_command(&mut w, command) {
        encode_operation(&mut w, command);
    }
}

/// Writes an order command (placing, amending, cancelling); false for any other.
fn encode_order_command(w: &mut Writer<'_>, command: &Command) -> bool {
    match command {
        Command::PlaceOrder(o) => {
            // Tag 11 is the order as format 1 wrote it; tag 20 adds the trigger terms and an
            // iceberg's display, so journals of plain orders keep their bytes.
            let extended = is_extended(o);
            w.u8(if extended { 20 } else { 11 });
            write_order(w, o);
            if extended {
                write_extensions(w, o);
            }
        }
        Command::PlaceOco { first, second } => {
            w.u8(21);
            for o in [first, second.as_ref()] {
                write_order(w, o);
                write_extensions(w, o);
            }
        }
        Command::PlaceBracket { entry, exits } => {
            w.u8(22);
            write_order(w, entry);
            write_extensions(w, entry);
            w.i64(exits.take_profit.0);
            w.i64(exits.stop_loss.0);
            w.opt_i64(exits.stop_limit.map(|p| p.0));
        }
        Command::AmendOrder {
            account,
            order,
            amount,
            price,
        } => {
            w.u8(12);
            w.u32(account.0);
            w.order_ref(*order);
            w.opt_i64(amount.map(|q| q.0));
            w.opt_i64(price.map(|p| p.0));
        }
        Command::CancelOrder { account, order } => {
            w.u8(13);
            w.u32(account.0);
            w.order_ref(*order);
        }
        Command::CancelByClientId { account, client_id } => {
            w.u8(14);
            w.u32(account.0);
            w.u128(client_id.0);
        }
        Command::CancelAll { account, scope } => {
            w.u8(15);
            w.u32(account.0);
            match scope {
                CancelScope::All => w.u8(0),
                CancelScope::Instrument(i) => {
                    w.u8(1);
                    w.u16(i.0);
                }
                CancelScope::Orders(list) => {
                    w.u8(2);
                    w.u32(list.len() as u32);
                    for &o in list {
                        w.order_ref(o);
                    }
                }
                CancelScope::ClientIds(list) => {
                    w.u8(3);
                    w.u32(list.len() as u32);
                    for c in list {
                        w.u128(c.0);
                    }
                }
            }
        }
        _ => return false,
    }
    true
}

/// Where a payload's tag is: its first byte.
const TAG_AT: usize = 0;

/// Decodes one command from a whole payload.
pub fn decode(bytes: &[u8]) -> Result<Command, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    let command = match r.u8()? {
        tag @ (11..=15 | 20..=22) => decode_order_command(tag, &mut r)?,
        tag => decode_operation(tag, &mut r)?,
    };
    if r.at != bytes.len() {
        return Err(DecodeError::Trailing);
    }
    Ok(command)
}

/// Reads the order command of `tag` (placing, amending, cancelling).
fn decode_order_command(tag: u8, r: &mut Reader<'_>) -> Result<Command, DecodeError> {
    let bytes = r.bytes;
    Ok(match tag {
        11 => Command::PlaceOrder(read_order(r)?),
        20 => Command::PlaceOrder(read_extended(r)?),
        21 => Command::PlaceOco {
            first: read_extended(r)?,
            second: Box::new(read_extended(r)?),
        },
        22 => Command::PlaceBracket {
            entry: read_extended(r)?,
            exits: BracketExits {
                take_profit: Price(r.i64()?),
                stop_loss: Price(r.i64()?),
                stop_limit: r.opt_i64()?.map(Price),
            },
        },
        12 => Command::AmendOrder {
            account: AccountId(r.u32()?),
            order: r.order_ref()?,
            amount: r.opt_i64()?.map(Qty),
            price: r.opt_i64()?.map(Price),
        },
        13 => Command::CancelOrder {
            account: AccountId(r.u32()?),
            order: r.order_ref()?,
        },
        14 => Command::CancelByClientId {
            account: AccountId(r.u32()?),
            client_id: Uuid(r.u128()?),
        },
        15 => {
            let account = AccountId(r.u32()?);
            let at = r.at;
            let scope = match r.u8()? {
                0 => CancelScope::All,
                1 => CancelScope::Instrument(InstrumentId(r.u16()?)),
                2 => {
                    let n = r.u32()? as usize;
                    let mut list = Vec::with_capacity(n.min(bytes.len()));
                    for _ in 0..n {
                        list.push(r.order_ref()?);
                    }
                    CancelScope::Orders(list)
                }
                3 => {
                    let n = r.u32()? as usize;
                    let mut list = Vec::with_capacity(n.min(bytes.len()));
                    for _ in 0..n {
                        list.push(Uuid(r.u128()?));
                    }
                    CancelScope::ClientIds(list)
                }
                v => return Err(DecodeError::Unknown(v, at)),
            };
            Command::CancelAll { account, scope }
        }
        v => return Err(DecodeError::Unknown(v, TAG_AT)),
    })
}
