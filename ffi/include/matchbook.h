/*
 * matchbook C ABI.
 *
 * Handles: mb_config (an exchange definition), mb_engine (single-threaded engine),
 * mb_runtime (thread-safe engine on its own thread) and mb_session (one producer thread's
 * way into an mb_runtime). Each is created by a constructor with an out-parameter and
 * released by its NULL-safe mb_*_free. An mb_refdata pointer is borrowed from its engine
 * or runtime and valid until that is freed.
 *
 * Memory: strings passed in are borrowed for the call only; nothing returned needs
 * freeing except handles. Buffers are (pointer, capacity, *len_out): a buffer too small
 * returns MB_STATUS_BUFFER_TOO_SMALL with the needed length in *len_out and writes
 * nothing (pass NULL and 0 to ask for the length). For a list the length counts elements;
 * for a string (mb_refdata_format, mb_last_error) it counts bytes including the
 * terminating NUL, whether the string was copied or not, so a buffer of *len_out bytes
 * always fits. Calls that fill two lists (bids and asks) write both lengths and copy both
 * lists or neither.
 *
 * Threads: an mb_engine or an mb_session is used by one thread at a time (it may move
 * between threads); a call on one while a call from another thread is inside it is
 * refused with MB_STATUS_IN_USE and does nothing (freeing one that is in use is still
 * undefined). An mb_runtime may be shared by any number of threads, each with its own
 * mb_session; mb_runtime_set_time, mb_runtime_refdata and mb_session_new may be called
 * from any thread. Free sessions before or after their runtime; after it they answer
 * MB_STATUS_STOPPED.
 *
 * Numbers: prices in ticks and amounts in lots of their instrument (10^-market_precision
 * and 10^-amount_precision), funds in balance units of their currency (10^-scale); the
 * mb_refdata_* functions convert decimal strings both ways. Enumerations inside structs
 * are plain integers, checked on use.
 *
 * Errors: every function returns an mb_status; mb_last_error copies the message of the
 * calling thread's last failed call (like errno, successful calls leave it). A Rust panic
 * never crosses the boundary and is never printed: the call returns MB_STATUS_PANIC, its
 * message goes to mb_last_error, and the handle it was using is poisoned: every later
 * call on it returns MB_STATUS_PANIC, so free it. The mb_debug_panic* test hooks exist
 * only in builds with the debug-panic feature (MB_DEBUG_PANIC), never in a release.
 */

#ifndef MATCHBOOK_H
#define MATCHBOOK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// Longest subaccount name, in bytes.
#define MB_MAX_NAME 64

// The version of the ABI this header describes. It changes whenever a struct's layout, a
// function's signature or an enumerator's value changes, so a program built against one
// header can refuse a library of another: `mb_abi_version() == MB_ABI_VERSION`.
#define MB_ABI_VERSION 2

// Longest code or decimal text of an `mb_instrument_info` field, with its NUL.
#define MB_MAX_CODE 32

// Outcome of every call.
typedef enum {
  // Success.
  MB_STATUS_OK = 0,
  // Amount is zero or negative.
  MB_STATUS_INVALID_AMOUNT = 1001,
  // Price is zero or negative.
  MB_STATUS_INVALID_PRICE = 1002,
  // A limit or stop order without a price.
  MB_STATUS_MISSING_PRICE = 1003,
  // Stop trigger missing or misplaced.
  MB_STATUS_INVALID_TRIGGER_PRICE = 1004,
  // Price outside the instrument's range.
  MB_STATUS_PRICE_OUT_OF_RANGE = 1005,
  // Order value below the instrument's min_size.
  MB_STATUS_MIN_SIZE_NOT_SATISFIED = 1006,
  // Invalid expiry time.
  MB_STATUS_INVALID_EXPIRY = 1007,
  // Time in force not allowed for this order type.
  MB_STATUS_INVALID_TIME_IN_FORCE = 1008,
  // No such instrument.
  MB_STATUS_UNKNOWN_INSTRUMENT = 1009,
  // An amend that changes nothing.
  MB_STATUS_EMPTY_AMEND = 1010,
  // No such currency.
  MB_STATUS_UNKNOWN_CURRENCY = 1011,
  // Invalid account name.
  MB_STATUS_INVALID_ACCOUNT_NAME = 1012,
  // Not a futures instrument.
  MB_STATUS_NOT_FUTURES = 1013,
  // A time past the engine's horizon (2100-01-01).
  MB_STATUS_TIME_OUT_OF_RANGE = 1014,
  // An order amount above the engine's largest.
  MB_STATUS_AMOUNT_TOO_LARGE = 1015,
  // A trailing order without a valid trail or limit offset, or either on another type.
  MB_STATUS_INVALID_TRAIL = 1016,
  // A mark-price trigger on a spot market or on an order without a trigger.
  MB_STATUS_INVALID_TRIGGER_REFERENCE = 1017,
  // An iceberg display that is not positive, not below the amount, or on an order that
  // cannot rest.
  MB_STATUS_INVALID_DISPLAY = 1018,
  // An OCO pair whose legs differ in account, instrument or side or include a market or
  // immediate order; a bracket whose exits are on the wrong side of each other.
  MB_STATUS_INVALID_CONTINGENT = 1019,
  // Not enough available balance or margin.
  MB_STATUS_INSUFFICIENT_FUNDS = 2001,
  // A transfer larger than the source balance.
  MB_STATUS_INSUFFICIENT_BALANCE = 2002,
  // A transfer below a BLP account's minimum.
  MB_STATUS_BELOW_BLP_THRESHOLD = 2003,
  // The account is in de-risk.
  MB_STATUS_ACCOUNT_IN_DERISK = 2004,
  // A reduce-only order that would increase the position.
  MB_STATUS_REDUCE_ONLY_WOULD_INCREASE = 2005,
  // A deposit or transfer past the balance cap of one account in one currency.
  MB_STATUS_BALANCE_LIMIT_EXCEEDED = 2006,
  // Fill-or-kill that cannot fill completely.
  MB_STATUS_INSUFFICIENT_LIQUIDITY = 3001,
  // Post-only order that would take.
  MB_STATUS_POST_ONLY_WOULD_TAKE = 3002,
  // Instrument not trading.
  MB_STATUS_INSTRUMENT_NOT_TRADING = 3003,
  // Instrument accepts post-only orders only.
  MB_STATUS_ONLY_POST_ONLY_ALLOWED = 3004,
  // No such open order.
  MB_STATUS_ORDER_NOT_FOUND = 3005,
  // Open-order limit reached.
  MB_STATUS_MAX_OPEN_ORDERS_EXCEEDED = 3006,
  // Amend below the filled amount.
  MB_STATUS_AMEND_BELOW_FILLED = 3007,
  // A trailing order in a market with no reference price yet.
  MB_STATUS_NO_REFERENCE_PRICE = 3008,
  // No such account.
  MB_STATUS_UNKNOWN_ACCOUNT = 4001,
  // No such holder.
  MB_STATUS_UNKNOWN_HOLDER = 4002,
  // Source and destination are the same.
  MB_STATUS_SAME_ACCOUNT = 4003,
  // Not the caller's account.
  MB_STATUS_PERMISSION_DENIED = 4004,
  // Transfers to or from the instant-trade account.
  MB_STATUS_INSTANT_TRADE_ACCOUNT = 4005,
  // The account is closed.
  MB_STATUS_ACCOUNT_CLOSED = 4006,
  // The main account cannot be closed.
  MB_STATUS_CANNOT_CLOSE_MAIN = 4007,
  // Account name in use.
  MB_STATUS_ACCOUNT_NAME_TAKEN = 4008,
  // Not a BLP account.
  MB_STATUS_NOT_BLP_ACCOUNT = 4009,
  // A required pointer was NULL.
  MB_STATUS_NULL_ARGUMENT = 9001,
  // The caller's buffer is too small; `*len_out` says how much is needed.
  MB_STATUS_BUFFER_TOO_SMALL = 9002,
  // A string argument is not UTF-8, not a known code, or not a valid decimal.
  MB_STATUS_INVALID_ARGUMENT = 9003,
  // The library panicked; the handle the call used is poisoned (every later call on it
  // answers this status): free it.
  MB_STATUS_PANIC = 9004,
  // The thread-safe handle's queue is full; try again.
  MB_STATUS_BUSY = 9005,
  // The thread-safe handle's engine stopped (freed, or its thread failed).
  MB_STATUS_STOPPED = 9006,
  // A candle or ticker query on an engine created without market data.
  MB_STATUS_MARKET_DATA_OFF = 9007,
  // A configuration that cannot build an engine (syntax, values, reference data).
  MB_STATUS_INVALID_CONFIG = 9008,
  // The data directory of a durable engine: a journal or snapshot write failed, the
  // journal is damaged, or the directory was written under another configuration. A
  // command that failed this way was not applied.
  MB_STATUS_STORAGE = 9009,
  // An event poll on a handle whose events are dropped (`mb_config_set_keep_events(config,
  // 0)`, or a session opened with `keep_events` 0).
  MB_STATUS_EVENTS_OFF = 9010,
  // An `mb_engine` or `mb_session` called from a second thread while a call on another
  // is still inside it: refused, nothing done (each is used by one thread at a time).
  MB_STATUS_IN_USE = 9011,
} mb_status;

// What an `mb_event` reports.
typedef enum {
  // Any event this version of the ABI does not describe field by field.
  MB_EVENT_KIND_OTHER = 0,
  // An order was accepted (`order`, `account`, `instrument`, `side`, `price`, `amount`).
  MB_EVENT_KIND_ORDER_ACCEPTED = 1,
  // A trade (`order` = taker, `maker_order`, `account` = taker, `maker_account`,
  // `price`, `amount`, `side` = taker side, `fee` = taker fee, `maker_fee`).
  MB_EVENT_KIND_TRADE = 2,
  // An order rests (`order`, `instrument`, `side`, `price`, `amount` = remaining).
  MB_EVENT_KIND_ORDER_BOOKED = 3,
  // An order ended without filling (`order`, `account`, `amount` = remaining).
  MB_EVENT_KIND_ORDER_CANCELLED = 4,
  // A balance changed (`account`, `currency`, `amount` = available, `price` = locked).
  MB_EVENT_KIND_BALANCE_CHANGED = 5,
  // A command was refused (`account`, `status`).
  MB_EVENT_KIND_REJECTED = 6,
  // The touch changed (`instrument`, `price` = bid, `amount` = ask; 0 = none).
  MB_EVENT_KIND_TOP_OF_BOOK = 7,
  // A futures position changed (`account`, `instrument`, `amount` = signed size,
  // `price` = entry price, `fee` = realised).
  MB_EVENT_KIND_POSITION_CHANGED = 8,
  // A held trigger order fired (`order`, `instrument`, `price` = the trigger it fired
  // at, `amount` = the limit it enters with, 0 for a market-type order); an order
  // refused at that moment ends next with `MB_EVENT_KIND_ORDER_CANCELLED`.
  MB_EVENT_KIND_TRIGGERED = 9,
  // A trailing order's trigger moved (`order`, `instrument`, `price` = new trigger).
  MB_EVENT_KIND_TRIGGER_MOVED = 10,
  // Two orders were linked one-cancels-the-other (`order` = first leg,
  // `order_slot` its slot, `maker_order` / `maker_slot` = second leg, `trade` = the
  // bracket entry whose exits they are, 0 for a plain pair).
  MB_EVENT_KIND_ORDERS_LINKED = 11,
} mb_event_kind;

