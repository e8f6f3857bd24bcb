//! `GET /admin/metrics` (the ADMIN key) for Prometheus: the pipeline's counters, the
//! streams', the engine's position, the snapshot files, a group member's state, and every
//! HTTP answer of both listeners ([`crate::metrics`]), in the text exposition format
//! (version 0.0.4).

use std::fmt::Write;

use matchbook::runtime::Histogram;
use std::sync::atomic::Ordering;

use crate::metrics::{
    COMMIT_BOUNDS_NANOS, Listener, MATCHING_BOUNDS_NANOS, STATUS_CODES, TIME_BOUNDS_MICROS,
};
use crate::state::AppState;

/// Text in the exposition format: each family's help and type before its samples.
#[derive(Default)]
struct Exposition(String);

impl Exposition {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &str, value: impl std::fmt::Display) {
        if labels.is_empty() {
            let _ = writeln!(self.0, "{name} {value}");
        } else {
            let _ = writeln!(self.0, "{name}{{{labels}}} {value}");
        }
    }

    /// A family of one sample.
    fn single(&mut self, name: &str, kind: &str, help: &str, value: u64) {
        self.family(name, kind, help);
        self.sample(name, "", value);
    }
}

/// Every metric of the exchange now, as a scrape answers them.
pub fn render(state: &AppState) -> String {
    let mut out = Exposition::default();
    pipeline(&mut out, state);
    snapshot_files(&mut out, state);
    node(&mut out, state);
    runtime_times(&mut out, state);
    http(&mut out, state);
    address_limits(&mut out, state);
    connections(&mut out, state);
    out.0
}

/// Each listener's connections: open now, closed by the server and why, refused and why.
fn connections(out: &mut Exposition, state: &AppState) {
    let listeners = [Listener::Public, Listener::Admin].into_iter();
    let stats: Vec<_> = listeners.zip(state.connections.iter()).collect();
    let name = "matchbook_connections_open";
    out.family(name, "gauge", "Connections open now, by listener.");
    for (listener, s) in &stats {
        let labels = format!("listener=\"{}\"", listener.label());
        out.sample(name, &labels, s.open_connections());
    }
    let name = "matchbook_connections_closed_total";
    let help = "Connections the server closed: silent for the idle time (idle), request \
                headers too slow (slow_head), place taken back for a client holding fewer \
                (for_room).";
    out.family(name, "counter", help);
    for (listener, s) in &stats {
        for (reason, n) in [
            ("idle", s.closed_idle()),
            ("slow_head", s.closed_slow_head()),
            ("for_room", s.closed_for_room()),
        ] {
            let labels = format!("listener=\"{}\",reason=\"{reason}\"", listener.label());
            out.sample(name, &labels, n);
        }
    }
    let name = "matchbook_connections_refused_total";
    let help = "Connections refused: the client held its share (per_address), or every \
                place was taken and none could be made (full).";
    out.family(name, "counter", help);
    for (listener, s) in &stats {
        for (reason, n) in [
            ("per_address", s.refused_per_address()),
            ("full", s.refused_full()),
        ] {
            let labels = format!("listener=\"{}\",reason=\"{reason}\"", listener.label());
            out.sample(name, &labels, n);
        }
    }
}

/// The per-client windows of requests without a valid key: how many clients hold one, and
/// how many requests found the table full (an address flood).
fn address_limits(out: &mut Exposition, state: &AppState) {
    let windows = &state.address_windows;
    out.single(
        "matchbook_rate_limit_clients_tracked",
        "gauge",
        "Clients (IPv4 addresses, IPv6 /64s) with a rate window of their own, at most 65,536.",
        windows.tracked() as u64,
    );
    out.single(
        "matchbook_rate_limit_overflow_total",
        "counter",
        "Requests of clients new to a full table, counted in their network's window.",
        windows.overflowed(),
    );
}

