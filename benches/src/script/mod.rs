//! The workload file format (documented in `benches/README.md`): a header, then one command
//! per line, set-up commands first and the measured ones after a `measure` line. Every
//! engine the harness drives reads the same [`Script`], so a file names the same work for all
//! of them; anyone can write one from their own order flow.
//!
//! Order numbers are implicit: the k-th order line of the file (set-up and measured alike,
//! counting from 0) is order `#k`, which later cancel and move lines name; a line placing an
//! OCO pair numbers both legs, first then second. Order types beyond limit and market are
//! read by [`crate::script_terms`].

use std::fmt::{self, Write as _};

use crate::script_terms::{Kind, Terms};

/// First line of every workload file.
pub const MAGIC: &str = "matchbook-workload 1";

/// Side of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// A bid.
    Buy,
    /// An ask.
    Sell,
}

impl Side {
    /// The other side.
    pub fn opposite(self) -> Self {
        match self {
            Self::Buy => Self::Sell,
            Self::Sell => Self::Buy,
        }
    }
}

/// Time in force of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tif {
    /// Rests until cancelled.
    Gtc,
    /// Fills what it can at once, the rest is cancelled.
    Ioc,
    /// Fills completely at once or not at all.
    Fok,
    /// Refused if it would take liquidity.
    PostOnly,
}

/// What a cancel names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// An order by its number in the file.
    Order(u32),
    /// The account's open order with this client id.
    Client(u64),
}

/// One command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Credit `amount` units of a currency to an account: currency 0 is the quote currency
    /// every instrument shares, currency `1 + i` the base currency of instrument `i`.
    Deposit {
        /// Account (0-based).
        account: u32,
        /// Currency index.
        currency: u16,
        /// Units (lots for a base currency, ticks x lots for the quote).
        amount: i64,
    },
    /// A new order; it becomes order `#k` for the k-th order line.
    Place {
        /// Account (0-based).
        account: u32,
        /// Instrument (0-based).
        instrument: u16,
        /// Buy or sell.
        side: Side,
        /// Limit price in ticks; `None` for a market order.
        price: Option<i64>,
        /// Lots.
        amount: i64,
        /// Time in force.
        tif: Tif,
        /// Client order id, if any (unique among the account's open orders).
        client: Option<u64>,
    },
    /// Cancel an open order.
    Cancel {
        /// Account that owns the order.
        account: u32,
        /// The order.
        target: Target,
    },
    /// A new order of a type beyond limit and market, or with options (trigger, trail,
    /// display, bracket exits, an OCO leg): its terms are `Script::terms[terms]`.
    PlaceWith {
        /// Account (0-based).
        account: u32,
        /// Instrument (0-based).
        instrument: u16,
        /// Buy or sell.
        side: Side,
        /// Lots.
        amount: i64,
        /// Client order id, if any.
        client: Option<u64>,
        /// Index of its terms in [`Script::terms`].
        terms: u32,
        /// Whether it places an OCO pair (two order numbers).
        pair: bool,
    },
    /// Move an open order to a new price (an amend: it keeps its remaining amount, loses its
    /// time priority, and trades if the new price crosses).
    Move {
        /// Account that owns the order.
        account: u32,
        /// The order's number.
        order: u32,
        /// New limit price in ticks.
        price: i64,
    },
}

impl Op {
    /// How many order numbers the command takes: one per order it places.
    pub fn orders_placed(&self) -> u32 {
        match self {
            Op::Place { .. } => 1,
            Op::PlaceWith { pair, .. } => 1 + u32::from(*pair),
            _ => 0,
        }
    }
}

/// One line: a command and the time it is applied at (nanoseconds since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Line {
    /// Engine time of the command.
    pub time: i64,
    /// The command.
    pub op: Op,
}

/// Hands out order numbers as lines are applied in file order: a placing line's order is
/// numbered by the placing lines before it (what `#k` names), so engines need not count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrderCounter {
    next: u32,
}

