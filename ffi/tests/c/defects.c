/* One check per defect the C ABI had, each printing "ok <name>" when it holds and
 * "FAIL <name>: ..." otherwise (the exit status counts the failures): the two-buffer book
 * queries, the string length rule, distinct status names, market data off in a runtime,
 * time going backwards, candles after the engine's time, what a candle's volume means,
 * reads of a durable engine after a failed journal write, and definitions nested as
 * attackers write them. Built and run by
 * ffi/tests/c_examples.rs as C11 with -Wall -Wextra -Werror. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "matchbook.h"

static int failures = 0;

static void report(const char *name, int held, const char *detail) {
    if (held) {
        printf("ok %s\n", name);
    } else {
        printf("FAIL %s: %s\n", name, detail);
        failures++;
    }
}

static const char *EXCHANGE =
    "[[holders]]\n"
    "name = \"maker\"\n"
    "[[holders.accounts]]\n"
    "name = \"main\"\n"
    "deposits = { BTC = \"10\", EUR = \"1000000\" }\n";

static const int64_t T0 = INT64_C(1767225600000000000);
static const int64_t MINUTE = INT64_C(60000000000);

/* Two bids and three asks on BTC_EUR, all of one account. */
static mb_engine *engine_with_book(uint32_t *account, uint16_t *market) {
    mb_config *config = NULL;
    mb_engine *engine = NULL;
    if (mb_config_parse(EXCHANGE, 0, &config) != MB_STATUS_OK) return NULL;
    mb_config_set_start_time(config, T0);
    mb_status built = mb_engine_new(config, &engine);
    mb_config_free(config);
    if (built != MB_STATUS_OK) return NULL;
    const mb_refdata *ref = mb_engine_refdata(engine);
    uint32_t holder = 0;
    mb_refdata_account(ref, "maker", "main", &holder, account);
    mb_refdata_instrument(ref, "BTC_EUR", market);
    const int64_t bids[2] = {5990000, 5980000};
    const int64_t asks[3] = {6010000, 6020000, 6030000};
    for (int i = 0; i < 2; i++) {
        mb_engine_place_limit(engine, T0, *account, *market, MB_SIDE_BUY, bids[i], 1000,
                              MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, NULL);
    }
    for (int i = 0; i < 3; i++) {
        mb_engine_place_limit(engine, T0, *account, *market, MB_SIDE_SELL, asks[i], 1000,
                              MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, NULL);
    }
    return engine;
}

static void two_buffers(mb_engine *engine, uint16_t market) {
    mb_level bids[4], asks[4];
    size_t bids_len = 777, asks_len = 777;
    mb_status s = mb_engine_book_levels(engine, market, 10, NULL, 0, &bids_len, NULL, 0, &asks_len);
    report("levels: sizes asked with NULL buffers report both",
           s == MB_STATUS_BUFFER_TOO_SMALL && bids_len == 2 && asks_len == 3,
           "bids_len or asks_len not written");
    bids[0].price = -1;
    bids_len = asks_len = 777;
    s = mb_engine_book_levels(engine, market, 10, bids, 2, &bids_len, asks, 1, &asks_len);
    report("levels: room for the bids only copies nothing",
           s == MB_STATUS_BUFFER_TOO_SMALL && bids[0].price == -1 && bids_len == 2 && asks_len == 3,
           "the bids were copied although the asks did not fit");
    s = mb_engine_book_levels(engine, market, 10, bids, 4, &bids_len, asks, 4, &asks_len);
    report("levels: room for both copies both",
           s == MB_STATUS_OK && bids_len == 2 && asks_len == 3 && bids[0].price == 5990000 &&
               asks[2].price == 6030000,
           "wrong lists");
    mb_book_order bid_orders[4], ask_orders[4];
    size_t bl = 777, al = 777;
    bid_orders[0].price = -1;
    s = mb_engine_book_orders(engine, market, 10, bid_orders, 4, &bl, ask_orders, 2, &al);
    report("orders: room for the bids only copies nothing",
           s == MB_STATUS_BUFFER_TOO_SMALL && bid_orders[0].price == -1 && bl == 2 && al == 3,
           "the bids were copied although the asks did not fit");
}

