//! A node's name, held by one running process at a time. What the group keeps per node
//! (`address.NAME`, `snapshot.NAME`, the leader's name in the lease) would be shared by two
//! nodes started with the same `--node`: orders forwarded to the wrong process, the log
//! trimmed below one node's snapshot, a leader its twin takes for itself. A process claims
//! `node.NAME` beside the lease, by a create, or by a compare-and-set over a claim it saw
//! go unrenewed for a whole lease period (its holder died), and renews it every tick. A
//! process that sees another's claim renewed refuses the name; a holder whose renewal is
//! refused has lost it (it was silent for a lease period and another process took over).
//! As with the lease, each process measures time with its own monotonic clock only.

use std::time::{Duration, Instant};

use async_nats::jetstream::kv;

use crate::lease::Lease;

/// Where this process stands with its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameState {
    /// This process holds it.
    Held,
    /// Not held yet: nobody was seen holding it for a whole lease period so far (or the
    /// servers could not be asked). Ask again next tick.
    Waiting,
    /// Another running process holds it (its claim was renewed while this one watched).
    InUse(String),
    /// This process held it, and another took it over after it went unrenewed.
    Lost(String),
}

/// What this process last saw of another's claim.
#[derive(Debug, Clone, Copy)]
struct Seen {
    revision: u64,
    since: Instant,
}

/// One process's claim on its node name.
#[derive(Debug)]
pub struct NameClaim {
    key: String,
    /// Who this process is, as the claim records it (for the other's refusal).
    instance: String,
    lease: Duration,
    /// Revision of this process's last write of the claim, while it holds it.
    held: Option<u64>,
    /// Whether it ever held it (another's claim is then a take-over, not a refusal).
    was_held: bool,
    seen: Option<Seen>,
}

impl NameClaim {
    /// A claim on `node` for the process serving at `address`; a claim unrenewed for
    /// `lease` is taken over.
    pub fn new(node: &str, address: &str, lease: Duration) -> Self {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        NameClaim {
            key: format!("node.{node}"),
            instance: format!(
                "{address} (process {}, started {started})",
                std::process::id()
            ),
            lease,
            held: None,
            was_held: false,
            seen: None,
        }
    }

    /// One step at `now`: the holder renews; otherwise the name is taken if free or left
    /// unrenewed for a lease period. Call it more often than the lease lasts.
    pub fn keep(&mut self, lease: &Lease, now: Instant) -> NameState {
        match self.held {
            Some(revision) => self.renew(lease, revision),
            None => self.claim(lease, now),
        }
    }

    fn renew(&mut self, lease: &Lease, revision: u64) -> NameState {
        let value = self.instance.clone().into_bytes().into();
        match lease.block_on(lease.store().update(&self.key, value, revision)) {
            Ok(revision) => {
                self.held = Some(revision);
                NameState::Held
            }
            Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => self.recheck(lease),
            // No server to ask: the claim stands until another process takes it over.
            Err(_) => NameState::Held,
        }
    }

    /// After a renewal refused for its revision. One whose answer was lost (a server
    /// died) may still have been stored: the claim is this process's as long as it holds
    /// this process's own text.
    fn recheck(&mut self, lease: &Lease) -> NameState {
        let entry = match lease.latest(&self.key) {
            Ok(entry) => entry,
            // Asked again at the next renewal.
            Err(_) => return NameState::Held,
        };
        match entry {
            Some(entry) if entry.value == self.instance.as_bytes() => {
                self.held = Some(entry.revision);
                NameState::Held
            }
            Some(entry) => {
                self.held = None;
                NameState::Lost(String::from_utf8_lossy(&entry.value).into())
            }
            None => {
                self.held = None;
                self.claim(lease, Instant::now())
            }
        }
    }

    fn claim(&mut self, lease: &Lease, now: Instant) -> NameState {
        let value: bytes::Bytes = self.instance.clone().into_bytes().into();
        let entry = match lease.latest(&self.key) {
            Ok(entry) => entry,
            Err(_) => return NameState::Waiting,
        };
        let taken = match entry {
            None => lease.block_on(lease.store().create(&self.key, value)).ok(),
            Some(entry) if entry.value == self.instance.as_bytes() => Some(entry.revision),
            Some(entry) if self.was_held => {
                return NameState::Lost(String::from_utf8_lossy(&entry.value).into());
            }
            Some(entry) => match self.seen {
                None => {
                    self.seen = Some(Seen {
                        revision: entry.revision,
                        since: now,
                    });
                    return NameState::Waiting;
                }
                Some(seen) if seen.revision != entry.revision => {
                    return NameState::InUse(String::from_utf8_lossy(&entry.value).into());
                }
                Some(seen) if now.duration_since(seen.since) < self.lease => {
                    return NameState::Waiting;
                }
                Some(_) => {
                    let update = lease.store().update(&self.key, value, entry.revision);
                    lease.block_on(update).ok()
                }
            },
        };
        match taken {
            Some(revision) => {
                (self.held, self.was_held) = (Some(revision), true);
                NameState::Held
            }
            // Another process was faster: the next look sees it renew.
            None => NameState::Waiting,
        }
    }

    /// Gives the name up (a clean stop), so the next process with it need not wait out a
    /// lease period. Only this process's own claim is removed.
    pub fn release(&mut self, lease: &Lease) {
        if let Some(revision) = self.held.take() {
            let removal = lease
                .store()
                .delete_expect_revision(&self.key, Some(revision));
            let _ = lease.block_on(removal);
        }
    }
}
