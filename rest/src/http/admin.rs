//! The admin listener's operations: holders, subaccounts, deposits, withdrawals, de-risk,
//! BLP thresholds, API keys, instrument states and the exchange clock. Served on its own
//! address and only to admin keys, so a trading key can never reach them.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use matchbook::{AccountId, AccountKind, Command, CurrencyId, InstrumentState, Uuid};

use crate::auth::caller::Admin;
use crate::auth::key_files::{hex, unhex};
use crate::auth::keys::{ApiKey, RevokeError, Scope, digest_of};
use crate::body::Body;
use crate::error::ApiError;
use crate::format::iso_ms;
use crate::state::Shared;
use crate::wire::admin::{
    AccountBody, AccountClosed, ClockBody, Done, EngineStateBody, HolderCreated, IndexPriceBody,
    InstrumentStateBody, IssuedKeyBody, KeyEntry, KeysBody, PipelineBody, Quantiles,
};
use crate::wire::requests::{
    AccountRequest, AdvanceTimeRequest, CreateKeyRequest, CreateSubaccountRequest, DeriskRequest,
    FundsRequest, IndexPriceRequest, InstrumentStateRequest, RevokeKeyRequest,
};
use crate::wire::{Flag, Numeric};

fn account_field(field: &Option<String>) -> Result<AccountId, ApiError> {
    field
        .as_deref()
        .and_then(|t| t.parse::<Uuid>().ok())
        .and_then(|u| u.account_id().ok())
        .ok_or(ApiError::bad("INVALID_ACCOUNT_ID"))
}

fn currency_amount(state: &Shared, request: &FundsRequest) -> Result<(CurrencyId, i64), ApiError> {
    let currency = (request.currency.as_deref())
        .and_then(|c| state.markets.currency_id(c))
        .ok_or(ApiError::bad("INVALID_CURRENCY"))?;
    let scale = state.markets.scale(currency);
    let amount = (request.amount.as_ref())
        .and_then(|Numeric(a)| matchbook::fixed::parse_scaled(a, scale).ok())
        .ok_or(ApiError::bad("INVALID_AMOUNT"))?;
    Ok((currency, amount))
}

async fn apply(state: &Shared, command: Command) -> Result<matchbook::Applied, ApiError> {
    Ok(state.submit(command).await?.result?)
}

