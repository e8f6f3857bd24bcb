//! What every paged history endpoint reads first: the query parameters, its time window
//! (spec 4.3 and the addendum's 30-day rule), its page size and the signed cursor of its
//! kind, checked against the caller's account.

use matchbook::market::query::{DAY, order_window, trade_window};
use matchbook::{AccountId, Timestamp};

use crate::cursor::CursorKind;
use crate::error::ApiError;
use crate::params::Params;
use crate::state::AppState;

/// How an endpoint's window defaults and is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Trades, positions, payments: the last day by default.
    Trades,
    /// Orders: inactive orders of the window; open ones always.
    Orders,
}

/// The parsed prologue of a history request.
#[derive(Debug)]
pub struct HistoryQuery {
    /// All query parameters (for the endpoint's own filters).
    pub params: Params,
    /// Window start.
    pub from: Timestamp,
    /// Window end.
    pub to: Timestamp,
    /// Page size.
    pub page_size: usize,
    /// Where the previous page ended (a record number for most listings; see
    /// [`HistoryQuery::record_cursor`]).
    pub cursor: Option<u128>,
}

impl HistoryQuery {
    /// The cursor of a listing paged by record number.
    pub fn record_cursor(&self) -> Result<Option<u64>, ApiError> {
        self.cursor.map(crate::cursor::record_number).transpose()
    }

    /// Parses `raw` for `account`: window, page size from `page_param`, cursor of `kind`.
    pub fn parse(
        state: &AppState,
        account: AccountId,
        raw: Option<&str>,
        window: Window,
        page_param: &str,
        kind: CursorKind,
    ) -> Result<Self, ApiError> {
        let params = Params::parse(raw)?;
        let (from, to) = (params.time("from", false)?, params.time("to", true)?);
        let now = state.now();
        let (from, to) = match window {
            Window::Trades => trade_window(from, to, now)?,
            Window::Orders => order_window(from, to, DAY, now)?,
        };
        let page_size = params.page_size(page_param)?;
        let cursor = state.cursors.param(&params, kind, account.0)?;
        Ok(Self {
            params,
            from,
            to,
            page_size,
            cursor,
        })
    }
}
