//! The exchange's reference data as every adapter reads it ([`ReferenceData`]): each
//! market's code, kind, currencies and precisions, each currency's code and balance scale,
//! lookups by code, and the fixed-point values of each written and read as decimal text.
//! Built once from an engine and never changed (an instrument's state does change, and is
//! read from the engine), so a gateway validates and formats on its own thread; REST, C and
//! Python share this one type instead of each keeping a copy of their own.

use std::collections::HashMap;

use crate::engine::Engine;
use crate::fixed::{Notional, ParseDecimalError, Price, Qty, format_scaled, parse_scaled};
use crate::ids::{CurrencyId, InstrumentId};
use crate::order::Side;
use crate::refdata::InstrumentKind;

/// One market as the adapters see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketRef {
    /// Index.
    pub id: InstrumentId,
    /// Code such as `BTC_EUR`.
    pub code: String,
    /// Spot or a futures kind.
    pub kind: InstrumentKind,
    /// Decimal places of amounts (a lot is `10^-amount_precision`).
    pub amount_precision: u8,
    /// Decimal places of prices (a tick is `10^-market_precision`).
    pub market_precision: u8,
    /// Base currency.
    pub base: CurrencyId,
    /// Quote currency.
    pub quote: CurrencyId,
    /// The currency a buy's and a sell's fee is charged in (what each side receives; the
    /// quote on a future).
    pub fee_currencies: [CurrencyId; 2],
}

impl MarketRef {
    /// The currency a fill of `side` pays its fee in.
    pub fn fee_currency(&self, side: Side) -> CurrencyId {
        self.fee_currencies[usize::from(side == Side::Sell)]
    }

    /// A price as decimal text.
    pub fn price(&self, p: Price) -> String {
        format_scaled(i128::from(p.0), self.market_precision)
    }

    /// An amount as decimal text.
    pub fn qty(&self, q: Qty) -> String {
        format_scaled(i128::from(q.0), self.amount_precision)
    }

    /// A notional (price times amount) as decimal text.
    pub fn notional(&self, n: Notional) -> String {
        format_scaled(n.0, self.amount_precision + self.market_precision)
    }

    /// Decimal text as a price of this market (more decimals than it has: refused).
    pub fn parse_price(&self, text: &str) -> Result<Price, ParseDecimalError> {
        parse_scaled(text, self.market_precision).map(Price)
    }

    /// Decimal text as an amount of this market.
    pub fn parse_qty(&self, text: &str) -> Result<Qty, ParseDecimalError> {
        parse_scaled(text, self.amount_precision).map(Qty)
    }
}

/// One currency as the adapters see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrencyRef {
    /// Code such as `EUR`.
    pub code: String,
    /// Decimal places of its balances (a balance unit is `10^-scale`).
    pub scale: u8,
}

/// Every market and currency of an exchange, with lookups by code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReferenceData {
    /// Markets by index.
    pub markets: Vec<MarketRef>,
    /// Currencies by index.
    pub currencies: Vec<CurrencyRef>,
    market_codes: HashMap<String, InstrumentId>,
    currency_codes: HashMap<String, CurrencyId>,
}

impl ReferenceData {
    /// The reference data of `engine`.
    pub fn of(engine: &Engine) -> Self {
        let markets: Vec<MarketRef> = (engine.instruments().iter().enumerate())
            .map(|(i, inst)| MarketRef {
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
        let currencies: Vec<CurrencyRef> = (engine.currencies().iter().enumerate())
            .map(|(i, c)| CurrencyRef {
                code: c.code.clone(),
                scale: engine
                    .balance_scale(CurrencyId(i as u16))
                    .unwrap_or(c.precision),
            })
            .collect();
        Self {
            market_codes: markets.iter().map(|m| (m.code.clone(), m.id)).collect(),
            currency_codes: (currencies.iter().enumerate())
                .map(|(i, c)| (c.code.clone(), CurrencyId(i as u16)))
                .collect(),
            markets,
            currencies,
        }
    }

    /// A market by code.
    pub fn market(&self, code: &str) -> Option<&MarketRef> {
        (self.market_codes.get(code)).and_then(|id| self.markets.get(usize::from(id.0)))
    }

    /// A market by index.
    pub fn market_of(&self, id: InstrumentId) -> Option<&MarketRef> {
        self.markets.get(usize::from(id.0))
    }

    /// A currency by code.
    pub fn currency_id(&self, code: &str) -> Option<CurrencyId> {
        self.currency_codes.get(code).copied()
    }

    /// A currency by index.
    pub fn currency_of(&self, id: CurrencyId) -> Option<&CurrencyRef> {
        self.currencies.get(usize::from(id.0))
    }

    /// A currency's code ("" for an index that is none).
    pub fn currency_code(&self, id: CurrencyId) -> &str {
        self.currency_of(id).map_or("", |c| c.code.as_str())
    }

    /// A currency's balance scale (0 for an index that is none).
    pub fn scale(&self, id: CurrencyId) -> u8 {
        self.currency_of(id).map_or(0, |c| c.scale)
    }

    /// A balance amount (balance units) as decimal text.
    pub fn balance(&self, id: CurrencyId, units: i128) -> String {
        format_scaled(units, self.scale(id))
    }

    /// Decimal text as balance units of a currency.
    pub fn parse_balance(&self, id: CurrencyId, text: &str) -> Result<i64, ParseDecimalError> {
        parse_scaled(text, self.scale(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_scales_and_text_round_trip() {
        let engine = Engine::new(crate::demo::config()).expect("the demo configuration");
        let data = ReferenceData::of(&engine);
        assert_eq!(data.markets.len(), engine.instruments().len());
        for (i, market) in data.markets.iter().enumerate() {
            let instrument = &engine.instruments()[i];
            assert_eq!(data.market(&market.code), Some(market));
            assert_eq!(market.base, instrument.base);
            let price = Price(123_456);
            assert_eq!(market.parse_price(&market.price(price)), Ok(price));
            let qty = Qty(7_001);
            assert_eq!(market.parse_qty(&market.qty(qty)), Ok(qty));
            assert_eq!(
                market.fee_currency(Side::Buy),
                instrument.fee_currency(Side::Buy)
            );
        }
        for (i, currency) in data.currencies.iter().enumerate() {
            let id = CurrencyId(i as u16);
            assert_eq!(data.currency_id(&currency.code), Some(id));
            assert_eq!(Ok(currency.scale), engine.balance_scale(id));
            assert_eq!(
                data.parse_balance(id, &data.balance(id, 1_234_567)),
                Ok(1_234_567)
            );
            assert!(data.balance(id, -5).starts_with('-'));
        }
        assert_eq!(data.market("NOPE"), None);
        assert_eq!(data.currency_code(CurrencyId(999)), "");
    }
}
