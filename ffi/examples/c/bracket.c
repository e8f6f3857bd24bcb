/* A bracket through the C ABI: a trader buys 0.10 BTC with an immediate-or-cancel entry
 * that only half fills; once the entry is done, its exits appear for what it bought (a
 * take-profit limit and a stop-loss, linked one-cancels-the-other). When the price falls to
 * the stop, the stop-loss fires, the take-profit is cancelled, and the position is sold. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "matchbook.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        mb_status s_ = (call);                                                       \
        if (s_ != MB_STATUS_OK) {                                                    \
            char msg_[256] = {0};                                                    \
            size_t len_ = 0;                                                         \
            mb_last_error(msg_, sizeof msg_, &len_);                                 \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, mb_status_str(s_), msg_); \
            return 1;                                                                \
        }                                                                            \
    } while (0)

static const char *EXCHANGE =
    "[[holders]]\n"
    "name = \"market\"\n"
    "[[holders.accounts]]\n"
    "name = \"main\"\n"
    "deposits = { BTC = \"10\", EUR = \"1000000\" }\n"
    "[[holders]]\n"
    "name = \"trader\"\n"
    "[[holders.accounts]]\n"
    "name = \"main\"\n"
    "deposits = { EUR = \"100000\" }\n";

/* Polls every pending event and prints the ones this example is about. */
static int report(mb_engine *engine, const char *step) {
    size_t needed = 0;
    mb_status s = mb_engine_poll_events(engine, NULL, 0, &needed);
    if (s != MB_STATUS_OK && s != MB_STATUS_BUFFER_TOO_SMALL) return 1;
    mb_event *events = calloc(needed ? needed : 1, sizeof *events);
    size_t got = 0;
    CHECK(mb_engine_poll_events(engine, events, needed, &got));
    for (size_t i = 0; i < got; i++) {
        const mb_event *e = &events[i];
        if (e->kind == MB_EVENT_KIND_ORDERS_LINKED) {
            printf("%s: exits %" PRIu64 " and %" PRIu64 " linked for entry %" PRIu64 "\n", step,
                   e->order, e->maker_order, e->trade);
        } else if (e->kind == MB_EVENT_KIND_TRIGGERED) {
            printf("%s: order %" PRIu64 " fired at %" PRId64 "\n", step, e->order, e->price);
        } else if (e->kind == MB_EVENT_KIND_ORDER_CANCELLED) {
            printf("%s: order %" PRIu64 " cancelled with %" PRId64 " lots left\n", step, e->order,
                   e->amount);
        } else if (e->kind == MB_EVENT_KIND_TRADE) {
            printf("%s: %" PRId64 " lots at %" PRId64 " (taker %" PRIu64 ")\n", step, e->amount,
                   e->price, e->order);
        }
    }
    free(events);
    return 0;
}

int main(void) {
    if (mb_abi_version() != MB_ABI_VERSION) {
        fprintf(stderr, "built against ABI %d, linked with %u\n", MB_ABI_VERSION, mb_abi_version());
        return 1;
    }
    mb_config *config = NULL;
    mb_engine *engine = NULL;
    const int64_t t = INT64_C(1767225600000000000);
    CHECK(mb_config_parse(EXCHANGE, 0, &config));
    CHECK(mb_config_set_start_time(config, t));
    CHECK(mb_engine_new(config, &engine));
    mb_config_free(config);
    const mb_refdata *ref = mb_engine_refdata(engine);
    uint32_t holder = 0, market = 0, trader = 0;
    uint16_t btc_eur = 0;
    CHECK(mb_refdata_account(ref, "market", "main", &holder, &market));
    CHECK(mb_refdata_account(ref, "trader", "main", &holder, &trader));
    CHECK(mb_refdata_instrument(ref, "BTC_EUR", &btc_eur));
    CHECK(mb_engine_clear_events(engine));

    /* 0.05 BTC offered at 60000.00 (prices in cents, amounts in 1e-5 BTC). */
    mb_result r;
    mb_command c = mb_cmd_place_limit(market, btc_eur, MB_SIDE_SELL, 6000000, 5000,
                                      MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
    CHECK(mb_engine_submit(engine, t, &c, &r));
    CHECK(mb_engine_clear_events(engine));

    /* Buy 0.10 immediate-or-cancel at 60000.00; exits: take profit 63000.00, stop 58000.00. */
    mb_result entry;
    c = mb_cmd_place_bracket(trader, btc_eur, MB_SIDE_BUY, 6000000, 10000,
                             MB_TIME_IN_FORCE_IMMEDIATE_OR_CANCELLED, 6300000, 5800000, 0);
    CHECK(mb_engine_submit(engine, t, &c, &entry));
    if (report(engine, "entry")) return 1;

    /* The exits, as the engine holds them: both for the 0.05 BTC bought. */
    mb_order open[4];
    size_t n = 0;
    CHECK(mb_engine_open_orders(engine, trader, open, 4, &n));
    for (size_t i = 0; i < n; i++) {
        const mb_order *o = &open[i];
        printf("exit %" PRIu64 ": type %u, %" PRId64 " lots, price %" PRId64 ", trigger %" PRId64 "\n",
               o->order.id, o->order_type, o->amount, o->price, o->trigger_price);
    }

    /* The price falls to 58000.00: a bid rests there and a trade prints at it. */
    c = mb_cmd_place_limit(market, btc_eur, MB_SIDE_BUY, 5800000, 20000,
                           MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
    CHECK(mb_engine_submit(engine, t, &c, &r));
    c = mb_cmd_place_limit(market, btc_eur, MB_SIDE_SELL, 5800000, 1000,
                           MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
    CHECK(mb_engine_submit(engine, t, &c, &r));
    if (report(engine, "fall")) return 1;
    CHECK(mb_engine_open_orders(engine, trader, open, 4, &n));
    printf("trader open orders: %zu\n", n);
    mb_engine_free(engine);
    return 0;
}
