/* Call-overhead and producer-throughput benchmark of the C ABI (run by
 * benches/ffi-bench.sh, which builds it against the release static library).
 *
 *   ffi_bench engine N [drop]
 *                          N place+cancel pairs on the single-threaded handle, events
 *                          polled (or dropped) every 64 commands; prints the median ns per
 *                          call of 5 runs: mb_command calls, the fast path, and 32
 *                          places then their 32 cancels by mb_command calls and by
 *                          mb_engine_submit_batch (per command)
 *   ffi_bench checks N     N fast-path pairs split between an engine with the thread checks
 *                          on and one with them off, in alternating blocks of 1,000 pairs;
 *                          prints both medians and the median per-block difference
 *   ffi_bench runtime T N  T producer threads, one mb_session each, N pairs in all; prints
 *                          commands per second (median of 3 runs)
 *
 * The same engine workload runs directly in Rust in `matchbook-ffi-direct`. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matchbook.h"

#define START INT64_C(1767225600000000000)

static const char *EXCHANGE =
    "[[holders]]\nname = \"mm\"\n[[holders.accounts]]\nname = \"main\"\n"
    "deposits = { EUR = \"100000000\" }\n";

static void die(mb_status s, const char *what) {
    char message[256] = {0};
    size_t len = 0;
    mb_last_error(message, sizeof message, &len);
    fprintf(stderr, "%s: %s (%s)\n", what, mb_status_str(s), message);
    exit(1);
}

#define CHECK(call)                          \
    do {                                     \
        mb_status s_ = (call);               \
        if (s_ != MB_STATUS_OK) die(s_, #call); \
    } while (0)

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether engines refuse a second thread's call (mb_config_set_thread_checks). */
static int thread_checks = 1;

static mb_config *definition(void) {
    mb_config *config = NULL;
    CHECK(mb_config_parse(EXCHANGE, 0, &config));
    CHECK(mb_config_set_start_time(config, START));
    CHECK(mb_config_set_thread_checks(config, (uint8_t)thread_checks));
    return config;
}

/* A fresh engine of the definition, its provisioning events dropped; writes the market
 * maker's account and the BTC_EUR instrument. */
static mb_engine *fresh_engine(uint32_t *account, uint16_t *market) {
    mb_config *config = definition();
    mb_engine *engine = NULL;
    CHECK(mb_engine_new(config, &engine));
    mb_config_free(config);
    const mb_refdata *ref = mb_engine_refdata(engine);
    uint32_t holder = 0;
    CHECK(mb_refdata_account(ref, "mm", "main", &holder, account));
    CHECK(mb_refdata_instrument(ref, "BTC_EUR", market));
    CHECK(mb_engine_clear_events(engine));
    return engine;
}

/* One timed run on a fresh engine: ns per call. `fast` uses mb_engine_place_limit and
 * mb_engine_cancel instead of building mb_command structs. */
static double engine_run(long pairs, int poll, int fast) {
    uint32_t account = 0;
    uint16_t market = 0;
    mb_engine *engine = fresh_engine(&account, &market);
    static mb_event events[1024];
    size_t got = 0;
    uint64_t checksum = 0;
    const double start = now_ns();
    for (long i = 0; i < pairs; i++) {
        if (fast) {
            mb_order_ref order;
            CHECK(mb_engine_place_limit(engine, START + i, account, market, MB_SIDE_BUY,
                                        5000000 + (i & 63), 100, MB_TIME_IN_FORCE_POST_ONLY,
                                        &order));
            CHECK(mb_engine_cancel(engine, START + i, account, order));
        } else {
            mb_command place = mb_cmd_place_limit(account, market, MB_SIDE_BUY,
                                                   5000000 + (i & 63), 100,
                                                   MB_TIME_IN_FORCE_POST_ONLY);
            mb_result placed;
            CHECK(mb_engine_submit(engine, START + i, &place, &placed));
            mb_command cancel = mb_cmd_cancel(account, placed.order);
            CHECK(mb_engine_submit(engine, START + i, &cancel, NULL));
        }
        if ((i & 31) == 31) {
            if (poll) {
                CHECK(mb_engine_poll_events(engine, events, 1024, &got));
                for (size_t e = 0; e < got; e++) checksum += events[e].seq;
            } else {
                CHECK(mb_engine_clear_events(engine));
                checksum += 1;
            }
        }
    }
    const double elapsed = now_ns() - start;
    mb_engine_free(engine);
    if (checksum == 0) fprintf(stderr, "no events\n");
    return elapsed / (double)(pairs * 2);
}

