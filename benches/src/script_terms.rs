//! The order types of a workload file beyond limit and market: triggers (stop-limit,
//! stop-market, take-profit limit and market, trailing stops), icebergs, brackets and
//! one-cancels-the-other pairs. An `N` line with another type, or with `key=value`
//! options after its client field, carries [`Terms`]; the script keeps them in a table of
//! their own so the plain lines every engine replays stay small.

use std::fmt::{self, Write as _};

use crate::script::{Tif, tif_word};

/// Type of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `L`: limit.
    Limit,
    /// `M`: market.
    Market,
    /// `SL`: stop-limit (a limit price and a `trigger`).
    StopLimit,
    /// `SM`: stop-market (a `trigger`, no price).
    StopMarket,
    /// `TP`: take-profit limit.
    TakeProfit,
    /// `TM`: take-profit market.
    TakeProfitMarket,
    /// `TS`: trailing stop entering as a market order (a `trail` or `trail_bps`).
    TrailingStop,
    /// `TL`: trailing stop-limit (a trail and a limit `offset`).
    TrailingStopLimit,
}

const KINDS: [(Kind, &str); 8] = [
    (Kind::Limit, "L"),
    (Kind::Market, "M"),
    (Kind::StopLimit, "SL"),
    (Kind::StopMarket, "SM"),
    (Kind::TakeProfit, "TP"),
    (Kind::TakeProfitMarket, "TM"),
    (Kind::TrailingStop, "TS"),
    (Kind::TrailingStopLimit, "TL"),
];

impl Kind {
    /// Reads a type letter.
    pub fn parse(word: &str) -> Result<Self, String> {
        (KINDS.iter().find(|(_, w)| *w == word))
            .map(|(k, _)| *k)
            .ok_or_else(|| format!("order type `{word}` is not L, M, SL, SM, TP, TM, TS or TL"))
    }

    /// Its letters.
    pub fn letters(self) -> &'static str {
        KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("?", |(_, w)| w)
    }

    /// Whether it has a limit price.
    pub fn priced(self) -> bool {
        matches!(self, Self::Limit | Self::StopLimit | Self::TakeProfit)
    }

    /// Whether it waits for a trigger price given in the file.
    pub fn triggered(self) -> bool {
        matches!(
            self,
            Self::StopLimit | Self::StopMarket | Self::TakeProfit | Self::TakeProfitMarket
        )
    }

    /// Whether it trails.
    pub fn trailing(self) -> bool {
        matches!(self, Self::TrailingStop | Self::TrailingStopLimit)
    }
}

/// A trailing order's distance from the best reference price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrailSpec {
    /// `trail=T`: T ticks.
    Ticks(i64),
    /// `trail_bps=B`: B basis points.
    Bps(u32),
}

/// The other leg of a one-cancels-the-other pair: same account, instrument and side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Leg {
    /// Type (not market).
    pub kind: Kind,
    /// Time in force (GTC or PO: a leg must be able to wait).
    pub tif: Tif,
    /// Limit price in ticks, for priced types.
    pub price: Option<i64>,
    /// Trigger in ticks, for trigger types.
    pub trigger: Option<i64>,
    /// Lots.
    pub amount: i64,
}

/// Everything an extended `N` line says beyond the plain fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Terms {
    /// Type.
    pub kind: Kind,
    /// Time in force.
    pub tif: Tif,
    /// Limit price in ticks (`None` for the market-entering types).
    pub price: Option<i64>,
    /// `trigger=P`.
    pub trigger: Option<i64>,
    /// `ref=mark`: the trigger watches the mark price (futures) instead of the last trade.
    pub mark: bool,
    /// `trail=T` or `trail_bps=B`.
    pub trail: Option<TrailSpec>,
    /// `offset=O`: a trailing stop-limit's limit distance past its trigger.
    pub offset: Option<i64>,
    /// `display=Q`: an iceberg's shown lots.
    pub display: Option<i64>,
    /// `tp=P sl=P [sl_limit=P]`: a bracket entry's exits.
    pub bracket: Option<(i64, i64, Option<i64>)>,
    /// `oco=TYPE:TIF:PRICE:TRIGGER:AMOUNT` (`-` for none): the pair's second leg.
    pub oco: Option<Leg>,
}

