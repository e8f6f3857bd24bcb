//! [`Host`]: what a single-threaded owner of an engine holds (the C `mb_engine`, Python's
//! `Engine`): the engine, its market data, the events not yet handed to the caller, and,
//! for an engine on a data directory, its journal and snapshots. Both bindings keep one of
//! these instead of each their own copy of the in-memory/durable logic.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{DurableEngine, Journalled, StoreError, StoreOptions, pin_config};
use matchbook_core::{Applied, Command, Engine, EngineError, EventRecord, Timestamp};
use matchbook_market::MarketData;

/// An engine owned by one thread, in memory or durable.
#[derive(Debug)]
pub struct Host {
    /// The engine.
    pub engine: Engine,
    /// Market data, when kept.
    pub market: Option<MarketData>,
    /// Events of the commands applied since the owner last took them.
    pub events: Vec<EventRecord>,
    /// Whether events are kept for the owner (otherwise dropped after each command).
    keep_events: bool,
    durable: Option<DurableEngine>,
}

impl Host {
    /// An engine kept in memory only.
    pub fn in_memory(engine: Engine, market: Option<MarketData>, keep_events: bool) -> Self {
        Self {
            engine,
            market,
            events: Vec::with_capacity(1024),
            keep_events,
            durable: None,
        }
    }

    /// An independent engine in memory with this one's state and market data now: a
    /// branch to try other commands on. Not durable, whatever this one is; no events wait
    /// in it (its events are those of the commands applied to it).
    pub fn copy_in_memory(&self) -> Self {
        Self::in_memory(self.engine.clone(), self.market.clone(), self.keep_events)
    }

    /// Whether the events of each command are kept for the owner to take.
    pub fn keeps_events(&self) -> bool {
        self.keep_events
    }

    /// Puts this engine, a fresh one, on the data directory `dir`: a new directory starts
    /// from it, an existing one is recovered and must be pinned to the same `starting_point`
    /// (`legacy`: the `Debug` text of the first pin format). On an error nothing changed.
    pub fn open_on<T: Serialize + ?Sized>(
        &mut self,
        dir: &Path,
        options: StoreOptions,
        starting_point: &T,
        legacy: &str,
    ) -> Result<(), StoreError> {
        pin_config(dir, starting_point, legacy)?;
        let fresh_engine = self.engine.clone();
        let fresh_market = self.market.clone().unwrap_or_else(|| {
            MarketData::new(fresh_engine.instruments().len(), Default::default())
        });
        let (durable, engine, market, _) =
            DurableEngine::open(dir, options, move || (fresh_engine, fresh_market))?;
        self.market = self.market.is_some().then_some(market);
        self.engine = engine;
        self.durable = Some(durable);
        Ok(())
    }

    /// Applies `command` at `time`; a durable engine journals and commits it first.
    #[inline]
    pub fn apply(&mut self, command: &Command, time: Timestamp) -> Journalled {
        self.apply_with(command, time, |result| *result)
    }

    /// As [`Host::apply`], handing `read` the engine's answer where it lies: a binding
    /// that wants a field or two of it copies no whole answer up through the layers
    /// (three copies of an `Applied` a call on the C ABI's fast path otherwise).
    #[inline(always)]
    pub fn apply_with<R>(
        &mut self,
        command: &Command,
        time: Timestamp,
        read: impl FnOnce(&Result<Applied, EngineError>) -> R,
    ) -> Result<R, StoreError> {
        let answer = self.read_uncommitted(command, time, read)?;
        self.commit()?;
        Ok(answer)
    }

    /// As [`Host::apply`] without the commit, for batches ([`Host::commit`] once after).
    #[inline]
    pub fn apply_uncommitted(&mut self, command: &Command, time: Timestamp) -> Journalled {
        self.read_uncommitted(command, time, |result| *result)
    }

    #[inline(always)]
    fn read_uncommitted<R>(
        &mut self,
        command: &Command,
        time: Timestamp,
        read: impl FnOnce(&Result<Applied, EngineError>) -> R,
    ) -> Result<R, StoreError> {
        let (engine, market, events) = (&mut self.engine, self.market.as_mut(), &mut self.events);
        let answer = match self.durable.as_mut() {
            Some(durable) => {
                read(&durable.apply_uncommitted(engine, market, command, time, events)?)
            }
            None => read(&matchbook_market::apply_and_record(
                engine, market, command, time, events,
            )),
        };
        if !self.keep_events {
            self.events.clear();
        }
        Ok(answer)
    }