impl OrderCounter {
    /// The number `line`'s order takes if it places one (the next number either way), and
    /// counts it.
    pub fn number(&mut self, line: &Line) -> u32 {
        let number = self.next;
        self.next += line.op.orders_placed();
        number
    }
}

/// A whole workload file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    /// Profile or source it came from (free text, one word).
    pub name: String,
    /// Instruments named by the commands (indices below this).
    pub instruments: u16,
    /// Accounts named by the commands (indices below this).
    pub accounts: u32,
    /// Commands that build the starting state (accounts funded, the initial book).
    pub setup: Vec<Line>,
    /// The commands measured.
    pub measured: Vec<Line>,
    /// Terms of the orders placed by `PlaceWith` lines.
    pub terms: Vec<Terms>,
}

/// Why a workload file was refused, with the 1-based line it was found on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("workload line {line}: {message}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl Script {
    /// Every line, set-up first.
    pub fn lines(&self) -> impl Iterator<Item = &Line> {
        self.setup.iter().chain(&self.measured)
    }

    /// Order lines in the set-up (the first measured order is number `setup_orders()`).
    pub fn setup_orders(&self) -> u32 {
        self.setup.iter().map(|l| l.op.orders_placed()).sum()
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(48 * (self.setup.len() + self.measured.len()) + 128);
        let _ = writeln!(out, "{MAGIC}");
        let _ = writeln!(out, "name {}", self.name);
        let _ = writeln!(out, "instruments {}", self.instruments);
        let _ = writeln!(out, "accounts {}", self.accounts);
        let _ = writeln!(out, "setup");
        for line in &self.setup {
            self.write_line(&mut out, line);
        }
        let _ = writeln!(out, "measure");
        for line in &self.measured {
            self.write_line(&mut out, line);
        }
        out
    }

    /// Whether any line places an order type beyond limit and market.
    pub fn has_extended_orders(&self) -> bool {
        !self.terms.is_empty()
    }

    fn write_line(&self, out: &mut String, line: &Line) {
        let Op::PlaceWith {
            account,
            instrument,
            side,
            amount,
            client,
            terms,
            ..
        } = line.op
        else {
            let _ = writeln!(out, "{line}");
            return;
        };
        let Some(t) = self.terms.get(terms as usize) else {
            return;
        };
        let side = side_letter(side);
        let price = t.price.map_or("-".to_owned(), |p| p.to_string());
        let client = client.map_or("-".to_owned(), |c| c.to_string());
        let _ = write!(
            out,
            "N {} {account} {instrument} {side} {} {} {price} {amount} {client}",
            line.time,
            t.kind.letters(),
            tif_word(t.tif),
        );
        let _ = t.write_options(out);
        out.push('\n');
    }

    /// Reads the text form, checking every field and every order reference.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut script = Script::default();
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let fail = |line: usize, message: String| ParseError { line, message };
        match lines.next() {
            Some((_, l)) if l == MAGIC => {}
            Some((n, l)) => return Err(fail(n, format!("expected `{MAGIC}`, found `{l}`"))),
            None => return Err(fail(1, "empty file".into())),
        }
        let mut section: Option<bool> = None;
        let mut orders = 0u32;
        for (n, l) in lines {
            let mut words = l.split(' ');
            let head = words.next().unwrap_or_default();
            let rest: Vec<&str> = words.collect();
            match (head, section, rest.as_slice()) {
                ("name", None, [name]) => script.name = (*name).to_owned(),
                ("instruments", None, [k]) => {
                    script.instruments = number(k).map_err(|m| fail(n, m))?;
                }
                ("accounts", None, [k]) => script.accounts = number(k).map_err(|m| fail(n, m))?,
                ("setup", None, []) => section = Some(false),
                ("measure", Some(false), []) => section = Some(true),
                (_, Some(measured), _) => {
                    let (mut line, terms) =
                        read_line(head, &rest, &script, orders).map_err(|m| fail(n, m))?;
                    if let (Some(terms), Op::PlaceWith { terms: index, .. }) = (terms, &mut line.op)
                    {
                        *index = script.terms.len() as u32;
                        script.terms.push(terms);
                    }
                    orders += line.op.orders_placed();
                    if measured {
                        script.measured.push(line);
                    } else {
                        script.setup.push(line);
                    }
                }
                _ => return Err(fail(n, format!("unexpected `{l}`"))),
            }
        }
        if section != Some(true) {
            return Err(fail(
                text.lines().count().max(1),
                "missing `setup` or `measure` section".into(),
            ));
        }
        Ok(script)
    }
}

