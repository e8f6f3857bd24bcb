//! The node's order service against market data's history: over a random flow of places
//! (some crossing), amends, cancels by handle and by client id and cancel-alls, every
//! record answered is the one history holds right after (fills at entry included), every
//! refusal is the engine's, and a cancel-all names exactly the orders that were open.

use std::collections::BTreeSet;
use std::sync::mpsc;

use matchbook::market::orders::OrderRecord;
use matchbook::runtime::RuntimeHandle;
use matchbook::{
    AccountId, CancelScope, Command, EngineError, InstrumentId, NewOrder, OrderRef, Price, Qty,
    Side, TimeInForce, Uuid,
};
use matchbook_config::Exchange;
use matchbook_node::NodeBuilder;
use matchbook_node::orders::{Answer, OrderEntryError, OrderService, OrderTarget};

const DEFINITION: &str = r#"
[[holders]]
name = "alice"
accounts = [{ name = "main", deposits = { EUR = "10000000", BTC = "1000" } }]

[[holders]]
name = "bob"
accounts = [{ name = "main", deposits = { EUR = "10000000", BTC = "1000" } }]
"#;

/// Waits for a service call's answer.
fn wait<T: Send + 'static>(
    start: impl FnOnce(
        Box<dyn FnOnce(Answer<T>) + Send>,
    ) -> Result<(), matchbook::runtime::RuntimeError>,
) -> Answer<T> {
    let (tx, rx) = mpsc::channel();
    start(Box::new(move |answer| {
        let _ = tx.send(answer);
    }))
    .expect("the runtime takes it");
    rx.recv().expect("an answer")
}

fn history(handle: &RuntimeHandle, account: AccountId, id: u64) -> Option<OrderRecord> {
    (handle.market_blocking(move |m| m.orders().get(account, id).cloned())).expect("a read")
}

fn open_orders(handle: &RuntimeHandle, account: AccountId) -> BTreeSet<u64> {
    let read = move |e: &matchbook::Engine| {
        (e.open_orders(account).iter())
            .map(|o| o.handle().id)
            .collect()
    };
    handle.engine_blocking(read).expect("a read")
}

/// A deterministic source of small numbers.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (self.0 >> 33) % n
    }
}

struct Flow {
    orders: OrderService,
    handle: RuntimeHandle,
    instrument: InstrumentId,
    accounts: [AccountId; 2],
    placed: Vec<(AccountId, OrderRef, Uuid)>,
    filled_at_entry: usize,
}

impl Flow {
    fn place(&mut self, rng: &mut Rng) {
        let account = self.accounts[rng.below(2) as usize];
        let side = if rng.below(2) == 0 {
            Side::Buy
        } else {
            Side::Sell
        };
        let price = Price(6_000_000 + (rng.below(20) as i64 - 10) * 1_000);
        let mut order = NewOrder::limit(
            account,
            self.instrument,
            side,
            price,
            Qty(1_000 * (1 + rng.below(3) as i64)),
        );
        let client_id = Uuid(u128::from(rng.below(1 << 30)) + 1);
        order.client_id = Some(client_id);
        if rng.below(10) == 0 {
            order.time_in_force = TimeInForce::PostOnly;
        }
        let post_only = order.time_in_force == TimeInForce::PostOnly;
        let answer = wait(|reply| self.orders.place(Command::PlaceOrder(order), reply));
        match answer {
            Ok(placed) => {
                let r = &placed.record;
                assert_eq!(
                    Some(r.clone()),
                    history(&self.handle, account, r.accepted.order.id)
                );
                self.filled_at_entry += usize::from(r.filled.0 > 0);
                self.placed.push((account, r.accepted.order, client_id));
            }
            Err(OrderEntryError::Refused(EngineError::PostOnlyWouldTake)) => assert!(post_only),
            Err(e) => panic!("a placement refused: {e}"),
        }
    }

