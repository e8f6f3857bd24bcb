//! A member on a real three-server NATS cluster whose runtime cannot take the log (it
//! stopped) does not sit on the lease it won: it says why it cannot follow, gives the lease
//! up, and leaves it to a node that can lead.

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use matchbook_config::demo;
use matchbook_core::{Command, Engine, Timestamp};
use matchbook_market::MarketData;
use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::lease::{Lease, Role};
use matchbook_replica::member::{Joining, Membership};
use matchbook_replica::node::NodeConfig;
use matchbook_replica::{JetStreamLog, LogConfig};
use matchbook_runtime::{ManualClock, Runtime, RuntimeHandle};
use matchbook_store::journal::CommandLog;

const LEASE: Duration = Duration::from_millis(1_000);

fn cluster(test: &str) -> NatsCluster {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nats-member-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    NatsCluster::start(&server_binary(), &dir, 3).expect("a three-server NATS cluster")
}

fn node(cluster: &NatsCluster, name: &str) -> NodeConfig {
    let mut config = NodeConfig::parse(&cluster.urls().join(","), name).expect("settings");
    config.group = "UNFIT".into();
    config.lease = LEASE;
    config
}

/// A few commands in the group's log, written by an earlier leader.
fn written_log(cluster: &NatsCluster) {
    let (mut log, _) = JetStreamLog::open(LogConfig {
        servers: cluster.urls(),
        stream: "UNFIT".into(),
        replicas: 3,
        term: 1,
        timeout: Duration::from_secs(2),
    })
    .expect("the log opens");
    for n in 0..3 {
        log.append(Timestamp(n), &Command::CreateHolder)
            .expect("appended");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = log.commit() {
        assert!(Instant::now() < deadline, "the log stores: {e}");
    }
}

/// The handle of a follower runtime that has already stopped.
fn stopped_runtime() -> RuntimeHandle {
    let engine = Engine::new(demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    let clock = Arc::new(ManualClock::at(Timestamp(0)));
    let runtime = Runtime::start_follower(engine, market, clock, 64, 1, None).expect("threads");
    let handle = runtime.handle();
    runtime.shutdown().expect("stops");
    handle
}

#[test]
fn a_member_that_cannot_lead_gives_the_lease_up() {
    let cluster = cluster("unfit");
    written_log(&cluster);
    let config = node(&cluster, "unfit");
    let joining = Joining {
        address: "127.0.0.1:9".into(),
        handle: stopped_runtime(),
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
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!status.is_leading());
    // Another node gets the lease, within a lease period or so, and keeps it.
    let mut other =
        Lease::open(node(&cluster, "able").lease_config()).expect("the lease bucket opens");
    let deadline = Instant::now() + 3 * LEASE;
    loop {
        match other.tick(Instant::now()) {
            Role::Leader { .. } => break,
            role => assert!(Instant::now() < deadline, "lease not given up: {role:?}"),
        }
        std::thread::sleep(LEASE / 10);
    }
    member.stop();
}
