//! Frames read from market data: the tickers and candles the hub sends at each tick and a
//! new subscriber gets first, and trades as price ticks.

use matchbook::InstrumentId;
use matchbook::market::MarketData;
use matchbook::market::period::GRANULARITIES;
use matchbook::runtime::ReadView;

use super::frames::Topic;
use super::messages::{CandleFrame, GranularityBody, PriceTick, Stamp, TickerFrame, TickerUpdate};
use crate::markets::Markets;

/// The candle of each topic whose period holds `now`, as `kind` frames (topics without a
/// candle yet are left out).
pub fn candle_frames(
    market: &MarketData,
    markets: &Markets,
    topics: &[Topic],
    now: matchbook::Timestamp,
    kind: &'static str,
) -> Vec<(Topic, CandleFrame)> {
    topics
        .iter()
        .filter_map(|&(id, g)| {
            let granularity = *GRANULARITIES.get(usize::from(g))?;
            let m = markets.market_of(id)?;
            let candle = (market.candles(id, granularity, now, now, Some(1)).ok()?)
                .into_iter()
                .next()?;
            let price = |p: i64| m.price(matchbook::Price(p));
            Some((
                (id, g),
                CandleFrame {
                    channel_name: "CANDLESTICKS",
                    kind,
                    instrument_code: m.code.clone(),
                    granularity: GranularityBody {
                        unit: granularity.unit.as_str(),
                        period: granularity.period,
                    },
                    open: price(candle.open),
                    high: price(candle.high),
                    low: price(candle.low),
                    close: price(candle.close),
                    volume: crate::format::decimal(
                        candle.volume,
                        m.amount_precision + m.market_precision,
                    ),
                    last_sequence: candle.last_sequence,
                    stamp: Stamp::of(crate::format::candle_time(candle.end)),
                },
            ))
        })
        .collect()
}

/// The tickers of `ids` as of `view`, as the streams write them.
pub fn ticker_updates(
    view: &ReadView<'_>,
    markets: &Markets,
    ids: &[InstrumentId],
    now: matchbook::Timestamp,
) -> Vec<(InstrumentId, TickerUpdate)> {
    ids.iter()
        .filter_map(|&id| {
            let market = markets.market_of(id)?;
            let state = view.engine.instrument(id).ok()?.state;
            let ticker = view.market.ticker(id, now).ok()?;
            let funding = view.engine.funding_view(id).ok();
            let body = crate::market_bodies::ticker_body(
                market,
                state,
                &ticker,
                now,
                false,
                funding.as_ref(),
            );
            Some((id, TickerUpdate::from(body)))
        })
        .collect()
}

impl TickerFrame {
    /// A `MARKET_TICKER_UPDATES` frame.
    pub fn of(ticker_updates: Vec<TickerUpdate>, now: matchbook::Timestamp) -> Self {
        Self {
            channel_name: "MARKET_TICKER",
            kind: "MARKET_TICKER_UPDATES",
            ticker_updates,
            stamp: Stamp::of(now),
        }
    }
}

impl From<crate::wire::market::TickerBody> for TickerUpdate {
    fn from(t: crate::wire::market::TickerBody) -> Self {
        Self {
            instrument: t.instrument_code,
            last_price: t.last_price,
            price_change: t.price_change,
            price_change_percentage: t.price_change_percentage,
            high: t.high,
            low: t.low,
            volume: t.quote_volume,
            best_bid: t.best_bid,
            best_ask: t.best_ask,
            mark_price: t.futures.mark_price,
            funding_rate: t.futures.funding_rate,
            next_funding_payment: t.futures.next_funding_payment,
        }
    }
}

/// A trade as a tick; `top` is the book's best bid and ask before it, when known.
pub fn price_tick(
    markets: &Markets,
    trade: &matchbook::Trade,
    time: matchbook::Timestamp,
    top: Option<(Option<matchbook::Price>, Option<matchbook::Price>)>,
) -> Option<PriceTick> {
    let m = markets.market_of(trade.instrument)?;
    let side = |p: Option<matchbook::Price>| p.map(|p| m.price(p));
    Some(PriceTick {
        instrument_code: m.code.clone(),
        price: m.price(trade.price),
        amount: m.qty(trade.amount),
        volume: m.notional(trade.price.notional(trade.amount)),
        taker_side: trade.taker_side.as_str(),
        best_bid: top.and_then(|(bid, _)| side(bid)),
        best_ask: top.and_then(|(_, ask)| side(ask)),
        stamp: Stamp::of(time),
    })
}
