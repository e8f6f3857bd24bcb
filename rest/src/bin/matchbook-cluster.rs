//! `matchbook-cluster`: a replicated group on loopback in one command (`make cluster`):
//! three NATS servers (JetStream, fsync always) and three `matchbook-rest` nodes on the
//! replicated log, everything under one directory; prints the nodes, which leads, and the
//! demo keys. `matchbook-cluster stop DIR` (`make cluster-stop`) ends it.
//!
//! ```text
//! matchbook-cluster start DIR REST_BINARY [BASE_PORT]   (nodes on BASE_PORT.., default 8090; 0: any free)
//! matchbook-cluster stop DIR
//! ```

#![warn(clippy::too_many_lines)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use matchbook_replica::cluster::{NatsCluster, server_binary};

const NODES: usize = 3;
const PIDS: &str = "pids";
const USAGE: &str = "usage: matchbook-cluster start DIR REST_BINARY [BASE_PORT] | stop DIR";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["start", dir, rest] => start(Path::new(dir), Path::new(rest), 8090),
        ["start", dir, rest, port] => match port.parse() {
            Ok(port) => start(Path::new(dir), Path::new(rest), port),
            Err(_) => Err(format!("bad BASE_PORT {port}\n{USAGE}")),
        },
        ["stop", dir] => stop(Path::new(dir)),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("matchbook-cluster: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A node started: its name, process id and public address.
struct Started {
    name: String,
    pid: u32,
    base: String,
}

fn start(dir: &Path, rest: &Path, base_port: u16) -> Result<(), String> {
    if dir.join(PIDS).exists() {
        return Err(format!(
            "{} holds a running cluster: `make cluster-stop` first",
            dir.display()
        ));
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let nats = NatsCluster::start(&server_binary(), &dir.join("nats"), 3)
        .map_err(|e| format!("NATS servers: {e}"))?;
    let urls = nats.urls().join(",");
    let mut pids: Vec<String> = Vec::new();
    let mut started = Vec::new();
    for i in 0..NODES {
        let ports = match base_port {
            0 => (0, 0),
            p => (p + 2 * i as u16, p + 2 * i as u16 + 1),
        };
        let node = start_node(dir, rest, &urls, i, ports);
        match node {
            Ok(node) => {
                pids.push(format!("node {}", node.pid));
                started.push(node);
            }
            Err(e) => {
                for p in &started {
                    signal(p.pid, "TERM");
                }
                return Err(e);
            }
        }
    }
    pids.extend(nats.detach().into_iter().map(|pid| format!("nats {pid}")));
    std::fs::write(dir.join(PIDS), pids.join("\n") + "\n").map_err(|e| e.to_string())?;
    report(dir, &urls, &started);
    Ok(())
}

/// Starts node `i` (the first provisions the group; the others share its keys file) and
/// waits until it serves.
#[allow(
    clippy::zombie_processes,
    reason = "the node outlives this tool; `stop` ends it by process id"
)]
fn start_node(
    dir: &Path,
    rest: &Path,
    urls: &str,
    i: usize,
    (public, admin): (u16, u16),
) -> Result<Started, String> {
    let name = format!("n{}", i + 1);
    let data = dir.join(&name);
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    if i > 0 {
        let keys = dir.join("n1/keys.json");
        std::fs::copy(&keys, data.join("keys.json")).map_err(|e| format!("keys: {e}"))?;
    }
    let output = data.join("stdout.log");
    let log = |path: PathBuf| std::fs::File::create(path).map_err(|e| e.to_string());
    let child = Command::new(rest)
        .args(["--bind", &format!("127.0.0.1:{public}")])
        .args(["--admin-bind", &format!("127.0.0.1:{admin}")])
        .arg("--data-dir")
        .arg(&data)
        .args(["--log", urls, "--node", &name])
        .arg("--keys-out")
        .arg(dir.join("keys.json"))
        .stdin(Stdio::null())
        .stdout(log(output.clone())?)
        .stderr(log(data.join("stderr.log"))?)
        .spawn()
        .map_err(|e| format!("{}: {e}", rest.display()))?;
    let base = served_at(&output, child.id())?;
    Ok(Started {
        name,
        pid: child.id(),
        base,
    })
}

/// The address a node prints once it serves (within 120 s: a follower waits for the
/// group to be provisioned).
fn served_at(output: &Path, pid: u32) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(output).unwrap_or_default();
        if let Some(rest) = text.split("exchange on ").nth(1) {
            return Ok(rest.split(' ').next().unwrap_or_default().to_owned());
        }
        if !running(pid) || Instant::now() > deadline {
            return Err(format!(
                "node {pid} did not start; see {}",
                output.with_file_name("stderr.log").display()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `GET path` on `base` (`http://host:port`) with a bare HTTP/1.1 request: the body.
fn get(base: &str, path: &str) -> Option<String> {
    let host = base.strip_prefix("http://")?;
    let mut stream = TcpStream::connect(host).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split("\r\n\r\n").nth(1).map(str::to_owned)
}

/// Prints the nodes with their roles, and the demo keys.
fn report(dir: &Path, urls: &str, nodes: &[Started]) {
    println!("NATS servers: {urls}");
    for node in nodes {
        let health = get(&node.base, "/v1/health").unwrap_or_default();
        let role = (health.split("\"role\":\"").nth(1))
            .and_then(|r| r.split('"').next())
            .unwrap_or("unknown");
        println!(
            "node {}: {} ({role}), pid {}",
            node.name, node.base, node.pid
        );
    }
    let keys = std::fs::read_to_string(dir.join("keys.json")).unwrap_or_default();
    println!("demo keys (valid on every node):\n{keys}");
    println!(
        "data and logs under {}; `make cluster-stop` ends it",
        dir.display()
    );
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// Whether process `pid` runs (an ended one not yet reaped by its parent, a zombie,
/// does not).
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // After the command name in parentheses comes the state letter.
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|s| s.trim_start().chars().next());
    state.is_some_and(|s| s != 'Z')
}

/// Stops the nodes (SIGTERM: a clean stop, the leader resigns), then the NATS servers.
fn stop(dir: &Path) -> Result<(), String> {
    let file = std::fs::File::open(dir.join(PIDS))
        .map_err(|_| format!("no cluster running under {}", dir.display()))?;
    let mut nodes = Vec::new();
    let mut servers = Vec::new();
    for line in BufReader::new(file).lines().map_while(Result::ok) {
        match line.split_once(' ') {
            Some(("node", pid)) => nodes.extend(pid.parse::<u32>().ok()),
            Some(("nats", pid)) => servers.extend(pid.parse::<u32>().ok()),
            _ => {}
        }
    }
    for group in [nodes, servers] {
        for &pid in &group {
            signal(pid, "TERM");
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while group.iter().any(|&pid| running(pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for &pid in group.iter().filter(|&&pid| running(pid)) {
            signal(pid, "KILL");
        }
    }
    std::fs::remove_file(dir.join(PIDS)).map_err(|e| e.to_string())?;
    println!("cluster under {} stopped", dir.display());
    Ok(())
}
