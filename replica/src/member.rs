//! A node of a replicated group at run time: one thread that keeps its runtime in its role.
//! While another node holds the lease it follows: it reads the log from the command after
//! the last it applied and hands each command to the runtime (a hot standby serving reads
//! and streams). When it takes the lease it reads the log to its end, applies the rest and
//! gives the runtime a log to write; when it loses the lease, or the log refuses its batch
//! because another node appended (fencing), it steps down and follows again. Where each
//! node serves clients and the state hashes it recorded at fixed command numbers are kept
//! beside the lease, so followers reach the leader and compare states.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use matchbook_runtime::{RuntimeError, RuntimeHandle};

use crate::checkpoint::{Compared, compare};
use crate::lease::{Lease, Role};
use crate::name::{NameClaim, NameState};
use crate::node::NodeConfig;
pub use crate::status::{LeaderInfo, NodeStatus};
use crate::{JetStreamLog, LogTail};

/// Pause between two reads of the log that found nothing new.
const IDLE_POLL: Duration = Duration::from_millis(2);

/// A leader looks at trimming the log every this many ticks of the lease.
const TRIM_EVERY: u32 = 10;

/// Pause before a tail that could not be opened is tried again.
const REOPEN_PAUSE: Duration = Duration::from_millis(200);

/// Longest a role change may wait for the runtime's sequencer (behind a full queue).
const ROLE_CHANGE_PATIENCE: Duration = Duration::from_secs(30);

/// The running member thread.
#[derive(Debug)]
pub struct Membership {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    status: Arc<NodeStatus>,
}

/// What a node brings to its group.
pub struct Joining {
    /// Where it serves clients, for the other nodes to forward to.
    pub address: String,
    /// Its runtime, started with [`matchbook_runtime::Runtime::start_follower`] on the
    /// state before command `next`.
    pub handle: RuntimeHandle,
    /// The first command it needs from the log.
    pub next: u64,
    /// The command of its newest local snapshot (the one it started from, or one written
    /// since): the log keeps every command after it for this node.
    pub snapshot: Box<dyn Fn() -> Option<u64> + Send>,
    /// Called once if its state is found to differ from the leader's.
    pub diverged: Box<dyn FnOnce(String) + Send>,
    /// Digest of its exchange configuration: the group's first node records its own, and
    /// a node with another is refused (it would apply the log to another exchange).
    pub config_pin: String,
    /// The secret it proposes for the group: the group's first node records its own, and
    /// every node takes the recorded one ([`NodeStatus::secret`]).
    pub secret: String,
}

impl Membership {
    /// Starts keeping the node in its role in the group.
    pub fn start(config: NodeConfig, joining: Joining) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(NodeStatus::default());
        joining.handle.set_checkpoint_every(config.checkpoint_every);
        let member = Member {
            name: NameClaim::new(&config.node, &joining.address, config.lease),
            config_pin: joining.config_pin,
            secret: joining.secret,
            announced: false,
            config,
            address: joining.address,
            handle: joining.handle,
            lease: None,
            tail: None,
            reopen_at: Instant::now(),
            leading: false,
            next: joining.next.max(1),
            status: status.clone(),
            diverged: Some(joining.diverged),
            log_keeping: LogKeeping {
                snapshot: joining.snapshot,
                published: None,
                trimmer: None,
                kept_from: 0,
                ticks: 0,
            },
        };
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("matchbook-member".into())
            .spawn(move || member.run(&flag))?;
        Ok(Membership {
            stop,
            thread: Some(thread),
            status,
        })
    }

    /// The node's role and the group as it knows them.
    pub fn status(&self) -> Arc<NodeStatus> {
        self.status.clone()
    }

    /// Stops the thread; a leader resigns the lease, so another node need not wait it out.
    /// Call it once the runtime has stopped writing.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.halt();
    }
}

type Diverged = Box<dyn FnOnce(String) + Send>;

struct Member {
    config: NodeConfig,
    address: String,
    handle: RuntimeHandle,
    lease: Option<Lease>,
    /// This process's hold on the node's name; nothing is written under the name before.
    name: NameClaim,
    /// Digest of the exchange configuration it runs (the data directory's pin).
    config_pin: String,
    /// The secret it proposes for the group.
    secret: String,
    announced: bool,
    tail: Option<LogTail>,
    /// When a tail that could not be opened is tried again.
    reopen_at: Instant,
    leading: bool,
    /// Number of the next command the runtime is to get from the log.
    next: u64,
    status: Arc<NodeStatus>,
    diverged: Option<Diverged>,
    log_keeping: LogKeeping,
}