/// The pipeline's counters (name and help), in the order [`pipeline`] reads them.
const COUNTERS: [(&str, &str); 12] = [
    (
        "matchbook_commands_sequenced_total",
        "Commands logged by the sequencer.",
    ),
    (
        "matchbook_commands_matched_total",
        "Commands applied by the matching stage.",
    ),
    (
        "matchbook_commands_acknowledged_total",
        "Commands answered.",
    ),
    (
        "matchbook_commands_market_total",
        "Commands applied by the market stage.",
    ),
    (
        "matchbook_commands_refused_busy_total",
        "Commands refused at ingress (503, queue full).",
    ),
    (
        "matchbook_reads_total",
        "Reads answered by the market stage.",
    ),
    (
        "matchbook_subscribers_dropped_total",
        "Event subscribers dropped for lag.",
    ),
    (
        "matchbook_replica_divergences_total",
        "Replica divergences (0 unless there is a bug).",
    ),
    ("matchbook_snapshots_total", "Snapshot copies made."),
    (
        "matchbook_stream_slow_consumers_total",
        "Stream sessions closed as slow consumers.",
    ),
    ("matchbook_stream_sessions_total", "Stream sessions opened."),
    (
        "matchbook_stream_frames_sent_total",
        "Frames handed to stream clients' sockets.",
    ),
];

/// The pipeline's gauges, in the order [`pipeline`] reads them.
const GAUGES: [(&str, &str); 2] = [
    (
        "matchbook_commands_in_flight",
        "Commands admitted and not yet answered.",
    ),
    ("matchbook_stream_sessions", "Stream sessions open."),
];

/// The pipeline's times in seconds (name and help), in the order [`pipeline`] reads them.
const TIMES: [(&str, &str); 3] = [
    (
        "matchbook_matching_batch_longest_seconds",
        "Longest batch the matching stage applied.",
    ),
    (
        "matchbook_snapshot_copy_longest_seconds",
        "Longest snapshot copy.",
    ),
    (
        "matchbook_clock_behind_seconds",
        "How far the system clock stood behind the exchange's at the last command \
         (nonzero after it stepped back: time stands still until it catches up).",
    ),
];

fn pipeline(out: &mut Exposition, state: &AppState) {
    let stats = state.runtime.stats();
    let streams = &state.streams.counters;
    let counters = [
        stats.sequenced,
        stats.matched,
        stats.acked,
        stats.market,
        stats.refused,
        stats.reads,
        stats.dropped_subscribers,
        stats.divergences,
        stats.snapshots,
        streams.slow_consumers.load(Ordering::Relaxed),
        streams.opened.load(Ordering::Relaxed),
        streams.frames_sent.load(Ordering::Relaxed),
    ];
    for ((name, help), value) in COUNTERS.into_iter().zip(counters) {
        out.single(name, "counter", help, value);
    }
    let gauges = [stats.in_flight, streams.open.load(Ordering::Relaxed)];
    for ((name, help), value) in GAUGES.into_iter().zip(gauges) {
        out.single(name, "gauge", help, value);
    }
    let times = [
        stats.longest_batch_nanos,
        stats.longest_snapshot_copy_nanos,
        stats.clock_behind_nanos,
    ];
    for ((name, help), nanos) in TIMES.into_iter().zip(times) {
        out.family(name, "gauge", help);
        out.sample(name, "", seconds(nanos as f64 / 1e9));
    }
}

/// The snapshot writer's files: what it wrote and what failed, so an alert can fire on a
/// failure (the journal then grows until a write succeeds) or on a snapshot grown old.
fn snapshot_files(out: &mut Exposition, state: &AppState) {
    let status = state.snapshots.now();
    let counters = [
        (
            "matchbook_snapshots_written_total",
            "Snapshot files written.",
            status.written,
        ),
        (
            "matchbook_snapshot_failures_total",
            "Snapshot writes (or prunes after one) that failed.",
            status.failures,
        ),
        (
            "matchbook_snapshots_superseded_total",
            "Snapshot copies dropped unwritten for a newer one (the writer was busy).",
            status.superseded,
        ),
        (
            "matchbook_journal_segments_pruned_total",
            "Journal segments deleted once a snapshot covered them.",
            status.segments_pruned,
        ),
    ];
    for (name, help, value) in counters {
        out.single(name, "counter", help, value);
    }
    if let Some(seq) = status.last_seq {
        let name = "matchbook_snapshot_last_sequence";
        let help = "Command sequence number of the newest snapshot written.";
        out.single(name, "gauge", help, seq);
        let name = "matchbook_snapshot_last_bytes";
        out.single(
            name,
            "gauge",
            "Size of the newest snapshot file.",
            status.last_bytes,
        );
        let name = "matchbook_snapshot_last_write_seconds";
        out.family(
            name,
            "gauge",
            "Time to encode and write the newest snapshot.",
        );
        out.sample(name, "", seconds(status.last_duration.as_secs_f64()));
    }
}