fn number<T: std::str::FromStr>(word: &str) -> Result<T, String> {
    // Plain decimal digits only (FromStr would also take a sign).
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(format!("`{word}` is not an integer"));
    }
    word.parse()
        .map_err(|_| format!("`{word}` is not an integer in range"))
}

fn positive(word: &str) -> Result<i64, String> {
    let v: i64 = number(word)?;
    if v <= 0 {
        return Err(format!("`{word}` must be positive"));
    }
    Ok(v)
}

fn order_number(word: &str, orders: u32) -> Result<u32, String> {
    let k: u32 = word
        .strip_prefix('#')
        .ok_or_else(|| format!("`{word}` is not an order number (#k)"))
        .and_then(number)?;
    if k >= orders {
        return Err(format!("order #{k} is not placed before this line"));
    }
    Ok(k)
}

/// An account number below the script's `accounts`.
fn account_of(word: &str, script: &Script) -> Result<u32, String> {
    let a: u32 = number(word)?;
    if a >= script.accounts {
        return Err(format!(
            "account {a} is not below `accounts {}`",
            script.accounts
        ));
    }
    Ok(a)
}

/// The order of an `N` line (account, instrument, side, kind, time in force, price,
/// amount, client; then its options), with its terms when it has more than the plain
/// fields.
fn read_new_order(
    [a, i, side, kind, tif, price, amount, client]: [&str; 8],
    options: &[&str],
    script: &Script,
) -> Result<(Op, Option<Terms>), String> {
    let instrument: u16 = number(i)?;
    if instrument >= script.instruments {
        return Err(format!(
            "instrument {instrument} is not below `instruments`"
        ));
    }
    let (account, side) = (account_of(a, script)?, side_of(side)?);
    let (kind, tif) = (Kind::parse(kind)?, tif_of(tif)?);
    let price = match (kind.priced(), price) {
        (true, p) => Some(positive(p)?),
        (false, "-") => None,
        (false, p) => {
            return Err(format!(
                "a {} order with price `{p}`; write -",
                kind.letters()
            ));
        }
    };
    if kind == Kind::Market && matches!(tif, Tif::Gtc | Tif::PostOnly) {
        return Err("a market order is IOC or FOK".into());
    }
    let (amount, client) = (positive(amount)?, client_of(client)?);
    let terms = Terms::parse(kind, tif, price, options, tif_of)?;
    if terms.is_plain() {
        let op = Op::Place {
            account,
            instrument,
            side,
            price,
            amount,
            tif,
            client,
        };
        return Ok((op, None));
    }
    let op = Op::PlaceWith {
        account,
        instrument,
        side,
        amount,
        client,
        terms: 0,
        pair: terms.oco.is_some(),
    };
    Ok((op, Some(terms)))
}