/// What the log must keep for this node, and, on the leader, what it trims.
struct LogKeeping {
    snapshot: Box<dyn Fn() -> Option<u64> + Send>,
    /// The snapshot command last published.
    published: Option<u64>,
    /// The leader's handle for trimming.
    trimmer: Option<LogTail>,
    /// The log holds every command from this one on (as far as this node trimmed it).
    kept_from: u64,
    ticks: u32,
}

impl Member {
    fn run(mut self, stop: &AtomicBool) {
        let mut next_tick = Instant::now();
        while !stop.load(Ordering::Acquire) {
            let now = Instant::now();
            if now >= next_tick {
                let was_leading = self.leading;
                self.tick(now);
                if was_leading && self.leading {
                    self.note_slow_renewal(now.elapsed());
                }
                let share = if self.leading { 3 } else { 6 };
                next_tick = now + self.config.lease / share;
            }
            let progressed = !self.leading && self.follow_step();
            if !progressed {
                let pause = if self.leading {
                    10 * IDLE_POLL
                } else {
                    IDLE_POLL
                };
                std::thread::sleep(pause.min(next_tick.saturating_duration_since(now)));
            }
        }
        if let Some(lease) = self.lease.as_mut() {
            if self.leading {
                lease.resign();
            }
            self.name.release(lease);
        }
    }

    /// Says when a leader's tick (the renewal, then the checkpoints and the log's
    /// trimming, each a round trip to the servers) took over a third of the lease: the
    /// next renewal waits for it, so a few such ticks in a row let another node take the
    /// lease from a leader that never stopped.
    fn note_slow_renewal(&self, took: Duration) {
        if took > self.config.lease / 3 {
            tracing::warn!(
                ?took,
                "a leader's tick was slow: its next renewal comes late"
            );
        }
    }

    /// Looks at the lease (renewing it when held) and changes role if it changed hands.
    fn tick(&mut self, now: Instant) {
        if self.lease.is_none() {
            match Lease::open(self.config.lease_config()) {
                Ok(lease) => self.lease = Some(lease),
                Err(e) => {
                    tracing::warn!("cannot reach the group's lease: {e}");
                    return;
                }
            }
        }
        if !self.admitted(now) {
            return;
        }
        let Some(lease) = self.lease.as_mut() else {
            return;
        };
        match lease.tick(now) {
            Role::Leader { term } => {
                if self.leading && self.handle.is_following() {
                    tracing::warn!("the log refused this node's batch (another node appended)");
                    self.stepped_down();
                }
                if !self.leading && self.status.problem().is_some() {
                    // A node that cannot follow the log must not write it either.
                    if let Some(lease) = self.lease.as_mut() {
                        lease.resign();
                    }
                } else if !self.leading {
                    self.promote(term);
                }
            }
            Role::Follower { leader } => {
                if self.leading {
                    tracing::warn!(?leader, "lost the group's lease: following");
                    self.step_down();
                }
                self.note_leader(leader);
            }
        }
        self.checkpoints();
        self.keep_log();
    }

    /// Whether this process may act as the node: it holds the node's name and runs the
    /// group's exchange configuration (checked once, before it says where it serves). A
    /// process refused either is told why, for good, and steps aside.
    fn admitted(&mut self, now: Instant) -> bool {
        let Some(lease) = self.lease.as_mut() else {
            return false;
        };
        let node = &self.config.node;
        let refusal = match self.name.keep(lease, now) {
            NameState::Held if self.announced => return true,
            NameState::Held => match lease.group_config(&self.config_pin) {
                Ok(group) if group == self.config_pin => {
                    match lease.group_secret(&self.secret) {
                        Ok(secret) => {
                            // Set at the first admission; the recorded secret never changes.
                            let _ = self.status.secret.set(secret);
                        }
                        Err(e) => {
                            tracing::warn!("cannot read the group's secret: {e}");
                            return false;
                        }
                    }
                    if let Err(e) = lease.announce(&self.address) {
                        tracing::warn!("cannot publish this node's address: {e}");
                        return false;
                    }
                    self.announced = true;
                    self.status.admitted.store(true, Ordering::Release);
                    return true;
                }
                Ok(group) => format!(
                    "this node's exchange configuration ({}) is not the group's ({group}): \
                     start it with the configuration the group was created with",
                    self.config_pin
                ),
                Err(e) => {
                    tracing::warn!("cannot read the group's configuration: {e}");
                    return false;
                }
            },
            NameState::Waiting => return false,
            NameState::InUse(other) | NameState::Lost(other) => format!(
                "node name {node:?} is held by another running process, {other}: \
                 give each node its own --node"
            ),
        };
        self.status.admitted.store(false, Ordering::Release);
        if self.leading {
            self.step_down();
        }
        if let Some(lease) = self.lease.as_mut() {
            lease.resign();
        }
        self.report_problem(refusal);
        false
    }

