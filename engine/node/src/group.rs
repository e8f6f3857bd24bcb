//! A node of a replicated group: joined with its runtime (a follower on the state before
//! command `next`), then waited for until it is in step with the group, before anything
//! is provisioned or served.

use std::time::{Duration, Instant};

use matchbook::runtime::RuntimeHandle;
use matchbook_replica::member::{Joining, Membership, NodeStatus};
use tokio::sync::oneshot;

use crate::{NodeError, Replication};

/// How long a starting node waits to be in step with its group before it gives up.
const SETTLE_PATIENCE: Duration = Duration::from_secs(120);

/// How often a starting node looks at its membership while it waits.
const SETTLE_LOOK: Duration = Duration::from_millis(10);

/// This node's place in its group.
pub(crate) struct Joined {
    /// The thread keeping it in its role.
    pub(crate) membership: Membership,
    /// Resolves with the reason if the node's state is found to differ from the leader's.
    pub(crate) diverged: oneshot::Receiver<String>,
}

/// Joins the group with the runtime behind `handle` (a follower on the state before
/// command `next`); `snapshot` says the command of its newest local snapshot;
/// `config_pin` is its exchange configuration's digest.
pub(crate) fn join(
    replication: &Replication,
    handle: RuntimeHandle,
    next: u64,
    snapshot: impl Fn() -> Option<u64> + Send + 'static,
    config_pin: String,
) -> Result<Joined, NodeError> {
    let secret = match &replication.secret {
        Some(secret) => secret.clone(),
        None => random_secret()?,
    };
    let (tell, diverged) = oneshot::channel();
    let joining = Joining {
        address: replication.address.clone(),
        handle,
        next,
        snapshot: Box::new(snapshot),
        diverged: Box::new(move |why| {
            let _ = tell.send(why);
        }),
        config_pin,
        secret,
    };
    Ok(Joined {
        membership: Membership::start(replication.config.clone(), joining)?,
        diverged,
    })
}

/// Waits until the node is in step with its group: it leads, or it is admitted (its own
/// name, the group's configuration) and follows a log that some leader has written and has
/// applied what the log held. Returns whether this node is to provision the exchange (it
/// leads a group whose log is empty, and `resumed` says it has no state of its own either).
pub(crate) fn settle(
    handle: &RuntimeHandle,
    status: &NodeStatus,
    resumed: bool,
) -> Result<bool, NodeError> {
    let deadline = Instant::now() + SETTLE_PATIENCE;
    loop {
        if let Some(problem) = status.problem() {
            return Err(NodeError::Replication(problem));
        }
        if status.is_leading() {
            return Ok(status.log_end() == 0 && !resumed);
        }
        let applied = handle.stats().market;
        let written = status.log_end() > 0 || resumed;
        // A follower serves only once admitted (a twin, or another configuration, is refused).
        if status.admitted() && status.caught_up() && written && applied >= status.log_end() {
            return Ok(false);
        }
        if Instant::now() >= deadline {
            return Err(NodeError::Replication(
                "neither leading nor following a written log after 120 s".into(),
            ));
        }
        std::thread::sleep(SETTLE_LOOK);
    }
}

/// 32 random bytes in hex: a secret for a group whose host brought none.
fn random_secret() -> Result<String, NodeError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| NodeError::Io(std::io::Error::other(e.to_string())))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
