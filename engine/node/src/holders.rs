//! The definition's holders on a node: created (with their subaccounts and opening
//! balances) by the start that finds an empty journal or group log, and looked up by every
//! later start. Holders were created in definition order, so the n-th holder is holder n
//! and its accounts are found by name.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use matchbook::runtime::RuntimeHandle;
use matchbook::{AccountId, CurrencyId, HolderId};
use matchbook_config::{Directory, HolderConfig, HolderEntry, ProvisionError};

use crate::NodeError;

/// How long a following node waits for the holders its group's leader provisions.
const PROVISION_PATIENCE: Duration = Duration::from_secs(30);

/// How often a following node looks for them meanwhile.
const PROVISION_LOOK: Duration = Duration::from_millis(20);

/// Creates `holders` through the runtime, one command after another.
pub(crate) fn provision(
    handle: &RuntimeHandle,
    holders: &[HolderConfig],
) -> Result<Directory, NodeError> {
    let codes: Vec<String> = (holders.iter())
        .flat_map(|h| h.accounts.iter())
        .flat_map(|a| a.deposits.keys().cloned())
        .collect();
    let currencies: HashMap<String, (CurrencyId, u8)> = handle
        .engine_blocking(move |e| {
            (codes.into_iter())
                .filter_map(|code| {
                    let id = e.currency_by_code(&code)?;
                    Some((code, (id, e.balance_scale(id).ok()?)))
                })
                .collect()
        })
        .map_err(NodeError::Runtime)?;
    let provisioned = matchbook_config::provision(
        holders,
        |code| currencies.get(code).copied(),
        |command| match handle.apply_blocking(command) {
            Ok(outcome) => outcome.result.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        },
    );
    provisioned.map_err(|e| match e {
        ProvisionError::Refused { what, error } => NodeError::Provision(format!("{what}: {error}")),
        other => NodeError::Provision(other.to_string()),
    })
}

/// The directory of `holders` as the engine has them; on a node that follows a group
/// (`patient`), a holder still on its way from the leader's provisioning is waited for.
pub(crate) fn look_up(
    handle: &RuntimeHandle,
    holders: &[HolderConfig],
    patient: bool,
) -> Result<Directory, NodeError> {
    let deadline = Instant::now() + PROVISION_PATIENCE;
    loop {
        match directory(handle, holders) {
            Err(NodeError::Provision(_)) if patient && Instant::now() < deadline => {
                std::thread::sleep(PROVISION_LOOK);
            }
            done => return done,
        }
    }
}

fn directory(handle: &RuntimeHandle, holders: &[HolderConfig]) -> Result<Directory, NodeError> {
    let count = holders.len();
    let found = handle
        .engine_blocking(move |e| {
            (0..count)
                .map(|i| {
                    let holder = HolderId(i as u32);
                    let accounts = e.holder_accounts(holder).map(|list| {
                        (list.iter())
                            .map(|a| (a.name.to_owned(), a.id))
                            .collect::<HashMap<String, AccountId>>()
                    });
                    accounts.map_err(|e| e.to_string())
                })
                .collect::<Vec<_>>()
        })
        .map_err(NodeError::Runtime)?;
    (holders.iter().zip(found).enumerate())
        .map(|(i, (h, accounts))| {
            let accounts =
                accounts.map_err(|why| NodeError::Provision(format!("{}: {why}", h.name)))?;
            let entry = HolderEntry {
                holder: HolderId(i as u32),
                accounts,
            };
            Ok((h.name.clone(), entry))
        })
        .collect()
}