    fn note_leader(&mut self, leader: Option<String>) {
        // A follower never forwards to itself, whatever the lease said (it reads the
        // stream leader's copy, but that leader may have just changed).
        let leader = leader.filter(|node| *node != self.config.node);
        let known = self.status.leader();
        let address = match (&leader, &known) {
            (Some(node), Some(k)) if *node == k.node && k.address.is_some() => k.address.clone(),
            (Some(node), _) => self.lease.as_mut().and_then(|l| l.address_of(node)),
            (None, _) => None,
        };
        let info = leader.map(|node| LeaderInfo { node, address });
        self.status.set_leader(info);
    }

    /// Reads the log to its end, applies the rest, and starts writing it.
    fn promote(&mut self, term: u64) {
        self.tail = None;
        let opened = JetStreamLog::open_after(self.config.log_config(term), self.next);
        let (log, entries) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                tracing::warn!("holding the lease but cannot open the log to lead: {e}");
                return;
            }
        };
        if let Some(last) = entries.last() {
            self.next = last.seq + 1;
        }
        if self.handle.replicate(entries).is_err() || log.next_seq() != self.next {
            let why = format!("the log and the runtime disagree at {}", self.next);
            self.report_problem(why);
            if let Some(lease) = self.lease.as_mut() {
                lease.resign();
            }
            return;
        }
        if self.handle.lead(Box::new(log)).is_err() {
            return;
        }
        // Said only once the runtime takes commands: whoever reads it may send them.
        if !self.wait_for(|handle| !handle.is_following()) {
            return;
        }
        self.leading = true;
        (self.status.log_end).fetch_max(self.next - 1, Ordering::AcqRel);
        self.status.caught_up.store(true, Ordering::Release);
        self.status.term.store(term, Ordering::Release);
        self.status.leading.store(true, Ordering::Release);
        let me = LeaderInfo {
            node: self.config.node.clone(),
            address: Some(self.address.clone()),
        };
        self.status.set_leader(Some(me));
        tracing::info!(
            term,
            from = self.next,
            "holding the lease: this node writes"
        );
    }

    /// Tells the runtime to stop writing and follows from where it stopped.
    fn step_down(&mut self) {
        if self.handle.follow().is_err() {
            return;
        }
        self.wait_for(RuntimeHandle::is_following);
        self.stepped_down();
    }

    /// Waits (at most [`ROLE_CHANGE_PATIENCE`]) until the runtime's sequencer has taken a
    /// role change; false if it has not.
    fn wait_for(&self, done: impl Fn(&RuntimeHandle) -> bool) -> bool {
        let deadline = Instant::now() + ROLE_CHANGE_PATIENCE;
        while !done(&self.handle) {
            if Instant::now() >= deadline {
                tracing::error!("the runtime did not take the role change");
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    }

    fn stepped_down(&mut self) {
        self.next = self.handle.last_sequenced().map_or(self.next, |s| s + 1);
        self.leading = false;
        self.status.leading.store(false, Ordering::Release);
    }

    /// Says (once) why this node cannot follow (nor lead) the log.
    fn report_problem(&self, why: String) {
        let mut problem = self
            .status
            .problem
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if problem.is_none() {
            tracing::error!("this node cannot follow the log: {why}");
            *problem = Some(why);
        }
    }

    /// Reads what the log holds past the last command handed over; true if it found any.
    fn follow_step(&mut self) -> bool {
        if self.tail.is_none() {
            if Instant::now() < self.reopen_at {
                return false;
            }
            let (servers, timeout) = (&self.config.servers, self.config.timeout());
            match LogTail::open(servers, &self.config.group, self.next, timeout) {
                Ok(tail) => self.tail = Some(tail),
                Err(e @ crate::LogError::Trimmed { .. }) => {
                    self.report_problem(e.to_string());
                    self.reopen_at = Instant::now() + REOPEN_PAUSE;
                    return false;
                }
                // No stream yet (no leader has written), or no server: tried again soon.
                Err(_) => {
                    self.reopen_at = Instant::now() + REOPEN_PAUSE;
                    return false;
                }
            }
        }
        let Some(tail) = self.tail.as_mut() else {
            return false;
        };
        match tail.poll() {
            Ok(entries) if entries.is_empty() => {
                self.status.caught_up.store(true, Ordering::Release);
                false
            }
            Ok(entries) => {
                let last = entries.last().map_or(0, |e| e.seq);
                self.status.log_end.fetch_max(last, Ordering::AcqRel);
                match self.handle.replicate(entries) {
                    Ok(()) => self.next = last + 1,
                    Err(RuntimeError::Stopped) => self.tail = None,
                    Err(e) => tracing::warn!("cannot apply the log: {e}"),
                }
                true
            }
            Err(e) => {
                tracing::warn!("reading the log: {e}");
                self.tail = None;
                false
            }
        }
    }

    /// Publishes this node's newest snapshot; a leader, every [`TRIM_EVERY`] ticks, trims
    /// the log below the oldest snapshot of every node of the group (never its last batch,
    /// so the oldest command stored stays known).
    fn keep_log(&mut self) {
        let (Some(lease), keeping) = (self.lease.as_mut(), &mut self.log_keeping) else {
            return;
        };
        if let Some(seq) = (keeping.snapshot)()
            && keeping.published != Some(seq)
        {
            lease.publish_snapshot(seq);
            keeping.published = Some(seq);
        }
        keeping.ticks += 1;
        if !self.leading || keeping.ticks % TRIM_EVERY != 0 {
            return;
        }
        let Some(floor) = lease.snapshot_floor() else {
            return;
        };
        let keep_from = (floor + 1).min(self.status.log_end());
        if keep_from <= keeping.kept_from.max(1) {
            self.status.trim_checks.fetch_add(1, Ordering::AcqRel);
            return;
        }
        if keeping.trimmer.is_none() {
            let (servers, timeout) = (&self.config.servers, self.config.timeout());
            keeping.trimmer = LogTail::open(servers, &self.config.group, keep_from, timeout).ok();
        }
        let Some(trimmer) = keeping.trimmer.as_mut() else {
            return;
        };
        match trimmer.trim_before(keep_from) {
            Ok(purged) => {
                keeping.kept_from = keep_from;
                self.status.kept_from.store(keep_from, Ordering::Release);
                self.status.trim_checks.fetch_add(1, Ordering::AcqRel);
                tracing::info!(purged, keep_from, "log trimmed below every node's snapshot");
            }
            Err(e) => {
                tracing::warn!("trimming the log: {e}");
                keeping.trimmer = None;
            }
        }
    }

    /// A leader publishes its recorded state hashes; a follower compares its own with
    /// them, and a difference stops it (it says so once).
    fn checkpoints(&mut self) {
        let mine = self.handle.checkpoints();
        if self.leading {
            self.status
                .log_end
                .fetch_max(self.handle.last_sequenced().unwrap_or(0), Ordering::AcqRel);
        }
        let Some(lease) = self.lease.as_mut() else {
            return;
        };
        if self.leading {
            if !mine.is_empty() {
                lease.publish_checkpoints(&mine);
            }
            return;
        }
        match compare(&mine, &lease.checkpoints()) {
            Compared::Nothing => {}
            Compared::Equal(seq) => {
                self.status.compared.fetch_max(seq, Ordering::AcqRel);
            }
            Compared::Differs { seq, mine, theirs } => {
                let why = format!(
                    "state hash {mine:016x} after command {seq}, the leader's {theirs:016x}"
                );
                tracing::error!("this node's state differs from the leader's: {why}");
                let mut divergence = self
                    .status
                    .divergence
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                *divergence = Some(why.clone());
                if let Some(diverged) = self.diverged.take() {
                    diverged(why);
                }
            }
        }
    }
}
