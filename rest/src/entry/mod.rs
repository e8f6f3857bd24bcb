//! Order entry shared by the gateways of this server (HTTP's order routes and the
//! WebSocket's `TRADING` channel): requests read from the wire ([`request`]) and carried
//! out by the node's order service ([`service`]), and the dead-man switch ([`dead_man`]). Neither gateway imports the other.

pub mod dead_man;
pub mod request;
pub mod service;
