//! `matchbook-rest` as a child process on loopback, for the tests that kill it: started
//! on a data directory with the demo keys written to `keys-out.json` in it, and found by
//! the address line it prints once it serves.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running server process. Dropped while the test panics, it prints the end of the
/// process's log (what the node did is the only explanation of a timing failure on a
/// loaded machine); dropped still running, it is killed, so no test leaves a node behind.
pub struct Process {
    pub child: Child,
    pub base: String,
    pub admin: String,
    dir: PathBuf,
}

/// Lines of a failing test's node log shown.
const LOG_LINES_SHOWN: usize = 80;

impl Drop for Process {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let shown = &lines[lines.len().saturating_sub(LOG_LINES_SHOWN)..];
            eprintln!("--- the log of the node at {} ---", self.base);
            for line in shown {
                eprintln!("{line}");
            }
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The process's log, kept in its data directory for a failing test to show.
fn log_file(dir: &Path) -> Stdio {
    let path = dir.join("stderr.log");
    std::fs::File::create(&path).map_or_else(|_| Stdio::null(), Stdio::from)
}

/// Starts the binary on `dir` with `extra` arguments and waits until it prints its
/// addresses (a node waiting for the replication lease prints them only once it leads).
pub fn start(dir: &Path, extra: &[&str]) -> Process {
    let mut command = Command::new(env!("CARGO_BIN_EXE_matchbook-rest"));
    command.args(server_args(dir, extra));
    launch(command, dir)
}

/// As [`start`], under a shell that limits every file the server writes to `blocks`
/// (`ulimit -f`), with `SIGXFSZ` ignored: a write past the limit then fails as a write
/// to a full disk does, instead of killing the process.
pub fn start_with_file_limit(dir: &Path, extra: &[&str], blocks: u32) -> Process {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_matchbook-rest"))
        .args(server_args(dir, extra));
    launch(command, dir)
}

/// The server's arguments: loopback on free ports, `dir`, `extra`, the keys written out.
fn server_args(dir: &Path, extra: &[&str]) -> Vec<std::ffi::OsString> {
    let flags = [
        "--bind",
        "127.0.0.1:0",
        "--admin-bind",
        "127.0.0.1:0",
        "--data-dir",
    ];
    let mut args: Vec<std::ffi::OsString> = flags.iter().map(Into::into).collect();
    args.push(dir.into());
    args.extend(extra.iter().map(Into::into));
    args.push("--keys-out".into());
    args.push(dir.join("keys-out.json").into());
    args
}

/// Spawns `command` (the server, with its log in `dir`) and waits for its addresses.
#[allow(
    clippy::zombie_processes,
    reason = "the child is returned inside `Process`; the test kills and waits for it"
)]
fn launch(mut command: Command, dir: &Path) -> Process {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(log_file(dir))
        .spawn()
        .expect("server starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    loop {
        let line = lines
            .next()
            .expect("server printed its address")
            .expect("line");
        if let Some(rest) = line.split("exchange on ").nth(1) {
            let base = rest.split(' ').next().expect("url").to_owned();
            let admin = rest
                .split("(admin ")
                .nth(1)
                .and_then(|a| a.split(')').next())
                .expect("admin url")
                .to_owned();
            // Keep draining stdout so the child never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            return Process {
                child,
                base,
                admin,
                dir: dir.to_owned(),
            };
        }
    }
}
