//! The network edge both gateways share: the listeners and their connection limits,
//! the client's address behind trusted proxies (`Forwarded`, `X-Forwarded-For`), the
//! places (addresses) a client may connect from, and the per-address rate windows.

pub mod connection;
pub(crate) mod forwarded;
pub mod listener;
pub mod places;
pub mod proxies;
pub mod ratelimit;
