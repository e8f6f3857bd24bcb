//! The reference engine's checks of a new order, in the engine's documented order: its
//! own terms, its price, expiry and market, its time in force against the book, and what
//! it reserves.

use super::*;

impl RefEngine {
    /// The checks of a new order's own terms and its market's state, in the engine's
    /// documented order (the account's come after).
    pub(super) fn check_terms(
        &self,
        o: &NewOrder,
        inst: &RefInstrument,
    ) -> Result<(), EngineError> {
        // Validation, in the engine's documented order.
        if o.amount.0 <= 0 {
            return Err(EngineError::InvalidAmount);
        }
        let kind = o.order_type;
        let trigger_type = !matches!(kind, OrderType::Limit | OrderType::Market);
        let trailing = matches!(kind, OrderType::TrailingStop | OrderType::TrailingStopLimit);
        let market_type = matches!(
            kind,
            OrderType::Market
                | OrderType::StopMarket
                | OrderType::TakeProfitMarket
                | OrderType::TrailingStop
        );
        if matches!(
            kind,
            OrderType::Limit | OrderType::Stop | OrderType::TakeProfit
        ) && o.price.is_none()
        {
            return Err(EngineError::MissingPrice);
        }
        if trailing && o.price.is_some() {
            return Err(EngineError::InvalidPrice);
        }
        let bad_tif = match o.time_in_force {
            TimeInForce::PostOnly => market_type,
            TimeInForce::GoodTillTime => kind == OrderType::Market,
            _ => false,
        };
        if bad_tif {
            return Err(EngineError::InvalidTimeInForce);
        }
        if (trigger_type && !trailing) != o.trigger_price.is_some() {
            return Err(EngineError::InvalidTriggerPrice);
        }
        if let Some(t) = o.trigger_price {
            self.check_price(inst, t)
                .map_err(|_| EngineError::InvalidTriggerPrice)?;
        }
        let trail_ok = match (trailing, o.trail) {
            (true, Some(Trail::Price(p))) => p.0 > 0 && p.0 <= inst.max_price,
            (true, Some(Trail::Bps(b))) => (1..=9_999).contains(&b),
            (false, None) => true,
            _ => false,
        };
        let offset_ok = match (kind == OrderType::TrailingStopLimit, o.limit_offset) {
            (true, Some(p)) => p.0 >= 0 && p.0 <= inst.max_price,
            (false, None) => true,
            _ => false,
        };
        if !trail_ok || !offset_ok {
            return Err(EngineError::InvalidTrail);
        }
        let resting_limit = kind == OrderType::Limit
            && matches!(
                o.time_in_force,
                TimeInForce::GoodTillCancelled | TimeInForce::PostOnly | TimeInForce::GoodTillTime
            );
        if o.display
            .is_some_and(|d| !resting_limit || d.0 <= 0 || d.0 >= o.amount.0)
        {
            return Err(EngineError::InvalidDisplay);
        }
        if o.trigger_ref != TriggerRef::LastPrice {
            // The model's markets are spot: no mark price.
            return Err(EngineError::InvalidTriggerReference);
        }
        self.check_price_expiry_and_market(o, inst)
    }

    /// The last checks of a new order's terms: its price (and size at it), its expiry,
    /// and whether its market takes it now.
    fn check_price_expiry_and_market(
        &self,
        o: &NewOrder,
        inst: &RefInstrument,
    ) -> Result<(), EngineError> {
        if let Some(p) = o.price {
            self.check_price(inst, p)?;
            Self::check_min_size(inst, p.0, o.amount.0)?;
        } else if let Some(t) = o.trigger_price {
            Self::check_min_size(inst, t.0, o.amount.0)?;
        }
        let gtt = o.time_in_force == TimeInForce::GoodTillTime;
        match o.expire_at {
            Some(at) if gtt && at > self.now => {}
            None if !gtt => {}
            _ => return Err(EngineError::InvalidExpiry),
        }
        match inst.state {
            InstrumentState::Suspended | InstrumentState::Closed => {
                return Err(EngineError::InstrumentNotTrading);
            }
            InstrumentState::PostOnly if o.time_in_force != TimeInForce::PostOnly => {
                return Err(EngineError::OnlyPostOnlyAllowed);
            }
            _ => {}
        }
        Ok(())
    }

    /// Why a new order's time in force ends it at once (`None`: it may enter).
    pub(super) fn refusal(
        &self,
        o: &NewOrder,
        order: &RefOrder,
        stp: StpMode,
        trigger_type: bool,
    ) -> Option<CancelReason> {
        match o.time_in_force {
            _ if trigger_type => None,
            TimeInForce::FillOrKill
                if !self.can_fill(
                    o.instrument,
                    o.side,
                    order.limit(),
                    o.amount.0,
                    o.account,
                    stp,
                ) =>
            {
                Some(CancelReason::FillOrKillUnfilled)
            }
            TimeInForce::PostOnly if self.would_take(o.instrument, o.side, order.limit()) => {
                Some(CancelReason::PostOnlyWouldTake)
            }
            _ => None,
        }
    }

    /// What a new order reserves: its currency and amount, refused when the account has
    /// less available.
    pub(super) fn reservation(
        &self,
        o: &NewOrder,
        inst: &RefInstrument,
        stp: StpMode,
    ) -> Result<(usize, i64), EngineError> {
        let (currency, need) = match o.side {
            Side::Buy => {
                let need = match o.price {
                    Some(p) => {
                        i128::from(p.0) * i128::from(o.amount.0) * i128::from(inst.quote_unit)
                    }
                    None => self.market_buy_cost(o.instrument, o.amount.0, o.account, stp),
                };
                (inst.quote, need)
            }
            Side::Sell => (
                inst.base,
                i128::from(o.amount.0) * i128::from(inst.base_unit),
            ),
        };
        if need > i128::from(self.accounts[o.account.0 as usize].balances[currency].0) {
            return Err(EngineError::InsufficientFunds);
        }
        Ok((currency, need as i64))
    }
}
