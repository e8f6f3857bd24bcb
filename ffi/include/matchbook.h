/*
 * matchbook C ABI.
 *
 * Memory: every mb_engine is created by mb_engine_new_* and released by mb_engine_free
 * (NULL-safe). Strings passed in are borrowed for the call only; buffers are (pointer,
 * capacity, *len_out): a buffer too small returns MB_STATUS_BUFFER_TOO_SMALL with the
 * needed length in *len_out and writes nothing.
 * Threads: an mb_engine is owned by one thread at a time (no internal locking); it may
 * move between threads but must not be used by two at once.
 * Errors: every function returns an mb_status; mb_last_error copies the calling thread's
 * last error message. A Rust panic never crosses the boundary: it returns MB_STATUS_PANIC.
 */

#ifndef MATCHBOOK_H
#define MATCHBOOK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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
  // The library panicked; the engine handle must be freed and not used again.
  MB_STATUS_PANIC = 9004,
} mb_status;

// Buy or sell.
typedef enum {
  // Buy.
  MB_SIDE_BUY = 0,
  // Sell.
  MB_SIDE_SELL = 1,
} mb_side;

// Time in force of a limit order.
typedef enum {
  // Good till cancelled.
  MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED = 0,
  // Immediate or cancel.
  MB_TIME_IN_FORCE_IMMEDIATE_OR_CANCELLED = 1,
  // Fill or kill.
  MB_TIME_IN_FORCE_FILL_OR_KILL = 2,
  // Post only.
  MB_TIME_IN_FORCE_POST_ONLY = 3,
} mb_time_in_force;

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
} mb_event_kind;

// An engine owned by one thread at a time, with the events not yet polled.
typedef struct mb_engine mb_engine;

// An order handle: its number and slab slot.
typedef struct {
  // Order number.
  uint64_t id;
  // Slab slot.
  uint32_t slot;
} mb_order_ref;

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

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Creates an engine with the embedded demo currencies and markets.
//
// # Safety
// `out` must be NULL or writable.
mb_status mb_engine_new_demo(mb_engine **out_engine);

// Frees an engine (NULL is ignored).
//
// # Safety
// `engine` must be NULL or a handle from `mb_engine_new_demo` not freed before.
void mb_engine_free(mb_engine *engine);

// Creates a holder with its main account; writes the account id.
//
// # Safety
// `engine` a live handle; `account_out` writable.
mb_status mb_create_holder(mb_engine *engine, int64_t time_ns, uint32_t *account_out);

// Credits `amount` (a decimal string, e.g. "1.5") of `currency` (a code) to an account.
//
// # Safety
// `engine` a live handle; the strings NUL-terminated.
mb_status mb_deposit(mb_engine *engine,
                     int64_t time_ns,
                     uint32_t account,
                     const char *currency,
                     const char *amount);

// Places a limit order with price in ticks and amount in lots of the instrument (its
// market and amount precision); writes the order handle.
//
// # Safety
// `engine` a live handle; `instrument` NUL-terminated; `order_out` writable.
mb_status mb_place_limit(mb_engine *engine,
                         int64_t time_ns,
                         uint32_t account,
                         const char *instrument,
                         mb_side side,
                         int64_t price_ticks,
                         int64_t amount_lots,
                         mb_time_in_force tif,
                         mb_order_ref *order_out);

// Cancels an open order of `account`.
//
// # Safety
// `engine` a live handle.
mb_status mb_cancel(mb_engine *engine, int64_t time_ns, uint32_t account, mb_order_ref order);

// Writes an account's available and locked balance of `currency`, in balance units
// (`10^-scale`, where `*scale_out` is the currency's balance scale).
//
// # Safety
// `engine` a live handle; `currency` NUL-terminated; the out-parameters writable.
mb_status mb_balance(mb_engine *engine,
                     uint32_t account,
                     const char *currency,
                     int64_t *available_out,
                     int64_t *locked_out,
                     uint8_t *scale_out);

// Moves the events produced since the last poll into `events` (capacity `capacity`) and
// writes their count. If they do not fit, nothing is moved, `*len_out` is the count
// needed and the status is `MB_STATUS_BUFFER_TOO_SMALL`.
//
// # Safety
// `engine` a live handle; `events` NULL or `capacity` writable elements; `len_out`
// writable.
mb_status mb_poll_events(mb_engine *engine, mb_event *events, size_t capacity, size_t *len_out);

// The name of a status (`"INSUFFICIENT_FUNDS"`, `"BUFFER_TOO_SMALL"`...); static storage.
const char *mb_status_str(mb_status status);

// Copies the calling thread's last error message (NUL-terminated) into `buf`.
//
// # Safety
// `buf` NULL or `capacity` writable bytes; `len_out` NULL or writable.
mb_status mb_last_error(char *buf, size_t capacity, size_t *len_out);

// Test hook: panics inside the boundary, to prove a panic becomes `MB_STATUS_PANIC`.
mb_status mb_debug_panic(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MATCHBOOK_H */
