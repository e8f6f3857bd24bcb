/* A market maker and a taker on the demo BTC_EUR book through the C ABI: quotes both
 * sides, gets lifted, polls the events and prints trades and balances. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "matchbook.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        mb_status s_ = (call);                                                       \
        if (s_ != MB_STATUS_OK) {                                                    \
            char msg_[256];                                                          \
            size_t len_ = 0;                                                         \
            mb_last_error(msg_, sizeof msg_, &len_);                                 \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, mb_status_str(s_), msg_); \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main(void) {
    mb_engine *engine = NULL;
    const int64_t t = INT64_C(1767225600000000000);
    uint32_t maker = 0, taker = 0;
    CHECK(mb_engine_new_demo(&engine));
    CHECK(mb_create_holder(engine, t, &maker));
    CHECK(mb_create_holder(engine, t, &taker));
    CHECK(mb_deposit(engine, t, maker, "BTC", "1"));
    CHECK(mb_deposit(engine, t, maker, "EUR", "100000"));
    CHECK(mb_deposit(engine, t, taker, "EUR", "100000"));

    /* BTC_EUR: prices in cents (2 decimals), amounts in 1e-5 BTC. */
    mb_order_ref bid, ask, lift;
    CHECK(mb_place_limit(engine, t, maker, "BTC_EUR", MB_SIDE_BUY, 5990000, 10000,
                         MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, &bid));
    CHECK(mb_place_limit(engine, t, maker, "BTC_EUR", MB_SIDE_SELL, 6010000, 10000,
                         MB_TIME_IN_FORCE_POST_ONLY, &ask));
    CHECK(mb_place_limit(engine, t + 1, taker, "BTC_EUR", MB_SIDE_BUY, 6010000, 4000,
                         MB_TIME_IN_FORCE_IMMEDIATE_OR_CANCELLED, &lift));

    /* A too-small buffer is refused with the count needed. */
    size_t needed = 0;
    mb_event one[1];
    mb_status small = mb_poll_events(engine, one, 1, &needed);
    printf("poll into 1 slot: %s, need %zu\n", mb_status_str(small), needed);

    mb_event *events = calloc(needed, sizeof *events);
    size_t got = 0;
    CHECK(mb_poll_events(engine, events, needed, &got));
    for (size_t i = 0; i < got; i++) {
        if (events[i].kind == MB_EVENT_KIND_TRADE) {
            printf("trade %" PRIu64 ": %" PRId64 " lots at %" PRId64 " ticks, taker fee %" PRId64
                   ", maker fee %" PRId64 "\n",
                   events[i].trade, events[i].amount, events[i].price, events[i].fee,
                   events[i].maker_fee);
        }
    }
    free(events);

    CHECK(mb_cancel(engine, t + 2, maker, bid));
    mb_status again = mb_cancel(engine, t + 2, maker, bid);
    printf("cancel twice: %s\n", mb_status_str(again));

    int64_t available = 0, locked = 0;
    uint8_t scale = 0;
    CHECK(mb_balance(engine, taker, "BTC", &available, &locked, &scale));
    printf("taker BTC available %" PRId64 " locked %" PRId64 " scale %u\n", available, locked,
           (unsigned)scale);
    CHECK(mb_balance(engine, maker, "EUR", &available, &locked, &scale));
    printf("maker EUR available %" PRId64 " locked %" PRId64 " scale %u\n", available, locked,
           (unsigned)scale);

    mb_status bad = mb_deposit(engine, t, maker, "XYZ", "1");
    printf("unknown currency: %s\n", mb_status_str(bad));
    mb_engine_free(engine);
    mb_engine_free(NULL);
    return 0;
}