/* Submits commands[0..32) at times[0..32): in one mb_engine_submit_batch call, or in
 * 32 mb_engine_submit calls; every status must be OK. */
static void submit32(mb_engine *engine, int batched, const int64_t *times,
                     const mb_command *commands, mb_result *results) {
    if (batched) {
        mb_status statuses[32];
        size_t done = 0;
        CHECK(mb_engine_submit_batch(engine, times, commands, 32, results, statuses, &done));
        for (int k = 0; k < 32; k++)
            if (statuses[k] != MB_STATUS_OK) die(statuses[k], "batched command");
    } else {
        for (int k = 0; k < 32; k++)
            CHECK(mb_engine_submit(engine, times[k], &commands[k], &results[k]));
    }
}

/* 32 places, then their 32 cancels (so up to 32 orders rest at once, against one in
 * engine_run), through mb_engine_submit_batch or one mb_engine_submit per command. */
static double batch_run(long pairs, int poll, int batched) {
    uint32_t account = 0;
    uint16_t market = 0;
    mb_engine *engine = fresh_engine(&account, &market);
    static mb_event events[1024];
    mb_command commands[32];
    mb_result results[32];
    int64_t times[32];
    size_t got = 0;
    uint64_t checksum = 0;
    const double start = now_ns();
    for (long i = 0; i + 32 <= pairs; i += 32) {
        for (int k = 0; k < 32; k++) {
            times[k] = START + i; /* the cancels below reuse it */
            commands[k] = mb_cmd_place_limit(account, market, MB_SIDE_BUY,
                                             5000000 + ((i + k) & 63), 100,
                                             MB_TIME_IN_FORCE_POST_ONLY);
        }
        submit32(engine, batched, times, commands, results);
        for (int k = 0; k < 32; k++) commands[k] = mb_cmd_cancel(account, results[k].order);
        submit32(engine, batched, times, commands, results);
        if (poll) {
            CHECK(mb_engine_poll_events(engine, events, 1024, &got));
            for (size_t e = 0; e < got; e++) checksum += events[e].seq;
        } else {
            CHECK(mb_engine_clear_events(engine));
            checksum += 1;
        }
    }
    const double elapsed = now_ns() - start;
    mb_engine_free(engine);
    if (checksum == 0) fprintf(stderr, "no events\n");
    return elapsed / (double)(pairs / 32 * 32 * 2);
}

/* Pairs per block of checks_run: long enough for the clock, short enough that the two
 * engines see the same spells of a noisy host. */
#define CHECK_BLOCK 1000

/* Fast-path place+cancel pairs [from, from + CHECK_BLOCK) on `engine`: ns per call. */
static double fast_block(mb_engine *engine, uint32_t account, uint16_t market, long from) {
    const double start = now_ns();
    for (long i = from; i < from + CHECK_BLOCK; i++) {
        mb_order_ref order;
        CHECK(mb_engine_place_limit(engine, START + i, account, market, MB_SIDE_BUY,
                                    5000000 + (i & 63), 100, MB_TIME_IN_FORCE_POST_ONLY,
                                    &order));
        CHECK(mb_engine_cancel(engine, START + i, account, order));
        if ((i & 31) == 31) CHECK(mb_engine_clear_events(engine));
    }
    return (now_ns() - start) / (2.0 * CHECK_BLOCK);
}

/* What the thread check costs a fast-path call: an engine with the checks on and one with
 * them off, driven by this thread in alternating blocks (the first of each pair of blocks
 * alternating too); prints both medians and the median of the per-pair differences. */
static void checks_run(long pairs) {
    uint32_t account[2] = {0, 0};
    uint16_t market[2] = {0, 0};
    mb_engine *engine[2];
    for (int on = 0; on < 2; on++) {
        thread_checks = on;
        engine[on] = fresh_engine(&account[on], &market[on]);
    }
    const long blocks = pairs / CHECK_BLOCK;
    if (blocks < 1) {
        fprintf(stderr, "ffi_bench checks: N must be at least %d\n", CHECK_BLOCK);
        exit(2);
    }
    double *ns[2] = {calloc(blocks, sizeof(double)), calloc(blocks, sizeof(double))};
    double *diff = calloc(blocks, sizeof(double));
    if (!ns[0] || !ns[1] || !diff) die(MB_STATUS_INVALID_ARGUMENT, "calloc");
    for (int warm = 0; warm < 2; warm++)
        fast_block(engine[warm], account[warm], market[warm], 0);
    for (long b = 0; b < blocks; b++) {
        for (int k = 0; k < 2; k++) {
            const int on = (int)((b + k) & 1);
            ns[on][b] = fast_block(engine[on], account[on], market[on], (b + 1) * CHECK_BLOCK);
        }
        diff[b] = ns[1][b] - ns[0][b];
    }
    qsort(ns[0], blocks, sizeof(double), compare);
    qsort(ns[1], blocks, sizeof(double), compare);
    qsort(diff, blocks, sizeof(double), compare);
    printf("c-abi thread checks, fast path, %ld blocks of %d pairs: on %.1f ns/call, off %.1f, "
           "on - off median %.1f ns (quartiles %.1f, %.1f)\n",
           blocks, CHECK_BLOCK, ns[1][blocks / 2], ns[0][blocks / 2], diff[blocks / 2],
           diff[blocks / 4], diff[blocks * 3 / 4]);
    for (int on = 0; on < 2; on++) {
        mb_engine_free(engine[on]);
        free(ns[on]);
    }
    free(diff);
}