    fn amend_or_cancel(&mut self, rng: &mut Rng) {
        let (account, order, client_id) = self.placed[rng.below(self.placed.len() as u64) as usize];
        let open = open_orders(&self.handle, account).contains(&order.id);
        let target = if rng.below(2) == 0 {
            OrderTarget::Order(order)
        } else {
            OrderTarget::ClientId(client_id)
        };
        let answer = if rng.below(2) == 0 {
            let found = wait(|reply| self.orders.find(account, target, reply));
            match found {
                Ok((handle, _)) => {
                    let terms = (Some(Qty(1_000 * (1 + rng.below(3) as i64))), None);
                    wait(|reply| self.orders.amend(account, handle, terms, reply))
                }
                Err(e) => Err(e),
            }
        } else {
            wait(|reply| self.orders.cancel(account, target, reply))
        };
        match answer {
            Ok(r) => {
                let id = r.accepted.order.id;
                assert_eq!(Some(r.clone()), history(&self.handle, account, id));
            }
            // A client id may name a newer order of the same id, or none open.
            Err(
                OrderEntryError::NotFound | OrderEntryError::Refused(EngineError::OrderNotFound),
            ) => {
                assert!(!open || matches!(target, OrderTarget::ClientId(_)));
            }
            Err(e) => panic!("refused: {e}"),
        }
    }

    fn cancel_all(&mut self, rng: &mut Rng) {
        let account = self.accounts[rng.below(2) as usize];
        let before = open_orders(&self.handle, account);
        let scope = CancelScope::Instrument(self.instrument);
        let cancelled =
            wait(|reply| self.orders.cancel_all(account, scope, reply)).expect("a cancel-all");
        let cancelled: BTreeSet<u64> = cancelled.iter().map(|o| o.id).collect();
        assert_eq!(cancelled, before, "a cancel-all names the open orders");
        assert!(open_orders(&self.handle, account).is_empty());
    }
}

#[test]
fn every_answer_is_the_record_history_holds_right_after() {
    let dir = tempfile::tempdir().expect("a directory");
    let definition = Exchange::from_toml(DEFINITION).expect("the definition");
    let node = NodeBuilder::new(definition, dir.path())
        .open()
        .expect("the node opens");
    let handle = node.handle();
    let directory = node.directory();
    let accounts = ["alice", "bob"].map(|h| directory[h].accounts["main"]);
    let instrument = (handle
        .engine_blocking(|e| e.instrument_by_code("BTC_EUR"))
        .expect("a read"))
    .expect("BTC_EUR");
    let mut flow = Flow {
        orders: node.orders(),
        handle: handle.clone(),
        instrument,
        accounts,
        placed: Vec::new(),
        filled_at_entry: 0,
    };
    let mut rng = Rng(3);
    for _ in 0..600 {
        match rng.below(20) {
            0 => flow.cancel_all(&mut rng),
            1..=11 => flow.place(&mut rng),
            _ if flow.placed.is_empty() => flow.place(&mut rng),
            _ => flow.amend_or_cancel(&mut rng),
        }
    }
    assert!(
        flow.filled_at_entry > 10,
        "{} orders filled at entry",
        flow.filled_at_entry
    );
    let unknown = OrderTarget::Order(OrderRef {
        id: 1 << 40,
        slot: 0,
    });
    let missing = wait(|reply| flow.orders.cancel(accounts[0], unknown, reply));
    assert!(
        matches!(
            missing,
            Err(OrderEntryError::Refused(EngineError::OrderNotFound))
        ),
        "{missing:?}"
    );
    let deposit = Command::Deposit {
        account: accounts[0],
        currency: matchbook::CurrencyId(0),
        amount: 1,
    };
    let sequenced = handle.last_sequenced();
    let refused = wait(|reply| flow.orders.place(deposit, reply));
    assert_eq!(refused, Err(OrderEntryError::NotAPlacement));
    assert_eq!(
        handle.last_sequenced(),
        sequenced,
        "nothing was carried out"
    );
    node.stop().expect("the node stops");
}
