//! A node's market feed for Python (`NativeMarketFeed`): every book as a snapshot where
//! the feed starts, then each command's changed levels with the book sequence (the
//! `ORDER_BOOK` stream's contract), the top when it moved, and trades, as the runtime's
//! market stage publishes them from its replica. Prices and amounts go out as decimal
//! text at the instrument's scales.

use matchbook::reference::ReferenceData;
use matchbook::runtime::{BookUpdate, FeedBatch, ReadView, Subscription};
use matchbook::{Event, InstrumentId, Price, Qty, TopLevel};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::values;

/// A book read where a feed starts: market, sequence, bids and asks best first.
type BookRead = (
    InstrumentId,
    u64,
    Vec<(Price, Qty, u32)>,
    Vec<(Price, Qty, u32)>,
);

/// Every book of `view`'s replica.
pub(crate) fn read_books(view: &ReadView<'_>) -> Vec<BookRead> {
    (0..view.engine.instruments().len())
        .filter_map(|i| {
            let id = InstrumentId(u16::try_from(i).ok()?);
            let book = view.engine.book_levels(id, usize::MAX).ok()?;
            let side = |levels: &[matchbook::LevelView]| {
                (levels.iter())
                    .map(|l| (l.price, l.amount, l.number_of_orders))
                    .collect()
            };
            Some((id, book.sequence, side(&book.bids), side(&book.asks)))
        })
        .collect()
}

/// An instrument's code, price scale and amount scale (empty for an index that is none).
fn scales_of(reference: &ReferenceData, id: InstrumentId) -> (String, u8, u8) {
    (reference.market_of(id)).map_or((String::new(), 0, 0), |m| {
        (m.code.clone(), m.market_precision, m.amount_precision)
    })
}

/// A book read as the dict of a snapshot message.
pub(crate) fn book_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    seq: u64,
    (id, sequence, bids, asks): &BookRead,
) -> PyResult<Bound<'py, PyDict>> {
    let (code, ps, qs) = scales_of(reference, *id);
    let side = |levels: &[(Price, Qty, u32)]| -> Vec<(String, String, u32)> {
        (levels.iter())
            .map(|(p, a, n)| (values::text(p.0, ps), values::text(a.0, qs), *n))
            .collect()
    };
    let d = PyDict::new(py);
    d.set_item("type", "snapshot")?;
    d.set_item("seq", seq)?;
    d.set_item("instrument", code)?;
    d.set_item("sequence", *sequence)?;
    d.set_item("bids", side(bids))?;
    d.set_item("asks", side(asks))?;
    Ok(d)
}

fn update_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    seq: u64,
    update: &BookUpdate,
) -> PyResult<Bound<'py, PyDict>> {
    let (code, ps, qs) = scales_of(reference, update.instrument);
    let levels: Vec<(&str, String, String, u32)> = (update.levels.iter())
        .map(|l| {
            let (price, amount) = (values::text(l.price.0, ps), values::text(l.amount.0, qs));
            (l.side.as_str(), price, amount, l.orders)
        })
        .collect();
    let top_text = |top: TopLevel| top.map(|(p, a)| (values::text(p.0, ps), values::text(a.0, qs)));
    let d = PyDict::new(py);
    d.set_item("type", "book")?;
    d.set_item("seq", seq)?;
    d.set_item("instrument", code)?;
    d.set_item("sequence", update.sequence)?;
    d.set_item("levels", levels)?;
    d.set_item("top", update.top.map(|(b, a)| (top_text(b), top_text(a))))?;
    Ok(d)
}

fn trade_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    seq: u64,
    trade: &matchbook::Trade,
) -> PyResult<Bound<'py, PyDict>> {
    let (code, ps, qs) = scales_of(reference, trade.instrument);
    let d = PyDict::new(py);
    d.set_item("type", "trade")?;
    d.set_item("seq", seq)?;
    d.set_item("instrument", code)?;
    d.set_item("trade", trade.id.0)?;
    d.set_item("price", values::text(trade.price.0, ps))?;
    d.set_item("amount", values::text(trade.amount.0, qs))?;
    d.set_item("taker_side", trade.taker_side.as_str())?;
    Ok(d)
}

/// The messages of one feed batch into `list`.
fn batch_into(
    py: Python<'_>,
    reference: &ReferenceData,
    batch: &FeedBatch,
    list: &Bound<'_, PyList>,
) -> PyResult<()> {
    let published = &batch.published;
    for (index, command) in published.commands.iter().enumerate() {
        for record in published.events_of(index) {
            if let Event::Trade(t) = &record.event {
                list.append(trade_dict(py, reference, command.seq, t)?)?;
            }
        }
        for update in batch.books_of(index) {
            list.append(update_dict(py, reference, command.seq, update)?)?;
        }
    }
    Ok(())
}

/// A node's market feed.
#[pyclass(module = "matchbook._native", frozen)]
pub struct NativeMarketFeed {
    pub(crate) subscription: Subscription<FeedBatch>,
    /// The node's reference data (scales), shared.
    pub(crate) reference: std::sync::Arc<ReferenceData>,
    /// The snapshot taken where the feed starts, handed out by the first poll.
    pub(crate) snapshot: std::sync::Mutex<Option<Vec<BookRead>>>,
}

#[pymethods]
impl NativeMarketFeed {
    /// The messages since the last poll (the first poll starts with every book's
    /// snapshot), waiting up to `timeout` seconds for a batch when none is queued. A feed
    /// that fell 65,536 batches behind, or whose node stopped, raises `STOPPED`.
    fn poll<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let snapshot = self.snapshot.lock().ok().and_then(|mut s| s.take());
        if let Some(books) = snapshot {
            for book in &books {
                let start = self.subscription.start_seq;
                list.append(book_dict(py, &self.reference, start, book)?)?;
            }
            return Ok(list);
        }
        let reference = &self.reference;
        crate::node::poll_batches(py, &self.subscription, timeout, |batch| {
            batch_into(py, reference, batch, &list)
        })?;
        Ok(list)
    }
}