// What an `mb_market_update` reports.
typedef enum {
  // A book's snapshot starts: forget its levels; `book_sequence` is its sequence. Its
  // levels follow as `MB_MARKET_UPDATE_KIND_LEVEL` with the same `book_sequence`.
  MB_MARKET_UPDATE_KIND_SNAPSHOT = 0,
  // A level (`side`, `price`) now shows `amount` lots in `orders` orders (0: gone).
  MB_MARKET_UPDATE_KIND_LEVEL = 1,
  // The book's best bid or ask moved (sent for both sides, bid first): the best of
  // `side` is now `price` with `amount` (both 0: none).
  MB_MARKET_UPDATE_KIND_TOP = 2,
  // A trade of `amount` at `price`; `side` is the taker's, `trade` its id.
  MB_MARKET_UPDATE_KIND_TRADE = 3,
} mb_market_update_kind;

// Buy or sell.
typedef enum {
  // Buy.
  MB_SIDE_BUY = 0,
  // Sell.
  MB_SIDE_SELL = 1,
} mb_side;

// Time in force.
typedef enum {
  // Good till cancelled.
  MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED = 0,
  // Immediate or cancel.
  MB_TIME_IN_FORCE_IMMEDIATE_OR_CANCELLED = 1,
  // Fill or kill.
  MB_TIME_IN_FORCE_FILL_OR_KILL = 2,
  // Post only.
  MB_TIME_IN_FORCE_POST_ONLY = 3,
  // Good till `expire_at_ns`.
  MB_TIME_IN_FORCE_GOOD_TILL_TIME = 4,
} mb_time_in_force;

// Order type.
typedef enum {
  // Limit.
  MB_ORDER_TYPE_LIMIT = 0,
  // Market (price = optional protection price, 0 for none).
  MB_ORDER_TYPE_MARKET = 1,
  // Stop-limit (`trigger_price` required).
  MB_ORDER_TYPE_STOP = 2,
  // Stop entering as a market order (`trigger_price` required).
  MB_ORDER_TYPE_STOP_MARKET = 3,
  // Take-profit limit: limit-if-touched (`price`, `trigger_price` required).
  MB_ORDER_TYPE_TAKE_PROFIT = 4,
  // Take-profit market: market-if-touched (`trigger_price` required).
  MB_ORDER_TYPE_TAKE_PROFIT_MARKET = 5,
  // Trailing stop entering as a market order (`trail_kind`, `trail` required).
  MB_ORDER_TYPE_TRAILING_STOP = 6,
  // Trailing stop entering as a limit order `limit_offset` past its trigger.
  MB_ORDER_TYPE_TRAILING_STOP_LIMIT = 7,
} mb_order_type;

// Self-trade prevention of one order.
typedef enum {
  // The account's default.
  MB_STP_ACCOUNT_DEFAULT = 0,
  // Self trades allowed.
  MB_STP_NONE = 1,
  // Cancel the incoming order's remainder.
  MB_STP_CANCEL_NEWEST = 2,
  // Cancel the resting order and go on.
  MB_STP_CANCEL_OLDEST = 3,
  // Cancel both.
  MB_STP_CANCEL_BOTH = 4,
} mb_stp;

// Kind of a subaccount.
typedef enum {
  // Ordinary trading account.
  MB_ACCOUNT_KIND_REGULAR = 0,
  // The instant-trade account.
  MB_ACCOUNT_KIND_INSTANT_TRADE = 1,
  // Liquidity-provider account.
  MB_ACCOUNT_KIND_BLP = 2,
} mb_account_kind;

// Which order entry an instrument accepts.
typedef enum {
  // Trading.
  MB_INSTRUMENT_STATE_ACTIVE = 0,
  // Post-only orders only.
  MB_INSTRUMENT_STATE_POST_ONLY = 1,
  // No order entry.
  MB_INSTRUMENT_STATE_SUSPENDED = 2,
  // Closed: open orders cancelled.
  MB_INSTRUMENT_STATE_CLOSED = 3,
} mb_instrument_state;

// Where a live order is.
typedef enum {
  // On the book.
  MB_ORDER_STATE_RESTING = 0,
  // A stop waiting for its trigger.
  MB_ORDER_STATE_PENDING_TRIGGER = 1,
  // Being matched (never seen between two commands).
  MB_ORDER_STATE_TAKING = 2,
} mb_order_state;

// A candle period: unit and length (1/5/15/30 minutes, 1/4 hours, 1 day, week, month).
typedef enum {
  // Minutes.
  MB_CANDLE_UNIT_MINUTES = 0,
  // Hours.
  MB_CANDLE_UNIT_HOURS = 1,
  // Days.
  MB_CANDLE_UNIT_DAYS = 2,
  // Weeks.
  MB_CANDLE_UNIT_WEEKS = 3,
  // Months.
  MB_CANDLE_UNIT_MONTHS = 4,
} mb_candle_unit;

// What a fixed-point value is counted in, for `mb_refdata_format`.
typedef enum {
  // Ticks of an instrument (`index` = instrument).
  MB_UNIT_PRICE = 0,
  // Lots of an instrument (`index` = instrument).
  MB_UNIT_AMOUNT = 1,
  // Balance units of a currency (`index` = currency).
  MB_UNIT_FUNDS = 2,
} mb_unit;

// What an `mb_command` asks for; the fields each kind reads are listed with it.
typedef enum {
  // Creates a holder with its main account (no fields). Result: `holder`, `account`.
  MB_COMMAND_KIND_CREATE_HOLDER = 0,
  // Creates a subaccount (`holder`, `name`, `flag` = `mb_account_kind`). Result:
  // `account`.
  MB_COMMAND_KIND_CREATE_SUBACCOUNT = 1,
  // Closes a subaccount (`account`).
  MB_COMMAND_KIND_CLOSE_SUBACCOUNT = 2,
  // Credits an account (`account`, `currency`, `amount` in balance units). Admin.
  MB_COMMAND_KIND_DEPOSIT = 3,
  // Debits an account (`account`, `currency`, `amount`). Admin.
  MB_COMMAND_KIND_WITHDRAW = 4,
  // Sets or clears de-risk (`account`, `flag` 1 on / 0 off). Admin.
  MB_COMMAND_KIND_SET_DERISK = 5,
  // Sets a BLP account's minimum balance (`account`, `currency`, `amount`). Admin.
  MB_COMMAND_KIND_SET_BLP_THRESHOLD = 6,
  // Moves funds between two accounts of `holder` (`account` = source,
  // `other_account` = destination, `currency`, `amount`).
  MB_COMMAND_KIND_TRANSFER = 7,
  // Sets an account's default self-trade prevention (`account`, `stp`).
  MB_COMMAND_KIND_SET_STP_MODE = 8,
  // Changes an instrument's state (`instrument`, `flag` = `mb_instrument_state`). Admin.
  MB_COMMAND_KIND_SET_INSTRUMENT_STATE = 9,
  // Places an order (`account`, `instrument`, `side`, `order_type`, `time_in_force`,
  // `price` in ticks (0 = none), `trigger_price`, `amount` in lots, `expire_at_ns`,
  // `client_id` (zero = none), `stp`, `flag` 1 = reduce-only). Result: `order`.
  MB_COMMAND_KIND_PLACE_ORDER = 10,
  // Amends an open order (`account`, `order`, `amount` 0 = unchanged, `price` 0 =
  // unchanged).
  MB_COMMAND_KIND_AMEND_ORDER = 11,
  // Cancels an order (`account`, `order`).
  MB_COMMAND_KIND_CANCEL_ORDER = 12,
  // Cancels the newest open order with `client_id` (`account`, `client_id`).
  MB_COMMAND_KIND_CANCEL_BY_CLIENT_ID = 13,
  // Cancels many open orders of `account`: `flag` 0 all of them, 1 those in
  // `instrument`, 2 the `list_len` handles at `order_list`, 3 the newest open order for
  // each of the `list_len` client ids at `client_id_list`.
  MB_COMMAND_KIND_CANCEL_ALL = 14,
  // Sets a futures instrument's index price (`instrument`, `price`). Admin.
  MB_COMMAND_KIND_SET_INDEX_PRICE = 15,
  // Closes an account's futures positions against the book (`account`). Admin.
  MB_COMMAND_KIND_LIQUIDATE = 16,
  // Moves time only: expiries, funding, dead-man switches (no fields).
  MB_COMMAND_KIND_ADVANCE_TIME = 17,
  // Arms the dead-man switch of `account`: unless set again first, its open orders are
  // cancelled once `amount` nanoseconds have passed; `amount` 0 turns it off.
  MB_COMMAND_KIND_SET_CANCEL_ALL_AFTER = 18,
  // Places a one-cancels-the-other pair: the order fields are the first leg; the second
  // leg shares `account`, `instrument`, `side` and `time_in_force` and takes
  // `oco_order_type`, `oco_price`, `oco_trigger_price` and `oco_amount` (0 = `amount`).
  // Result: `order` (first leg), `linked` (second leg).
  MB_COMMAND_KIND_PLACE_OCO = 19,
  // Places a bracket: the order fields are its entry; once the entry is done, a
  // take-profit limit at `take_profit` and a stop-loss triggered at `stop_loss`
  // (stop-limit at `stop_limit`, 0 = stop-market) are placed for what it filled.
  // Result: `order` (the entry).
  MB_COMMAND_KIND_PLACE_BRACKET = 20,
} mb_command_kind;

