//! One WebSocket connection: the session messages of the contract (AUTHENTICATE,
//! SUBSCRIBE, UPDATE_SUBSCRIPTION, UNSUBSCRIBE), a heartbeat, and the hub's frames for the
//! channels and instruments subscribed. Frames go out in the order the hub made them; a
//! session that falls a whole broadcast buffer behind (a client that stopped reading) gets
//! `SLOW_CONSUMER` and is closed, without anyone else waiting for it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket};
use futures_util::{SinkExt, StreamExt};
use matchbook::InstrumentId;
use tokio::sync::broadcast::error::RecvError;

use matchbook::market::period::{GRANULARITIES, Granularity, Unit};

use super::depth::DepthBooks;
use super::frames::{Channel, Frame, Frames, PRIVATE_TOPIC, Topic};
use super::hub::Watch;
use super::messages::{
    ChannelRequest, ChannelState, ClientMessage, SessionFrame, Stamp, TimerFrame,
};
use super::order_entry;
use super::replies::{error, json};
use super::socket::{close, read_apart, too_big, write_all};
use super::subscribe_snapshots;
use crate::auth::keys::{ApiKey, Scope};
use crate::entry::dead_man::{set_cancel_all_after, timeout_millis};
use crate::markets::Markets;
use crate::state::Shared;

mod login;
mod trading_answers;

use trading_answers::{Named, entry};

