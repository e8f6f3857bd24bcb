//! Provisioning: the commands that create the configured holders, their subaccounts and
//! opening balances, applied through whatever reaches the engine (an `Engine` directly, the
//! threaded runtime, a journal-backed server), with the ids they got kept by name.

use std::collections::HashMap;

use matchbook_core::{
    AccountId, AccountKind, Applied, Command, CurrencyId, Engine, EngineError, EventSink, HolderId,
    Timestamp,
};

use crate::HolderConfig;

/// A provisioned holder and its accounts by name (`main` included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderEntry {
    /// Holder id.
    pub holder: HolderId,
    /// Accounts by name.
    pub accounts: HashMap<String, AccountId>,
}

/// Provisioned holders by name.
pub type Directory = HashMap<String, HolderEntry>;

/// Why provisioning stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProvisionError<E> {
    /// The engine refused a command.
    #[error("{what}: {error}")]
    Refused {
        /// `holder`, `holder/account` or `holder/account deposit CODE`.
        what: String,
        /// Why.
        error: E,
    },
    /// An account kind that is not `regular`, `instant-trade` or `blp`.
    #[error("{what}: bad account kind {kind:?}")]
    AccountKind {
        /// `holder/account`.
        what: String,
        /// The kind given.
        kind: String,
    },
    /// A deposit in an unknown currency or with an amount that is not a decimal of the
    /// currency's scale.
    #[error("{what}: bad deposit {amount:?} {currency}")]
    Deposit {
        /// `holder/account`.
        what: String,
        /// Currency code.
        currency: String,
        /// Amount text.
        amount: String,
    },
}

/// Creates `holders` in order through `apply`. `currency` gives a code's id and balance
/// scale.
pub fn provision<E>(
    holders: &[HolderConfig],
    currency: impl Fn(&str) -> Option<(CurrencyId, u8)>,
    mut apply: impl FnMut(Command) -> Result<Applied, E>,
) -> Result<Directory, ProvisionError<E>> {
    let mut directory = Directory::new();
    for h in holders {
        let refused = |what: &str| {
            let what = what.to_owned();
            move |error| ProvisionError::Refused { what, error }
        };
        let created = apply(Command::CreateHolder).map_err(refused(&h.name))?;
        let (Some(holder), Some(main)) = (created.holder, created.account) else {
            continue;
        };
        let mut accounts = HashMap::from([("main".to_owned(), main)]);
        for a in &h.accounts {
            let what = format!("{}/{}", h.name, a.name);
            let account = if a.name == "main" {
                main
            } else {
                let kind = match a.kind.as_deref() {
                    None => AccountKind::Regular,
                    Some(text) => {
                        AccountKind::parse(text).ok_or_else(|| ProvisionError::AccountKind {
                            what: what.clone(),
                            kind: text.to_owned(),
                        })?
                    }
                };
                let command = Command::CreateSubaccount {
                    holder,
                    name: a.name.clone(),
                    kind,
                };
                apply(command)
                    .map_err(refused(&what))?
                    .account
                    .unwrap_or(main)
            };
            accounts.insert(a.name.clone(), account);
            for (code, amount) in &a.deposits {
                let bad = || ProvisionError::Deposit {
                    what: what.clone(),
                    currency: code.clone(),
                    amount: amount.clone(),
                };
                let (currency, scale) = currency(code).ok_or_else(bad)?;
                let amount =
                    matchbook_core::fixed::parse_scaled(amount, scale).map_err(|_| bad())?;
                let command = Command::Deposit {
                    account,
                    currency,
                    amount,
                };
                apply(command).map_err(refused(&format!("{what} deposit {code}")))?;
            }
        }
        directory.insert(h.name.clone(), HolderEntry { holder, accounts });
    }
    Ok(directory)
}