// How an order stands, as the public exchange names it.
typedef enum {
  // Resting, or a stop waiting for its trigger.
  MB_ORDER_STATUS_OPEN = 0,
  // Filled completely.
  MB_ORDER_STATUS_FILLED_FULLY = 1,
  // Partly filled, then cancelled.
  MB_ORDER_STATUS_FILLED_CLOSED = 2,
  // Ended without a fill.
  MB_ORDER_STATUS_CANCELLED = 3,
  // Refused by the book for its time in force (`reason` says why).
  MB_ORDER_STATUS_FILLED_REJECTED = 4,
} mb_order_status;

// What an `mb_account_update` reports.
typedef enum {
  // Snapshot: an order live where the feed starts (`order`).
  MB_ACCOUNT_UPDATE_KIND_OPEN_ORDER = 0,
  // Snapshot: a balance where the feed starts (`balance`); the snapshot ends with the
  // last account's balances.
  MB_ACCOUNT_UPDATE_KIND_BALANCE = 1,
  // An order was accepted (`order`; `moves` what it reserved).
  MB_ACCOUNT_UPDATE_KIND_ORDER_CREATED = 2,
  // The order now rests on its book (`order`).
  MB_ACCOUNT_UPDATE_KIND_ORDER_BOOKED = 3,
  // The order's price or amount was amended (`order`; `moves` the reservation).
  MB_ACCOUNT_UPDATE_KIND_ORDER_AMENDED = 4,
  // The order filled (`order`, `trade`, `fee`, `maker`; `moves` what it paid and got).
  MB_ACCOUNT_UPDATE_KIND_TRADE_SETTLED = 5,
  // The order ended before filling in full (`order`, `reason`, `refusal`; `moves` what
  // it released).
  MB_ACCOUNT_UPDATE_KIND_ORDER_CLOSED = 6,
  // A stop order's trigger fired (`order`; `moves` what it reserved).
  MB_ACCOUNT_UPDATE_KIND_STOP_TRIGGERED = 7,
  // A trailing stop's trigger moved (`order`).
  MB_ACCOUNT_UPDATE_KIND_TRIGGER_MOVED = 8,
  // A funding payment (`instrument`, `position_id`, `funding_rate`, `mark_price`,
  // `payment`; `moves` the balance it changed).
  MB_ACCOUNT_UPDATE_KIND_FUNDING_PAID = 9,
} mb_account_update_kind;

// Why an order ended (`MB_ACCOUNT_UPDATE_KIND_ORDER_CLOSED`).
typedef enum {
  // Not an ended order.
  MB_CANCEL_REASON_NONE = 0,
  // Cancelled by its owner (or an operator on its behalf).
  MB_CANCEL_REASON_REQUESTED = 1,
  // The unfilled rest of an immediate-or-cancel or market order.
  MB_CANCEL_REASON_UNFILLED = 2,
  // Self-trade prevention.
  MB_CANCEL_REASON_SELF_TRADE = 3,
  // Its good-till-time passed.
  MB_CANCEL_REASON_EXPIRED = 4,
  // A fill-or-kill order could not fill in full.
  MB_CANCEL_REASON_FILL_OR_KILL_UNFILLED = 5,
  // A post-only order would have taken.
  MB_CANCEL_REASON_POST_ONLY_WOULD_TAKE = 6,
  // Its account was closed.
  MB_CANCEL_REASON_ACCOUNT_CLOSED = 7,
  // Its market was closed.
  MB_CANCEL_REASON_INSTRUMENT_CLOSED = 8,
  // The account's dead-man switch fired.
  MB_CANCEL_REASON_CANCEL_ALL_AFTER = 9,
  // Refused when its trigger fired (`refusal` says why).
  MB_CANCEL_REASON_TRIGGER_REFUSED = 10,
  // Its one-cancels-the-other peer or bracket entry ended it.
  MB_CANCEL_REASON_CONTINGENT_CANCELLED = 11,
} mb_cancel_reason;

// Bits of `mb_account_update.moved`: which of its `moves` hold a balance.
typedef enum {
  // `moves[0]`: reserved by the order (or its amend).
  MB_BALANCE_MOVE_LOCKED = 0,
  // `moves[1]`: released by the ended order.
  MB_BALANCE_MOVE_UNLOCKED = 1,
  // `moves[2]`: paid by the fill.
  MB_BALANCE_MOVE_SPENT = 2,
  // `moves[3]`: received by the fill or the funding payment.
  MB_BALANCE_MOVE_CREDITED = 3,
  // `moves[4]`: taken by the funding payment.
  MB_BALANCE_MOVE_DEDUCTED = 4,
} mb_balance_move;

// An exchange definition under construction.
typedef struct mb_config mb_config;

// An engine owned by one thread at a time, with its market data and the events not yet
// polled.
typedef struct mb_engine mb_engine;

// A running node: its `mb_runtime` and what keeps it on its directory.
typedef struct mb_node mb_node;

// Reference data of one engine; borrowed from its handle, valid while the handle lives.
typedef struct mb_refdata mb_refdata;

// The engine on its own thread.
typedef struct mb_runtime mb_runtime;

// One producer's way into an `mb_runtime`: used by one thread at a time.
typedef struct mb_session mb_session;

// An order handle: its number and slab slot (both needed to address it in O(1)).
typedef struct {
  // Order number.
  uint64_t id;
  // Slab slot.
  uint32_t slot;
} mb_order_ref;

// A UUID as 16 big-endian bytes (a client order id).
typedef struct {
  // Bytes, most significant first.
  uint8_t bytes[16];
} mb_uuid;

// An order as history keeps it, open or ended.
typedef struct {
  // Handle (its `id` is the order number history pages by).
  mb_order_ref order;
  // Owner.
  uint32_t account;
  // Instrument index.
  uint16_t instrument;
  // An `mb_side`.
  uint32_t side;
  // An `mb_order_type`.
  uint32_t order_type;
  // An `mb_time_in_force`.
  uint32_t time_in_force;
  // An `mb_order_status`.
  uint32_t status;
  // Beside `MB_ORDER_STATUS_FILLED_REJECTED`, the refusal
  // (`MB_STATUS_INSUFFICIENT_LIQUIDITY`, `MB_STATUS_POST_ONLY_WOULD_TAKE`); else 0.
  int32_t reason;
  // Limit price in ticks (0 = none).
  int64_t price;
  // Stop trigger in ticks (0 = none).
  int64_t trigger_price;
  // Amount in lots.
  int64_t amount;
  // Filled lots.
  int64_t filled;
  // Average fill price in ticks, rounded down (0 = nothing filled).
  int64_t average_price;
  // Fees paid, in balance units of the currency the order receives (the quote
  // currency on a future).
  int64_t total_fee;
  // Accepted.
  int64_t created_ns;
  // Last change.
  int64_t updated_ns;
  // Client order id (zero = none).
  mb_uuid client_id;
} mb_order_record;

// One trade, both sides.
typedef struct {
  // Trade number.
  uint64_t trade;
  // Time.
  int64_t time_ns;
  // Instrument index.
  uint16_t instrument;
  // The taker's `mb_side`.
  uint32_t taker_side;
  // Price in ticks.
  int64_t price;
  // Amount in lots.
  int64_t amount;
  // The resting order.
  mb_order_ref maker_order;
  // Its account.
  uint32_t maker_account;
  // The incoming order.
  mb_order_ref taker_order;
  // Its account.
  uint32_t taker_account;
  // Fee of the maker, balance units of what it received.
  int64_t maker_fee;
  // Fee of the taker, balance units of what it received.
  int64_t taker_fee;
} mb_trade;

// One currency balance of an account.
typedef struct {
  // Currency index.
  uint16_t currency;
  // Decimals of the units below.
  uint8_t scale;
  // Available, balance units.
  int64_t available;
  // Locked by open orders, balance units.
  int64_t locked;
} mb_balance;

// One message of the account feed. Fields a kind does not use are zero.
typedef struct {
  // The event's sequence number (a snapshot: the last event before it).
  uint64_t seq;
  // The event's time (a snapshot: 0).
  int64_t time_ns;
  // An `mb_account_update_kind`.
  uint32_t kind;
  // The account.
  uint32_t account;
  // The order as it stands after the event.
  mb_order_record order;
  // `MB_ACCOUNT_UPDATE_KIND_TRADE_SETTLED`: the trade.
  mb_trade trade;
  // The fee this side of the trade paid, balance units of what it received.
  int64_t fee;
  // 1 when this side of the trade rested on the book.
  uint8_t maker;
  // An `mb_cancel_reason`.
  uint32_t reason;
  // `MB_CANCEL_REASON_TRIGGER_REFUSED` and refusals: the `mb_status` of the refusal.
  int32_t refusal;
  // A funding payment's market.
  uint16_t instrument;
  // A funding payment's position.
  uint64_t position_id;
  // A funding payment's rate (8 decimal places).
  int64_t funding_rate;
  // A funding payment's mark price in ticks.
  int64_t mark_price;
  // A funding payment (negative: paid by the account), balance units of the quote.
  int64_t payment;
  // `MB_ACCOUNT_UPDATE_KIND_BALANCE`: the balance.
  mb_balance balance;
  // Bit `1 << b` set when `moves[b]` (`b` an `mb_balance_move`) holds a balance after
  // the update.
  uint32_t moved;
  // The balances the update moved, as they stand after it.
  mb_balance moves[5];
} mb_account_update;

// Futures terms of an instrument, percentages as decimal strings. The three funding
// strings are all NULL (no funding) or all set.
typedef struct {
  // Collar of the mark price around the index, percent.
  const char *price_collar_percentage;
  // Initial margin, percent of notional.
  const char *initial_margin_percentage;
  // Maintenance margin, percent of notional.
  const char *maintenance_margin_percentage;
  // Funding cap per period, percent (NULL: no funding).
  const char *funding_cap;
  // Funding clamp threshold, percent.
  const char *funding_clamp_threshold;
  // Annual interest rate, percent.
  const char *funding_annual_interest_rate;
  // Minutes between funding settlements.
  uint32_t funding_interval_minutes;
  // Expiry date (`YYYY-MM-DD`) of a dated future, or NULL.
  const char *contract_expiry_date;
} mb_futures_spec;

