//! Who a request is: API keys and their scopes (the key store and its file, revoked
//! keys, a replicated group's shared keys) and the HTTP extractor that turns a bearer
//! token into a caller. The WebSocket's `AUTHENTICATE` reads the same store.

pub mod caller;
pub(crate) mod group_keys;
pub(crate) mod json_lines;
pub mod key_files;
pub mod keys;
pub mod revoked_keys;
