//! How a session takes a key: `AUTHENTICATE`, or the older protocol's `api_token` in the
//! channels of a subscription (clients written for it, such as `bitpanda-aio`, subscribe
//! to `ACCOUNT_HISTORY` that way and never send `AUTHENTICATE`). Either way an admin key
//! is refused, a failed attempt counts against the client address's public window, and
//! the private channels follow a key of another account.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{CLOSE_POLICY, Reply, Session};
use crate::auth::keys::{ApiKey, Scope};
use crate::state::Shared;
use crate::ws::frames::{Channel, PRIVATE_TOPIC, Topic};
use crate::ws::messages::ChannelRequest;
use crate::ws::replies::error;
use crate::ws::subscribe_snapshots;

impl Session {
    /// The key behind `token`, or the answer to a failed attempt: `AUTHENTICATION_FAILED`,
    /// or past the address's window `RATELIMIT` and a close.
    pub(super) fn presented_key(&self, state: &Shared, token: &str) -> Result<Arc<ApiKey>, Reply> {
        // An admin key is for the admin listener only, as REST's `Caller` has it.
        let key = state.keys.authenticate(token);
        match key.filter(|key| !key.has_any(&[Scope::Admin])) {
            Some(key) => Ok(key),
            None if self.address_admits(state) => Err(Reply::Send(vec![error(
                state,
                "AUTHENTICATION_FAILED",
                "SYSTEM",
                None,
            )])),
            None => {
                let refused = error(state, "RATELIMIT", "SYSTEM", None);
                Err(Reply::Close(refused, CLOSE_POLICY))
            }
        }
    }

    /// Counts one request against the client address's public window (a session with no
    /// address, in-process, is not limited): an order book snapshot, or a failed
    /// `AUTHENTICATE` as REST counts a request without a valid key, so that keys cannot be
    /// guessed on one connection faster than REST lets them be.
    pub(super) fn address_admits(&self, state: &Shared) -> bool {
        let window = &state.address_windows;
        (self.peer).is_none_or(|ip| window.admit(ip, state.minute(), state.public_rate_limit))
    }

    /// A valid `AUTHENTICATE`: its answer, then the snapshots of the private channels
    /// that start again (see [`Session::take_key`]).
    pub(super) async fn authenticate(&mut self, state: &Shared, key: Arc<ApiKey>) -> Vec<String> {
        match self.take_key(state, key).await {
            Ok(snapshots) => {
                let mut frames = vec![self.answer(state, "AUTHENTICATED", false)];
                frames.extend(snapshots);
                frames
            }
            Err(refusal) => vec![refusal],
        }
    }

    /// SUBSCRIBE or UPDATE_SUBSCRIPTION, after the key its channels carry, if any: the
    /// same `api_token` in every channel that has one (two different ones are a malformed
    /// message), taken as an `AUTHENTICATE` just before, without its answer.
    pub(super) async fn subscribe_as_asked(
        &mut self,
        state: &Shared,
        channels: &[ChannelRequest],
        kind: &'static str,
    ) -> Reply {
        let mut tokens = channels.iter().filter_map(|c| c.api_token.as_deref());
        let mut frames = Vec::new();
        if let Some(token) = tokens.next() {
            if tokens.any(|other| other != token) {
                let refused = error(state, "INVALID_MESSAGE_FORMAT", "SYSTEM", None);
                return Reply::Send(vec![refused]);
            }
            let key = match self.presented_key(state, token) {
                Ok(key) => key,
                Err(refusal) => return refusal,
            };
            if !self
                .key
                .as_ref()
                .is_some_and(|held| Arc::ptr_eq(held, &key))
            {
                match self.take_key(state, key).await {
                    Ok(snapshots) => frames = snapshots,
                    Err(refusal) => return Reply::Send(vec![refusal]),
                }
            }
        }
        frames.extend(self.subscribe(state, channels, kind).await);
        Reply::Send(frames)
    }

    /// Makes `key` the session's. The private channels subscribed follow it: one of
    /// another account starts them again from that account's snapshots (returned), as
    /// subscribing does (counted against its holder's window; past it the key is not
    /// taken and the refusal is returned).
    async fn take_key(&mut self, state: &Shared, key: Arc<ApiKey>) -> Result<Vec<String>, String> {
        let account = key.account;
        // What starts again: the private channels, when the account changes.
        let switched = self.key.as_ref().is_some_and(|k| k.account != account);
        let private: Vec<(Channel, BTreeSet<Topic>)> = (self.subscribed.iter())
            .filter(|(channel, _)| switched && channel.is_private())
            .map(|(channel, topics)| (*channel, topics.clone()))
            .collect();
        if !private.is_empty() {
            let window = state.keys.holder_window(key.holder);
            if !window.admit(state.minute(), state.rate_limit) {
                return Err(error(state, "RATELIMIT", "SYSTEM", None));
            }
        }
        self.key = Some(key);
        let mut frames = Vec::new();
        if private.is_empty() {
            return Ok(frames);
        }
        // Before the snapshots are read: the frames after them must be made.
        self.watch = Some(state.streams.hub.watch(account));
        for (channel, topics) in private {
            self.after.remove(&(channel, PRIVATE_TOPIC.0));
            let topics = topics.into_iter().collect();
            let books = &mut self.depth_books;
            let (snapshots, covered) =
                subscribe_snapshots::snapshot(state, (channel, topics), 0, Some(account), books)
                    .await;
            frames.extend(snapshots);
            (self.after).extend(covered.into_iter().map(|(id, seq)| ((channel, id), seq)));
        }
        Ok(frames)
    }
}
