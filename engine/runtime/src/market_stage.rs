//! The market-data side of the runtime: on a thread of its own or inline on the engine
//! thread, it takes in each command's events, answers the command's caller and runs reads.

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use matchbook_market::MarketData;
use matchbook_store::snapshot::Captured;

use super::{MarketWork, Outcome};

/// Where the engine thread sends what market data needs.
pub(crate) enum MarketStage {
    Inline(Box<MarketData>),
    Thread(Sender<MarketWork>),
}

impl MarketStage {
    /// Hands work on; false when the market-data thread is gone.
    pub(crate) fn take(&mut self, work: MarketWork) -> bool {
        match self {
            Self::Inline(market) => {
                handle_market(market, work);
                true
            }
            Self::Thread(to_market) => to_market.send(work).is_ok(),
        }
    }
}

/// Applies one piece of market-data work; false on `Stop`.
fn handle_market(market: &mut MarketData, work: MarketWork) -> bool {
    match work {
        MarketWork::Events {
            result,
            events,
            time,
            reply,
        } => {
            market.on_events(&events);
            reply(
                Outcome {
                    result,
                    events,
                    time,
                },
                market,
            );
        }
        MarketWork::Read(read) => read(market),
        MarketWork::Snapshot { seq, engine, sink } => sink(Captured {
            seq,
            engine: *engine,
            market: Some(market.clone()),
        }),
        MarketWork::Stop => return false,
    }
    true
}

pub(crate) fn run_market(mut market: MarketData, inbox: &Receiver<MarketWork>) -> MarketData {
    loop {
        let work = match inbox.try_recv() {
            Ok(work) => work,
            Err(TryRecvError::Empty) => match inbox.recv() {
                Ok(work) => work,
                Err(_) => break,
            },
            Err(TryRecvError::Disconnected) => break,
        };
        if !handle_market(&mut market, work) {
            break;
        }
    }
    market
}
