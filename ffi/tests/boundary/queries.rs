//! The query exports of both handle kinds, checked by one routine.

use super::*;

/// The query exports of one handle kind, as function pointers over an opaque handle.
pub(super) trait Queries {
    unsafe fn balances(
        &self,
        h: bool,
        account: u32,
        buf: *mut MbBalance,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
    unsafe fn open_orders(
        &self,
        h: bool,
        account: u32,
        buf: *mut MbOrder,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
    unsafe fn order(&self, h: bool, account: u32, order: MbOrderRef, out: *mut MbOrder)
    -> MbStatus;
    unsafe fn order_by_client_id(
        &self,
        h: bool,
        account: u32,
        id: MbUuid,
        out: *mut MbOrder,
    ) -> MbStatus;
    unsafe fn top(&self, h: bool, instrument: u16, out: *mut MbTop) -> MbStatus;
    #[allow(clippy::too_many_arguments)]
    unsafe fn levels(
        &self,
        h: bool,
        instrument: u16,
        depth: usize,
        b: *mut MbLevel,
        bc: usize,
        bl: *mut usize,
        a: *mut MbLevel,
        ac: usize,
        al: *mut usize,
    ) -> MbStatus;
    #[allow(clippy::too_many_arguments)]
    unsafe fn orders(
        &self,
        h: bool,
        instrument: u16,
        depth: usize,
        b: *mut MbBookOrder,
        bc: usize,
        bl: *mut usize,
        a: *mut MbBookOrder,
        ac: usize,
        al: *mut usize,
    ) -> MbStatus;
    #[allow(clippy::too_many_arguments)]
    unsafe fn candles(
        &self,
        h: bool,
        instrument: u16,
        unit: u32,
        period: u32,
        from: i64,
        to: i64,
        buf: *mut MbCandle,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
    unsafe fn ticker(&self, h: bool, instrument: u16, out: *mut MbTicker) -> MbStatus;
    unsafe fn positions(
        &self,
        h: bool,
        account: u32,
        buf: *mut MbPosition,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
}

pub(super) struct EngineQueries(pub(super) *mut MbEngine);
pub(super) struct SessionQueries(pub(super) *mut MbSession);

macro_rules! queries {
    ($t:ty, $handle:ty, $balances:ident, $open:ident, $order:ident, $by_client:ident, $top:ident, $levels:ident, $orders:ident, $candles:ident, $ticker:ident, $positions:ident) => {
        impl $t {
            fn handle(&self, valid: bool) -> *const $handle {
                if valid { self.0 } else { null() }
            }
        }
        impl Queries for $t {
            unsafe fn balances(
                &self,
                h: bool,
                account: u32,
                buf: *mut MbBalance,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe { $balances(self.handle(h), account, buf, cap, len) }
            }
            unsafe fn open_orders(
                &self,
                h: bool,
                account: u32,
                buf: *mut MbOrder,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe { $open(self.handle(h), account, buf, cap, len) }
            }
            unsafe fn order(
                &self,
                h: bool,
                account: u32,
                order: MbOrderRef,
                out: *mut MbOrder,
            ) -> MbStatus {
                unsafe { $order(self.handle(h), account, order, out) }
            }
            unsafe fn order_by_client_id(
                &self,
                h: bool,
                account: u32,
                id: MbUuid,
                out: *mut MbOrder,
            ) -> MbStatus {
                unsafe { $by_client(self.handle(h), account, id, out) }
            }
            unsafe fn top(&self, h: bool, instrument: u16, out: *mut MbTop) -> MbStatus {
                unsafe { $top(self.handle(h), instrument, out) }
            }
            unsafe fn levels(
                &self,
                h: bool,
                instrument: u16,
                depth: usize,
                b: *mut MbLevel,
                bc: usize,
                bl: *mut usize,
                a: *mut MbLevel,
                ac: usize,
                al: *mut usize,
            ) -> MbStatus {
                unsafe { $levels(self.handle(h), instrument, depth, b, bc, bl, a, ac, al) }
            }
            unsafe fn orders(
                &self,
                h: bool,
                instrument: u16,
                depth: usize,
                b: *mut MbBookOrder,
                bc: usize,
                bl: *mut usize,
                a: *mut MbBookOrder,
                ac: usize,
                al: *mut usize,
            ) -> MbStatus {
                unsafe { $orders(self.handle(h), instrument, depth, b, bc, bl, a, ac, al) }
            }
            unsafe fn candles(
                &self,
                h: bool,
                instrument: u16,
                unit: u32,
                period: u32,
                from: i64,
                to: i64,
                buf: *mut MbCandle,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe {
                    $candles(
                        self.handle(h),
                        instrument,
                        unit,
                        period,
                        from,
                        to,
                        buf,
                        cap,
                        len,
                    )
                }
            }
            unsafe fn ticker(&self, h: bool, instrument: u16, out: *mut MbTicker) -> MbStatus {
                unsafe { $ticker(self.handle(h), instrument, out) }
            }
            unsafe fn positions(
                &self,
                h: bool,
                account: u32,
                buf: *mut MbPosition,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe { $positions(self.handle(h), account, buf, cap, len) }
            }
        }
    };
}

queries!(
    EngineQueries,
    MbEngine,
    mb_engine_balances,
    mb_engine_open_orders,
    mb_engine_order,
    mb_engine_order_by_client_id,
    mb_engine_book_top,
    mb_engine_book_levels,
    mb_engine_book_orders,
    mb_engine_candles,
    mb_engine_ticker,
    mb_engine_positions
);
queries!(
    SessionQueries,
    MbSession,
    mb_session_balances,
    mb_session_open_orders,
    mb_session_order,
    mb_session_order_by_client_id,
    mb_session_book_top,
    mb_session_book_levels,
    mb_session_book_orders,
    mb_session_candles,
    mb_session_ticker,
    mb_session_positions
);

/// The demo world's start time.
const T: i64 = 1_767_225_600_000_000_000;

/// Every query of one handle against the world's state (the same on both handles): NULL
/// handle and outs, short buffers, a forced panic, then the values.
pub(super) fn check_queries(w: &World, q: &impl Queries) {
    check_balance_queries(w, q);
    check_order_queries(w, q);
    check_book_queries(w, q);
    check_market_queries(w, q);
}

/// Balances: NULL handle and outs, a short buffer, a panic, the values.
fn check_balance_queries(w: &World, q: &impl Queries) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut len = 0usize;
        let mut balances = [zeroed::<MbBalance>(); 16];
        assert_eq!(
            q.balances(false, w.taker, balances.as_mut_ptr(), 16, &mut len),
            NULL
        );
        assert_eq!(
            q.balances(true, w.taker, balances.as_mut_ptr(), 16, null_mut()),
            NULL
        );
        assert_eq!(q.balances(true, w.taker, null_mut(), 16, &mut len), NULL);
        assert_eq!(
            q.balances(true, w.taker, null_mut(), 0, &mut len),
            SMALL,
            "NULL, 0 asks the length"
        );
        assert_eq!(
            q.balances(true, w.taker, balances.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        let needed = len;
        assert_eq!(
            q.balances(true, 999, balances.as_mut_ptr(), 16, &mut len),
            MbStatus::UnknownAccount
        );
        panics("balances", || {
            q.balances(true, w.taker, balances.as_mut_ptr(), 16, &mut len)
        });
        assert_eq!(
            q.balances(true, w.taker, balances.as_mut_ptr(), needed, &mut len),
            OK
        );
        let btc = balances
            .iter()
            .position(|b| b.available == 998_500)
            .expect("0.01 BTC less the 0.15% fee");
        assert_eq!(balances[btc].scale, 8);
    }
}

/// Open orders and one order: NULLs, short buffers, panics, the values.
fn check_order_queries(w: &World, q: &impl Queries) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut len = 0usize;
        let mut orders = [zeroed::<MbOrder>(); 8];
        assert_eq!(
            q.open_orders(false, w.maker, orders.as_mut_ptr(), 8, &mut len),
            NULL
        );
        assert_eq!(
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 8, null_mut()),
            NULL
        );
        assert_eq!(
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        assert_eq!(len, 2, "the bid and the rest of the ask");
        panics("open_orders", || {
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 8, &mut len)
        });
        assert_eq!(
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 8, &mut len),
            OK
        );
        assert!(
            orders[..2]
                .iter()
                .any(|o| o.amount == 10_000 && o.filled == 1_000)
        );

        let mut one = zeroed::<MbOrder>();
        assert_eq!(q.order(false, w.maker, w.order, &mut one), NULL);
        assert_eq!(q.order(true, w.maker, w.order, null_mut()), NULL);
        assert_eq!(
            q.order(true, w.taker, w.order, &mut one),
            MbStatus::OrderNotFound,
            "someone else's"
        );
        panics("order", || q.order(true, w.maker, w.order, &mut one));
        assert_eq!(q.order(true, w.maker, w.order, &mut one), OK);
        assert_eq!((one.price, one.client_id), (5_990_000, w.client_id));
        assert_eq!(
            q.order_by_client_id(false, w.maker, w.client_id, &mut one),
            NULL
        );
        assert_eq!(
            q.order_by_client_id(true, w.maker, w.client_id, null_mut()),
            NULL
        );
        assert_eq!(
            q.order_by_client_id(true, w.maker, MbUuid::default(), &mut one),
            MbStatus::InvalidArgument
        );
        panics("order_by_client_id", || {
            q.order_by_client_id(true, w.maker, w.client_id, &mut one)
        });
        assert_eq!(
            q.order_by_client_id(true, w.maker, w.client_id, &mut one),
            OK
        );
        assert_eq!(one.order, w.order);
    }
}

