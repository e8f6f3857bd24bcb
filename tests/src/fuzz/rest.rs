//! `rest_request`: an input read as one HTTP request (listener, key, method, content type,
//! path with query, body: the input's bytes, or a nesting bomb it describes) and handed to
//! the REST adapter's router in-process, on a demo exchange started once per process.
//! Whatever the request, the answer is not a server error (503 when the engine is busy is
//! allowed), and every error answer is the spec's `{"error": ...}` JSON.

use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, header};
use tower::ServiceExt;

use super::Input;
use super::nesting::nested_text;

/// The demo exchange every input of a process is sent to (its listeners serve the
/// stream harness's sockets too).
pub(super) struct Exchange {
    pub(super) runtime: tokio::runtime::Runtime,
    public: Router,
    admin: Router,
    pub(super) keys: Vec<String>,
    /// The public listener's address.
    pub(super) addr: std::net::SocketAddr,
}

pub(super) fn exchange() -> &'static Exchange {
    static EXCHANGE: OnceLock<Exchange> = OnceLock::new();
    EXCHANGE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("tokio");
        let mut settings = matchbook_rest::config::Settings::demo();
        settings.bind = "127.0.0.1:0".parse().expect("address");
        settings.admin_bind = "127.0.0.1:0".parse().expect("address");
        settings.data_dir =
            std::env::temp_dir().join(format!("matchbook-fuzz-rest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&settings.data_dir);
        settings.rate_limit_per_minute = u32::MAX;
        // The stream harness connects once an input, from one address.
        settings.public_rate_limit_per_minute = u32::MAX;
        settings.journal_sync = matchbook::journal::SyncPolicy::Never;
        let server = runtime
            .block_on(matchbook_rest::Server::start(settings))
            .expect("demo exchange starts");
        let keys = server.issued_keys.iter().map(|k| k.key.clone()).collect();
        let addr = server.addr;
        let public = matchbook_rest::http::public_router(server.state.clone());
        let admin = matchbook_rest::http::admin_router(server.state.clone());
        // The server lives as long as the process.
        std::mem::forget(server);
        Exchange {
            runtime,
            public,
            admin,
            keys,
            addr,
        }
    })
}

const METHODS: [Method; 5] = [
    Method::GET,
    Method::POST,
    Method::DELETE,
    Method::PUT,
    Method::PATCH,
];

/// Sends the request an input describes and checks the answer.
pub fn rest_request(data: &[u8]) {
    let exchange = exchange();
    let mut input = Input::new(data);
    let flags = input.u8();
    let router = if flags & 1 == 0 {
        exchange.public.clone()
    } else {
        exchange.admin.clone()
    };
    let method = METHODS[usize::from(input.u8()) % METHODS.len()].clone();
    let key_choice = usize::from(input.u8());
    let path = String::from_utf8_lossy(input.chunk(512)).into_owned();
    let path = if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    };
    // Bit 2: the body is a structured nesting bomb instead of the input's own bytes.
    let body = if flags & 4 != 0 {
        nested_text(&mut input, matchbook_rest::http::MAX_BODY_BYTES)
    } else {
        input.rest().to_vec()
    };
    let mut request = Request::builder().method(method).uri(path.as_str());
    if flags & 2 != 0 {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    match exchange.keys.get(key_choice % (exchange.keys.len() + 2)) {
        Some(key) => request = request.header(header::AUTHORIZATION, format!("Bearer {key}")),
        None if key_choice % 2 == 0 => {
            request = request.header(header::AUTHORIZATION, "Bearer mb_not_a_key")
        }
        None => {}
    }
    let Ok(request) = request.body(Body::from(body)) else {
        return; // not a request an HTTP server would pass on (bad URI or header)
    };
    exchange.runtime.block_on(async move {
        let response = router.oneshot(request).await.expect("the router answers");
        let status = response.status();
        assert!(
            !status.is_server_error() || status.as_u16() == 503,
            "{status} for {path}"
        );
        if status.is_client_error() || status.is_server_error() {
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .expect("body");
            let value: serde_json::Value =
                serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
            assert!(
                value.get("error").is_some_and(serde_json::Value::is_string),
                "{status} for {path}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    });
}
