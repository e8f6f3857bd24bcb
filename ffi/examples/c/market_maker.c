/* A market maker and a taker through the C ABI's single-threaded handle: an exchange
 * defined in TOML (demo markets, two funded holders), quotes on BTC_EUR in fixed point, a
 * taker order in decimal strings, events polled into a caller array, balances, the book,
 * the ticker, a futures trade with the positions it opened, and a requote submitted as one
 * batch. */
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
    "name = \"maker\"\n"
    "[[holders.accounts]]\n"
    "name = \"main\"\n"
    "deposits = { BTC = \"1\", EUR = \"100000\", USD = \"100000\" }\n"
    "[[holders]]\n"
    "name = \"taker\"\n"
    "[[holders.accounts]]\n"
    "name = \"main\"\n"
    "deposits = { EUR = \"100000\", USD = \"100000\" }\n";

/* Prints a fixed-point value as a decimal through the engine's reference data. */
static void print_decimal(const mb_refdata *ref, uint32_t unit, uint16_t index, int64_t v) {
    char text[64];
    size_t len = 0;
    if (mb_refdata_format(ref, unit, index, v, text, sizeof text, &len) == MB_STATUS_OK) {
        fputs(text, stdout);
    }
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

    uint32_t maker_holder = 0, maker = 0, taker_holder = 0, taker = 0;
    uint16_t btc_eur = 0, perp = 0, btc = 0, eur = 0, usd = 0;
    uint8_t scale = 0;
    CHECK(mb_refdata_account(ref, "maker", "main", &maker_holder, &maker));
    CHECK(mb_refdata_account(ref, "taker", "main", &taker_holder, &taker));
    CHECK(mb_refdata_instrument(ref, "BTC_EUR", &btc_eur));
    CHECK(mb_refdata_instrument(ref, "BTC_USD_PERP", &perp));
    CHECK(mb_refdata_currency(ref, "BTC", &btc, &scale));
    CHECK(mb_refdata_currency(ref, "EUR", &eur, &scale));
    CHECK(mb_refdata_currency(ref, "USD", &usd, &scale));
    CHECK(mb_engine_clear_events(engine)); /* provisioning events */

    /* Quotes in fixed point: BTC_EUR prices in cents, amounts in 1e-5 BTC. */
    mb_result bid, ask, lift;
    mb_command c = mb_cmd_place_limit(maker, btc_eur, MB_SIDE_BUY, 5990000, 10000,
                                      MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
    CHECK(mb_engine_submit(engine, t, &c, &bid));
    c = mb_cmd_place_limit(maker, btc_eur, MB_SIDE_SELL, 6010000, 10000,
                           MB_TIME_IN_FORCE_POST_ONLY);
    CHECK(mb_engine_submit(engine, t, &c, &ask));
    /* The taker in decimal strings. */
    CHECK(mb_cmd_place_decimal(ref, taker, "BTC_EUR", MB_SIDE_BUY, MB_ORDER_TYPE_LIMIT,
                               MB_TIME_IN_FORCE_IMMEDIATE_OR_CANCELLED, "60100.00", "0.04", &c));
    CHECK(mb_engine_submit(engine, t + 1, &c, &lift));

    /* A too-small buffer is refused with the count needed. */
    size_t needed = 0;
    mb_event one[1];
    mb_status small = mb_engine_poll_events(engine, one, 1, &needed);
    printf("poll into 1 slot: %s, need %zu\n", mb_status_str(small), needed);
    mb_event *events = calloc(needed, sizeof *events);
    size_t got = 0;
    CHECK(mb_engine_poll_events(engine, events, needed, &got));
    for (size_t i = 0; i < got; i++) {
        if (events[i].kind == MB_EVENT_KIND_TRADE) {
            printf("trade %" PRIu64 ": %" PRId64 " lots at %" PRId64 " ticks, taker fee %" PRId64
                   ", maker fee %" PRId64 "\n",
                   events[i].trade, events[i].amount, events[i].price, events[i].fee,
                   events[i].maker_fee);
        }
    }
    free(events);

    c = mb_cmd_cancel(maker, bid.order);
    CHECK(mb_engine_submit(engine, t + 2, &c, NULL));
    printf("cancel twice: %s\n", mb_status_str(mb_engine_submit(engine, t + 2, &c, NULL)));

    mb_balance balances[16];
    size_t n = 0;
    CHECK(mb_engine_balances(engine, taker, balances, 16, &n));
    printf("taker BTC available ");
    print_decimal(ref, MB_UNIT_FUNDS, btc, balances[btc].available);
    printf(" locked %" PRId64 "\n", balances[btc].locked);
    CHECK(mb_engine_balances(engine, maker, balances, 16, &n));
    printf("maker EUR available ");
    print_decimal(ref, MB_UNIT_FUNDS, eur, balances[eur].available);
    printf(" BTC locked ");
    print_decimal(ref, MB_UNIT_FUNDS, btc, balances[btc].locked);
    printf("\n");

    mb_level bids[4], asks[4];
    size_t nb = 0, na = 0;
    CHECK(mb_engine_book_levels(engine, btc_eur, 4, bids, 4, &nb, asks, 4, &na));
    printf("book: %zu bids, %zu asks; best ask ", nb, na);
    print_decimal(ref, MB_UNIT_PRICE, btc_eur, asks[0].price);
    printf(" x ");
    print_decimal(ref, MB_UNIT_AMOUNT, btc_eur, asks[0].amount);
    printf("\n");
    mb_ticker ticker;
    CHECK(mb_engine_ticker(engine, btc_eur, &ticker));
    printf("ticker last ");
    print_decimal(ref, MB_UNIT_PRICE, btc_eur, ticker.last);
    printf(" trades %" PRIu64 "\n", ticker.trades);

    /* Futures: index 60000.0, the maker sells 0.1 BTC_USD_PERP, the taker buys it. */
    c = mb_cmd_set_index_price(perp, 600000);
    CHECK(mb_engine_submit(engine, t + 3, &c, NULL));
    c = mb_cmd_place_limit(maker, perp, MB_SIDE_SELL, 600000, 1000,
                           MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
    CHECK(mb_engine_submit(engine, t + 3, &c, NULL));
    c = mb_cmd_place_market(taker, perp, MB_SIDE_BUY, 1000, 0);
    CHECK(mb_engine_submit(engine, t + 4, &c, NULL));
    mb_position positions[4];
    CHECK(mb_engine_positions(engine, taker, positions, 4, &n));
    printf("taker positions %zu: size ", n);
    print_decimal(ref, MB_UNIT_AMOUNT, perp, positions[0].size);
    printf(" entry ");
    print_decimal(ref, MB_UNIT_PRICE, perp, positions[0].entry_price);
    printf("\n");
    CHECK(mb_engine_positions(engine, maker, positions, 4, &n));
    printf("maker position size ");
    print_decimal(ref, MB_UNIT_AMOUNT, perp, positions[0].size);
    printf("\n");

    /* A requote in one call: the rest of the ask cancelled, a new bid and ask placed; one
     * status and result per command, as three mb_engine_submit calls would give them. */
    mb_command requote[3] = {
        mb_cmd_cancel(maker, ask.order),
        mb_cmd_place_limit(maker, btc_eur, MB_SIDE_BUY, 5995000, 10000,
                           MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED),
        mb_cmd_place_limit(maker, btc_eur, MB_SIDE_SELL, 6005000, 10000,
                           MB_TIME_IN_FORCE_POST_ONLY),
    };
    const int64_t times[3] = {t + 5, t + 5, t + 5};
    mb_result results[3];
    mb_status statuses[3];
    size_t submitted = 0;
    CHECK(mb_engine_submit_batch(engine, times, requote, 3, results, statuses, &submitted));
    printf("requote: %zu submitted: %s %s %s\n", submitted, mb_status_str(statuses[0]),
           mb_status_str(statuses[1]), mb_status_str(statuses[2]));
    CHECK(mb_engine_book_levels(engine, btc_eur, 4, bids, 4, &nb, asks, 4, &na));
    printf("requoted book: %zu bids, %zu asks; best bid ", nb, na);
    print_decimal(ref, MB_UNIT_PRICE, btc_eur, bids[0].price);
    printf("\n");

    uint16_t none = 0;
    printf("unknown currency: %s\n", mb_status_str(mb_refdata_currency(ref, "XYZ", &none, &scale)));
    mb_engine_free(engine);
    mb_engine_free(NULL);
    return 0;
}