/// Reads one command line; an order with terms beyond the plain fields comes with them.
fn read_line(
    head: &str,
    rest: &[&str],
    script: &Script,
    orders: u32,
) -> Result<(Line, Option<Terms>), String> {
    let account = |w: &str| account_of(w, script);
    let (time, fields) = match rest.split_first() {
        Some((t, fields)) => (number::<i64>(t)?, fields),
        None => return Err(format!("`{head}` without a time")),
    };
    let op = match (head, fields) {
        ("D", [a, c, amount]) => {
            let currency: u16 = number(c)?;
            if currency > script.instruments {
                return Err(format!("currency {currency} does not exist"));
            }
            Op::Deposit {
                account: account(a)?,
                currency,
                amount: positive(amount)?,
            }
        }
        ("N", [a, i, side, kind, tif, price, amount, client, options @ ..]) => {
            let fields = [*a, *i, *side, *kind, *tif, *price, *amount, *client];
            let (op, terms) = read_new_order(fields, options, script)?;
            return Ok((Line { time, op }, terms));
        }
        ("C", [a, target]) => {
            let target = match target.strip_prefix('c') {
                Some(client) => Target::Client(number(client)?),
                None => Target::Order(order_number(target, orders)?),
            };
            Op::Cancel {
                account: account(a)?,
                target,
            }
        }
        ("M", [a, order, price]) => Op::Move {
            account: account(a)?,
            order: order_number(order, orders)?,
            price: positive(price)?,
        },
        (other, _) => {
            return Err(format!(
                "`{other}` with {} fields is not a command (D, N, C, M)",
                fields.len()
            ));
        }
    };
    Ok((Line { time, op }, None))
}

fn side_of(word: &str) -> Result<Side, String> {
    match word {
        "B" => Ok(Side::Buy),
        "S" => Ok(Side::Sell),
        other => Err(format!("side `{other}` is not B or S")),
    }
}

/// Reads a time in force.
pub(crate) fn tif_of(word: &str) -> Result<Tif, String> {
    match word {
        "GTC" => Ok(Tif::Gtc),
        "IOC" => Ok(Tif::Ioc),
        "FOK" => Ok(Tif::Fok),
        "PO" => Ok(Tif::PostOnly),
        other => Err(format!(
            "time in force `{other}` is not GTC, IOC, FOK or PO"
        )),
    }
}

/// The letters of a time in force.
pub(crate) fn tif_word(tif: Tif) -> &'static str {
    match tif {
        Tif::Gtc => "GTC",
        Tif::Ioc => "IOC",
        Tif::Fok => "FOK",
        Tif::PostOnly => "PO",
    }
}

fn side_letter(side: Side) -> &'static str {
    match side {
        Side::Buy => "B",
        Side::Sell => "S",
    }
}

fn client_of(word: &str) -> Result<Option<u64>, String> {
    match word {
        "-" => Ok(None),
        c => number(c).map(Some),
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.time;
        match self.op {
            Op::Deposit {
                account,
                currency,
                amount,
            } => write!(f, "D {t} {account} {currency} {amount}"),
            Op::Place {
                account,
                instrument,
                side,
                price,
                amount,
                tif,
                client,
            } => {
                let (side, tif) = (side_letter(side), tif_word(tif));
                write!(f, "N {t} {account} {instrument} {side} ")?;
                match price {
                    Some(p) => write!(f, "L {tif} {p} {amount} ")?,
                    None => write!(f, "M {tif} - {amount} ")?,
                }
                match client {
                    Some(c) => write!(f, "{c}"),
                    None => write!(f, "-"),
                }
            }
            // Its type and options are in the script's table: `Script::to_text` writes it
            // whole; alone, it names them.
            Op::PlaceWith {
                account,
                instrument,
                side,
                amount,
                terms,
                ..
            } => {
                let side = side_letter(side);
                write!(
                    f,
                    "N {t} {account} {instrument} {side} (terms #{terms}) {amount}"
                )
            }
            Op::Cancel {
                account,
                target: Target::Order(k),
            } => write!(f, "C {t} {account} #{k}"),
            Op::Cancel {
                account,
                target: Target::Client(c),
            } => write!(f, "C {t} {account} c{c}"),
            Op::Move {
                account,
                order,
                price,
            } => write!(f, "M {t} {account} #{order} {price}"),
        }
    }
}

#[cfg(test)]
mod tests;