// An instrument, decimals as strings.
typedef struct {
  // Code, e.g. `BTC_EUR`.
  const char *code;
  // Base currency code.
  const char *base;
  // Quote currency code.
  const char *quote;
  // Decimals of amounts.
  uint8_t amount_precision;
  // Decimals of prices.
  uint8_t market_precision;
  // Minimum order value in the quote currency.
  const char *min_size;
  // Lowest price.
  const char *min_price;
  // Highest price.
  const char *max_price;
  // `SPOT`, `PERP`, `EQUITY_FUTURE` or `DATED_FUTURE`.
  const char *kind;
  // Futures terms (NULL for spot).
  const mb_futures_spec *futures;
} mb_instrument_spec;

// One command. Zero-initialise it and set the fields its kind reads (see
// `mb_command_kind`), or use an `mb_cmd_*` constructor. Enumerations are carried as
// plain integers and checked when the command is applied. The only pointer, `name`, is
// read during the submit call and not kept (as the lists of a listed cancel).
typedef struct {
  // An `mb_command_kind`.
  uint32_t kind;
  // Acting account (a transfer's source).
  uint32_t account;
  // A transfer's destination.
  uint32_t other_account;
  // Holder (subaccount creation, transfers).
  uint32_t holder;
  // Instrument index.
  uint16_t instrument;
  // Currency index.
  uint16_t currency;
  // An `mb_side`.
  uint32_t side;
  // An `mb_order_type`.
  uint32_t order_type;
  // An `mb_time_in_force`.
  uint32_t time_in_force;
  // An `mb_stp`.
  uint32_t stp;
  // Kind-specific flag (see `mb_command_kind`).
  uint32_t flag;
  // Price in ticks (0 = none).
  int64_t price;
  // Stop trigger in ticks (0 = none).
  int64_t trigger_price;
  // Lots for orders, balance units for funds.
  int64_t amount;
  // Expiry of a good-till-time order.
  int64_t expire_at_ns;
  // An existing order.
  mb_order_ref order;
  // Client order id (all zero = none).
  mb_uuid client_id;
  // Subaccount name (NUL-terminated UTF-8, 1-64 bytes), read during the submit call.
  const char *name;
  // Orders of a listed cancel, read during the submit call.
  const mb_order_ref *order_list;
  // Client ids of a listed cancel, read during the submit call.
  const mb_uuid *client_id_list;
  // Entries at `order_list` or `client_id_list`.
  size_t list_len;
  // An `mb_trigger_ref`: what a trigger order watches.
  uint32_t trigger_ref;
  // An `mb_trail_kind`: how `trail` is measured (trailing orders only).
  uint32_t trail_kind;
  // A trailing order's distance from the best reference price seen.
  int64_t trail;
  // A trailing stop-limit's limit offset past its trigger, in ticks (0 allowed there;
  // must be 0 on every other order).
  int64_t limit_offset;
  // An iceberg limit order's displayed amount in lots (0: not an iceberg).
  int64_t display;
  // A one-cancels-the-other pair's second leg: its `mb_order_type`.
  uint32_t oco_order_type;
  // Its limit price in ticks (0 = none).
  int64_t oco_price;
  // Its trigger in ticks (0 = none).
  int64_t oco_trigger_price;
  // Its amount in lots (0 = the first leg's).
  int64_t oco_amount;
  // A bracket's take-profit limit price in ticks.
  int64_t take_profit;
  // A bracket's stop-loss trigger in ticks.
  int64_t stop_loss;
  // A bracket's stop-loss limit in ticks (0 = it enters as a market order).
  int64_t stop_limit;
} mb_command;

// One account.
typedef struct {
  // Account id.
  uint32_t account;
  // Its holder.
  uint32_t holder;
  // `main` or the subaccount's name (NUL-terminated).
  char name[MB_MAX_NAME];
  // An `mb_account_kind`.
  uint32_t kind;
  // Nonzero once closed (closed accounts stay listed).
  uint8_t closed;
  // Nonzero while in de-risk.
  uint8_t derisk;
} mb_account_info;

// An instrument as configured and as it stands.
typedef struct {
  // Code such as `BTC_EUR` (NUL-terminated).
  char code[MB_MAX_CODE];
  // `SPOT`, `PERP`, `DATED_FUTURE` or `EQUITY_FUTURE` (NUL-terminated).
  char kind[MB_MAX_CODE];
  // Base currency index.
  uint16_t base;
  // Quote currency index.
  uint16_t quote;
  // Decimals of amounts (a lot is 10^-amount_precision).
  uint8_t amount_precision;
  // Decimals of prices (a tick is 10^-market_precision).
  uint8_t market_precision;
  // An `mb_instrument_state`.
  uint32_t state;
  // Minimum order value, price x amount at ticks x lots scale.
  int64_t min_size;
  // Lowest price in ticks.
  int64_t min_price;
  // Highest price in ticks.
  int64_t max_price;
  // Nonzero for a future (the fields below are then set).
  uint8_t is_future;
  // Initial margin, percent of notional (decimal text, e.g. `10`).
  char initial_margin_percentage[MB_MAX_CODE];
  // Maintenance margin, percent of notional (decimal text).
  char maintenance_margin_percentage[MB_MAX_CODE];
  // Minutes per funding period (0: no funding, a dated future).
  uint32_t funding_period_minutes;
  // Expiry `YYYY-MM-DD` of a dated future (empty otherwise).
  char contract_expiry_date[MB_MAX_CODE];
} mb_instrument_info;

// How a durable engine keeps its data directory.
typedef struct {
  // Snapshot after this many journalled commands (0: only on `mb_engine_snapshot`).
  uint64_t snapshot_every;
  // Snapshots kept (at least 1); journal segments they make unnecessary are deleted.
  uint32_t keep_snapshots;
  // fsync the journal before each call returns (false: survives a crash of the process,
  // not of the machine; for benchmarks).
  bool fsync;
} mb_store_options;

// Ids a successful command produced (zero where none).
typedef struct {
  // The order placed.
  mb_order_ref order;
  // The account created.
  uint32_t account;
  // The holder created.
  uint32_t holder;
  // Engine time the command was applied at.
  int64_t time_ns;
  // The second leg of a one-cancels-the-other pair placed.
  mb_order_ref linked;
} mb_result;

// An open order.
typedef struct {
  // Handle.
  mb_order_ref order;
  // Owner.
  uint32_t account;
  // Instrument index.
  uint16_t instrument;
  // An `mb_side`.
  uint32_t side;
  // An `mb_order_type`.
  uint32_t order_type;
  // An `mb_time_in_force`.
  uint32_t time_in_force;
  // An `mb_order_state`.
  uint32_t state;
  // Limit price in ticks (0 = none).
  int64_t price;
  // Stop trigger in ticks (0 = none).
  int64_t trigger_price;
  // Total amount in lots.
  int64_t amount;
  // Filled lots.
  int64_t filled;
  // Expiry (0 = none).
  int64_t expire_at_ns;
  // Created.
  int64_t created_ns;
  // Last change.
  int64_t updated_ns;
  // Client order id (zero = none).
  mb_uuid client_id;
} mb_order;

// L1: best bid and ask with the amounts resting there (0 where a side is empty).
typedef struct {
  // Best bid, ticks.
  int64_t bid;
  // Lots at the best bid.
  int64_t bid_amount;
  // Best ask, ticks.
  int64_t ask;
  // Lots at the best ask.
  int64_t ask_amount;
  // Book sequence: how many commands changed the book.
  uint64_t sequence;
} mb_top;

// One L2 price level.
typedef struct {
  // Price, ticks.
  int64_t price;
  // Lots resting.
  int64_t amount;
  // Orders resting.
  uint32_t orders;
} mb_level;

// One resting order of an L3 view.
typedef struct {
  // Handle.
  mb_order_ref order;
  // Owner.
  uint32_t account;
  // Price, ticks.
  int64_t price;
  // Remaining lots.
  int64_t amount;
} mb_book_order;

// One candle; prices in ticks, `volume` the quote volume at notional scale (ticks x lots,
// saturating at the int64 range).
typedef struct {
  // Period start.
  int64_t start_ns;
  // Period end.
  int64_t end_ns;
  // Open.
  int64_t open;
  // High.
  int64_t high;
  // Low.
  int64_t low;
  // Close.
  int64_t close;
  // Lots traded (base volume).
  int64_t total_amount;
  // Quote traded: price x amount summed, at ticks x lots scale (REST's and Python's
  // `volume`).
  int64_t volume;
} mb_candle;

// The 24-hour ticker of an instrument (prices in ticks, 0 without trades).
typedef struct {
  // First price of the window.
  int64_t open;
  // High.
  int64_t high;
  // Low.
  int64_t low;
  // Last price.
  int64_t last;
  // Lots traded.
  int64_t base_volume;
  // Quote volume at notional scale (saturating).
  int64_t quote_volume;
  // Trades in the window.
  uint64_t trades;
  // Best bid (0 = none).
  int64_t bid;
  // Best ask (0 = none).
  int64_t ask;
  // Sequence of the last event in this market.
  uint64_t sequence;
} mb_ticker;

// A futures position; money in USD balance units (unrealised and margins saturating).
typedef struct {
  // Instrument index.
  uint16_t instrument;
  // Position number.
  uint64_t position_id;
  // Signed lots (long > 0).
  int64_t size;
  // Entry price, ticks.
  int64_t entry_price;
  // Mark price, ticks.
  int64_t mark_price;
  // Unrealised PnL at mark.
  int64_t unrealised;
  // Realised since opening (PnL, funding, fees).
  int64_t realised;
  // Initial margin at mark.
  int64_t initial_margin;
  // Maintenance margin at mark.
  int64_t maintenance_margin;
  // Opened.
  int64_t opened_ns;
} mb_position;

// One event.
typedef struct {
  // Global sequence number.
  uint64_t seq;
  // Engine time, nanoseconds since the epoch.
  int64_t time_ns;
  // Kind.
  mb_event_kind kind;
  // Side (0 buy, 1 sell) where one applies.
  uint8_t side;
  // Instrument index.
  uint16_t instrument;
  // Currency index.
  uint16_t currency;
  // Account.
  uint32_t account;
  // Other account (the maker of a trade).
  uint32_t maker_account;
  // Status code of a refusal (`mb_status`).
  int32_t status;
  // Order number.
  uint64_t order;
  // Its slab slot (with `order`, an `mb_order_ref`).
  uint32_t order_slot;
  // Maker's slot.
  uint32_t maker_slot;
  // Maker's order number.
  uint64_t maker_order;
  // Price in ticks (see the kind).
  int64_t price;
  // Amount in lots (see the kind).
  int64_t amount;
  // Fee (see the kind).
  int64_t fee;
  // Maker fee of a trade.
  int64_t maker_fee;
  // Trade number of a trade.
  uint64_t trade;
} mb_event;