fn int<T: std::str::FromStr>(word: &str) -> Result<T, String> {
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{word}` is not a positive integer"));
    }
    word.parse()
        .map_err(|_| format!("`{word}` is not an integer in range"))
}

/// Sets an option once.
fn set<T>(slot: &mut Option<T>, key: &str, value: Result<T, String>) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("option `{key}` given twice"));
    }
    *slot = Some(value?);
    Ok(())
}

fn reference_of(value: &str) -> Result<bool, String> {
    match value {
        "mark" => Ok(true),
        "last" => Ok(false),
        other => Err(format!("ref `{other}` is not last or mark")),
    }
}

fn optional(word: &str) -> Result<Option<i64>, String> {
    match word {
        "-" => Ok(None),
        w => int(w).map(Some),
    }
}

/// Checks that `kind` has the price and trigger it needs and nothing it cannot use.
fn check_prices(kind: Kind, price: Option<i64>, trigger: Option<i64>) -> Result<(), String> {
    if kind.priced() != price.is_some() {
        return Err(format!(
            "order type {} {} a price",
            kind.letters(),
            if kind.priced() { "needs" } else { "takes no" }
        ));
    }
    if kind.triggered() != trigger.is_some() {
        return Err(format!(
            "order type {} {} a trigger",
            kind.letters(),
            if kind.triggered() {
                "needs"
            } else {
                "takes no"
            }
        ));
    }
    Ok(())
}

fn parse_leg(value: &str, tif_of: impl Fn(&str) -> Result<Tif, String>) -> Result<Leg, String> {
    let [kind, tif, price, trigger, amount] = value.split(':').collect::<Vec<_>>()[..] else {
        return Err(format!(
            "`oco={value}` is not TYPE:TIF:PRICE:TRIGGER:AMOUNT"
        ));
    };
    let leg = Leg {
        kind: Kind::parse(kind)?,
        tif: tif_of(tif)?,
        price: optional(price)?,
        trigger: optional(trigger)?,
        amount: int(amount)?,
    };
    check_prices(leg.kind, leg.price, leg.trigger)?;
    Ok(leg)
}

impl Terms {
    /// Reads the type, time in force and price fields of an `N` line and its options.
    pub fn parse(
        kind: Kind,
        tif: Tif,
        price: Option<i64>,
        options: &[&str],
        tif_of: impl Fn(&str) -> Result<Tif, String>,
    ) -> Result<Self, String> {
        let mut terms = Terms {
            kind,
            tif,
            price,
            trigger: None,
            mark: false,
            trail: None,
            offset: None,
            display: None,
            bracket: None,
            oco: None,
        };
        let (mut tp, mut sl, mut sl_limit, mut reference) = (None, None, None, None);
        for option in options {
            let Some((key, value)) = option.split_once('=') else {
                return Err(format!("option `{option}` is not key=value"));
            };
            match key {
                "trigger" => set(&mut terms.trigger, key, int(value))?,
                "ref" => set(&mut reference, key, reference_of(value))?,
                "trail" => set(&mut terms.trail, key, int(value).map(TrailSpec::Ticks))?,
                "trail_bps" => set(&mut terms.trail, key, int(value).map(TrailSpec::Bps))?,
                "offset" => set(&mut terms.offset, key, int(value))?,
                "display" => set(&mut terms.display, key, int(value))?,
                "tp" => set(&mut tp, key, int(value))?,
                "sl" => set(&mut sl, key, int(value))?,
                "sl_limit" => set(&mut sl_limit, key, int(value))?,
                "oco" => set(&mut terms.oco, key, parse_leg(value, &tif_of))?,
                _ => return Err(format!("unknown option `{option}`")),
            }
        }
        terms.mark = reference == Some(true);
        if terms.mark && !(kind.triggered() || kind.trailing()) {
            return Err("ref= belongs to trigger and trailing orders".into());
        }
        check_prices(kind, price, terms.trigger)?;
        if kind.trailing() != terms.trail.is_some() {
            return Err("a trail (trail= or trail_bps=) belongs to TS and TL orders".into());
        }
        if terms.offset.is_some() != (kind == Kind::TrailingStopLimit) {
            return Err("offset= belongs to TL orders, which need it".into());
        }
        if terms.display.is_some() && kind != Kind::Limit {
            return Err("display= belongs to limit orders".into());
        }
        terms.bracket = match (tp, sl, sl_limit) {
            (None, None, None) => None,
            (Some(tp), Some(sl), limit) => Some((tp, sl, limit)),
            _ => return Err("a bracket needs tp= and sl= (sl_limit= optional)".into()),
        };
        if terms.bracket.is_some() && terms.oco.is_some() {
            return Err("an order is a bracket entry or an OCO leg, not both".into());
        }
        Ok(terms)
    }

    /// Whether plain `N` fields say it all (a limit or market order without options).
    pub fn is_plain(&self) -> bool {
        matches!(self.kind, Kind::Limit | Kind::Market)
            && self.trigger.is_none()
            && !self.mark
            && self.trail.is_none()
            && self.offset.is_none()
            && self.display.is_none()
            && self.bracket.is_none()
            && self.oco.is_none()
    }

    /// The options as written after the client field (each preceded by a space).
    pub fn write_options(&self, out: &mut String) -> fmt::Result {
        let mut option = |key: &str, value: &dyn fmt::Display| write!(out, " {key}={value}");
        if let Some(t) = self.trigger {
            option("trigger", &t)?;
        }
        if self.mark {
            option("ref", &"mark")?;
        }
        match self.trail {
            Some(TrailSpec::Ticks(t)) => option("trail", &t)?,
            Some(TrailSpec::Bps(b)) => option("trail_bps", &b)?,
            None => {}
        }
        if let Some(o) = self.offset {
            option("offset", &o)?;
        }
        if let Some(d) = self.display {
            option("display", &d)?;
        }
        if let Some((tp, sl, limit)) = self.bracket {
            option("tp", &tp)?;
            option("sl", &sl)?;
            if let Some(l) = limit {
                option("sl_limit", &l)?;
            }
        }
        if let Some(leg) = self.oco {
            let field = |v: Option<i64>| v.map_or("-".to_owned(), |v| v.to_string());
            let value = format!(
                "{}:{}:{}:{}:{}",
                leg.kind.letters(),
                tif_word(leg.tif),
                field(leg.price),
                field(leg.trigger),
                leg.amount
            );
            option("oco", &value)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::script::{Op, OrderCounter, Script};
    use crate::venues::matchbook::Matchbook;
    use crate::venues::{Outcome, Venue};
    use matchbook::{AccountId, LiveState, OrderType};

    const FILE: &str = "matchbook-workload 1
name types
instruments 1
accounts 3
setup
D 1 0 0 100000000
D 1 1 0 100000000
D 1 2 1 100000
D 1 0 1 100000
N 2 2 0 S L GTC 100 10 -
N 3 0 0 B L GTC 99 10 -
measure
N 4 1 0 B L IOC 100 4 - tp=110 sl=90 sl_limit=89
N 5 0 0 S SM GTC - 2 - trigger=95
N 6 0 0 S TS GTC - 2 - trail=3
N 7 0 0 S TL GTC - 2 - trail_bps=50 offset=2
N 8 1 0 B L GTC 90 6 - display=2
N 9 1 0 B L GTC 80 1 - oco=SM:GTC:-:120:1
N 10 0 0 B TP GTC 85 1 - trigger=86 ref=last
N 11 0 0 B TM GTC - 1 - trigger=86
N 12 0 0 B SL GTC 130 1 5 trigger=125
C 13 1 #8
N 14 2 0 S M IOC - 12 -
";

    #[test]
    fn every_type_round_trips_and_numbers_both_oco_legs() {
        let script = Script::parse(FILE).expect("the file parses");
        assert_eq!(script.terms.len(), 9, "every extended line has terms");
        assert_eq!(Script::parse(&script.to_text()), Ok(script.clone()));
        let placed: u32 = script.lines().map(|l| l.op.orders_placed()).sum();
        assert_eq!(placed, 13, "twelve order lines, one of them a pair");
        let pair = script.measured.iter().find(|l| l.op.orders_placed() == 2);
        assert!(matches!(
            pair.map(|l| l.op),
            Some(Op::PlaceWith { pair: true, .. })
        ));
    }

    #[test]
    fn malformed_options_are_refused_with_their_line() {
        let cases = [
            (" trigger=95", "", "needs a trigger"),
            ("trigger=95", "trigger=95 trigger=96", "twice"),
            ("trail=3", "trail=3 display=1", "display="),
            (" offset=2", "", "offset="),
            ("display=2", "display=x", "integer"),
            ("sl_limit=89", "sl_limit=89 oco=SM:GTC:-:1:1", "not both"),
            (
                "tp=110 sl=90 sl_limit=89",
                "tp=110 sl_limit=89",
                "tp= and sl=",
            ),
            ("oco=SM:GTC:-:120:1", "oco=SM:GTC:120", "TYPE:TIF"),
            (
                "trigger=86 ref=last",
                "trigger=86 ref=index",
                "last or mark",
            ),
            (
                "trigger=86 ref=last",
                "trigger=86 colour=red",
                "unknown option",
            ),
            ("S SM GTC - 2", "S SM GTC 94 2", "write -"),
            ("S SM GTC - 2", "S XX GTC - 2", "not L, M"),
        ];
        for (from, to, want) in cases {
            let bad = FILE.replacen(from, to, 1);
            let err = Script::parse(&bad).expect_err(to);
            assert!(err.message.contains(want), "{to}: {err}");
            assert!(err.line >= 13, "{to}: {err}");
        }
    }

    #[test]
    fn matchbook_replays_every_type_from_the_file() {
        let script = Script::parse(FILE).expect("the file parses");
        for balances in [false, true] {
            let mut venue = Matchbook::new(&script, balances);
            let (mut numbers, mut out) = (OrderCounter::default(), Outcome::default());
            let mut applied = Vec::new();
            for line in script.lines() {
                out.clear();
                venue.apply(line, numbers.number(line), &mut out, true);
                applied.push(out.applied);
            }
            assert!(
                applied.iter().all(|&a| a),
                "balances {balances}: {applied:?}"
            );
            // The sell sweep took the price to 90: the stop-market, both trailing stops and
            // the bracket's stop-loss fired (its take-profit was cancelled with it), the
            // trailing stop-limit and the stop-loss rest at their limits; the buys that wait
            // for 86 or 125 are still held. Cancelling the pair's second leg (#8) ended
            // the first (#7) too.
            let open: Vec<(OrderType, LiveState)> = (0..script.accounts)
                .flat_map(|a| venue.engine().open_orders(AccountId(a)))
                .map(|o| (o.order_type(), o.state()))
                .collect();
            let held = |t| (t, LiveState::PendingTrigger);
            let resting = |t| (t, LiveState::Resting);
            let mut expected = vec![
                resting(OrderType::Limit),
                resting(OrderType::Stop),
                resting(OrderType::TrailingStopLimit),
                held(OrderType::TakeProfit),
                held(OrderType::TakeProfitMarket),
                held(OrderType::Stop),
            ];
            let mut seen = open.clone();
            let key = |o: &(OrderType, LiveState)| format!("{o:?}");
            expected.sort_by_key(key);
            seen.sort_by_key(key);
            assert_eq!(seen, expected, "balances {balances}");
        }
    }
}