static void string_rule(mb_engine *engine, uint16_t market) {
    const mb_refdata *ref = mb_engine_refdata(engine);
    size_t needed = 0;
    mb_status s = mb_refdata_format(ref, MB_UNIT_PRICE, market, 6000050, NULL, 0, &needed);
    char *text = malloc(needed);
    size_t len = 0;
    mb_status fits = text ? mb_refdata_format(ref, MB_UNIT_PRICE, market, 6000050, text, needed, &len)
                          : MB_STATUS_NULL_ARGUMENT;
    report("format: a buffer of the reported size fits",
           s == MB_STATUS_BUFFER_TOO_SMALL && fits == MB_STATUS_OK && len == needed &&
               strcmp(text, "60000.50") == 0 && needed == strlen("60000.50") + 1,
           "the reported size leaves no room for the NUL");
    free(text);
    mb_refdata_instrument(ref, "NOPE", &market); /* leaves a message to read */
    needed = 0;
    s = mb_last_error(NULL, 0, &needed);
    char *message = malloc(needed);
    fits = message ? mb_last_error(message, needed, &len) : MB_STATUS_NULL_ARGUMENT;
    report("last error: a buffer of the reported size fits",
           s == MB_STATUS_BUFFER_TOO_SMALL && fits == MB_STATUS_OK && strlen(message) + 1 == needed,
           "the reported size leaves no room for the NUL");
    free(message);
}

static void distinct_names(void) {
    int distinct = 1;
    for (int a = 0; a < 10000; a++) {
        const char *name_a = mb_status_str(a);
        if (strcmp(name_a, "UNKNOWN") == 0) continue;
        for (int b = a + 1; b < 10000; b++) {
            if (strcmp(name_a, mb_status_str(b)) == 0) {
                printf("  %d and %d are both %s\n", a, b, name_a);
                distinct = 0;
            }
        }
    }
    report("status names: every code its own name", distinct, "two codes share a name");
    report("status names: the enumerator's",
           strcmp(mb_status_str(MB_STATUS_PRICE_OUT_OF_RANGE), "PRICE_OUT_OF_RANGE") == 0 &&
               strcmp(mb_status_str(MB_STATUS_INVALID_PRICE), "INVALID_PRICE") == 0 &&
               strcmp(mb_status_str(MB_STATUS_BUFFER_TOO_SMALL), "BUFFER_TOO_SMALL") == 0,
           mb_status_str(MB_STATUS_PRICE_OUT_OF_RANGE));
    report("status wire code: REST's code, shared where REST shares it",
           strcmp(mb_status_wire_code(MB_STATUS_PRICE_OUT_OF_RANGE), "INVALID_PRICE") == 0 &&
               strcmp(mb_status_wire_code(MB_STATUS_BUFFER_TOO_SMALL), "BUFFER_TOO_SMALL") == 0 &&
               strcmp(mb_status_wire_code(12345), "UNKNOWN") == 0,
           mb_status_wire_code(MB_STATUS_PRICE_OUT_OF_RANGE));
}

static void runtime_without_market_data(void) {
    mb_config *config = NULL;
    mb_runtime *runtime = NULL;
    mb_session *session = NULL;
    mb_config_parse(EXCHANGE, 0, &config);
    mb_config_set_market_data(config, 0);
    mb_runtime_options options = {0, 1, T0, 0};
    mb_status built = mb_runtime_new(config, &options, &runtime);
    mb_config_free(config);
    mb_status opened = built == MB_STATUS_OK ? mb_session_new(runtime, 0, &session) : built;
    mb_ticker ticker;
    mb_status asked = opened == MB_STATUS_OK ? mb_session_ticker(session, 0, &ticker) : opened;
    report("runtime: market data off is honoured", asked == MB_STATUS_MARKET_DATA_OFF,
           mb_status_str(asked));
    mb_session_free(session);
    mb_runtime_free(runtime);
}

static void time_backwards(mb_engine *engine, uint32_t account, uint16_t market) {
    mb_order_ref order;
    mb_status later = mb_engine_place_limit(engine, T0 + 10 * MINUTE, account, market, MB_SIDE_BUY,
                                            5000000, 1000, MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, &order);
    size_t before = 0, after = 0;
    mb_order open[16];
    mb_engine_open_orders(engine, account, open, 16, &before);
    mb_status earlier = mb_engine_place_limit(engine, T0 + 5 * MINUTE, account, market, MB_SIDE_BUY,
                                              5000000, 1000, MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED,
                                              &order);
    mb_engine_open_orders(engine, account, open, 16, &after);
    report("time: an earlier time is refused and changes nothing",
           later == MB_STATUS_OK && earlier == MB_STATUS_INVALID_ARGUMENT && before == after,
           mb_status_str(earlier));
}

