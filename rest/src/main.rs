//! `matchbook-rest`: runs the exchange. With no options it starts the embedded demo on
//! 127.0.0.1:8080 (admin on 127.0.0.1:8081) with its data in `./data`.

#![warn(clippy::too_many_lines)]

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use matchbook_rest::Server;
use matchbook_rest::config::Settings;

const USAGE: &str = "usage: matchbook-rest [--config FILE] [--bind ADDR:PORT] [--admin-bind ADDR:PORT] [--data-dir DIR] [--keys-out FILE] [--snapshot-every COMMANDS] [--log nats://HOST:PORT[,...] --node NAME [--lease-ms MS] [--checkpoint-every COMMANDS]]\n\nWith --log, commands go to the group's replicated log on NATS JetStream instead of the\ndata directory's journal. A node follows the log (serving market data, streams and\n/v1/health itself, forwarding everything else to the leader) and writes it while it holds\nthe group's lease; nodes compare state hashes every --checkpoint-every commands\n(default 10000) and one that differs stops. Snapshots stay local. Keys are the group's:\neach node shares its key file's keys, and a key issued or revoked on any node holds on all.\n\nWithout --config, a data directory that holds a config.toml (copied there at its first\nstart) is started with that file; otherwise the embedded demo.\n\nStreams (WebSocket) are served on the --bind address at / and /ws; their limits are set in\nthe [server] section of the configuration: stream_buffer (broadcasts, one per batch of\ncommands, a session may fall behind before it is closed with SLOW_CONSUMER, default 4096)\nand stream_heartbeat_seconds (default 10).";

fn parse_args() -> Result<Settings, String> {
    let mut args = std::env::args().skip(1);
    let mut config = None;
    let mut overrides: Vec<(String, String)> = Vec::new();
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--config" => config = Some(PathBuf::from(value)),
            "--bind" | "--admin-bind" | "--data-dir" | "--keys-out" | "--snapshot-every"
            | "--log" | "--node" | "--lease-ms" | "--checkpoint-every" => {
                overrides.push((flag, value));
            }
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    // A data directory remembers the configuration it was first started with.
    let data_dir = overrides
        .iter()
        .rev()
        .find(|(flag, _)| flag == "--data-dir")
        .map_or_else(|| Settings::demo().data_dir, |(_, dir)| PathBuf::from(dir));
    let config = config.or_else(|| {
        let copy = data_dir.join(matchbook_rest::server::CONFIG_COPY);
        copy.exists().then_some(copy)
    });
    let mut settings = match config {
        Some(path) => Settings::from_file(&path).map_err(|e| e.to_string())?,
        None => Settings::demo(),
    };
    settings.replication = replication(&overrides)?;
    for (flag, value) in overrides {
        match flag.as_str() {
            "--log" | "--node" | "--lease-ms" | "--checkpoint-every" => {}
            "--bind" => {
                settings.bind = value.parse().map_err(|_| format!("bad --bind {value}"))?;
            }
            "--admin-bind" => {
                settings.admin_bind = value
                    .parse()
                    .map_err(|_| format!("bad --admin-bind {value}"))?;
            }
            "--data-dir" => settings.data_dir = PathBuf::from(value),
            "--snapshot-every" => {
                settings.snapshot_every = value
                    .parse()
                    .map_err(|_| format!("bad --snapshot-every {value}"))?;
            }
            _ => settings.keys_out = Some(PathBuf::from(value)),
        }
    }
    Ok(settings)
}

/// `--log` with `--node` (and `--lease-ms`): the node's replication settings.
fn replication(
    overrides: &[(String, String)],
) -> Result<Option<matchbook_replica::node::NodeConfig>, String> {
    let value = |name: &str| {
        (overrides.iter().rev())
            .find(|(flag, _)| flag == name)
            .map(|(_, v)| v.as_str())
    };
    let (servers, node) = match (value("--log"), value("--node")) {
        (None, None) if value("--lease-ms").is_none() && value("--checkpoint-every").is_none() => {
            return Ok(None);
        }
        (Some(servers), Some(node)) => (servers, node),
        _ => return Err(format!("--log and --node go together\n{USAGE}")),
    };
    let mut config = matchbook_replica::node::NodeConfig::parse(servers, node)?;
    if let Some(ms) = value("--lease-ms") {
        let ms: u64 = (ms.parse().ok())
            .filter(|ms| (100..=60_000).contains(ms))
            .ok_or_else(|| format!("bad --lease-ms {ms}: 100 to 60000"))?;
        config.lease = std::time::Duration::from_millis(ms);
    }
    if let Some(every) = value("--checkpoint-every") {
        config.checkpoint_every = (every.parse().ok())
            .ok_or_else(|| format!("bad --checkpoint-every {every}: a number of commands"))?;
    }
    Ok(Some(config))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

fn main() -> ExitCode {
    // Colours only on a terminal: a log file (an operator's, a test's) stays plain text.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let settings = match parse_args() {
        Ok(s) => s,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let mut server = Server::start(settings).await?;
        matchbook_rest::server::print_issued_keys(&server.issued_keys);
        println!(
            "matchbook exchange on http://{} (admin http://{}); Ctrl-C to stop",
            server.addr, server.admin_addr
        );
        let (diverged, failed) = (server.diverged(), server.runtime_failed());
        let failure = tokio::select! {
            _ = shutdown_signal() => None,
            why = diverged => {
                tracing::error!(why, "this node's state differs from the leader's: stopping");
                Some(format!("diverged from the group's leader: {why}"))
            }
            why = failed => {
                tracing::error!(
                    why,
                    "the engine runtime failed: stopping (nothing after that command was \
                     acknowledged; a restart recovers every command that was)"
                );
                Some(why)
            }
        };
        tracing::info!("stopping: draining requests and the engine queue");
        server.stop().await?;
        Ok::<_, matchbook_rest::server::ServerError>(failure)
    });
    match result {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(why)) => {
            eprintln!("matchbook-rest: {why}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("matchbook-rest: {e}");
            ExitCode::FAILURE
        }
    }
}