// One message of the market feed.
typedef struct {
  // Sequence number of the command it comes from (a snapshot: the command it was
  // read after).
  uint64_t seq;
  // The book's sequence after that command (a trade: 0).
  uint64_t book_sequence;
  // Trade id (other kinds: 0).
  uint64_t trade;
  // Price in ticks.
  int64_t price;
  // Amount in lots.
  int64_t amount;
  // Orders at the level (`MB_MARKET_UPDATE_KIND_LEVEL`).
  uint32_t orders;
  // Instrument index.
  uint16_t instrument;
  // Side (0 buy, 1 sell).
  uint8_t side;
  // Kind.
  mb_market_update_kind kind;
} mb_market_update;

// How a node keeps its data and, optionally, its group.
typedef struct {
  // Journal sync, snapshot interval and snapshots kept.
  mb_store_options store;
  // Commands in flight and reads queued at most (0: 65,536); a full queue answers
  // `MB_STATUS_BUSY`.
  size_t queue_capacity;
  // NULL: commands are journalled in the data directory. Else the replicated log's
  // NATS servers, `nats://HOST:PORT[,...]`: the node joins the group (`node_name`
  // required), follows the log and writes it while it holds the group's lease.
  const char *log_servers;
  // This node's name in its group (letters, digits, `-`, `_`).
  const char *node_name;
  // The group's lease in milliseconds (0: the default, 2,000; else 100 to 60,000).
  uint32_t lease_ms;
  // Commands between two state-hash checkpoints of the group (0: the default, 10,000).
  uint64_t checkpoint_every;
} mb_node_options;

// How a thread-safe engine runs.
typedef struct {
  // Requests the ingress queue holds (0: 65,536). A full queue answers
  // `MB_STATUS_BUSY`.
  size_t queue_capacity;
  // Nonzero: time stands still at `start_time_ns` until `mb_runtime_set_time` (for
  // replays and tests); zero: the system clock.
  uint8_t manual_clock;
  // Start time of a manual clock.
  int64_t start_time_ns;
  // Ignored (kept for ABI compatibility): market data and every read now always run on
  // a stage of their own, never on the matching thread.
  uint8_t market_data_thread;
} mb_runtime_options;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Starts (or restarts) the session's account feed for the `count` accounts at
// `accounts`: their live orders and balances as a snapshot, then every update of their
// orders and the balances each moved, polled with `mb_session_poll_accounts`. Needs a
// runtime with market data (the records are its): else `MB_STATUS_INVALID_ARGUMENT`.
// An unknown account: `MB_STATUS_UNKNOWN_ACCOUNT`, and the session keeps the feed it had.
// A session that does not poll for more than 65,536 published batches loses the feed
// (`MB_STATUS_STOPPED` at the next poll; subscribe again for a fresh snapshot).
//
// # Safety
// `session` live and used by this thread only; `accounts` NULL (with `count` 0) or
// `count` readable elements.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_subscribe_accounts(mb_session *session,
                                        const uint32_t *accounts,
                                        size_t count);

// Moves up to `capacity` account-feed messages, oldest first, into `updates` and writes
// how many (`*len_out` equal to `capacity`: more may wait; poll again).
// `MB_STATUS_INVALID_ARGUMENT` when the session has no account feed.
//
// # Safety
// `session` live and used by this thread only; `updates` NULL (with `capacity` 0) or
// `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_poll_accounts(mb_session *session,
                                   mb_account_update *updates,
                                   size_t capacity,
                                   size_t *len_out);

// A definition with the embedded demo currencies, markets and fees, no holders, market
// data on. Sections added later replace the demo section as a whole.
//
// # Safety
// `out_config` NULL or writable.
//
// Threads: any thread, concurrently.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_config_new_demo(mb_config **out_config);

// Parses a TOML definition (`format` 0) or a JSON one (`format` 1); unknown keys are
// refused with `MB_STATUS_INVALID_CONFIG` and the reason in `mb_last_error`, and so is a
// definition over 16 MiB or nested deeper than 64 levels (JSON) or than the TOML
// parser's limit, before it is parsed: no input overflows the caller's stack.
//
// # Safety
// `text` NULL or NUL-terminated; `out_config` NULL or writable.
//
// Threads: any thread, concurrently.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_config_parse(const char *definition, uint32_t format, mb_config **out_config);

// Frees a definition (NULL is ignored). Engines created from it do not depend on it.
//
// # Safety
// `config` NULL or from `mb_config_*`, not freed before.
//
// Threads: one thread at a time per definition.
// Ownership: frees the handle (NULL is ignored); do not use it after.
void mb_config_free(mb_config *config);

// Adds a currency (`precision` decimals).
//
// # Safety
// `config` live; strings NUL-terminated.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_add_currency(mb_config *config,
                                 const char *code,
                                 uint8_t precision,
                                 const char *name);

// Adds an instrument.
//
// # Safety
// `config` live; `spec` and its strings valid for the call.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_add_instrument(mb_config *config, const mb_instrument_spec *spec);

// Adds a fee tier (percentages as decimal strings) to fee group `group` (`SPOT` or
// `FUTURES`), creating the group on first use with `volume_currency`.
//
// # Safety
// `config` live; strings NUL-terminated.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_add_fee_tier(mb_config *config,
                                 const char *group,
                                 const char *volume_currency,
                                 const char *volume,
                                 const char *maker_fee,
                                 const char *taker_fee);

// Adds a holder (created with its main account when the engine starts; the n-th holder
// added is holder n).
//
// # Safety
// `config` live; `name` NUL-terminated.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_add_holder(mb_config *config, const char *name);

// Credits `amount` (decimal string) of `currency` to account `account` of holder
// `holder` at start; `account` is `main` or a subaccount name, created on first use with
// `kind` (`regular`, `instant-trade`, `blp`; NULL = regular). With `currency` and
// `amount` NULL it only declares the account.
//
// # Safety
// `config` live; strings NUL-terminated (`kind`, `currency`, `amount` may be NULL).
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_add_deposit(mb_config *config,
                                const char *holder,
                                const char *account,
                                const char *kind,
                                const char *currency,
                                const char *amount);

// Sets the open-order limit per holder.
//
// # Safety
// `config` live.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_set_max_open_orders(mb_config *config, uint32_t max);

// Turns market data (candles, tickers, order and trade history) on (nonzero) or off for
// the engines and runtimes created from this definition; off saves the work on every
// command, and their market-data queries answer `MB_STATUS_MARKET_DATA_OFF`.
//
// # Safety
// `config` live.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_set_market_data(mb_config *config, uint8_t on);

// Sets the most order and trade records the market data of engines and runtimes created
// from this definition keeps (0: no limit, the default): past a limit the oldest go
// first, whatever their age (open orders stay until they end), so a long run's history
// holds its memory at about 280 bytes an order and 200 a trade kept.
//
// # Safety
// `config` live.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_set_history_limits(mb_config *config, uint64_t max_orders, uint64_t max_trades);

// Whether single-threaded engines created from this definition (`mb_engine_new`,
// `mb_engine_open`) keep each command's events for `mb_engine_poll_events` (nonzero, the
// default) or drop them (0). Kept events stay until polled or cleared, about 1 KB for
// an order placed and cancelled: a program that never polls should turn them off.
// Sessions of a runtime choose at `mb_session_new`.
//
// # Safety
// `config` live.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_set_keep_events(mb_config *config, uint8_t on);

// Whether single-threaded engines created from this definition (`mb_engine_new`,
// `mb_engine_open`) refuse a call made while a call from another thread is inside them
// (nonzero, the default: `MB_STATUS_IN_USE`, nothing done) or leave it to the caller (0).
// The check is an atomic swap a call: about 2-6 ns a call in a tight loop of place and
// cancel (BENCHMARKS.md). Turn it off only where one thread at a time is guaranteed: two
// threads in calls at once are then undefined behaviour.
//
// # Safety
// `config` live.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_set_thread_checks(mb_config *config, uint8_t on);

// Sets the time (ns since the epoch) a single-threaded engine provisions its holders at
// (default 0). Set it near the times you will submit: futures funding clocks start at
// the first command, and a later jump runs every funding period in between.
//
// # Safety
// `config` live.
//
// Threads: one thread at a time per definition.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_config_set_start_time(mb_config *config, int64_t time_ns);

// A command that creates a holder with its main account.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_create_holder(void);

// A subaccount creation (`kind` an `mb_account_kind`); `name` must stay valid until the
// command is submitted.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_create_subaccount(uint32_t holder, const char *name, uint32_t kind);

// A deposit of `amount` balance units (admin).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_deposit(uint32_t account, uint16_t currency, int64_t amount);

// A withdrawal of `amount` balance units (admin).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_withdraw(uint32_t account, uint16_t currency, int64_t amount);

// A transfer between two accounts of `holder`.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_transfer(uint32_t holder,
                           uint32_t source,
                           uint32_t destination,
                           uint16_t currency,
                           int64_t amount);

// A limit order: price in ticks, amount in lots, `tif` an `mb_time_in_force`.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_place_limit(uint32_t account,
                              uint16_t instrument,
                              uint32_t side,
                              int64_t price_ticks,
                              int64_t amount_lots,
                              uint32_t tif);

// A market order (`protection_ticks` 0 = no protection price).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_place_market(uint32_t account,
                               uint16_t instrument,
                               uint32_t side,
                               int64_t amount_lots,
                               int64_t protection_ticks);

// A held trigger order: `order_type` an `mb_order_type` among `STOP` (stop-limit),
// `STOP_MARKET`, `TAKE_PROFIT` (limit) and `TAKE_PROFIT_MARKET`; `price_ticks` the limit
// (0 for the market types); it watches the last trade price (set `trigger_ref` to
// `MB_TRIGGER_REF_MARK_PRICE` for a future's mark).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_place_trigger(uint32_t account,
                                uint16_t instrument,
                                uint32_t side,
                                uint32_t order_type,
                                int64_t trigger_ticks,
                                int64_t price_ticks,
                                int64_t amount_lots,
                                uint32_t tif);

