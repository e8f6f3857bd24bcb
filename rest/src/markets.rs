//! The reference data an HTTP handler needs without asking the engine thread: instrument
//! and currency codes, precisions and balance scales, so requests are validated and
//! responses formatted on the caller's thread. It never changes after start (instrument
//! state does, and is read from the engine).

use std::collections::HashMap;

use matchbook::fixed::{Notional, Price, Qty};
use matchbook::{CurrencyId, Engine, InstrumentId, InstrumentKind, Side};

use crate::format::decimal;

/// One instrument.
#[derive(Debug, Clone)]
pub struct Market {
    /// Engine id.
    pub id: InstrumentId,
    /// Code.
    pub code: String,
    /// Type.
    pub kind: InstrumentKind,
    /// Amount decimals.
    pub amount_precision: u8,
    /// Price decimals.
    pub market_precision: u8,
    /// Base currency.
    pub base: CurrencyId,
    /// Quote currency.
    pub quote: CurrencyId,
    /// The currency a buy's and a sell's fees are charged in (the engine's rule).
    pub fee_currencies: [CurrencyId; 2],
}

impl Market {
    /// The currency a fill's fee on `side` is charged in.
    pub fn fee_currency(&self, side: Side) -> CurrencyId {
        self.fee_currencies[usize::from(side == Side::Sell)]
    }
    /// A price as a string.
    pub fn price(&self, p: Price) -> String {
        decimal(p.0, self.market_precision)
    }
    /// An amount as a string.
    pub fn qty(&self, q: Qty) -> String {
        decimal(q.0, self.amount_precision)
    }
    /// A price x amount value as a string.
    pub fn notional(&self, n: Notional) -> String {
        decimal(n.0, self.amount_precision + self.market_precision)
    }
}

/// One currency.
#[derive(Debug, Clone)]
pub struct Coin {
    /// Code.
    pub code: String,
    /// Balance scale (decimal places of balance units).
    pub scale: u8,
}

/// Codes and scales of every market and currency.
#[derive(Debug, Clone)]
pub struct Markets {
    /// Instruments by index.
    pub markets: Vec<Market>,
    /// Currencies by index.
    pub coins: Vec<Coin>,
    market_codes: HashMap<String, InstrumentId>,
    coin_codes: HashMap<String, CurrencyId>,
}

impl Markets {
    /// Captures the reference data of `engine`.
    pub fn of(engine: &Engine) -> Self {
        let markets: Vec<Market> = engine
            .instruments()
            .iter()
            .enumerate()
            .map(|(i, inst)| Market {
                id: InstrumentId(i as u16),
                code: inst.code().to_owned(),
                kind: inst.spec.kind,
                amount_precision: inst.spec.amount_precision,
                market_precision: inst.spec.market_precision,
                base: inst.base,
                quote: inst.quote,
                fee_currencies: [Side::Buy, Side::Sell].map(|s| inst.fee_currency(s)),
            })
            .collect();
        let coins: Vec<Coin> = engine
            .currencies()
            .iter()
            .enumerate()
            .map(|(i, c)| Coin {
                code: c.code.clone(),
                scale: engine
                    .balance_scale(CurrencyId(i as u16))
                    .unwrap_or(c.precision),
            })
            .collect();
        Self {
            market_codes: markets.iter().map(|m| (m.code.clone(), m.id)).collect(),
            coin_codes: coins
                .iter()
                .enumerate()
                .map(|(i, c)| (c.code.clone(), CurrencyId(i as u16)))
                .collect(),
            markets,
            coins,
        }
    }

    /// An instrument by code.
    pub fn market(&self, code: &str) -> Option<&Market> {
        self.market_codes
            .get(code)
            .and_then(|id| self.markets.get(usize::from(id.0)))
    }

    /// An instrument by code, or the spec's 404 `INVALID_INSTRUMENT_CODE`.
    pub fn require(&self, code: &str) -> Result<&Market, crate::error::ApiError> {
        self.market(code)
            .ok_or(crate::error::ApiError::NotFound("INVALID_INSTRUMENT_CODE"))
    }

    /// An instrument by id.
    pub fn market_of(&self, id: InstrumentId) -> Option<&Market> {
        self.markets.get(usize::from(id.0))
    }

    /// A currency id by code.
    pub fn coin_id(&self, code: &str) -> Option<CurrencyId> {
        self.coin_codes.get(code).copied()
    }

    /// A currency's code.
    pub fn coin_code(&self, id: CurrencyId) -> &str {
        self.coins
            .get(usize::from(id.0))
            .map_or("", |c| c.code.as_str())
    }

    /// A balance amount as a string.
    pub fn balance(&self, id: CurrencyId, units: i128) -> String {
        decimal(
            units,
            self.coins.get(usize::from(id.0)).map_or(0, |c| c.scale),
        )
    }
}