/// On a replicated log: whether this node leads its group now.
fn node(out: &mut Exposition, state: &AppState) {
    let Some(node) = &state.node else {
        return;
    };
    let name = "matchbook_node_leading";
    out.family(
        name,
        "gauge",
        "1 while this node holds its group's lease, else 0.",
    );
    let labels = format!("node=\"{}\"", label_value(&node.name));
    out.sample(name, &labels, u8::from(node.status.is_leading()));
}

/// `text` as a label value: backslash, double quote and line feed escaped.
fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The runtime's timings: the matching thread's busy time per command and the command
/// log's time to store a batch.
fn runtime_times(out: &mut Exposition, state: &AppState) {
    let stats = state.runtime.live_stats();
    let matching = stats.matching_time().counts();
    let name = "matchbook_matching_command_seconds";
    out.family(name, "histogram", "Matching thread's time per command.");
    histogram(out, name, &matching, &MATCHING_BOUNDS_NANOS);
    let commits = stats.commit_time().counts();
    let name = "matchbook_log_commit_seconds";
    out.family(
        name,
        "histogram",
        "Command log's time to store a batch (write and sync).",
    );
    histogram(out, name, &commits, &COMMIT_BOUNDS_NANOS);
}

/// The samples of histogram `name` from the runtime's log-linear `counts` (buckets about
/// 2 % wide: a count goes under the first of `bounds`, in nanoseconds, its bucket ends
/// below).
fn histogram(out: &mut Exposition, name: &str, counts: &[u64], bounds: &[u64]) {
    let mut below = vec![0u64; bounds.len()];
    let (mut total, mut sum) = (0u64, 0f64);
    for (bucket, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let (low, high) = Histogram::bucket_bounds(bucket);
        let first = bounds.partition_point(|&bound| bound < high);
        for slot in &mut below[first..] {
            *slot += n;
        }
        total += n;
        sum += n as f64 * (low as f64 + high as f64) / 2.0;
    }
    for (bound, count) in bounds.iter().zip(below) {
        out.sample(
            &format!("{name}_bucket"),
            &format!("le=\"{}\"", seconds(*bound as f64 / 1e9)),
            count,
        );
    }
    out.sample(&format!("{name}_bucket"), "le=\"+Inf\"", total);
    out.sample(&format!("{name}_sum"), "", seconds(sum / 1e9));
    out.sample(&format!("{name}_count"), "", total);
}

fn http(out: &mut Exposition, state: &AppState) {
    let listeners = [
        (Listener::Public, &state.http_public),
        (Listener::Admin, &state.http_admin),
    ];
    let name = "matchbook_http_responses_total";
    out.family(name, "counter", "HTTP answers by listener and status.");
    for (listener, metrics) in listeners {
        for (code, counter) in STATUS_CODES.zip(metrics.answers.iter()) {
            let n = counter.load(Ordering::Relaxed);
            if n > 0 {
                out.sample(
                    name,
                    &format!("listener=\"{}\",code=\"{code}\"", listener.label()),
                    n,
                );
            }
        }
    }
    let name = "matchbook_http_request_duration_seconds";
    out.family(
        name,
        "histogram",
        "Time from a request's headers to its answer, by listener.",
    );
    for (listener, metrics) in listeners {
        let label = listener.label();
        let mut cumulative = 0;
        for (bound, counter) in TIME_BOUNDS_MICROS.iter().zip(&metrics.times) {
            cumulative += counter.load(Ordering::Relaxed);
            let le = seconds(*bound as f64 / 1e6);
            out.sample(
                &format!("{name}_bucket"),
                &format!("listener=\"{label}\",le=\"{le}\""),
                cumulative,
            );
        }
        cumulative += metrics.times[TIME_BOUNDS_MICROS.len()].load(Ordering::Relaxed);
        out.sample(
            &format!("{name}_bucket"),
            &format!("listener=\"{label}\",le=\"+Inf\""),
            cumulative,
        );
        let total = metrics.total_micros.load(Ordering::Relaxed) as f64 / 1e6;
        out.sample(
            &format!("{name}_sum"),
            &format!("listener=\"{label}\""),
            seconds(total),
        );
        out.sample(
            &format!("{name}_count"),
            &format!("listener=\"{label}\""),
            cumulative,
        );
    }
}

/// A number of seconds as Prometheus writes floats (shortest exact text).
fn seconds(value: f64) -> String {
    format!("{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_what_would_end_them() {
        assert_eq!(label_value("n1"), "n1");
        assert_eq!(label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