    /// Whether the state may be shown: not after a failed journal write, when memory may
    /// hold commands the journal does not (reopening the directory continues from what is
    /// durable). Always for an engine in memory.
    pub fn readable(&self) -> Result<(), StoreError> {
        self.durable.as_ref().map_or(Ok(()), DurableEngine::check)
    }

    /// Makes what was applied durable (and snapshots when due); nothing in memory.
    #[inline]
    pub fn commit(&mut self) -> Result<(), StoreError> {
        match self.durable.as_mut() {
            Some(durable) => durable.commit(&self.engine, self.market.as_ref()),
            None => Ok(()),
        }
    }

    /// Writes a snapshot now; `None` for an engine in memory.
    pub fn snapshot(&mut self) -> Option<Result<PathBuf, StoreError>> {
        let durable = self.durable.as_mut()?;
        Some(durable.snapshot(&self.engine, self.market.as_ref()))
    }

    /// Takes a durable engine off its data directory: snapshots what was journalled since
    /// the last snapshot and releases the directory (another writer may open it). The
    /// engine stays in memory; an engine in memory is unchanged.
    pub fn close(&mut self) -> Result<(), StoreError> {
        let Some(mut durable) = self.durable.take() else {
            return Ok(());
        };
        if durable.commands_since_snapshot() > 0 {
            durable.snapshot(&self.engine, self.market.as_ref())?;
        }
        Ok(())
    }

    /// The data directory, for a durable engine.
    pub fn data_dir(&self) -> Option<&Path> {
        self.durable.as_ref().map(DurableEngine::dir)
    }
}

impl Drop for Host {
    /// A durable engine snapshots what was journalled since its last snapshot when it is
    /// dropped, so the next open replays nothing (best effort: the journal holds it all).
    fn drop(&mut self) {
        if let Some(durable) = self.durable.as_mut()
            && durable.commands_since_snapshot() > 0
        {
            let _ = durable.snapshot(&self.engine, self.market.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use matchbook_core::{AccountId, CurrencyId};

    fn fresh() -> Host {
        let engine = Engine::new(matchbook_config::demo::config()).expect("demo");
        let market = MarketData::new(engine.instruments().len(), Default::default());
        Host::in_memory(engine, Some(market), true)
    }

    fn run(host: &mut Host, n: i64) {
        let t = |i: i64| Timestamp(1_767_225_600_000_000_000 + i);
        host.apply(&Command::CreateHolder, t(0))
            .expect("journal")
            .expect("holder");
        for i in 1..=n {
            let deposit = Command::Deposit {
                account: AccountId(0),
                currency: CurrencyId(0),
                amount: i,
            };
            host.apply(&deposit, t(i))
                .expect("journal")
                .expect("deposit");
        }
    }

    #[test]
    fn a_durable_host_reopens_to_the_state_it_had_and_refuses_another_start() {
        let dir = std::env::temp_dir().join(format!("mb-host-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let options = StoreOptions::default();
        let mut memory = fresh();
        run(&mut memory, 20);
        assert!(memory.snapshot().is_none() && memory.data_dir().is_none());
        let mut durable = fresh();
        durable.open_on(&dir, options, "start A", "").expect("open");
        run(&mut durable, 20);
        assert_eq!(durable.engine.state_hash(), memory.engine.state_hash());
        assert_eq!(
            durable.events.len(),
            memory.events.len(),
            "events kept for the owner"
        );
        drop(durable); // snapshots on the way out
        let mut reopened = fresh();
        reopened
            .open_on(&dir, options, "start A", "")
            .expect("reopen");
        assert_eq!(reopened.engine.state_hash(), memory.engine.state_hash());
        drop(reopened);
        let mut other = fresh();
        assert!(matches!(
            other.open_on(&dir, options, "start B", ""),
            Err(StoreError::ConfigChanged(_))
        ));
        assert!(other.data_dir().is_none(), "a refused open changes nothing");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