struct producer {
    mb_runtime *runtime;
    uint32_t account;
    uint16_t market;
    long pairs;
    int index;
};

static void *produce(void *arg) {
    struct producer *p = arg;
    mb_session *session = NULL;
    CHECK(mb_session_new(p->runtime, 0, &session));
    for (long i = 0; i < p->pairs; i++) {
        mb_command place = mb_cmd_place_limit(p->account, p->market, MB_SIDE_BUY,
                                               5000000 + p->index * 64 + (i & 63), 100,
                                               MB_TIME_IN_FORCE_POST_ONLY);
        mb_result placed;
        CHECK(mb_session_submit(session, &place, &placed));
        mb_command cancel = mb_cmd_cancel(p->account, placed.order);
        CHECK(mb_session_submit(session, &cancel, NULL));
    }
    mb_session_free(session);
    return NULL;
}

/* One timed run: commands per second with `threads` producers. */
static double runtime_run(int threads, long pairs) {
    mb_config *config = definition();
    mb_runtime *runtime = NULL;
    mb_runtime_options options = {0, 1, START, 0};
    CHECK(mb_runtime_new(config, &options, &runtime));
    mb_config_free(config);
    const mb_refdata *ref = mb_runtime_refdata(runtime);
    uint32_t holder = 0, account = 0;
    uint16_t market = 0;
    CHECK(mb_refdata_account(ref, "mm", "main", &holder, &account));
    CHECK(mb_refdata_instrument(ref, "BTC_EUR", &market));
    pthread_t ids[16];
    struct producer producers[16];
    const double start = now_ns();
    for (int t = 0; t < threads; t++) {
        producers[t] = (struct producer){runtime, account, market, pairs / threads, t};
        pthread_create(&ids[t], NULL, produce, &producers[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
    const double elapsed = now_ns() - start;
    mb_runtime_free(runtime);
    return (double)(pairs / threads * threads * 2) / (elapsed / 1e9);
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "engine") == 0) {
        long pairs = atol(argv[2]);
        int poll = !(argc >= 4 && strcmp(argv[3], "drop") == 0);
        static const char *paths[5] = {"mb_command", "fast path", "mb_command, 32 then 32",
                                       "mb_engine_submit_batch, 32 then 32",
                                       "fast path, thread checks off"};
        for (int path = 0; path < 5; path++) {
            double runs[5];
            thread_checks = path != 4;
            for (int r = -1; r < 5; r++) { /* run -1: warm-up */
                long n = r < 0 ? pairs / 10 : pairs;
                double ns = path == 2 || path == 3 ? batch_run(n, poll, path == 3)
                                                   : engine_run(n, poll, path == 4 ? 1 : path);
                if (r >= 0) runs[r] = ns;
            }
            qsort(runs, 5, sizeof runs[0], compare);
            printf("c-abi engine %s, events %s: %ld calls, median %.1f ns/call (min %.1f, max "
                   "%.1f)\n",
                   paths[path], poll ? "polled" : "dropped", pairs * 2, runs[2], runs[0],
                   runs[4]);
        }
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "checks") == 0) {
        checks_run(atol(argv[2]));
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "runtime") == 0) {
        int threads = atoi(argv[2]);
        long pairs = atol(argv[3]);
        if (threads < 1 || threads > 16) return 2;
        double runs[3];
        for (int r = 0; r < 3; r++) runs[r] = runtime_run(threads, pairs);
        qsort(runs, 3, sizeof runs[0], compare);
        printf("c-abi runtime: %d producers, median %.0f commands/s (min %.0f, max %.0f)\n",
               threads, runs[1], runs[0], runs[2]);
        return 0;
    }
    fprintf(stderr,
            "usage: ffi_bench engine N | ffi_bench checks N | ffi_bench runtime THREADS N\n");
    return 2;
}