/* A trade of 0.01 BTC at 60,100.00 between two holders at T0 + 90 s. */
static void candles(void) {
    static const char *TWO =
        "[[holders]]\nname = \"a\"\n[[holders.accounts]]\nname = \"main\"\n"
        "deposits = { BTC = \"1\" }\n"
        "[[holders]]\nname = \"b\"\n[[holders.accounts]]\nname = \"main\"\n"
        "deposits = { EUR = \"100000\" }\n";
    mb_config *config = NULL;
    mb_engine *engine = NULL;
    mb_config_parse(TWO, 0, &config);
    mb_config_set_start_time(config, T0);
    mb_engine_new(config, &engine);
    mb_config_free(config);
    const mb_refdata *ref = mb_engine_refdata(engine);
    uint32_t holder = 0, seller = 0, buyer = 0;
    uint16_t market = 0;
    mb_refdata_account(ref, "a", "main", &holder, &seller);
    mb_refdata_account(ref, "b", "main", &holder, &buyer);
    mb_refdata_instrument(ref, "BTC_EUR", &market);
    const int64_t t = T0 + 90 * INT64_C(1000000000);
    mb_engine_place_limit(engine, t, seller, market, MB_SIDE_SELL, 6010000, 1000,
                          MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, NULL);
    mb_engine_place_limit(engine, t, buyer, market, MB_SIDE_BUY, 6010000, 1000,
                          MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, NULL);
    mb_candle found[64];
    size_t n = 0;
    mb_status s = mb_engine_candles(engine, market, MB_CANDLE_UNIT_MINUTES, 1, T0, t + 30 * MINUTE,
                                    found, 64, &n);
    int none_ahead = s == MB_STATUS_OK && n > 0;
    for (size_t i = 0; i < n; i++) {
        if (found[i].start_ns > t) none_ahead = 0;
    }
    report("candles: none for minutes after the engine's time", none_ahead,
           "flat candles were made up for the future");
    int64_t lots = 0, quote = 0;
    for (size_t i = 0; i < n; i++) {
        lots += found[i].total_amount;
        quote += found[i].volume;
    }
    report("candles: total_amount in lots, volume in quote at ticks x lots",
           lots == 1000 && quote == INT64_C(6010000) * 1000, "other units");
    mb_engine_free(engine);
}

/* A durable engine whose journal write fails (a file-size limit fails it as a full disk
 * does): the call is MB_STATUS_STORAGE, and so is every read of the handle after it, which
 * used to answer from a memory holding the command the journal does not; the reopened
 * directory has every order acknowledged before. */
static void failed_journal_write(void) {
    char dir[] = "/tmp/mb-defects-XXXXXX";
    mb_config *config = NULL;
    mb_engine *engine = NULL;
    mb_store_options options = mb_store_options_default();
    options.fsync = 0;
    if (mkdtemp(dir) == NULL || mb_config_parse(EXCHANGE, 0, &config) != MB_STATUS_OK) {
        report("durable: setup", 0, "scratch directory or definition");
        return;
    }
    mb_config_set_start_time(config, T0);
    if (mb_engine_open(config, dir, &options, &engine) != MB_STATUS_OK) {
        report("durable: setup", 0, "open");
        return;
    }
    uint32_t holder = 0, account = 0;
    uint16_t market = 0;
    mb_refdata_account(mb_engine_refdata(engine), "maker", "main", &holder, &account);
    mb_refdata_instrument(mb_engine_refdata(engine), "BTC_EUR", &market);
    char journal[64];
    snprintf(journal, sizeof journal, "%s/journal-00000000000000000001.log", dir);
    struct stat written;
    struct rlimit before, small;
    stat(journal, &written);
    getrlimit(RLIMIT_FSIZE, &before);
    small = before;
    small.rlim_cur = (rlim_t)written.st_size + 2000;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    size_t acknowledged = 0;
    mb_status placed = MB_STATUS_OK;
    for (int i = 0; i < 150 && placed == MB_STATUS_OK; i++) {
        placed = mb_engine_place_limit(engine, T0 + i, account, market, MB_SIDE_BUY, 5000000 - i,
                                       1000, MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED, NULL);
        acknowledged += placed == MB_STATUS_OK;
    }
    setrlimit(RLIMIT_FSIZE, &before);
    size_t open = 0, events = 0, kept = 0;
    mb_status read = mb_engine_open_orders(engine, account, NULL, 0, &open);
    mb_status polled = mb_engine_poll_events(engine, NULL, 0, &events);
    report("durable: a failed journal write is MB_STATUS_STORAGE", placed == MB_STATUS_STORAGE,
           mb_status_str(placed));
    report("durable: reads after a failed journal write are refused",
           read == MB_STATUS_STORAGE && polled == MB_STATUS_STORAGE, mb_status_str(read));
    mb_engine_free(engine);
    engine = NULL;
    mb_status reopened = mb_engine_open(config, dir, &options, &engine);
    if (reopened == MB_STATUS_OK) mb_engine_open_orders(engine, account, NULL, 0, &kept);
    report("durable: the reopened directory has every acknowledged order",
           reopened == MB_STATUS_OK && acknowledged > 0 && kept == acknowledged,
           mb_status_str(reopened));
    mb_engine_free(engine);
    mb_config_free(config);
    char remove[96];
    snprintf(remove, sizeof remove, "rm -rf %s", dir);
    if (system(remove) != 0) report("durable: scratch directory removed", 0, dir);
}

