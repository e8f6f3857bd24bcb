//! What the C ABI tests share: the exchange they define and when it starts.

/// 2026-01-01, when every test exchange starts.
pub const START: i64 = 1_767_225_600_000_000_000;

/// Demo markets and two funded holders: `maker` (BTC, EUR, USD) and `taker` (EUR, USD).
pub const DEFINITION: &std::ffi::CStr = c"[[holders]]
name = \"maker\"
[[holders.accounts]]
name = \"main\"
deposits = { BTC = \"10\", EUR = \"1000000\", USD = \"1000000\" }
[[holders]]
name = \"taker\"
[[holders.accounts]]
name = \"main\"
deposits = { EUR = \"1000000\", USD = \"1000000\" }
";