/// Creates a holder with its main account.
#[utoipa::path(post, path = "/admin/holders", tag = "admin", security(("api_key" = [])),
    responses((status = 200, body = HolderCreated),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn create_holder(
    State(state): State<Shared>,
    _: Admin,
) -> Result<Json<HolderCreated>, ApiError> {
    let applied = apply(&state, Command::CreateHolder).await?;
    let (holder, account) = applied
        .holder
        .zip(applied.account)
        .ok_or(ApiError::Internal("a new holder without its ids"))?;
    Ok(Json(HolderCreated {
        holder_id: Uuid::of_holder(holder).to_string(),
        account_id: Uuid::of_account(account).to_string(),
    }))
}

/// Creates a subaccount: `{holder_id, name, kind?}` (kind `regular`, `instant-trade`, `blp`).
#[utoipa::path(post, path = "/admin/subaccounts", tag = "admin", security(("api_key" = [])),
    request_body = CreateSubaccountRequest,
    responses((status = 200, body = AccountBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn create_subaccount(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<AccountBody>, ApiError> {
    let request: CreateSubaccountRequest = Body::read(&bytes)?;
    let holder = (request.holder_id.as_deref())
        .and_then(|t| t.parse::<Uuid>().ok())
        .and_then(|u| u.holder_id().ok())
        .ok_or(ApiError::bad("INVALID_HOLDER_ID"))?;
    let kind = parse_kind(request.kind.as_deref())?;
    let name = request.name.ok_or(ApiError::bad("INVALID_ACCOUNT_NAME"))?;
    let applied = apply(&state, Command::CreateSubaccount { holder, name, kind }).await?;
    let account = applied
        .account
        .ok_or(ApiError::Internal("a new account without its id"))?;
    Ok(Json(AccountBody {
        account_id: Uuid::of_account(account).to_string(),
    }))
}

/// Parses an account kind (`None`: regular).
pub fn parse_kind(text: Option<&str>) -> Result<AccountKind, ApiError> {
    text.map_or(Some(AccountKind::Regular), AccountKind::parse)
        .ok_or_else(|| ApiError::bad("INVALID_ACCOUNT_KIND"))
}

/// Closes a subaccount.
#[utoipa::path(post, path = "/admin/accounts/{account_id}/close", tag = "admin", security(("api_key" = [])),
    params(("account_id" = String, Path)),
    responses((status = 200, body = AccountClosed),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn close_account(
    State(state): State<Shared>,
    _: Admin,
    Path(account): Path<String>,
) -> Result<Json<AccountClosed>, ApiError> {
    let account = account
        .parse::<Uuid>()
        .ok()
        .and_then(|u| u.account_id().ok())
        .ok_or(ApiError::bad("INVALID_ACCOUNT_ID"))?;
    apply(&state, Command::CloseSubaccount { account }).await?;
    Ok(Json(AccountClosed {
        account_id: Uuid::of_account(account).to_string(),
        state: "CLOSED",
    }))
}

/// Credits an account: `{account_id, currency, amount}`.
#[utoipa::path(post, path = "/admin/deposits", tag = "admin", security(("api_key" = [])),
    request_body = FundsRequest,
    responses((status = 200, body = Done),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn deposit(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<Done>, ApiError> {
    funds_command(&state, &bytes, |account, currency, amount| {
        Command::Deposit {
            account,
            currency,
            amount,
        }
    })
    .await
}

/// Applies an admin command on `{account_id, currency, amount}` (deposit, withdrawal, BLP
/// threshold): one body parser for all three.
async fn funds_command(
    state: &Shared,
    bytes: &Bytes,
    command: impl FnOnce(AccountId, CurrencyId, i64) -> Command,
) -> Result<Json<Done>, ApiError> {
    let request: FundsRequest = Body::read(bytes)?;
    let account = account_field(&request.account_id)?;
    let (currency, amount) = currency_amount(state, &request)?;
    apply(state, command(account, currency, amount)).await?;
    Ok(Json(Done { ok: true }))
}

/// Debits an account: `{account_id, currency, amount}`.
#[utoipa::path(post, path = "/admin/withdrawals", tag = "admin", security(("api_key" = [])),
    request_body = FundsRequest,
    responses((status = 200, body = Done),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn withdraw(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<Done>, ApiError> {
    funds_command(&state, &bytes, |account, currency, amount| {
        Command::Withdraw {
            account,
            currency,
            amount,
        }
    })
    .await
}

/// Sets de-risk: `{account_id, on}`.
#[utoipa::path(post, path = "/admin/derisk", tag = "admin", security(("api_key" = [])),
    request_body = DeriskRequest,
    responses((status = 200, body = Done),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn derisk(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<Done>, ApiError> {
    let request: DeriskRequest = Body::read(&bytes)?;
    let account = account_field(&request.account_id)?;
    let Some(Flag(on)) = request.on else {
        return Err(ApiError::bad("INVALID_REQUEST_BODY"));
    };
    apply(&state, Command::SetDerisk { account, on }).await?;
    Ok(Json(Done { ok: true }))
}

/// Sets a BLP account's minimum balance: `{account_id, currency, amount}`.
#[utoipa::path(post, path = "/admin/blp-threshold", tag = "admin", security(("api_key" = [])),
    request_body = FundsRequest,
    responses((status = 200, body = Done),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn blp_threshold(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<Done>, ApiError> {
    funds_command(&state, &bytes, |account, currency, amount| {
        Command::SetBlpThreshold {
            account,
            currency,
            amount,
        }
    })
    .await
}

/// Issues an API key: `{account_id, scopes: [..]}`; the key text is returned once.
#[utoipa::path(post, path = "/admin/keys", tag = "admin", security(("api_key" = [])),
    request_body = CreateKeyRequest,
    responses((status = 200, body = IssuedKeyBody, description = "The key text is shown only here"),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn create_key(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<IssuedKeyBody>, ApiError> {
    let request: CreateKeyRequest = Body::read(&bytes)?;
    let account = account_field(&request.account_id)?;
    let mut scopes = request.scopes.ok_or(ApiError::bad("INVALID_SCOPES"))?;
    scopes.sort_by_key(|s| *s as u8);
    scopes.dedup();
    // A key without a scope would still read the account: an empty list is a slip.
    if scopes.is_empty() || (scopes.contains(&Scope::Admin) && scopes.len() > 1) {
        return Err(ApiError::bad("INVALID_SCOPES"));
    }
    let holder = state.engine(move |e| e.holder_of(account)).await??;
    let keys = state.keys.clone();
    let issued = scopes.clone();
    let (key, record) = tokio::task::spawn_blocking(move || keys.create(holder, account, issued))
        .await
        .map_err(|_| ApiError::Internal("the key writer task failed"))?
        .map_err(|_| ApiError::Internal("the key store could not be written"))?;
    if let Some(group) = &state.group_keys {
        (crate::auth::group_keys::publish(group, &record).await)
            .map_err(|_| ApiError::Internal("the key was not shared with the group"))?;
    }
    Ok(Json(IssuedKeyBody {
        key,
        holder_id: Uuid::of_holder(holder).to_string(),
        account_id: Uuid::of_account(account).to_string(),
        scopes,
    }))
}

/// This node's API keys (digests, never the texts), by holder and account.
#[utoipa::path(get, path = "/admin/keys", tag = "admin", security(("api_key" = [])),
    responses((status = 200, body = KeysBody),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn list_keys(State(state): State<Shared>, _: Admin) -> Json<KeysBody> {
    let keys = (state.keys.list().into_iter())
        .map(|(digest, key, configured)| key_entry(&digest, &key, configured))
        .collect();
    Json(KeysBody { keys })
}

fn key_entry(digest: &[u8; 32], key: &ApiKey, configured: bool) -> KeyEntry {
    KeyEntry {
        digest: hex(digest),
        holder_id: Uuid::of_holder(key.holder).to_string(),
        account_id: Uuid::of_account(key.account).to_string(),
        scopes: key.scopes.clone(),
        in_configuration: configured,
    }
}

/// Revokes an API key, named by its text or its digest: refused at once by every request
/// and by the stream sessions it authenticated, and written out of the key file. In a
/// replicated group the revocation goes to the group first, so every node applies it; a
/// follower serves this route and the list itself.
#[utoipa::path(post, path = "/admin/keys/revoke", tag = "admin", security(("api_key" = [])),
    request_body = RevokeKeyRequest,
    responses((status = 200, body = KeyEntry, description = "The key revoked"),
        (status = 400, body = crate::error::ErrorBody, description = "INVALID_KEY, or LAST_ADMIN_KEY (issue another ADMIN key first)"),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody, description = "KEY_NOT_FOUND")))]
pub async fn revoke_key(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<KeyEntry>, ApiError> {
    let request: RevokeKeyRequest = Body::read(&bytes)?;
    let digest = match (request.key.as_deref(), request.digest.as_deref()) {
        (Some(key), None) => Some(digest_of(key)),
        (None, Some(digest)) => unhex(&digest.to_ascii_lowercase()),
        _ => None,
    }
    .ok_or(ApiError::bad("INVALID_KEY"))?;
    let refused = |e: RevokeError| match e {
        RevokeError::NotFound => ApiError::NotFound("KEY_NOT_FOUND"),
        RevokeError::LastAdminKey => ApiError::bad("LAST_ADMIN_KEY"),
        RevokeError::File(_) => ApiError::Internal("the key store could not be written"),
    };
    let revoked = state.keys.revocable(&digest).map_err(refused)?;
    // The group first: a revocation it did not take is not made here either, so asking
    // again revokes everywhere.
    if let Some(group) = &state.group_keys {
        (group.revoke(&hex(&digest)).await)
            .map_err(|_| ApiError::Internal("the group's keys could not be written"))?;
    }
    let keys = state.keys.clone();
    let done = tokio::task::spawn_blocking(move || keys.revoke(&digest))
        .await
        .map_err(|_| ApiError::Internal("the key writer task failed"))?;
    // The group's change may have reached this node's store first.
    match done {
        Ok(_) | Err(RevokeError::NotFound) => {}
        Err(e) => return Err(refused(e)),
    }
    Ok(Json(key_entry(&digest, &revoked.key, revoked.configured)))
}

/// Sets an instrument's state: `{state}`.
#[utoipa::path(post, path = "/admin/instruments/{instrument_code}/state", tag = "admin", security(("api_key" = [])),
    params(("instrument_code" = String, Path)),
    request_body = InstrumentStateRequest,
    responses((status = 200, body = InstrumentStateBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn instrument_state(
    State(state): State<Shared>,
    _: Admin,
    Path(code): Path<String>,
    bytes: Bytes,
) -> Result<Json<InstrumentStateBody>, ApiError> {
    let request: InstrumentStateRequest = Body::read(&bytes)?;
    let instrument = crate::markets::require(&state.markets, &code)?.id;
    let new_state = (request.state.as_deref())
        .and_then(InstrumentState::parse)
        .ok_or(ApiError::bad("INVALID_STATE"))?;
    apply(
        &state,
        Command::SetInstrumentState {
            instrument,
            state: new_state,
        },
    )
    .await?;
    Ok(Json(InstrumentStateBody {
        instrument_code: code,
        state: new_state.as_str(),
    }))
}

/// Moves the exchange clock forward: `{seconds}`; then expires what became due.
#[utoipa::path(post, path = "/admin/time/advance", tag = "admin", security(("api_key" = [])),
    request_body = AdvanceTimeRequest,
    responses((status = 200, body = ClockBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn advance_time(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<ClockBody>, ApiError> {
    let request: AdvanceTimeRequest = Body::read(&bytes)?;
    let seconds = (request.seconds.as_ref())
        .and_then(|Numeric(s)| s.parse::<u32>().ok())
        .ok_or(ApiError::bad("INVALID_SECONDS"))?;
    let offset = state
        .clock
        .advance(i64::from(seconds) * 1_000_000_000)
        .ok_or(ApiError::bad("TIME_OUT_OF_RANGE"))?;
    let outcome = state.submit(Command::AdvanceTime).await?;
    Ok(Json(ClockBody {
        time: iso_ms(outcome.time),
        offset_seconds: offset / 1_000_000_000,
    }))
}

/// Sets a futures instrument's index price: `{instrument_code, price}`.
#[utoipa::path(post, path = "/admin/index-price", tag = "admin", security(("api_key" = [])),
    request_body = IndexPriceRequest,
    responses((status = 200, body = IndexPriceBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn index_price(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<IndexPriceBody>, ApiError> {
    let request: IndexPriceRequest = Body::read(&bytes)?;
    let market = (request.instrument_code.as_deref())
        .and_then(|c| state.markets.market(c).cloned())
        .filter(|m| m.kind.is_future())
        .ok_or(ApiError::NotFound("INVALID_INSTRUMENT_CODE"))?;
    let price = (request.price.as_ref())
        .and_then(|Numeric(p)| matchbook::fixed::parse_scaled(p, market.market_precision).ok())
        .ok_or(ApiError::bad("INVALID_PRICE"))?;
    apply(
        &state,
        Command::SetIndexPrice {
            instrument: market.id,
            price: matchbook::Price(price),
        },
    )
    .await?;
    Ok(Json(IndexPriceBody {
        index_price: market.price(matchbook::Price(price)),
        instrument_code: market.code,
    }))
}

/// Liquidates an account's futures positions: `{account_id}`.
#[utoipa::path(post, path = "/admin/liquidate", tag = "admin", security(("api_key" = [])),
    request_body = AccountRequest,
    responses((status = 200, body = AccountBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn liquidate(
    State(state): State<Shared>,
    _: Admin,
    bytes: Bytes,
) -> Result<Json<AccountBody>, ApiError> {
    let request: AccountRequest = Body::read(&bytes)?;
    let account = account_field(&request.account_id)?;
    apply(&state, Command::Liquidate { account }).await?;
    Ok(Json(AccountBody {
        account_id: Uuid::of_account(account).to_string(),
    }))
}

/// The engine's event sequence number, time and state hash (recovery checks compare it
/// with a fresh replay of the journal).
#[utoipa::path(get, path = "/admin/state", tag = "admin", security(("api_key" = [])),
    responses((status = 200, body = EngineStateBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn engine_state(
    State(state): State<Shared>,
    _: Admin,
) -> Result<Json<EngineStateBody>, ApiError> {
    let (sequence, now, hash) = state
        .engine(|e| (e.sequence(), e.now(), e.state_hash()))
        .await?;
    Ok(Json(EngineStateBody {
        sequence,
        time: iso_ms(now),
        state_hash: format!("{hash:016x}"),
    }))
}

/// How the pipeline stands: how far each stage has got (command sequence numbers), the
/// commands in flight, refusals at ingress, reads answered, subscribers dropped for lag,
/// replica divergences (always 0 unless there is a bug), snapshot copies and the matching
/// thread's busy time per command. Read from counters: no stage is asked or waited for.
#[utoipa::path(get, path = "/admin/pipeline", tag = "admin", security(("api_key" = [])),
    responses((status = 200, body = PipelineBody),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn pipeline(State(state): State<Shared>, _: Admin) -> Json<PipelineBody> {
    let stats = state.runtime.stats();
    let busy = state.runtime.live_stats().matching_time().counts();
    let quantile = |q| matchbook::runtime::Histogram::quantile_of(&busy, q);
    Json(PipelineBody {
        sequenced: stats.sequenced,
        matched: stats.matched,
        acknowledged: stats.acked,
        market: stats.market,
        in_flight: stats.in_flight,
        refused: stats.refused,
        reads: stats.reads,
        dropped_subscribers: stats.dropped_subscribers,
        stream_sessions: state.streams.counters.open.load(Ordering::Relaxed),
        slow_consumers: (state.streams.counters.slow_consumers).load(Ordering::Relaxed),
        divergences: stats.divergences,
        snapshots: stats.snapshots,
        longest_snapshot_copy_ns: stats.longest_snapshot_copy_nanos,
        clock_behind_ns: stats.clock_behind_nanos,
        longest_matching_batch_ns: stats.longest_batch_nanos,
        matching_ns_per_command: Quantiles {
            p50: quantile(0.5),
            p99: quantile(0.99),
        },
    })
}

/// Metrics for Prometheus in its text format (version 0.0.4): the pipeline's counters,
/// stream sessions, the matching thread's time per command, and the HTTP answers of both
/// listeners by status and time. Scrape with the ADMIN key as a bearer credential.
#[utoipa::path(get, path = "/admin/metrics", tag = "admin", security(("api_key" = [])),
    responses((status = 200, content_type = "text/plain; version=0.0.4", body = String),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn metrics(State(state): State<Shared>, _: Admin) -> impl IntoResponse {
    let content_type = "text/plain; version=0.0.4; charset=utf-8";
    (
        [(CONTENT_TYPE, content_type)],
        super::exposition::render(&state),
    )
}