// A trailing stop: `trail_kind` an `mb_trail_kind` (`TICKS` or `BPS`) and its `trail`;
// a negative `limit_offset_ticks` makes a trailing stop entering as a market order, zero
// or more a trailing stop-limit that far past its trigger.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_place_trailing(uint32_t account,
                                 uint16_t instrument,
                                 uint32_t side,
                                 uint32_t trail_kind,
                                 int64_t trail,
                                 int64_t limit_offset_ticks,
                                 int64_t amount_lots);

// A one-cancels-the-other exit pair on one side: a limit at `limit_ticks` and a stop
// triggered at `stop_trigger_ticks` (a stop-limit at `stop_limit_ticks`, 0 = a
// stop-market), each for `amount_lots`. The first fill or trigger of one cancels the other.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_place_oco(uint32_t account,
                            uint16_t instrument,
                            uint32_t side,
                            int64_t amount_lots,
                            int64_t limit_ticks,
                            int64_t stop_trigger_ticks,
                            int64_t stop_limit_ticks);

// A bracket: an entry (a limit at `price_ticks`, or a market order when it is 0) whose
// exits, placed once it is done for what it filled, are a take-profit limit at
// `take_profit_ticks` and a stop-loss triggered at `stop_loss_ticks` (a stop-limit at
// `stop_limit_ticks`, 0 = a stop-market), linked one-cancels-the-other.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_place_bracket(uint32_t account,
                                uint16_t instrument,
                                uint32_t side,
                                int64_t price_ticks,
                                int64_t amount_lots,
                                uint32_t tif,
                                int64_t take_profit_ticks,
                                int64_t stop_loss_ticks,
                                int64_t stop_limit_ticks);

// An amend (`amount_lots` / `price_ticks` 0 = unchanged).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_amend(uint32_t account,
                        mb_order_ref order,
                        int64_t amount_lots,
                        int64_t price_ticks);

// A cancel of one order.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_cancel(uint32_t account, mb_order_ref order);

// A cancel of the newest open order with `client_id`.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_cancel_by_client_id(uint32_t account, mb_uuid client_id);

// A cancel of every open order of `account` (`only_instrument` nonzero: just those in
// `instrument`).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_cancel_all(uint32_t account, uint8_t only_instrument, uint16_t instrument);

// A cancel of the `len` listed orders of `account` (the list is read at submit).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_cancel_orders(uint32_t account, const mb_order_ref *orders, size_t len);

// A cancel of the newest open order of `account` for each of `len` client ids (the list
// is read at submit).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_cancel_client_ids(uint32_t account, const mb_uuid *client_ids, size_t len);

// Sets a futures index price (admin).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_set_index_price(uint16_t instrument, int64_t price_ticks);

// Moves time only (expiries, funding).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_advance_time(void);

// Arms an account's dead-man switch: its open orders are cancelled once `timeout_ns`
// nanoseconds of engine time have passed, unless it is set again first; 0 turns it off.
// A timeout beyond `i64::MAX` is refused when applied.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_set_cancel_all_after(uint32_t account, uint64_t timeout_ns);

// Closes an account's futures positions (admin).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_liquidate(uint32_t account);

// Changes an instrument's state (`state` an `mb_instrument_state`; admin).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_command mb_cmd_set_instrument_state(uint16_t instrument, uint32_t state);

// The ABI version of the linked library (compare with `MB_ABI_VERSION` of the header the
// program was compiled with); any thread.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
uint32_t mb_abi_version(void);

// The name of a status code: its `mb_status` enumerator without the `MB_STATUS_` prefix
// (`"PRICE_OUT_OF_RANGE"`, `"BUFFER_TOO_SMALL"`), distinct for every code, or
// `"UNKNOWN"`; static storage, any thread.
//
// Threads: any thread, concurrently.
// Ownership: static storage; never free it.
const char *mb_status_str(int32_t status);

// The wire code REST and Python report for a status (`"INVALID_PRICE"` for both
// `MB_STATUS_INVALID_PRICE` and `MB_STATUS_PRICE_OUT_OF_RANGE`; the ABI's own statuses
// give their name), or `"UNKNOWN"`; static storage, any thread.
//
// Threads: any thread, concurrently.
// Ownership: static storage; never free it.
const char *mb_status_wire_code(int32_t status);

// Copies the message of the calling thread's last failed call (NUL-terminated) into
// `buf`. Like `errno`, successful calls leave it as it was.
//
// # Safety
// `buf` NULL or `capacity` writable bytes; `len_out` NULL or writable.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_last_error(char *buf, size_t capacity, size_t *len_out);

#if defined(MB_DEBUG_PANIC)
// Test hook: panics inside the boundary, to prove a panic becomes `MB_STATUS_PANIC`
// (built only with the `debug-panic` feature, which release builds leave off).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_debug_panic(void);
#endif

#if defined(MB_DEBUG_PANIC)
// Test hook: the calling thread's next call of any export with a status panics inside
// the export's boundary, to prove each one turns a panic into `MB_STATUS_PANIC`
// (`debug-panic` feature only).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
void mb_debug_panic_next_call(void);
#endif

#if defined(MB_DEBUG_PANIC)
// Test hook: the calling thread's next use of a handle panics just after the call
// entered it, to prove the handle is poisoned (`debug-panic` feature only).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
void mb_debug_panic_next_use(void);
#endif

// Every account of every holder, holder by holder, each main account first then its
// subaccounts in creation order (closed ones included).
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_accounts(const mb_engine *engine,
                             mb_account_info *buf,
                             size_t capacity,
                             size_t *len_out);

// As `mb_engine_accounts`, through the runtime's market stage.
//
// # Safety
// As `mb_engine_accounts`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_accounts(const mb_session *session,
                              mb_account_info *buf,
                              size_t capacity,
                              size_t *len_out);

// The description of instrument `instrument` (an index; see `mb_refdata_instrument`).
//
// # Safety
// `engine` live; `info_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_instrument_info(const mb_engine *engine,
                                    uint16_t instrument,
                                    mb_instrument_info *info_out);

// As `mb_engine_instrument_info`, through the runtime's market stage.
//
// # Safety
// As `mb_engine_instrument_info`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_instrument_info(const mb_session *session,
                                     uint16_t instrument,
                                     mb_instrument_info *info_out);

// The exchange's fee account: fees collected per currency (index = currency index), in
// balance units.
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_fees_collected(const mb_engine *engine,
                                   int64_t *buf,
                                   size_t capacity,
                                   size_t *len_out);

// As `mb_engine_fees_collected`, through the runtime's market stage.
//
// # Safety
// As `mb_engine_fees_collected`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_fees_collected(const mb_session *session,
                                    int64_t *buf,
                                    size_t capacity,
                                    size_t *len_out);

// The defaults: a snapshot every 100,000 commands, two kept, fsync on.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_store_options mb_store_options_default(void);

// Opens a durable engine on the data directory `dir` (created if missing): a new
// directory starts from `config` (holders provisioned at its start time); an existing one
// is recovered (newest intact snapshot, then the journal after it) and must have been
// written under the same `config`, else `MB_STATUS_STORAGE`. `options` NULL takes
// `mb_store_options_default()`. Every accepted command is then journalled (and, with
// fsync, on stable storage) before its call returns.
//
// # Safety
// `config` from `mb_config_*`; `dir` a NUL-terminated UTF-8 path; `options` NULL or
// valid; `out_engine` writable.
//
// Threads: any thread, while no thread changes the definition.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_engine_open(const mb_config *config,
                         const char *dir,
                         const mb_store_options *options,
                         mb_engine **out_engine);

// An engine in memory holding the state of a `matchbook-rest` server's data directory
// `dir`: its newest intact snapshot and the journal after it, under the definition the
// server recorded there (`config.exchange.json`). Nothing in the directory is written or
// locked, so the server may be running (a command it is still writing is left out); the
// engine is a branch, changed only by the calls made on it. Holders and accounts keep the
// definition's names (`mb_refdata_account`). `market_data` nonzero keeps the state's
// history, candles and tickers; `keep_events` nonzero keeps each later command's events
// for `mb_engine_poll_events`. `MB_STATUS_STORAGE` (see `mb_last_error`) for a directory
// that is not a server's, or whose definition does not match its pin.
//
// # Safety
// `dir` a NUL-terminated UTF-8 path; `out_engine` writable.
//
// Threads: any thread.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_engine_load(const char *dir,
                         uint8_t market_data,
                         uint8_t keep_events,
                         mb_engine **out_engine);

// Writes a snapshot of a durable engine now (and prunes what it makes unnecessary).
// `MB_STATUS_INVALID_ARGUMENT` for an engine not opened on a directory.
//
// # Safety
// `engine` live.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_snapshot(mb_engine *engine);

// A copy of `engine` in memory with its state, market data and reference data as they
// are now: a branch to try other commands on, leaving `engine` as it is (what-if runs of
// a simulation). A durable engine's copy is not durable; no events wait in it. It costs
// what the state holds, history included.
//
// # Safety
// `engine` live; `out_engine` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_engine_copy(const mb_engine *engine, mb_engine **out_engine);

// Creates a single-threaded engine from a definition (the definition stays the
// caller's); its holders are provisioned at the definition's start time.
//
// # Safety
// `config` from `mb_config_*`; `out_engine` writable.
//
// Threads: any thread, while no thread changes the definition.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_engine_new(const mb_config *config, mb_engine **out_engine);

// Creates a single-threaded engine with the embedded demo markets and no holders.
//
// # Safety
// `out_engine` NULL or writable.
//
// Threads: any thread, concurrently.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_engine_new_demo(mb_engine **out_engine);

// Frees an engine (NULL is ignored).
//
// # Safety
// `engine` NULL or a handle from `mb_engine_new*` not freed before.
//
// Threads: the one thread using the engine at a time.
// Ownership: frees the handle (NULL is ignored); do not use it after.
void mb_engine_free(mb_engine *engine);

// The engine's reference data (codes, scales, configured accounts); valid until the
// engine is freed. NULL for a NULL engine.
//
// # Safety
// `engine` NULL or live.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrowed from the handle until it is freed; never free it.
const mb_refdata *mb_engine_refdata(const mb_engine *engine);