/* A definition nested `depth` levels of `open`/`close` around "1", after `head` and before
 * `tail` (a field the bomb sits in); the caller frees it. */
static char *nested(const char *head, const char *open, const char *close, size_t depth,
                    const char *tail) {
    size_t o = strlen(open), c = strlen(close), h = strlen(head);
    char *text = malloc(h + depth * (o + c) + 2 + strlen(tail));
    if (text == NULL) return NULL;
    char *at = text;
    memcpy(at, head, h);
    at += h;
    for (size_t i = 0; i < depth; i++, at += o) memcpy(at, open, o);
    *at++ = '1';
    for (size_t i = 0; i < depth; i++, at += c) memcpy(at, close, c);
    strcpy(at, tail);
    return text;
}

/* Definitions nested 127, 128, 129, 2,000 and 10,000 deep (issue 69), JSON objects and
 * arrays at the top and in a field, TOML arrays and inline tables: each refused with
 * MB_STATUS_INVALID_CONFIG, nothing created; a good definition parses afterwards. */
static void nested_definitions(void) {
    const size_t depths[] = {127, 128, 129, 2000, 10000};
    const char *forms[][5] = {
        /* format, head, open, close, tail */
        {"1", "", "[", "]", ""},
        {"1", "", "{\"a\":", "}", ""},
        {"1", "{\"holders\": [{\"name\": \"x\", \"accounts\": ", "[", "]", "}]}"},
        {"0", "currencies = ", "[", "]", "\n"},
        {"0", "max_open_orders = ", "{a = ", "}", "\n"},
    };
    int refused = 1, json_named = 1;
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            char *text = nested(forms[f][1], forms[f][2], forms[f][3], depths[d], forms[f][4]);
            mb_config *config = NULL;
            uint32_t format = (uint32_t)(forms[f][0][0] - '0');
            mb_status status = mb_config_parse(text, format, &config);
            char why[256] = {0};
            mb_last_error(why, sizeof why, NULL);
            if (status != MB_STATUS_INVALID_CONFIG || config != NULL) {
                printf("  %zu levels, form %zu: status %s\n", depths[d], f, mb_status_str(status));
                refused = 0;
            }
            if (format == 1 && strstr(why, "nested deeper") == NULL) {
                printf("  %zu levels, form %zu: %s\n", depths[d], f, why);
                json_named = 0;
            }
            mb_config_free(config);
            free(text);
        }
    }
    report("nesting: every bomb is MB_STATUS_INVALID_CONFIG", refused, "see above");
    report("nesting: a JSON bomb's error names the bound", json_named, "see above");
    mb_config *good = NULL;
    report("nesting: a definition parses afterwards",
           mb_config_parse(EXCHANGE, 0, &good) == MB_STATUS_OK && good != NULL, "refused");
    mb_config_free(good);
}

int main(void) {
    uint32_t account = 0;
    uint16_t market = 0;
    mb_engine *engine = engine_with_book(&account, &market);
    if (engine == NULL) {
        puts("FAIL setup");
        return 1;
    }
    two_buffers(engine, market);
    string_rule(engine, market);
    distinct_names();
    runtime_without_market_data();
    time_backwards(engine, account, market);
    candles();
    failed_journal_write();
    nested_definitions();
    mb_engine_free(engine);
    printf("%d failures\n", failures);
    return failures;
}
