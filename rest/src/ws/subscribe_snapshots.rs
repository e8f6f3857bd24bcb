//! What a new subscriber gets before live frames: per channel, the snapshot frames read
//! at or after the last command the hub has sent frames for (books, tickers, candles,
//! the account's snapshots, the last trades), and per market the sequence they cover.

use matchbook::InstrumentId;

use super::account_frames;
use super::book_frames;
use super::depth::DepthBooks;
use super::frames::{Channel, PRIVATE_TOPIC, Topic};
use super::market_frames::{candle_frames, price_tick, ticker_updates};
use super::messages::{PriceTickHistory, Stamp, TickerFrame};
use super::replies::json;
use crate::state::Shared;

/// The frames a new subscriber of `channel` gets for `topics` before live frames (books
/// up to `depth` levels per side and at most the server's `max_order_book_depth`, as
/// REST's order book), and per market what they cover. They are
/// read at or after the last command the hub has sent frames for, so the frames that
/// follow them in the session's feed leave no gap.
pub(super) async fn snapshot(
    state: &Shared,
    (channel, topics): (Channel, Vec<Topic>),
    depth: usize,
    account: Option<matchbook::AccountId>,
    depth_books: &mut DepthBooks,
) -> (Vec<String>, Vec<(InstrumentId, u64)>) {
    if topics.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let now = state.now();
    if channel == Channel::OrderBook {
        for &(id, _) in &topics {
            depth_books.forget(id);
        }
        if DepthBooks::limits(depth, state.max_book_depth) {
            // The whole book as the server shows it, kept by the session; the client gets
            // its best `depth` levels.
            let follow = Some((depth_books, depth));
            return book_snapshots(state, channel, topics, state.max_book_depth, follow, now).await;
        }
    }
    if matches!(channel, Channel::OrderBook | Channel::BookTicker) {
        // As REST's order book: at most the server's depth per side, however deep the
        // book is or the request asks.
        let depth = match channel {
            Channel::BookTicker => 1,
            _ => depth.min(state.max_book_depth),
        };
        return book_snapshots(state, channel, topics, depth, None, now).await;
    }
    let markets = state.markets.clone();
    let ids: Vec<InstrumentId> = topics.iter().map(|&(id, _)| id).collect();
    let after = state.streams.hub.sent_through();
    let read = state.view_after(after, move |view| match channel {
        // Answered by `book_snapshots` above.
        Channel::OrderBook | Channel::BookTicker => Vec::new(),
        Channel::MarketTicker => {
            let updates = ticker_updates(view, &markets, &ids, now);
            let updates = updates.into_iter().map(|(_, u)| u).collect();
            vec![(json(&TickerFrame::of(updates, now)), None)]
        }
        Channel::Candlesticks => {
            candle_frames(view.market, &markets, &topics, now, "CANDLESTICK_SNAPSHOT")
                .iter()
                .map(|(_, frame)| (json(frame), None))
                .collect()
        }
        Channel::Trading => Vec::new(),
        Channel::AccountHistory => account
            .map(|account| account_frames::snapshots(view, &markets, account, now))
            .unwrap_or_default()
            .into_iter()
            .map(|frame| (frame, Some((PRIVATE_TOPIC.0, view.event_seq))))
            .collect(),
        Channel::PriceTicks => (ids.iter())
            .filter_map(|&id| {
                let history = tick_history(view.market, &markets, id, now)?;
                Some((json(&history), Some((id, view.event_seq))))
            })
            .collect::<Vec<_>>(),
    });
    let Ok(frames) = read.await else {
        return (Vec::new(), Vec::new());
    };
    let (texts, covered): (Vec<String>, Vec<Option<(InstrumentId, u64)>>) =
        frames.into_iter().unzip();
    (texts, covered.into_iter().flatten().collect())
}

/// `ORDER_BOOK` or `BOOK_TICKER` snapshots of `topics`, `depth` levels per side (with
/// `follow`, the session follows each book at that depth and the snapshot shows that
/// many). The market stage only copies the levels: the frames are written here, on the
/// session's own task, so a client subscribing again and again costs the stage every
/// reader shares no more than a copy of what it asked for.
async fn book_snapshots(
    state: &Shared,
    channel: Channel,
    topics: Vec<Topic>,
    depth: usize,
    mut follow: Option<(&mut DepthBooks, usize)>,
    now: matchbook::Timestamp,
) -> (Vec<String>, Vec<(InstrumentId, u64)>) {
    let ids: Vec<InstrumentId> = topics.iter().map(|&(id, _)| id).collect();
    let after = state.streams.hub.sent_through();
    let read = state.view_after(after, move |view| {
        (ids.iter())
            .filter_map(|&id| Some((id, book_frames::engine_levels(view.engine, id, depth)?)))
            .collect::<Vec<_>>()
    });
    let Ok(books) = read.await else {
        return (Vec::new(), Vec::new());
    };
    let markets = &state.markets;
    books
        .into_iter()
        .filter_map(|(id, (levels, seq))| {
            let market = markets.market_of(id)?;
            let levels = match follow.as_mut() {
                Some((books, shown)) => books.follow(id, (*shown, depth), &levels),
                None => levels,
            };
            let frame = if channel == Channel::OrderBook {
                json(&book_frames::snapshot(market, levels, seq, now))
            } else {
                let top = book_frames::top_of(&levels);
                json(&book_frames::tick(
                    market,
                    "BOOK_TICKER_SNAPSHOT",
                    top,
                    seq,
                    now,
                ))
            };
            Some((frame, (id, seq)))
        })
        .unzip()
}

/// The last 80 trades of a market, newest first.
fn tick_history(
    market: &matchbook::market::MarketData,
    markets: &crate::markets::Markets,
    id: InstrumentId,
    now: matchbook::Timestamp,
) -> Option<PriceTickHistory> {
    let filter = matchbook::market::trades::TradeFilter {
        from: matchbook::Timestamp(now.0 - matchbook::market::query::MAX_WINDOW),
        to: now,
        instruments: None,
        max_page_size: 80,
        cursor: None,
    };
    let page = market.trades().instrument_page(id, &filter).ok()?;
    let history = (page.trades.iter())
        .filter_map(|r| price_tick(markets, &r.trade, r.time, None))
        .collect();
    Some(PriceTickHistory {
        channel_name: "PRICE_TICKS",
        kind: "PRICE_TICK_HISTORY",
        instrument_code: markets.market_of(id)?.code.clone(),
        history,
        stamp: Stamp::of(now),
    })
}
