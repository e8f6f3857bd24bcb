//! Accounts and funding (spec 4.1): the holder's account list, balances, account fees and
//! transfers between the holder's accounts.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use matchbook::{
    Balance, Command, CurrencyId, EngineError, Event, EventRecord, MarginTotals, Uuid,
};

use crate::auth::caller::Caller;
use crate::auth::keys::Scope;
use crate::body::Body;
use crate::error::ApiError;
use crate::format::iso_ms;
use crate::http::public::number;
use crate::market_bodies::balance_bodies;
use crate::markets::Markets;
use crate::params::Params;
use crate::state::Shared;
use crate::wire::Numeric;
use crate::wire::account::{
    AccountFeesBody, ActiveTierBody, BalancesBody, MarginBody, RunningVolumeBody, SubaccountBody,
    SubaccountsBody, TransferBody, TransferRecord,
};
use crate::wire::requests::TransferRequest;

/// Owned copy of what the account views need, taken on the engine thread.
struct AccountSnapshot {
    id: matchbook::AccountId,
    name: String,
    state: &'static str,
    created: matchbook::Timestamp,
    balances: Vec<Balance>,
    totals: MarginTotals,
}

fn margin_body(markets: &Markets, totals: MarginTotals) -> MarginBody {
    let usd = markets.currency_id("USD");
    let fmt = |v: i128| usd.map_or_else(|| "0".to_owned(), |usd| markets.balance(usd, v));
    MarginBody {
        account_equity: fmt(totals.account_equity),
        margin_available: fmt(totals.margin_available),
        margin_used: fmt(totals.margin_used),
    }
}

/// The holder's accounts: main first, then subaccounts, closed ones included.
#[utoipa::path(get, path = "/v1/subaccounts", tag = "account", security(("api_key" = [])),
    responses((status = 200, body = SubaccountsBody, description = "Spec 2.2"),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn subaccounts(
    State(state): State<Shared>,
    caller: Caller,
) -> Result<Json<SubaccountsBody>, ApiError> {
    let holder = caller.0.holder;
    let accounts = state
        .engine(move |e| -> Result<Vec<AccountSnapshot>, EngineError> {
            e.holder_accounts(holder)?
                .iter()
                .map(|v| {
                    Ok(AccountSnapshot {
                        id: v.id,
                        name: v.name.to_owned(),
                        state: v.state.as_str(),
                        created: v.created,
                        balances: if v.state == matchbook::AccountState::Closed {
                            Vec::new()
                        } else {
                            v.dense_balances()
                        },
                        totals: e.margin_totals(v.id)?,
                    })
                })
                .collect()
        })
        .await?
        .map_err(|_| ApiError::Forbidden("MISSING_PERMISSION"))?;
    let subaccounts = accounts
        .into_iter()
        .map(|a| SubaccountBody {
            account_id: Uuid::of_account(a.id).to_string(),
            state: a.state,
            name: a.name,
            created: iso_ms(a.created),
            margin: margin_body(&state.markets, a.totals),
            balances: balance_bodies(&state.markets, &a.balances),
        })
        .collect();
    Ok(Json(SubaccountsBody {
        account_holder: Uuid::of_holder(holder).to_string(),
        subaccounts,
    }))
}

/// Balances of the account the key acts on.
#[utoipa::path(get, path = "/v1/account/balances", tag = "account", security(("api_key" = [])),
    responses((status = 200, body = BalancesBody, description = "Spec 2.4"),
        (status = 400, body = crate::error::ErrorBody, description = "UNEXPECTED_PARAMETERS"),
        (status = 401, body = crate::error::ErrorBody), (status = 429, body = crate::error::ErrorBody)))]
pub async fn balances(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<BalancesBody>, ApiError> {
    Params::parse(raw.as_deref())?.only(&[])?;
    caller.limit_key(&state)?;
    let account = caller.0.account;
    let (balances, totals) = state
        .engine(move |e| -> Result<_, EngineError> {
            let view = e.account(account)?;
            Ok((view.dense_balances(), e.margin_totals(account)?))
        })
        .await??;
    Ok(Json(BalancesBody {
        account_id: Uuid::of_account(account).to_string(),
        margin: margin_body(&state.markets, totals),
        balances: balance_bodies(&state.markets, &balances),
    }))
}

/// Fees of the key's account: running volumes and active tiers, SPOT first.
#[utoipa::path(get, path = "/v1/account/fees", tag = "account", security(("api_key" = [])),
    responses((status = 200, body = AccountFeesBody, description = "Spec 2.8"),
        (status = 401, body = crate::error::ErrorBody)))]
