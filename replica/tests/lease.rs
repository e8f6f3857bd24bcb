//! The leadership lease on a real three-server NATS cluster: one node leads while it
//! renews; a follower takes over once a whole lease period passes without renewal (not
//! before, and within the lease plus a tick and a request); the old holder is then a
//! follower with a smaller term; a holder that cannot renew stops leading when its lease
//! runs out; a resigned lease is taken at once; the group's secret is the first node's.

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::lease::{Lease, LeaseConfig, Role};

const LEASE: Duration = Duration::from_millis(1_000);
const TICK: Duration = Duration::from_millis(100);

fn cluster(test: &str) -> NatsCluster {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nats-lease-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    NatsCluster::start(&server_binary(), &dir, 3).expect("a three-server NATS cluster")
}

fn lease(cluster: &NatsCluster, node: &str) -> Lease {
    Lease::open(LeaseConfig {
        servers: cluster.urls(),
        bucket: "leader-test".into(),
        replicas: 3,
        node: node.into(),
        lease: LEASE,
        timeout: Duration::from_secs(1),
    })
    .expect("the lease bucket opens")
}

/// The first lease of a fresh bucket: ticks until it is held (at most 10 s), since a
/// tick answers "no leader known" while the servers are still electing the bucket's
/// stream leader. Returns the term and when it was taken.
fn first_lease(lease: &mut Lease) -> (u64, Instant) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = Instant::now();
        match lease.tick(now) {
            Role::Leader { term } => return (term, now),
            Role::Follower { leader: None } if now < deadline => {
                std::thread::sleep(TICK);
            }
            role => panic!("the first lease of a fresh bucket not taken: {role:?}"),
        }
    }
}

fn term(role: &Role) -> u64 {
    match role {
        Role::Leader { term } => *term,
        Role::Follower { .. } => panic!("not leader: {role:?}"),
    }
}

#[test]
fn a_follower_takes_over_only_after_a_lease_without_renewal() {
    let cluster = cluster("takeover");
    let (mut a, mut b) = (lease(&cluster, "a"), lease(&cluster, "b"));
    let (first, _) = first_lease(&mut a);
    // While a renews, b follows, for more than two lease periods.
    let until = Instant::now() + 2 * LEASE + LEASE / 2;
    let mut renewed = Instant::now();
    while Instant::now() < until {
        assert_eq!(term(&a.tick(Instant::now())), first, "a keeps its term");
        renewed = Instant::now();
        let role = b.tick(Instant::now());
        assert_eq!(
            role,
            Role::Follower {
                leader: Some("a".into())
            }
        );
        std::thread::sleep(TICK);
    }
    // a stops renewing (as if killed): b leads once a lease has passed, not before.
    let taken = loop {
        let now = Instant::now();
        match b.tick(now) {
            Role::Leader { term } => break (now, term),
            Role::Follower { .. } => {
                assert!(now.duration_since(renewed) < LEASE + Duration::from_secs(2));
            }
        }
        std::thread::sleep(TICK);
    };
    let waited = taken.0.duration_since(renewed);
    assert!(waited >= LEASE, "taken {waited:?} after the last renewal");
    assert!(
        waited <= LEASE + TICK + Duration::from_secs(1),
        "{waited:?}"
    );
    assert!(taken.1 > first, "terms grow: {} then {}", first, taken.1);
    assert_eq!(
        a.tick(Instant::now()),
        Role::Follower {
            leader: Some("b".into())
        },
        "the old holder's renewal is refused and it follows"
    );
}

#[test]
fn a_holder_that_cannot_renew_stops_leading_when_its_lease_runs_out() {
    let mut cluster = cluster("expiry");
    let mut a = lease(&cluster, "a");
    let (_, start) = first_lease(&mut a);
    for i in 0..3 {
        cluster.kill(i).expect("server killed");
    }
    assert!(
        matches!(a.tick(start + LEASE / 2), Role::Leader { .. }),
        "within its lease it still leads"
    );
    assert_eq!(
        a.tick(start + LEASE + Duration::from_millis(1)),
        Role::Follower { leader: None }
    );
}

#[test]
fn a_resigned_lease_is_taken_at_once() {
    let cluster = cluster("resign");
    let (mut a, mut b) = (lease(&cluster, "a"), lease(&cluster, "b"));
    let (first, _) = first_lease(&mut a);
    assert!(matches!(b.tick(Instant::now()), Role::Follower { .. }));
    a.resign();
    assert!(term(&b.tick(Instant::now())) > first);
}

#[test]
fn the_first_nodes_secret_is_every_nodes() {
    let cluster = cluster("secret");
    let (mut a, mut b) = (lease(&cluster, "a"), lease(&cluster, "b"));
    first_lease(&mut a);
    assert_eq!(
        a.group_secret("secret-of-a").expect("recorded"),
        "secret-of-a"
    );
    assert_eq!(b.group_secret("secret-of-b").expect("read"), "secret-of-a");
    assert_eq!(a.group_secret("another").expect("read"), "secret-of-a");
}
