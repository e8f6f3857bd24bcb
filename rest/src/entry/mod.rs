//! Order entry shared by the gateways of this server (HTTP's order routes and the
//! WebSocket's `TRADING` channel): requests read from the wire ([`request`]) and carried
//! out by the node's order service ([`service`]). Neither gateway imports the other.

pub mod request;
pub mod service;
