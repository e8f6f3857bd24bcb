//! `matchbook-cluster` (what `make cluster` and `make cluster-stop` run): three NATS
//! servers and three nodes start under one directory, exactly one node leads and the
//! others follow, the demo keys are printed, and the stop ends every process it started.

use std::path::PathBuf;
use std::process::Command;

fn tool(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_matchbook-cluster"))
        .args(args)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let errors = String::from_utf8_lossy(&out.stderr);
    (out.status.success(), format!("{text}{errors}"))
}

#[test]
fn a_cluster_starts_with_one_leader_and_stops_completely() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cluster-tool");
    let dir_text = dir.to_string_lossy().into_owned();
    let _ = tool(&["stop", &dir_text]);
    let rest = env!("CARGO_BIN_EXE_matchbook-rest");
    let (started, report) = tool(&["start", &dir_text, rest, "0"]);
    let pids = std::fs::read_to_string(dir.join("pids")).unwrap_or_default();
    let (stopped, said) = tool(&["stop", &dir_text]);
    assert!(started, "{report}");
    assert_eq!(report.matches("(leader)").count(), 1, "{report}");
    assert_eq!(report.matches("(follower)").count(), 2, "{report}");
    assert!(report.contains("\"key\""), "the demo keys: {report}");
    assert!(stopped, "{said}");
    let pids: Vec<u32> = (pids.lines())
        .filter_map(|l| l.split_once(' ')?.1.parse().ok())
        .collect();
    assert_eq!(pids.len(), 6, "three nodes and three servers");
    for pid in pids {
        // Ended: gone, or a zombie waiting for its parent to reap it.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.trim_start().chars().next());
        assert!(
            matches!(state, None | Some('Z')),
            "{pid} still runs: {stat}"
        );
    }
    let (again, _) = tool(&["stop", &dir_text]);
    assert!(!again, "nothing left to stop");
    let _ = std::fs::remove_dir_all(dir);
}
