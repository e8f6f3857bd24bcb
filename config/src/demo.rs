//! The embedded demo reference data: the currencies and markets a fresh exchange starts with
//! when no configuration file is given, also used by examples, tests and benchmarks. Written
//! against `matchbook_core`'s public paths only: the core compiles this same file into its
//! unit tests (it cannot depend on this crate, which depends on it).

use rust_decimal::Decimal;

use matchbook_core::{
    Currency, DEFAULT_MAX_OPEN_ORDERS, EngineConfig, FundingSchedule, FundingSettings,
    FuturesTerms, InstrumentKind, InstrumentSpec, InstrumentState,
};

fn currency(code: &str, precision: u8, ucid: u32, name: &str, collateral: i64) -> Currency {
    Currency {
        code: code.into(),
        precision,
        unified_cryptoasset_id: ucid,
        name: name.into(),
        collateral_percentage: Decimal::from(collateral),
    }
}

fn spot(
    code: &str,
    amount_precision: u8,
    market_precision: u8,
    min_size: &str,
    max_price: &str,
) -> InstrumentSpec {
    let (base, quote) = code.split_once('_').unwrap_or((code, code));
    let min_price = if market_precision == 0 {
        "1".to_owned()
    } else {
        format!("0.{}1", "0".repeat(usize::from(market_precision) - 1))
    };
    InstrumentSpec {
        code: code.into(),
        base: base.into(),
        quote: quote.into(),
        amount_precision,
        market_precision,
        min_size: min_size.into(),
        min_price,
        max_price: max_price.into(),
        kind: InstrumentKind::Spot,
        state: InstrumentState::Active,
        futures: None,
    }
}

fn future(code: &str, base: &str, kind: InstrumentKind, expiry: Option<&str>) -> InstrumentSpec {
    InstrumentSpec {
        code: code.into(),
        base: base.into(),
        quote: "USD".into(),
        amount_precision: 4,
        market_precision: 1,
        min_size: "10".into(),
        min_price: "0.1".into(),
        max_price: "10000000".into(),
        kind,
        state: InstrumentState::Active,
        futures: Some(FuturesTerms {
            price_collar_percentage: Decimal::from(5),
            initial_margin_percentage: Decimal::from(10),
            maintenance_margin_percentage: Decimal::from(5),
            funding: expiry.is_none().then(|| FundingSettings {
                cap: Decimal::new(75, 2),
                clamp_threshold: Decimal::new(5, 2),
                annual_interest_rate: Decimal::new(1095, 2),
            }),
            funding_period: expiry.is_none().then_some(240),
            market_offset: 0,
            funding_schedule: FundingSchedule::FixedInterval {
                period_minutes: 240,
            },
            contract_expiry_date: expiry.map(str::to_owned),
            contract_duration: expiry.map(|_| "QUARTERLY".to_owned()),
        }),
    }
}

/// Demo currencies and markets: BTC_EUR, ETH_EUR, ETH_BTC, BTC_USDT, SHIB_EUR spot markets,
/// a BTC perpetual and a dated BTC future, both settled in USD.
pub fn config() -> EngineConfig {
    EngineConfig {
        currencies: vec![
            currency("BTC", 8, 1, "Bitcoin", 90),
            currency("ETH", 8, 1027, "Ethereum", 85),
            currency("EUR", 2, 0, "Euro", 100),
            currency("USD", 2, 0, "US Dollar", 100),
            currency("USDT", 6, 825, "Tether", 95),
            currency("SHIB", 3, 5994, "Shiba Inu", 0),
            currency("PEPE", 3, 24478, "Pepe", 0),
            currency("BTT", 3, 16086, "BitTorrent", 0),
        ],
        instruments: vec![
            spot("BTC_EUR", 5, 2, "10", "1000000"),
            spot("ETH_EUR", 4, 2, "10", "100000"),
            spot("ETH_BTC", 3, 5, "0.0001", "10"),
            spot("BTC_USDT", 5, 2, "10", "1000000"),
            spot("SHIB_EUR", 0, 8, "10", "1"),
            future("BTC_USD_PERP", "BTC", InstrumentKind::Perp, None),
            future(
                "BTC_USD_2027Q1",
                "BTC",
                InstrumentKind::DatedFuture,
                Some("2027-03-26"),
            ),
        ],
        max_open_orders: DEFAULT_MAX_OPEN_ORDERS,
        fee_groups: matchbook_core::fees::default_fee_groups(),
        enforce_balances: true,
        publish_top_of_book: true,
    }
}