/// The top of book, its levels and its orders.
fn check_book_queries(w: &World, q: &impl Queries) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut top = MbTop::default();
        assert_eq!(q.top(false, w.btc_eur, &mut top), NULL);
        assert_eq!(q.top(true, w.btc_eur, null_mut()), NULL);
        assert_eq!(q.top(true, 999, &mut top), MbStatus::UnknownInstrument);
        panics("top", || q.top(true, w.btc_eur, &mut top));
        assert_eq!(q.top(true, w.btc_eur, &mut top), OK);
        assert_eq!(
            (top.bid, top.bid_amount, top.ask, top.ask_amount),
            (5_990_000, 10_000, 6_010_000, 9_000)
        );

        let (mut bids, mut asks) = ([zeroed::<MbLevel>(); 4], [zeroed::<MbLevel>(); 4]);
        let (mut nb, mut na) = (0usize, 0usize);
        let (b, a) = (bids.as_mut_ptr(), asks.as_mut_ptr());
        assert_eq!(
            q.levels(false, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, null_mut(), a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, null_mut()),
            NULL
        );
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 0, &mut na),
            SMALL
        );
        assert_eq!(na, 1);
        panics("levels", || {
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na)
        });
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            OK
        );
        assert_eq!((nb, na, bids[0].orders, asks[0].amount), (1, 1, 1, 9_000));

        let (mut bids, mut asks) = ([zeroed::<MbBookOrder>(); 4], [zeroed::<MbBookOrder>(); 4]);
        let (b, a) = (bids.as_mut_ptr(), asks.as_mut_ptr());
        assert_eq!(
            q.orders(false, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.orders(true, w.btc_eur, 4, null_mut(), 4, &mut nb, a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.orders(true, w.btc_eur, 4, b, 0, &mut nb, a, 4, &mut na),
            SMALL
        );
        panics("orders", || {
            q.orders(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na)
        });
        assert_eq!(
            q.orders(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            OK
        );
        assert_eq!((bids[0].order, bids[0].account), (w.order, w.maker));
    }
}

/// Candles, the ticker and futures positions.
fn check_market_queries(w: &World, q: &impl Queries) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut len = 0usize;
        let mut candles = [zeroed::<MbCandle>(); 4];
        let c = candles.as_mut_ptr();
        let (from, to) = (T - 60_000_000_000, T + 60_000_000_000);
        assert_eq!(
            q.candles(false, w.btc_eur, 0, 1, from, to, c, 4, &mut len),
            NULL
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 4, null_mut()),
            NULL
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 7, from, to, c, 4, &mut len),
            MbStatus::InvalidArgument
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 9, 1, from, to, c, 4, &mut len),
            MbStatus::InvalidArgument
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 0, &mut len),
            SMALL
        );
        panics("candles", || {
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 4, &mut len)
        });
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 4, &mut len),
            OK
        );
        let traded = candles[..len]
            .iter()
            .find(|c| c.total_amount > 0)
            .expect("the trade's candle");
        assert_eq!(
            (traded.open, traded.close, traded.total_amount),
            (6_010_000, 6_010_000, 1_000)
        );

        let mut ticker = MbTicker::default();
        assert_eq!(q.ticker(false, w.btc_eur, &mut ticker), NULL);
        assert_eq!(q.ticker(true, w.btc_eur, null_mut()), NULL);
        panics("ticker", || q.ticker(true, w.btc_eur, &mut ticker));
        assert_eq!(q.ticker(true, w.btc_eur, &mut ticker), OK);
        assert_eq!(
            (ticker.last, ticker.trades, ticker.bid),
            (6_010_000, 1, 5_990_000)
        );

        let mut positions = [zeroed::<MbPosition>(); 2];
        assert_eq!(
            q.positions(false, w.taker, positions.as_mut_ptr(), 2, &mut len),
            NULL
        );
        assert_eq!(
            q.positions(true, w.taker, positions.as_mut_ptr(), 2, null_mut()),
            NULL
        );
        assert_eq!(
            q.positions(true, w.taker, positions.as_mut_ptr(), 0, &mut len),
            SMALL
        );
        panics("positions", || {
            q.positions(true, w.taker, positions.as_mut_ptr(), 2, &mut len)
        });
        assert_eq!(
            q.positions(true, w.taker, positions.as_mut_ptr(), 2, &mut len),
            OK
        );
        assert_eq!(
            (
                len,
                positions[0].instrument,
                positions[0].size,
                positions[0].entry_price
            ),
            (1, w.perp, 1_000, 600_000)
        );
    }
}
