//! The workload file format (documented in `benches/README.md`): a header, then one command
//! per line, set-up commands first and the measured ones after a `measure` line. Every
//! engine the harness drives reads the same [`Script`], so a file names the same work for all
//! of them; anyone can write one from their own order flow.
//!
//! Order numbers are implicit: the k-th order line of the file (set-up and measured alike,
//! counting from 0) is order `#k`, which later cancel and move lines name.

use std::fmt::{self, Write as _};

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
        self.next += u32::from(matches!(line.op, Op::Place { .. }));
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
        self.setup
            .iter()
            .filter(|l| matches!(l.op, Op::Place { .. }))
            .count() as u32
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
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out, "measure");
        for line in &self.measured {
            let _ = writeln!(out, "{line}");
        }
        out
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
                    let line = read_line(head, &rest, &script, orders).map_err(|m| fail(n, m))?;
                    if matches!(line.op, Op::Place { .. }) {
                        orders += 1;
                    }
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

fn read_line(head: &str, rest: &[&str], script: &Script, orders: u32) -> Result<Line, String> {
    let account = |w: &str| -> Result<u32, String> {
        let a: u32 = number(w)?;
        if a >= script.accounts {
            return Err(format!(
                "account {a} is not below `accounts {}`",
                script.accounts
            ));
        }
        Ok(a)
    };
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
        ("N", [a, i, side, kind, tif, price, amount, client]) => {
            let instrument: u16 = number(i)?;
            if instrument >= script.instruments {
                return Err(format!(
                    "instrument {instrument} is not below `instruments`"
                ));
            }
            let side = match *side {
                "B" => Side::Buy,
                "S" => Side::Sell,
                other => return Err(format!("side `{other}` is not B or S")),
            };
            let price = match (*kind, *price) {
                ("L", p) => Some(positive(p)?),
                ("M", "-") => None,
                ("M", p) => return Err(format!("market order with price `{p}`; write -")),
                (other, _) => return Err(format!("order type `{other}` is not L or M")),
            };
            let tif = match *tif {
                "GTC" => Tif::Gtc,
                "IOC" => Tif::Ioc,
                "FOK" => Tif::Fok,
                "PO" => Tif::PostOnly,
                other => {
                    return Err(format!(
                        "time in force `{other}` is not GTC, IOC, FOK or PO"
                    ));
                }
            };
            if price.is_none() && matches!(tif, Tif::Gtc | Tif::PostOnly) {
                return Err("a market order is IOC or FOK".into());
            }
            let client = match *client {
                "-" => None,
                c => Some(number(c)?),
            };
            Op::Place {
                account: account(a)?,
                instrument,
                side,
                price,
                amount: positive(amount)?,
                tif,
                client,
            }
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
    Ok(Line { time, op })
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
                let side = match side {
                    Side::Buy => "B",
                    Side::Sell => "S",
                };
                let tif = match tif {
                    Tif::Gtc => "GTC",
                    Tif::Ioc => "IOC",
                    Tif::Fok => "FOK",
                    Tif::PostOnly => "PO",
                };
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
mod tests {
    use super::*;

    fn sample() -> Script {
        let place = |account, side, price, tif, client| Op::Place {
            account,
            instrument: 0,
            side,
            price,
            amount: 5,
            tif,
            client,
        };
        Script {
            name: "sample".into(),
            instruments: 1,
            accounts: 2,
            setup: vec![
                Line {
                    time: 1,
                    op: Op::Deposit {
                        account: 0,
                        currency: 1,
                        amount: 100,
                    },
                },
                Line {
                    time: 2,
                    op: place(0, Side::Sell, Some(101), Tif::Gtc, Some(7)),
                },
            ],
            measured: vec![
                Line {
                    time: 3,
                    op: place(1, Side::Buy, None, Tif::Ioc, None),
                },
                Line {
                    time: 4,
                    op: place(1, Side::Buy, Some(99), Tif::PostOnly, None),
                },
                Line {
                    time: 5,
                    op: Op::Move {
                        account: 1,
                        order: 2,
                        price: 98,
                    },
                },
                Line {
                    time: 6,
                    op: Op::Cancel {
                        account: 0,
                        target: Target::Client(7),
                    },
                },
                Line {
                    time: 7,
                    op: Op::Cancel {
                        account: 1,
                        target: Target::Order(2),
                    },
                },
            ],
        }
    }

    #[test]
    fn text_round_trips() {
        let script = sample();
        let text = script.to_text();
        assert_eq!(Script::parse(&text), Ok(script.clone()));
        assert_eq!(script.setup_orders(), 1);
    }

    #[test]
    fn bad_lines_are_refused_with_their_line_number() {
        let text = sample().to_text();
        let cases = [
            (
                "N 3 1 0 B M IOC - 5 -",
                "N 3 1 0 B M GTC - 5 -",
                "a market order",
            ),
            ("C 7 1 #2", "C 7 1 #9", "not placed"),
            ("C 7 1 #2", "C 7 5 #2", "account 5"),
            (
                "N 3 1 0 B M IOC - 5 -",
                "N 3 1 3 B M IOC - 5 -",
                "instrument 3",
            ),
            ("M 5 1 #2 98", "M 5 1 #2 -98", "positive"),
            ("M 5 1 #2 98", "M 5 1 #2 9x", "integer"),
            ("D 1 0 1 100", "D 1 0 2 100", "currency 2"),
            ("N 3 1 0 B M IOC - 5 -", "N 3 1 0 X M IOC - 5 -", "side"),
            ("measure\n", "", "missing"),
        ];
        for (from, to, want) in cases {
            let bad = text.replacen(from, to, 1);
            let err = Script::parse(&bad).expect_err(to);
            assert!(err.message.contains(want), "{to}: {err}");
        }
        let err = Script::parse("matchbook-workload 1\nsetup\nX 1\n").expect_err("X");
        assert_eq!(err.line, 3);
    }
}