/// Close code for a frame that is not JSON (the contract's).
const CLOSE_NOT_JSON: u16 = 4000;
/// Close code after `SLOW_CONSUMER`.
const CLOSE_SLOW: u16 = 4001;
/// Close code after `AUTHENTICATION_FAILED` for a key revoked while the session used it.
const CLOSE_REVOKED: u16 = 4003;
/// Close code after `RATELIMIT` for failed `AUTHENTICATE`s (RFC 6455's "policy violation").
const CLOSE_POLICY: u16 = 1008;
/// Close code after `CONNECTION_CLOSING`, the server stopping (RFC 6455's "going away").
const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code for a message over [`super::streams::MAX_MESSAGE_BYTES`] (RFC 6455's "message too big").
const CLOSE_TOO_BIG: u16 = 1009;
/// What one connection has asked for.
#[derive(Default)]
struct Session {
    key: Option<Arc<ApiKey>>,
    subscribed: BTreeMap<Channel, BTreeSet<Topic>>,
    /// Per channel and market: what its snapshot covered (the book sequence, or the last
    /// event of a price tick history or an account's snapshots); live frames up to it are
    /// left out.
    after: BTreeMap<(Channel, InstrumentId), u64>,
    /// While subscribed to the account's private channel: the hub makes its frames.
    watch: Option<Watch>,
    /// The client's address (none in process): its book snapshots count against the
    /// address's public rate limit, as its keyless REST reads do.
    peer: Option<std::net::IpAddr>,
    /// The books it follows at a depth.
    depth_books: DepthBooks,
}

/// A channel of a subscription message: its markets, those it sends a snapshot of, and
/// the depth asked.
type Planned = (Channel, BTreeSet<Topic>, Vec<Topic>, usize);

/// What handling a client message produced.
enum Reply {
    /// Frames to send, in order.
    Send(Vec<String>),
    /// Send this error, then close with this code.
    Close(String, u16),
}

/// Serves one upgraded connection until either side closes it.
pub async fn run(socket: WebSocket, state: Shared, peer: Option<std::net::IpAddr>) {
    let _open = super::streams::OpenSession::new(&state.streams.counters);
    let (mut sink, stream) = socket.split();
    let mut incoming = read_apart(stream);
    let mut feed = state.streams.hub.join();
    let mut session = Session {
        peer,
        ..Session::default()
    };
    let mut heartbeat = tokio::time::interval(state.streams.heartbeat);
    heartbeat.tick().await;
    let mut closing = state.streams.closing.subscribe();
    loop {
        let outgoing: Vec<Message> = tokio::select! {
            () = async { drop(closing.wait_for(|&closing| closing).await) } => {
                let told = session.answer(&state, "CONNECTION_CLOSING", false);
                close(&mut sink, told, CLOSE_GOING_AWAY).await;
                return;
            }
            message = incoming.recv() => match message {
                // Nothing more is done with a key revoked since it authenticated.
                Some(Ok(Message::Text(_))) if session.key_revoked() => Vec::new(),
                Some(Ok(Message::Text(text))) => match session.handle(&state, &text).await {
                    Reply::Send(frames) => frames.into_iter().map(|f| Message::Text(f.into())).collect(),
                    Reply::Close(frame, code) => {
                        close(&mut sink, frame, code).await;
                        return;
                    }
                },
                Some(Ok(Message::Binary(_))) => {
                    close(&mut sink, error(&state, "INVALID_MESSAGE_FORMAT", "SYSTEM", None), CLOSE_NOT_JSON).await;
                    return;
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => Vec::new(),
                Some(Err(e)) if too_big(&e) => {
                    close(&mut sink, error(&state, "INVALID_MESSAGE_FORMAT", "SYSTEM", None), CLOSE_TOO_BIG).await;
                    return;
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
            },
            frame = feed.recv() => match frame.map(|first| session.drain(first, &mut feed, &state.markets)) {
                Ok(Ok(frames)) => frames,
                Ok(Err(RecvError::Lagged(_))) | Err(RecvError::Lagged(_)) => {
                    slow_consumer(&state, &mut sink).await;
                    return;
                }
                Ok(Err(RecvError::Closed)) | Err(RecvError::Closed) => return,
            },
            _ = heartbeat.tick() => heartbeat_frames(&state),
        };
        if session.key_revoked() {
            let refused = error(&state, "AUTHENTICATION_FAILED", "SYSTEM", None);
            close(&mut sink, refused, CLOSE_REVOKED).await;
            return;
        }
        if outgoing.is_empty() {
            continue;
        }
        // A client that takes no frame for a heartbeat interval (its socket full) is as
        // slow as one that fell a whole buffer behind.
        let sent = &state.streams.counters.frames_sent;
        match tokio::time::timeout(
            state.streams.heartbeat,
            write_all(&mut sink, outgoing, sent),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_) => {
                slow_consumer(&state, &mut sink).await;
                return;
            }
        }
    }
}

/// A heartbeat: its frame, and a ping, which makes the client answer and so keeps an
/// otherwise silent subscriber clear of the listener's idle timeout.
fn heartbeat_frames(state: &Shared) -> Vec<Message> {
    let frame = json(&SessionFrame {
        channel_name: "SYSTEM",
        kind: "HEARTBEAT",
        channels: None,
        subscription: Some("SYSTEM"),
        stamp: Stamp::of(state.now()),
    });
    vec![
        Message::Text(frame.into()),
        Message::Ping(Default::default()),
    ]
}

/// Frames the session takes at most per write: what is queued is sent together, one
/// flush (one system call) for all of them.
const WRITE_BATCH: usize = 256;

/// Tells a slow consumer (if it can still take a frame) and closes it.
async fn slow_consumer<S>(state: &Shared, sink: &mut S)
where
    S: SinkExt<Message> + Unpin,
{
    (state.streams.counters.slow_consumers).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    close(
        sink,
        error(state, "SLOW_CONSUMER", "SYSTEM", None),
        CLOSE_SLOW,
    )
    .await;
}

/// The index in [`GRANULARITIES`] of a granularity a client asked for.
fn granularity_index(unit: &str, period: u32) -> Option<u8> {
    let wanted = Granularity::new(Unit::parse(unit)?, period).ok()?;
    GRANULARITIES
        .iter()
        .position(|g| *g == wanted)
        .and_then(|i| u8::try_from(i).ok())
}

impl Session {
    /// The frames of `first` and of the broadcasts already queued behind it (until
    /// [`WRITE_BATCH`] is reached) that this session wants, as messages.
    fn drain(
        &mut self,
        first: Frames,
        feed: &mut tokio::sync::broadcast::Receiver<Frames>,
        markets: &Markets,
    ) -> Result<Vec<Message>, RecvError> {
        let mut out = Vec::new();
        let mut next = Some(first);
        while let Some(frames) = next.take() {
            for frame in frames.iter() {
                if !self.wants(frame) {
                    continue;
                }
                let text = self.depth_books.rework(frame, markets);
                out.push(Message::Text(text.unwrap_or_else(|| frame.text.clone())));
            }
            if out.len() >= WRITE_BATCH {
                break;
            }
            next = match feed.try_recv() {
                Ok(frames) => Some(frames),
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(n)) => {
                    return Err(RecvError::Lagged(n));
                }
                Err(_) => None,
            };
        }
        Ok(out)
    }

    fn key_revoked(&self) -> bool {
        self.key.as_ref().is_some_and(|key| key.is_revoked())
    }

    fn wants(&self, frame: &Frame) -> bool {
        let fresh = self
            .after
            .get(&(frame.channel, frame.topic.0))
            .is_none_or(|&after| frame.seq > after);
        let mine = frame
            .account
            .is_none_or(|a| self.key.as_ref().is_some_and(|k| k.account == a));
        fresh
            && mine
            && self
                .subscribed
                .get(&frame.channel)
                .is_some_and(|topics| topics.contains(&frame.topic))
    }

    async fn handle(&mut self, state: &Shared, text: &str) -> Reply {
        // Bounded before it is parsed, as a request body is: a message nested past the
        // bound is not a message this server reads.
        let bounded = matchbook_config::bounds::check_json(
            text.as_bytes(),
            super::streams::MAX_MESSAGE_BYTES,
        );
        let parsed = bounded
            .ok()
            .and_then(|()| serde_json::from_str::<serde_json::Value>(text).ok());
        let Some(value) = parsed else {
            return Reply::Close(
                error(state, "INVALID_MESSAGE_FORMAT", "SYSTEM", None),
                CLOSE_NOT_JSON,
            );
        };
        let Ok(message) = serde_json::from_value::<ClientMessage>(value) else {
            return Reply::Send(vec![error(state, "INVALID_MESSAGE_FORMAT", "SYSTEM", None)]);
        };
        let frames = match message {
            ClientMessage::Authenticate { api_token } => {
                match self.presented_key(state, &api_token) {
                    Ok(key) => self.authenticate(state, key).await,
                    Err(refusal) => return refusal,
                }
            }
            ClientMessage::Subscribe { channels } => {
                let kind = "SUBSCRIPTIONS";
                return self.subscribe_as_asked(state, &channels, kind).await;
            }
            ClientMessage::UpdateSubscription { channels } => {
                let kind = "SUBSCRIPTION_UPDATED";
                return self.subscribe_as_asked(state, &channels, kind).await;
            }
            ClientMessage::Unsubscribe { channels } => self.unsubscribe(state, &channels),
            ClientMessage::CreateOrder { order } => {
                let key = self.key.as_deref();
                let done = order_entry::create(state, key, &order).await;
                vec![entry(state, done, Named::in_order(&order))]
            }
            ClientMessage::UpdateOrder { order } => {
                let key = self.key.as_deref();
                let done = order_entry::update(state, key, &order).await;
                vec![entry(state, done, Named::in_order(&order))]
            }
            ClientMessage::CancelOrder {
                order_id,
                client_id,
            } => {
                let key = self.key.as_deref();
                let (id, client) = (order_id.as_deref(), client_id.as_deref());
                let done = order_entry::cancel(state, key, id, client).await;
                let named = Named {
                    order_id,
                    client_id,
                };
                vec![entry(state, done, named)]
            }
            ClientMessage::CancelAllOrders {
                order_ids,
                instrument_code,
            } => {
                let (key, code) = (self.key.as_deref(), instrument_code.as_deref());
                let done = order_entry::cancel_all(state, key, order_ids.as_deref(), code);
                vec![entry(state, done.await, Named::default())]
            }
            ClientMessage::DeactivateCancelAllAfter => {
                vec![self.cancel_all_after(state, &serde_json::json!(0)).await]
            }
            ClientMessage::CancelAllAfter { timeout } => {
                vec![self.cancel_all_after(state, &timeout).await]
            }
        };
        Reply::Send(frames)
    }

    fn answer(&self, state: &Shared, kind: &'static str, with_channels: bool) -> String {
        let channels = with_channels.then(|| {
            self.subscribed
                .iter()
                .map(|(&channel, topics)| ChannelState {
                    name: channel.name().to_owned(),
                    instrument_codes: topics
                        .iter()
                        .map(|&(id, _)| id)
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .filter_map(|id| state.markets.market_of(id).map(|m| m.code.clone()))
                        .collect(),
                })
                .collect()
        });
        json(&SessionFrame {
            channel_name: "SYSTEM",
            kind,
            channels,
            subscription: None,
            stamp: Stamp::of(state.now()),
        })
    }

    /// Checks every channel of the message first: one refusal and nothing changes.
    fn resolve(
        &self,
        state: &Shared,
        channels: &[ChannelRequest],
    ) -> Result<Vec<(Channel, BTreeSet<Topic>)>, String> {
        let mut resolved = Vec::with_capacity(channels.len());
        for request in channels {
            let name = request.name.as_str();
            let Some(channel) = Channel::named(name) else {
                return Err(error(state, "INVALID_CHANNEL", name, None));
            };
            if channel.is_private() {
                if self.key.is_none() {
                    return Err(error(state, "MISSING_AUTHENTICATION", name, None));
                }
                resolved.push((channel, BTreeSet::from([PRIVATE_TOPIC])));
                continue;
            }
            // (code, granularity) pairs: candles name theirs, the others take 0.
            let wanted: Vec<(String, Option<u8>)> = match (channel, &request.instrument_codes) {
                (Channel::Candlesticks, _) => (request.properties.iter().flatten())
                    .map(|p| {
                        let g = &p.time_granularity;
                        (
                            p.instrument_code.clone(),
                            granularity_index(&g.unit, g.period),
                        )
                    })
                    .collect(),
                (_, None) => (state.markets.markets.iter())
                    .map(|m| (m.code.clone(), Some(0)))
                    .collect(),
                (_, Some(codes)) => codes.iter().map(|c| (c.clone(), Some(0))).collect(),
            };
            let unknown: Vec<String> = (wanted.iter())
                .filter(|(code, _)| state.markets.market(code).is_none())
                .map(|(code, _)| code.clone())
                .collect();
            if !unknown.is_empty() {
                return Err(error(
                    state,
                    "INVALID_INSTRUMENT_CODES",
                    name,
                    Some(unknown),
                ));
            }
            let mut topics = BTreeSet::new();
            for (code, granularity) in wanted {
                let Some(g) = granularity else {
                    return Err(error(state, "INVALID_MESSAGE_FORMAT", name, None));
                };
                if let Some(m) = state.markets.market(&code) {
                    topics.insert((m.id, g));
                }
            }
            resolved.push((channel, topics));
        }
        Ok(resolved)
    }

    /// SUBSCRIBE adds channels; UPDATE_SUBSCRIPTION replaces their instrument lists. Either
    /// way the answer comes first, then a snapshot of the instruments that are new.
    async fn subscribe(
        &mut self,
        state: &Shared,
        channels: &[ChannelRequest],
        kind: &'static str,
    ) -> Vec<String> {
        let resolved = match self.resolve(state, channels) {
            Ok(resolved) => resolved,
            Err(refusal) => return vec![refusal],
        };
        let planned: Vec<Planned> = (resolved.into_iter().zip(channels))
            .map(|((channel, ids), request)| {
                let depth = request.depth();
                let fresh = self.needing_snapshot(state, channel, &ids, depth);
                (channel, ids, fresh, depth)
            })
            .collect();
        if !self.admit_snapshots(state, &planned) {
            return vec![error(state, "RATELIMIT", "SYSTEM", None)];
        }
        let mut added: Vec<(Channel, Vec<Topic>, usize)> = Vec::new();
        for (channel, ids, fresh, depth) in planned {
            let before = self.subscribed.insert(channel, ids.clone());
            if channel == Channel::OrderBook {
                for gone in before.unwrap_or_default().difference(&ids) {
                    self.depth_books.forget(gone.0);
                }
            }
            added.push((channel, fresh, depth));
        }
        let mut frames = vec![self.answer(state, kind, true)];
        let account = self.key.as_ref().map(|k| k.account);
        for (channel, ids, depth) in added {
            let private = channel.is_private();
            if private && !ids.is_empty() && self.watch.is_none() {
                // Before the snapshot is read: the frames after it must be made.
                self.watch = account.map(|a| state.streams.hub.watch(a));
            }
            let books = &mut self.depth_books;
            let (snapshots, covered) =
                subscribe_snapshots::snapshot(state, (channel, ids), depth, account, books).await;
            frames.extend(snapshots);
            (self.after).extend(covered.into_iter().map(|(id, seq)| ((channel, id), seq)));
        }
        frames
    }

    /// The markets of `ids` a subscription to `channel` at `depth` sends a snapshot of:
    /// those not subscribed yet and, for `ORDER_BOOK`, those followed at another depth (a
    /// client asking for a new depth gets the book at it, which resets its own).
    fn needing_snapshot(
        &self,
        state: &Shared,
        channel: Channel,
        ids: &BTreeSet<Topic>,
        depth: usize,
    ) -> Vec<Topic> {
        let subscribed = self.subscribed.get(&channel);
        let wanted = DepthBooks::limits(depth, state.max_book_depth).then_some(depth);
        let stale = |id: &Topic| {
            !subscribed.is_some_and(|s| s.contains(id))
                || (channel == Channel::OrderBook && self.depth_books.depth_of(id.0) != wanted)
        };
        ids.iter().filter(|id| stale(id)).copied().collect()
    }

    /// Counts the snapshots `planned` sends, each read on the market stage every reader
    /// shares: each public one (a book, a ticker, the last trades, a candle) counts against
    /// the client address's public window, as a keyless REST read of it does; the
    /// account's history reads its open and recently ended orders with all their trades
    /// and counts against the holder's window, as REST's read of an order does. False past
    /// either (some counts may have been taken).
    fn admit_snapshots(&self, state: &Shared, planned: &[Planned]) -> bool {
        let fresh = |counted: fn(Channel) -> bool| -> usize {
            (planned.iter())
                .filter(|(channel, ..)| counted(*channel))
                .map(|(_, _, fresh, _)| fresh.len())
                .sum()
        };
        let public = fresh(|channel| !channel.is_private());
        (0..public).all(|_| self.address_admits(state))
            && self.key.as_ref().is_none_or(|key| {
                let window = state.keys.holder_window(key.holder);
                (0..fresh(|channel| channel == Channel::AccountHistory))
                    .all(|_| window.admit(state.minute(), state.rate_limit))
            })
    }

    /// `CANCEL_ALL_AFTER`: a command like any other (TRADE scope, the key's rate limit,
    /// journalled), answered once it is applied.
    async fn cancel_all_after(&self, state: &Shared, timeout: &serde_json::Value) -> String {
        let refuse = |code: &str| error(state, code, "SYSTEM", None);
        let Some(key) = &self.key else {
            return refuse("MISSING_AUTHENTICATION");
        };
        if !key.has_any(&[Scope::Trade]) {
            return refuse("MISSING_PERMISSION");
        }
        if !key.limiter.admit(state.minute(), state.rate_limit) {
            return refuse("RATELIMIT");
        }
        let text = match timeout {
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::String(s) => Some(s.clone()),
            _ => None,
        };
        let millis = match timeout_millis(text.as_deref()) {
            Ok(millis) => millis,
            Err(e) => return refuse(&e.parts().1),
        };
        match set_cancel_all_after(state, key.account, millis).await {
            Ok(set) => json(&TimerFrame {
                channel_name: "SYSTEM",
                kind: "AUTO_CANCELLATION_TIMER_SET",
                timeout: set.timeout,
                cancel_at: set.cancel_at,
                stamp: Stamp::of(set.time),
            }),
            Err(e) => refuse(&e.parts().1),
        }
    }

    fn unsubscribe(&mut self, state: &Shared, names: &[String]) -> Vec<String> {
        for name in names {
            match Channel::named(name) {
                Some(channel) => {
                    self.subscribed.remove(&channel);
                    if channel == Channel::OrderBook {
                        self.depth_books.clear();
                    }
                    if !self.subscribed.keys().any(|c| c.is_private()) {
                        self.watch = None;
                    }
                }
                None => return vec![error(state, "INVALID_CHANNEL", name, None)],
            }
        }
        vec![self.answer(state, "UNSUBSCRIBED", true)]
    }
}
