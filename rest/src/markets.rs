//! The reference data every handler uses without asking the engine thread: the core's
//! [`matchbook::reference::ReferenceData`] (codes, precisions, balance scales, decimal
//! text both ways), the one type REST, C and Python share. REST adds only the spec's
//! answer to a market code it does not know.

pub use matchbook::reference::{MarketRef as Market, ReferenceData as Markets};

use crate::error::ApiError;

/// A market by code, or the spec's 404 `INVALID_INSTRUMENT_CODE`.
pub fn require<'a>(markets: &'a Markets, code: &str) -> Result<&'a Market, ApiError> {
    (markets.market(code)).ok_or(ApiError::NotFound("INVALID_INSTRUMENT_CODE"))
}