/// [`provision`] straight into an engine owned by the caller, every command at `time`,
/// events into `sink`.
pub fn provision_engine<S: EventSink>(
    engine: &mut Engine,
    holders: &[HolderConfig],
    time: Timestamp,
    sink: &mut S,
) -> Result<Directory, ProvisionError<EngineError>> {
    // Codes and scales are read up front: `apply` needs the engine mutably meanwhile.
    let currencies: Vec<(String, CurrencyId, u8)> = (0..engine.currencies().len())
        .filter_map(|i| {
            let id = CurrencyId(u16::try_from(i).ok()?);
            let scale = engine.balance_scale(id).ok()?;
            Some((engine.currencies()[i].code.clone(), id, scale))
        })
        .collect();
    provision(
        holders,
        |code| currencies.iter().find(|c| c.0 == code).map(|c| (c.1, c.2)),
        |command| engine.apply(&command, time, sink),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exchange;

    #[test]
    fn holders_get_their_accounts_and_balances() {
        let exchange = Exchange::from_toml(
            r#"
            [[holders]]
            name = "alice"
            [[holders.accounts]]
            name = "main"
            deposits = { EUR = "1000.50" }
            [[holders.accounts]]
            name = "hedge"
            kind = "blp"
            deposits = { BTC = "2" }
            [[holders]]
            name = "bob"
            "#,
        )
        .expect("valid");
        let mut engine =
            matchbook_core::Engine::new(exchange.engine_config().expect("config")).expect("engine");
        let lookup = |code: &str| {
            let id = engine.currency_by_code(code)?;
            Some((id, engine.balance_scale(id).ok()?))
        };
        let currencies: HashMap<String, (CurrencyId, u8)> = ["EUR", "BTC"]
            .iter()
            .filter_map(|c| lookup(c).map(|v| ((*c).to_owned(), v)))
            .collect();
        let mut sink = Vec::new();
        let directory = provision(
            &exchange.holders,
            |code| currencies.get(code).copied(),
            |c| engine.apply(&c, matchbook_core::Timestamp(1), &mut sink),
        )
        .expect("provisioned");
        let alice = &directory["alice"];
        let hedge = engine.account(alice.accounts["hedge"]).expect("hedge");
        assert_eq!(hedge.kind, AccountKind::Blp);
        let (btc, scale) = currencies["BTC"];
        assert_eq!(
            hedge.balances.get(btc).available,
            2 * 10i64.pow(u32::from(scale))
        );
        assert_eq!(directory["bob"].holder, HolderId(1));

        let bad = Exchange::from_toml(
            "[[holders]]\nname = \"x\"\n[[holders.accounts]]\nname = \"main\"\ndeposits = { XYZ = \"1\" }",
        )
        .expect("parses");
        let refused = provision_engine(&mut engine, &bad.holders, Timestamp(2), &mut sink);
        assert!(matches!(refused, Err(ProvisionError::Deposit { .. })));
        let again = provision_engine(&mut engine, &exchange.holders, Timestamp(3), &mut sink)
            .expect("provisioned directly");
        assert_eq!(
            again["alice"].holder,
            HolderId(3),
            "after alice, bob and the refused x"
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        assert!(Exchange::from_toml("currenciez = []").is_err());
        assert!(Exchange::from_json(r#"{"holders": [{"name": "a", "extra": 1}]}"#).is_err());
        let bad_kind = Exchange::from_json(
            r#"{"instruments": [{"code": "X_Y", "base": "X", "quote": "Y", "amount_precision": 1,
                "market_precision": 1, "min_size": "1", "min_price": "0.1", "max_price": "10",
                "type": "OPTION"}]}"#,
        )
        .expect("parses");
        assert!(matches!(
            bad_kind.engine_config(),
            Err(crate::DefinitionError::Invalid(_))
        ));
    }

    /// A second holder of a name took the first one's place in the directory keys are
    /// resolved through: the first holder's accounts and funds were unreachable.
    #[test]
    fn a_holder_or_account_named_twice_is_refused() {
        let twice = [
            r#"{"holders": [{"name": "alice"}, {"name": "bob"}, {"name": "alice"}]}"#,
            r#"{"holders": [{"name": "alice", "accounts": [{"name": "x"}, {"name": "x"}]}]}"#,
            r#"{"holders": [{"name": "alice", "accounts": [{"name": "main"}, {"name": "main"}]}]}"#,
        ];
        for text in twice {
            let exchange = Exchange::from_json(text).expect("parses");
            match exchange.engine_config() {
                Err(crate::DefinitionError::Invalid(why)) => {
                    assert!(why.contains("twice"), "{why}")
                }
                other => panic!("{text}: {:?}", other.map(|_| "accepted")),
            }
        }
        let distinct = r#"{"holders": [{"name": "alice", "accounts": [{"name": "x"}]},
            {"name": "bob", "accounts": [{"name": "x"}]}]}"#;
        let exchange = Exchange::from_json(distinct).expect("parses");
        assert!(exchange.engine_config().is_ok());
    }
}
