//! A node's name on a real three-server NATS cluster: held by one running process at a
//! time. A second process given the same `--node` is refused while the first renews its
//! claim, takes the name over only after a whole lease period without renewal (the first
//! then learns it lost it), and at once after a clean stop; a member started under a
//! name in use says so, never leads and never publishes its address over the holder's.

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use matchbook_config::demo;
use matchbook_core::{Engine, Timestamp};
use matchbook_market::MarketData;
use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::lease::{Lease, LeaseConfig};
use matchbook_replica::member::{Joining, Membership};
use matchbook_replica::name::{NameClaim, NameState};
use matchbook_replica::node::NodeConfig;
use matchbook_runtime::{ManualClock, Runtime};

const LEASE: Duration = Duration::from_millis(1_000);
const TICK: Duration = Duration::from_millis(100);

fn cluster(test: &str) -> NatsCluster {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nats-name-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    NatsCluster::start(&server_binary(), &dir, 3).expect("a three-server NATS cluster")
}

fn lease(cluster: &NatsCluster, bucket: &str) -> Lease {
    Lease::open(LeaseConfig {
        servers: cluster.urls(),
        bucket: bucket.into(),
        replicas: 3,
        node: "twin".into(),
        lease: LEASE,
        timeout: Duration::from_secs(1),
    })
    .expect("the lease bucket opens")
}

/// Keeps `claim` until it is held (at most 10 s: a fresh bucket's stream may still be
/// electing its leader).
fn first_hold(claim: &mut NameClaim, lease: &Lease) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match claim.keep(lease, Instant::now()) {
            NameState::Held => return,
            NameState::Waiting if Instant::now() < deadline => std::thread::sleep(TICK),
            state => panic!("a free name not taken: {state:?}"),
        }
    }
}

#[test]
fn a_name_is_refused_while_renewed_taken_over_when_not_and_freed_by_a_clean_stop() {
    let cluster = cluster("claims");
    let (a_lease, b_lease) = (lease(&cluster, "names"), lease(&cluster, "names"));
    let mut a = NameClaim::new("twin", "http://a", LEASE);
    let mut b = NameClaim::new("twin", "http://b", LEASE);
    first_hold(&mut a, &a_lease);
    // While a renews, b is refused, naming a.
    let refused = loop {
        assert_eq!(a.keep(&a_lease, Instant::now()), NameState::Held);
        match b.keep(&b_lease, Instant::now()) {
            NameState::Waiting => std::thread::sleep(TICK),
            state => break state,
        }
    };
    let NameState::InUse(holder) = refused else {
        panic!("b not refused: {refused:?}");
    };
    assert!(holder.starts_with("http://a (process "), "{holder}");

    // a stops renewing (as if killed): a fresh process takes the name over once a whole
    // lease has passed since it first looked, not before.
    let mut c = NameClaim::new("twin", "http://c", LEASE);
    let first_look = Instant::now();
    let taken = loop {
        let now = Instant::now();
        match c.keep(&b_lease, now) {
            NameState::Held => break now,
            NameState::Waiting => std::thread::sleep(TICK),
            state => panic!("an unrenewed name not taken over: {state:?}"),
        }
    };
    let waited = taken.duration_since(first_look);
    assert!(
        waited >= LEASE && waited < LEASE + Duration::from_secs(2),
        "{waited:?}"
    );
    let lost = a.keep(&a_lease, Instant::now());
    assert!(
        matches!(&lost, NameState::Lost(by) if by.starts_with("http://c (process ")),
        "the old holder learns it lost the name: {lost:?}"
    );

    // A clean stop frees the name for the next process at once.
    c.release(&b_lease);
    let mut d = NameClaim::new("twin", "http://d", LEASE);
    assert_eq!(d.keep(&a_lease, Instant::now()), NameState::Held);
}

#[test]
fn a_member_started_under_a_name_in_use_says_so_and_never_leads() {
    let cluster = cluster("member");
    let mut config = NodeConfig::parse(&cluster.urls().join(","), "twin").expect("settings");
    config.group = "TWINS".into();
    config.lease = LEASE;
    // The first process with the name, renewing its claim (and its address) throughout.
    let holder_lease = Lease::open(config.lease_config()).expect("the lease bucket opens");
    let mut holder = NameClaim::new("twin", "http://first", LEASE);
    first_hold(&mut holder, &holder_lease);
    let mut address_lease = Lease::open(config.lease_config()).expect("opens");
    address_lease.announce("http://first").expect("announced");

    let engine = Engine::new(demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    let clock = Arc::new(ManualClock::at(Timestamp(0)));
    let runtime = Runtime::start_follower(engine, market, clock, 64, 1, None).expect("threads");
    let joining = Joining {
        address: "http://second".into(),
        handle: runtime.handle(),
        next: 1,
        snapshot: Box::new(|| None),
        diverged: Box::new(|_| {}),
        config_pin: "pin-test".into(),
        secret: "secret-test".into(),
    };
    let member = Membership::start(config, joining).expect("member thread");
    let status = member.status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while status.problem().is_none() {
        assert!(Instant::now() < deadline, "no problem reported");
        assert!(!status.is_leading(), "a twin took the lease");
        assert_eq!(holder.keep(&holder_lease, Instant::now()), NameState::Held);
        std::thread::sleep(TICK);
    }
    let problem = status.problem().unwrap_or_default();
    assert!(problem.contains("\"twin\" is held by another running process, http://first"));
    assert!(!status.is_leading());
    assert_eq!(
        address_lease.address_of("twin").as_deref(),
        Some("http://first"),
        "the holder's address stands"
    );
    member.stop();
    runtime.shutdown().expect("stops");
}
