//! The NATS connection the log and the lease share the rules of: a runtime of its own
//! (their callers are plain threads), and a client that retries the first connection and
//! gives up on a request after the configured time-out.

use std::time::Duration;

use async_nats::jetstream;

use crate::LogError;

/// A single-threaded runtime that drives one component's requests.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, LogError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LogError::Connect(e.to_string()))
}

/// Connects to any of `servers`, retrying until `timeout`.
pub(crate) async fn connect(
    servers: &[String],
    timeout: Duration,
) -> Result<jetstream::Context, LogError> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(timeout)
        .request_timeout(Some(timeout))
        .retry_on_initial_connect()
        .connect(servers.to_vec());
    let client = tokio::time::timeout(timeout, client)
        .await
        .map_err(|_| LogError::Connect("timed out".into()))?
        .map_err(|e| LogError::Connect(e.to_string()))?;
    let mut context = jetstream::new(client);
    context.set_timeout(timeout);
    Ok(context)
}