// Applies `command` at `time_ns` (nanoseconds since the epoch; never before the time of
// the previous command: an earlier time is refused with `MB_STATUS_INVALID_ARGUMENT` and
// changes nothing, equal times are fine) and writes what it produced into `*result`
// (may be NULL). A refusal returns its status and also leaves a `REJECTED` event to
// poll. A fill-or-kill order that cannot fill, or a post-only order that would take, is
// accepted and ended at once:
// the call returns `MB_STATUS_INSUFFICIENT_LIQUIDITY` or `MB_STATUS_POST_ONLY_WOULD_TAKE`
// and `*result` still names the order (its history record holds the rejection).
//
// # Safety
// `engine` live; `command` valid; `result` NULL or writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_submit(mb_engine *engine,
                           int64_t time_ns,
                           const mb_command *command,
                           mb_result *result);

// The fast path for the hottest command: a limit order straight from its fields (no
// `mb_command` to build and read), `side` an `mb_side`, `tif` an `mb_time_in_force`.
// Writes the order's handle, also when it returns `MB_STATUS_INSUFFICIENT_LIQUIDITY` or
// `MB_STATUS_POST_ONLY_WOULD_TAKE` (the order was accepted and ended at once).
//
// # Safety
// `engine` live; `order_out` NULL or writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_place_limit(mb_engine *engine,
                                int64_t time_ns,
                                uint32_t account,
                                uint16_t instrument,
                                uint32_t side,
                                int64_t price_ticks,
                                int64_t amount_lots,
                                uint32_t tif,
                                mb_order_ref *order_out);

// The fast path for cancels: one open order of `account` by handle.
//
// # Safety
// `engine` live.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_cancel(mb_engine *engine,
                           int64_t time_ns,
                           uint32_t account,
                           mb_order_ref order);

// Every currency balance of an account, by currency index.
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_balances(const mb_engine *engine,
                             uint32_t account,
                             mb_balance *buf,
                             size_t capacity,
                             size_t *len_out);

// An account's open orders, oldest first.
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_open_orders(const mb_engine *engine,
                                uint32_t account,
                                mb_order *buf,
                                size_t capacity,
                                size_t *len_out);

// One open order of `account` by handle.
//
// # Safety
// `engine` live; `order_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_order(const mb_engine *engine,
                          uint32_t account,
                          mb_order_ref order,
                          mb_order *order_out);

// The newest open order of `account` with `client_id`.
//
// # Safety
// `engine` live; `order_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_order_by_client_id(const mb_engine *engine,
                                       uint32_t account,
                                       mb_uuid client_id,
                                       mb_order *order_out);

// L1: best bid and ask of an instrument.
//
// # Safety
// `engine` live; `top_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_book_top(const mb_engine *engine, uint16_t instrument, mb_top *top_out);

// L2: up to `depth` levels a side, best first, into two buffers.
//
// # Safety
// `engine` live; each buffer NULL or its capacity in writable elements; lengths writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_book_levels(const mb_engine *engine,
                                uint16_t instrument,
                                size_t depth,
                                mb_level *bids,
                                size_t bids_capacity,
                                size_t *bids_len,
                                mb_level *asks,
                                size_t asks_capacity,
                                size_t *asks_len);

// L3: every resting order of up to `depth` levels a side, in queue order.
//
// # Safety
// `engine` live; each buffer NULL or its capacity in writable elements; lengths writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_book_orders(const mb_engine *engine,
                                uint16_t instrument,
                                size_t depth,
                                mb_book_order *bids,
                                size_t bids_capacity,
                                size_t *bids_len,
                                mb_book_order *asks,
                                size_t asks_capacity,
                                size_t *asks_len);

// Candles of `unit` x `period` (an `mb_candle_unit`; 1/5/15/30 minutes, 1/4 hours, 1
// day, week, month) from `from_ns` to `to_ns`, newest first; none for a period that
// begins after the engine's time (`to_ns` later than it is read as it).
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_candles(const mb_engine *engine,
                            uint16_t instrument,
                            uint32_t unit,
                            uint32_t period,
                            int64_t from_ns,
                            int64_t to_ns,
                            mb_candle *buf,
                            size_t capacity,
                            size_t *len_out);

// The 24-hour ticker of an instrument at engine time.
//
// # Safety
// `engine` live; `ticker_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_ticker(const mb_engine *engine, uint16_t instrument, mb_ticker *ticker_out);

// An account's open futures positions.
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_positions(const mb_engine *engine,
                              uint32_t account,
                              mb_position *buf,
                              size_t capacity,
                              size_t *len_out);

// The engine's state hash: two engines with equal hashes hold the same state (orders,
// balances, positions, sequence). A replay of the same commands at the same times gives
// the same hash.
//
// # Safety
// `engine` live; `hash_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_state_hash(const mb_engine *engine, uint64_t *hash_out);

// Moves the events produced since the last poll into `events` and writes their count. If
// they do not fit, nothing is moved, `*len_out` is the count needed and the status is
// `MB_STATUS_BUFFER_TOO_SMALL`. After a failed journal write, `MB_STATUS_STORAGE`, as
// every read; for an engine whose definition drops events, `MB_STATUS_EVENTS_OFF`.
//
// # Safety
// `engine` live; `events` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_poll_events(mb_engine *engine,
                                mb_event *events,
                                size_t capacity,
                                size_t *len_out);

// Drops the events not yet polled (for callers that do not poll).
//
// # Safety
// `engine` live.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_clear_events(mb_engine *engine);

// Follows the `len` accounts listed (replacing what the session followed before; `len`
// 0 stops following): from now on `mb_session_poll_followed` hands out every event that
// concerns them, whoever's command caused it. A session that does not poll for more than
// 65,536 published batches loses the feed (`MB_STATUS_STOPPED` at the next poll; follow
// again).
//
// # Safety
// `session` live and used by this thread only; `accounts` NULL (with `len` 0) or `len`
// readable elements.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_follow(mb_session *session, const uint32_t *accounts, size_t len);

// Moves the events concerning the followed accounts since the last poll into `events`,
// oldest first (all or nothing, as `mb_session_poll_events`): `MB_STATUS_INVALID_ARGUMENT`
// when the session follows nothing.
//
// # Safety
// `session` live and used by this thread only; `events` NULL or `capacity` writable
// elements; `len_out` writable.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_poll_followed(mb_session *session,
                                   mb_event *events,
                                   size_t capacity,
                                   size_t *len_out);

// A page of `account`'s orders, open and ended (as long as history keeps them, at least a
// day after they ended), newest first: at most `capacity` records below order number
// `before` (0: from the newest) into `buf`, their count into `*len_out`, and into
// `*next_out` the `before` of the next page (0: this was the last). A page reads at
// most 10,000 records, so it can hold fewer than `capacity` (even none) with a next
// number: go on until 0. Never `MB_STATUS_BUFFER_TOO_SMALL`: `capacity` is the page size
// (0 is refused).
//
// # Safety
// `engine` live; `buf` `capacity` writable elements; `len_out`, `next_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_order_history(const mb_engine *engine,
                                  uint32_t account,
                                  uint64_t before,
                                  mb_order_record *buf,
                                  size_t capacity,
                                  size_t *len_out,
                                  uint64_t *next_out);

// As `mb_engine_order_history`, through the runtime's market stage.
//
// # Safety
// As `mb_engine_order_history`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_order_history(const mb_session *session,
                                   uint32_t account,
                                   uint64_t before,
                                   mb_order_record *buf,
                                   size_t capacity,
                                   size_t *len_out,
                                   uint64_t *next_out);

// One order of `account` by number (`mb_order_ref.id`), open or ended, while history
// keeps it; `MB_STATUS_ORDER_NOT_FOUND` otherwise.
//
// # Safety
// `engine` live; `record_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_order_record(const mb_engine *engine,
                                 uint32_t account,
                                 uint64_t order,
                                 mb_order_record *record_out);

// As `mb_engine_order_record`, through the runtime's market stage.
//
// # Safety
// As `mb_engine_order_record`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_order_record(const mb_session *session,
                                  uint32_t account,
                                  uint64_t order,
                                  mb_order_record *record_out);

// The trades of one order of `account` (by number), oldest first.
//
// # Safety
// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_order_trades(const mb_engine *engine,
                                 uint32_t account,
                                 uint64_t order,
                                 mb_trade *buf,
                                 size_t capacity,
                                 size_t *len_out);

// As `mb_engine_order_trades`, through the runtime's market stage.
//
// # Safety
// As `mb_engine_order_trades`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_order_trades(const mb_session *session,
                                  uint32_t account,
                                  uint64_t order,
                                  mb_trade *buf,
                                  size_t capacity,
                                  size_t *len_out);

// Starts (or restarts) the session's market feed: every book as a snapshot, then every
// change after it, polled with `mb_session_poll_market`. A session that does not poll
// for more than 65,536 published batches loses the feed (`MB_STATUS_STOPPED` at the next
// poll; subscribe again for a fresh snapshot).
//
// # Safety
// `session` live and used by this thread only.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_subscribe_market(mb_session *session);

// Moves up to `capacity` market-feed messages, oldest first, into `updates` and writes
// how many (`*len_out` equal to `capacity`: more may wait; poll again).
// `MB_STATUS_INVALID_ARGUMENT` when the session has no market feed.
//
// # Safety
// `session` live and used by this thread only; `updates` NULL (with `capacity` 0) or
// `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_poll_market(mb_session *session,
                                 mb_market_update *updates,
                                 size_t capacity,
                                 size_t *len_out);

// The defaults: `mb_store_options_default()`, the default queue, the local journal.
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_node_options mb_node_options_default(void);

// Opens a node on the data directory `dir` (created if missing): a new directory starts
// from `config` with its holders provisioned (as commands, journalled), an existing one
// is recovered (newest intact snapshot, then the journal) and must have been written
// under the same definition, else `MB_STATUS_STORAGE`; a directory another process has
// open is refused the same way. The node runs on the system clock (never behind its
// journal); `config`'s start time and market-data choice do not apply (a node keeps
// market data). `options` NULL takes `mb_node_options_default()`. A command is
// acknowledged (its `mb_session_submit` returns) once journalled; deadlines fire within
// 100 ms of their time with no other traffic. Use it through `mb_node_runtime`.
//
// # Safety
// `config` from `mb_config_*`; `dir` a NUL-terminated UTF-8 path; `options` NULL or
// valid (its strings NULL or NUL-terminated); `out_node` writable.
//
// Threads: any thread, while no thread changes the definition.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_node_open(const mb_config *config,
                       const char *dir,
                       const mb_node_options *options,
                       mb_node **out_node);

