//! Market data derived from the engine's event stream: candlesticks and rolling 24-hour
//! tickers per instrument. A consumer outside the matching path: it reads events after each
//! command and never changes the engine.

pub mod candles;
pub mod period;
pub mod ticker;
