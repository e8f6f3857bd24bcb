//! Engine and market-data values as the wire bodies both gateways send: a market's
//! ticker (with its futures fields), an account's balances, a funding rate's text.

use matchbook::{Balance, CurrencyId, FundingView, InstrumentState};

use crate::format::{decimal, iso_ms};
use crate::markets::{Market, Markets};
use crate::wire::account::BalanceBody;
use crate::wire::market::{TickerBody, TickerFuturesBody};

/// A funding rate (1e-8 per period) as a decimal fraction string.
pub fn rate_text(rate: i64) -> String {
    decimal(rate, 8)
}

/// An account's balances as listed (a currency never moved is left out).
pub fn balance_bodies(markets: &Markets, balances: &[Balance]) -> Vec<BalanceBody> {
    balances
        .iter()
        .enumerate()
        .filter(|(_, b)| b.available != 0 || b.locked != 0 || b.updated.0 != 0)
        .map(|(i, b)| {
            let id = CurrencyId(i as u16);
            BalanceBody {
                currency_code: markets.currency_code(id).to_owned(),
                available: markets.balance(id, i128::from(b.available)),
                locked: markets.balance(id, i128::from(b.locked)),
                time: iso_ms(b.updated),
            }
        })
        .collect()
}

/// A market's ticker (spec 2.13).
pub fn ticker_body(
    market: &Market,
    state: InstrumentState,
    t: &matchbook::market::Ticker,
    now: matchbook::Timestamp,
    all_markets: bool,
    futures: Option<&matchbook::FundingView>,
) -> TickerBody {
    let price = |p: i64| decimal(p, market.market_precision);
    let side = |p: Option<matchbook::Price>| p.map(|p| market.price(p));
    let change = t.price_change();
    // Percent with two decimals, rounded toward zero; 0 without trades.
    let percentage = if t.stats.open == 0 {
        0
    } else {
        i128::from(change) * 10_000 / i128::from(t.stats.open)
    };
    let quote_volume = decimal(
        t.stats.quote_volume,
        market.amount_precision + market.market_precision,
    );
    TickerBody {
        instrument_code: market.code.clone(),
        sequence: t.sequence,
        state: state.as_str(),
        base_volume: decimal(t.stats.base_volume, market.amount_precision),
        high: price(t.stats.high),
        low: price(t.stats.low),
        last_price: price(t.stats.last),
        price_change: price(change),
        price_change_percentage: decimal(percentage, 2),
        highest_bid: side(t.highest_bid),
        lowest_ask: side(t.lowest_ask),
        best_bid: side(t.highest_bid),
        best_ask: side(t.lowest_ask),
        time: iso_ms(now),
        futures: futures
            .map(|f| ticker_futures(market, f))
            .unwrap_or_default(),
        kind: all_markets.then(|| market.kind.as_str()),
        global_volume: all_markets.then(|| quote_volume.clone()),
        quote_volume,
    }
}

/// The futures fields of a ticker (spec 2.13).
pub fn ticker_futures(market: &Market, v: &FundingView) -> TickerFuturesBody {
    TickerFuturesBody {
        open_interest: Some(market.qty(matchbook::Qty(v.open_interest))),
        open_interest_usd: v.mark_price.map(|mark| {
            market.notional(matchbook::Notional(
                i128::from(v.open_interest) * i128::from(mark.0),
            ))
        }),
        mark_price: v.mark_price.map(|mark| market.price(mark)),
        // A future without funding has no rate to show (not a rate of zero).
        funding_rate: (v.period_minutes > 0).then(|| rate_text(v.funding_rate)),
        next_funding_payment: v.next_settlement.map(iso_ms),
    }
}