pub async fn account_fees(
    State(state): State<Shared>,
    caller: Caller,
) -> Result<Json<AccountFeesBody>, ApiError> {
    let account = caller.0.account;
    let st = state.clone();
    let body = state
        .engine(move |e| -> Result<AccountFeesBody, EngineError> {
            let fees = e.account_fees(account)?;
            let running_volumes = (fees.running_volumes.iter())
                .map(|r| RunningVolumeBody {
                    fee_group_id: r.fee_group_id.to_owned(),
                    volume: number(&st.markets.balance(r.currency, r.volume)),
                    currency: st.markets.currency_code(r.currency).to_owned(),
                })
                .collect();
            let active_fee_tiers = (fees.active_fee_tiers.iter())
                .map(|t| ActiveTierBody {
                    fee_group_id: t.fee_group_id.to_owned(),
                    volume: number(t.volume),
                    maker_fee: t.maker_fee.to_owned(),
                    taker_fee: t.taker_fee.to_owned(),
                })
                .collect();
            Ok(AccountFeesBody {
                account_id: Uuid::of_account(account).to_string(),
                running_volumes,
                active_fee_tiers,
            })
        })
        .await??;
    Ok(Json(body))
}

fn required<'a>(field: &'a Option<String>, name: &str) -> Result<&'a str, ApiError> {
    field
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::BadRequest(format!("{name} is required.")))
}

const PERMISSION_DENIED: &str = "Permission denied.";

fn owned_account(text: &str) -> Result<matchbook::AccountId, ApiError> {
    text.parse::<Uuid>()
        .ok()
        .and_then(|u| u.account_id().ok())
        .ok_or(ApiError::Forbidden(PERMISSION_DENIED))
}

/// Moves one currency between two accounts of the caller's holder.
#[utoipa::path(post, path = "/v1/subaccounts/transfers", tag = "account", security(("api_key" = [])),
    request_body = TransferRequest,
    responses((status = 200, body = TransferBody),
        (status = 400, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody),
        (status = 422, body = crate::error::ErrorBody)))]
pub async fn transfer(
    State(state): State<Shared>,
    caller: Caller,
    bytes: Bytes,
) -> Result<Json<TransferBody>, ApiError> {
    if !caller
        .0
        .has_any(&[Scope::SubaccountTransfer, Scope::UiHolder, Scope::UiAccount])
    {
        return Err(ApiError::Forbidden(PERMISSION_DENIED));
    }
    let request: TransferRequest = Body::read(&bytes)?;
    let amount_text = request.amount.map(|Numeric(text)| text).unwrap_or_default();
    let currency_code = required(&request.currency, "currency")?;
    let source = owned_account(required(&request.source_account_id, "source_account_id")?)?;
    let destination = owned_account(required(
        &request.destination_account_id,
        "destination_account_id",
    )?)?;
    let currency = state
        .markets
        .currency_id(currency_code)
        .ok_or_else(|| ApiError::BadRequest("invalid currency.".into()))?;
    let scale = state.markets.scale(currency);
    let keep = matchbook::transfer_decimals(currency_code).min(scale);
    let amount = matchbook::parse_transfer_amount(&amount_text, keep, scale)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let outcome = state
        .submit(Command::Transfer {
            holder: caller.0.holder,
            source,
            destination,
            currency,
            amount,
        })
        .await?;
    if let Err(error) = outcome.result {
        return Err(transfer_refused(
            &state.markets,
            currency_code,
            currency,
            error,
        ));
    }
    let record = (outcome.events.iter())
        .find_map(|e| transfer_record(&state.markets, e))
        .ok_or(ApiError::Internal("a transfer without its event"))?;
    Ok(Json(TransferBody { transfer: record }))
}

/// A refused transfer's answer: the public exchange's status and message for each reason.
fn transfer_refused(
    markets: &Markets,
    currency_code: &str,
    currency: CurrencyId,
    error: EngineError,
) -> ApiError {
    match error {
        EngineError::PermissionDenied | EngineError::UnknownAccount => {
            ApiError::Forbidden(PERMISSION_DENIED)
        }
        EngineError::SameAccount => ApiError::BadRequest(
            "source_account_id and destination_account_id cannot be the same.".into(),
        ),
        EngineError::InsufficientBalance {
            account,
            available,
            requested,
            ..
        } => ApiError::BadRequest(format!(
            "account {} has a balance of {} {currency_code}, lower than the requested {} {currency_code}.",
            Uuid::of_account(account),
            markets.balance(currency, i128::from(available)),
            markets.balance(currency, i128::from(requested)),
        )),
        EngineError::BelowBlpThreshold => ApiError::BadRequest(
            "transfer would take the BLP account below its minimum balance.".into(),
        ),
        EngineError::InstantTradeAccount => ApiError::BadRequest(
            "transfers to or from the instant-trade account are not allowed.".into(),
        ),
        other => other.into(),
    }
}

/// The transfer record of a `TransferCompleted` event (`None` for any other).
fn transfer_record(markets: &Markets, e: &EventRecord) -> Option<TransferRecord> {
    match e.event {
        Event::TransferCompleted {
            transfer,
            holder,
            source,
            destination,
            currency,
            amount,
        } => Some(TransferRecord {
            account_holder: Uuid::of_holder(holder).to_string(),
            transfer_id: Uuid::of_transfer(transfer).to_string(),
            source_account_id: Uuid::of_account(source).to_string(),
            destination_account_id: Uuid::of_account(destination).to_string(),
            currency: markets.currency_code(currency).to_owned(),
            amount: markets.balance(currency, i128::from(amount)),
            time: iso_ms(e.time),
        }),
        _ => None,
    }
}