// The node's thread-safe handle: open sessions on it (`mb_session_new`), read its
// reference data (`mb_runtime_refdata`: the definition's holders by name). Valid until the
// node is freed; never free it. Its clock is the system's (`mb_runtime_set_time` is
// refused). NULL for a NULL node.
//
// # Safety
// `node` NULL or live.
//
// Threads: any thread, concurrently.
// Ownership: borrowed from the handle until it is freed; never free it.
const mb_runtime *mb_node_runtime(const mb_node *node);

// Stops the node and frees it (NULL is ignored): no more deadlines, every queued command
// answered, the last snapshot written, a group's lease resigned, the directory unlocked.
// Sessions still open answer `MB_STATUS_STOPPED` afterwards and must still be freed.
//
// # Safety
// `node` NULL or from `mb_node_open`, not freed before, not used concurrently.
//
// Threads: one thread, once no other uses the node.
// Ownership: frees the handle (NULL is ignored); do not use it after.
void mb_node_free(mb_node *node);

// The index of an instrument code.
//
// # Safety
// `refdata` from a live handle; `code` NUL-terminated; `id_out` writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_instrument(const mb_refdata *refdata, const char *code, uint16_t *id_out);

// The index and balance scale (decimals of balance units) of a currency code.
//
// # Safety
// `refdata` from a live handle; `code` NUL-terminated; outs writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_currency(const mb_refdata *refdata,
                              const char *code,
                              uint16_t *id_out,
                              uint8_t *scale_out);

// The holder id and account id of a configured holder's account (`main` or a
// subaccount name).
//
// # Safety
// `refdata` from a live handle; strings NUL-terminated; outs writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_account(const mb_refdata *refdata,
                             const char *holder,
                             const char *account,
                             uint32_t *holder_out,
                             uint32_t *account_out);

// A decimal price (`"60000.5"`) in ticks of `instrument`.
//
// # Safety
// `refdata` from a live handle; `price` NUL-terminated; `ticks_out` writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_price(const mb_refdata *refdata,
                           uint16_t instrument,
                           const char *price,
                           int64_t *ticks_out);

// A decimal amount in lots of `instrument`.
//
// # Safety
// `refdata` from a live handle; `amount` NUL-terminated; `lots_out` writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_amount(const mb_refdata *refdata,
                            uint16_t instrument,
                            const char *amount,
                            int64_t *lots_out);

// A decimal amount of `currency` in balance units.
//
// # Safety
// `refdata` from a live handle; `amount` NUL-terminated; `units_out` writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_funds(const mb_refdata *refdata,
                           uint16_t currency,
                           const char *amount,
                           int64_t *units_out);

// Writes `value` (in `unit`, an `mb_unit`) as a decimal string into `buf`.
//
// # Safety
// `refdata` from a live handle; `buf` NULL or `capacity` writable bytes; `len_out`
// writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_refdata_format(const mb_refdata *refdata,
                            uint32_t unit,
                            uint16_t index,
                            int64_t value,
                            char *buf,
                            size_t capacity,
                            size_t *len_out);

// An order in decimal strings (the convenience path): `instrument` a code, `price` a
// decimal or NULL (market orders), `amount` a decimal; `side`, `order_type`, `tif` as in
// `mb_command`. Writes a ready `MB_COMMAND_KIND_PLACE_ORDER` command.
//
// # Safety
// `refdata` from a live handle; strings NUL-terminated (`price` may be NULL);
// `out_command` writable.
//
// Threads: any thread, concurrently (it never changes).
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_cmd_place_decimal(const mb_refdata *refdata,
                               uint32_t account,
                               const char *instrument,
                               uint32_t side,
                               uint32_t order_type,
                               uint32_t tif,
                               const char *price,
                               const char *amount,
                               mb_command *out_command);

// Starts a thread-safe engine from a definition (`options` NULL: system clock, default
// queue); its holders are provisioned before this
// returns.
//
// # Safety
// `config` from `mb_config_*`; `options` NULL or valid; `out_runtime` writable.
//
// Threads: any thread, while no thread changes the definition.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_runtime_new(const mb_config *config,
                         const mb_runtime_options *options,
                         mb_runtime **out_runtime);

// Stops the engine thread after every queued request was answered, and frees the
// runtime (NULL is ignored). Sessions still open answer `MB_STATUS_STOPPED` afterwards
// and must still be freed.
//
// # Safety
// `runtime` NULL or from `mb_runtime_new`, not freed before, not used concurrently.
//
// Threads: one thread, once no other uses the runtime.
// Ownership: frees the handle (NULL is ignored); do not use it after.
void mb_runtime_free(mb_runtime *runtime);

// The runtime's reference data; valid until the runtime is freed. Safe to use from any
// thread (it never changes).
//
// # Safety
// `runtime` NULL or live.
//
// Threads: any thread, concurrently.
// Ownership: borrowed from the handle until it is freed; never free it.
const mb_refdata *mb_runtime_refdata(const mb_runtime *runtime);

// Sets the time of a manual clock (never backwards: an earlier time is refused with
// `MB_STATUS_INVALID_ARGUMENT`); commands after this see it.
//
// # Safety
// `runtime` live (any thread).
//
// Threads: any thread, concurrently.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_runtime_set_time(const mb_runtime *runtime, int64_t time_ns);

// Opens a session for one producer thread (`keep_events` nonzero: the events of its
// commands are kept for `mb_session_poll_events`).
//
// # Safety
// `runtime` live; `out_session` writable.
//
// Threads: any thread, concurrently.
// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
mb_status mb_session_new(const mb_runtime *runtime, uint8_t keep_events, mb_session **out_session);

// Frees a session (NULL is ignored).
//
// # Safety
// `session` NULL or from `mb_session_new`, not freed before.
//
// Threads: the one thread using the session at a time.
// Ownership: frees the handle (NULL is ignored); do not use it after.
void mb_session_free(mb_session *session);

// Queues `command`, waits until the engine applied it (at the runtime's clock) and
// writes what it produced (`result` may be NULL). Statuses as `mb_engine_submit`: an order
// accepted and ended at once by its time in force reports its refusal with `*result`
// naming it.
//
// # Safety
// `session` live and used by this thread only; `command` valid; `result` NULL or
// writable.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_submit(mb_session *session, const mb_command *command, mb_result *result);

// Moves the events of this session's commands since the last poll into `events` (all or
// nothing, as `mb_engine_poll_events`); `MB_STATUS_EVENTS_OFF` for a session opened with
// `keep_events` 0.
//
// # Safety
// `session` live; `events` NULL or `capacity` writable elements; `len_out` writable.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_poll_events(mb_session *session,
                                 mb_event *events,
                                 size_t capacity,
                                 size_t *len_out);

// As `mb_engine_balances`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_balances`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_balances(const mb_session *session,
                              uint32_t account,
                              mb_balance *buf,
                              size_t capacity,
                              size_t *len_out);

// As `mb_engine_open_orders`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_open_orders`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_open_orders(const mb_session *session,
                                 uint32_t account,
                                 mb_order *buf,
                                 size_t capacity,
                                 size_t *len_out);

// As `mb_engine_order`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_order`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_order(const mb_session *session,
                           uint32_t account,
                           mb_order_ref order,
                           mb_order *order_out);

// As `mb_engine_order_by_client_id`, through the runtime's market stage (never the
// matching thread).
//
// # Safety
// As `mb_engine_order_by_client_id`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_order_by_client_id(const mb_session *session,
                                        uint32_t account,
                                        mb_uuid client_id,
                                        mb_order *order_out);

// As `mb_engine_book_top`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_book_top`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_book_top(const mb_session *session, uint16_t instrument, mb_top *top_out);

// As `mb_engine_book_levels`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_book_levels`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_book_levels(const mb_session *session,
                                 uint16_t instrument,
                                 size_t depth,
                                 mb_level *bids,
                                 size_t bids_capacity,
                                 size_t *bids_len,
                                 mb_level *asks,
                                 size_t asks_capacity,
                                 size_t *asks_len);

// As `mb_engine_book_orders`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_book_orders`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_book_orders(const mb_session *session,
                                 uint16_t instrument,
                                 size_t depth,
                                 mb_book_order *bids,
                                 size_t bids_capacity,
                                 size_t *bids_len,
                                 mb_book_order *asks,
                                 size_t asks_capacity,
                                 size_t *asks_len);

// As `mb_engine_candles`, through the market-data thread.
//
// # Safety
// As `mb_engine_candles`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_candles(const mb_session *session,
                             uint16_t instrument,
                             uint32_t unit,
                             uint32_t period,
                             int64_t from_ns,
                             int64_t to_ns,
                             mb_candle *buf,
                             size_t capacity,
                             size_t *len_out);

// As `mb_engine_ticker`, at the runtime's clock.
//
// # Safety
// As `mb_engine_ticker`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_ticker(const mb_session *session, uint16_t instrument, mb_ticker *ticker_out);

// As `mb_engine_positions`, through the runtime's market stage (never the matching thread).
//
// # Safety
// As `mb_engine_positions`, with a live session.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_positions(const mb_session *session,
                               uint32_t account,
                               mb_position *buf,
                               size_t capacity,
                               size_t *len_out);

// As `mb_engine_state_hash`, through the runtime's market stage (never the matching thread).
//
// # Safety
// `session` live; `hash_out` writable.
//
// Threads: the one thread using the session at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_session_state_hash(const mb_session *session, uint64_t *hash_out);

// Applies `count` commands in order, command `i` at `times_ns[i]`, as `count` calls of
// `mb_engine_submit` would: `statuses[i]` is the status that call would return and
// `results[i]` the result it would write (all zero for a command refused outright).
// Returns `MB_STATUS_OK` once every command was applied or refused on its own; a NULL
// array (with `count > 0`) or a poisoned engine refuses the whole call, and a data
// directory that fails stops the batch at that command (`MB_STATUS_STORAGE`, also in its
// status). `*submitted_out` counts the statuses written: the commands after them were
// not looked at.
//
// # Safety
// `engine` live; `times_ns`, `commands` readable and `results`, `statuses` writable for
// `count` elements each (any pointer when `count` is 0), the four arrays not
// overlapping; `submitted_out` writable.
//
// Threads: the one thread using the engine at a time.
// Ownership: borrows its arguments for the call; nothing to free.
mb_status mb_engine_submit_batch(mb_engine *engine,
                                 const int64_t *times_ns,
                                 const mb_command *commands,
                                 size_t count,
                                 mb_result *results,
                                 mb_status *statuses,
                                 size_t *submitted_out);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MATCHBOOK_H */
