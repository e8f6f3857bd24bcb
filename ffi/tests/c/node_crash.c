/* A node killed mid-load keeps every command it acknowledged.
 *
 *   node_crash load DIR ACKS   opens a node on DIR and places resting bids forever; after
 *                              each acknowledged one, appends its order number to ACKS.
 *   node_crash check DIR ACKS  reopens the node and checks that every number in ACKS is an
 *                              open order; prints "acknowledged N, open M".
 *
 * The test (ffi/tests/node.rs) kills the first with SIGKILL once ACKS holds some numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "matchbook.h"

static const char DEFINITION[] =
    "max_open_orders = 1000000\n"
    "[[holders]]\nname = \"alice\"\n"
    "accounts = [{ name = \"main\", deposits = { EUR = \"1000000000\" } }]\n";

static void fail(const char *what, mb_status status) {
    char message[512] = {0};
    size_t len = 0;
    mb_last_error(message, sizeof message, &len);
    fprintf(stderr, "%s: %s (%s)\n", what, mb_status_str(status), message);
    exit(2);
}

static void check(mb_status status, const char *what) {
    if (status != MB_STATUS_OK) fail(what, status);
}

static mb_node *open_node(const char *dir) {
    mb_config *config = NULL;
    check(mb_config_parse(DEFINITION, 0, &config), "mb_config_parse");
    mb_node *node = NULL;
    mb_node_options options = mb_node_options_default();
    options.store.snapshot_every = 500; /* snapshots written while the load runs */
    mb_status opened = mb_node_open(config, dir, &options, &node);
    mb_config_free(config);
    check(opened, "mb_node_open");
    return node;
}

static void alice_and_market(const mb_runtime *runtime, uint32_t *alice, uint16_t *market) {
    const mb_refdata *ref = mb_runtime_refdata(runtime);
    uint32_t holder = 0;
    check(mb_refdata_account(ref, "alice", "main", &holder, alice), "account");
    check(mb_refdata_instrument(ref, "BTC_EUR", market), "instrument");
}

static int load(const char *dir, const char *acks_path) {
    mb_node *node = open_node(dir);
    const mb_runtime *runtime = mb_node_runtime(node);
    uint32_t alice = 0;
    uint16_t market = 0;
    alice_and_market(runtime, &alice, &market);
    mb_session *session = NULL;
    check(mb_session_new(runtime, 0, &session), "mb_session_new");
    int acks = open(acks_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (acks < 0) {
        perror("acks");
        return 2;
    }
    for (int64_t i = 0;; i++) {
        /* 50000.00 EUR and up, a cent apart; 0.01000 BTC each. */
        mb_command place = mb_cmd_place_limit(alice, market, MB_SIDE_BUY, 5000000 + i % 100000,
                                              1000, MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
        mb_result placed;
        check(mb_session_submit(session, &place, &placed), "place");
        char line[32];
        int n = snprintf(line, sizeof line, "%" PRIu64 "\n", placed.order.id);
        if (write(acks, line, (size_t)n) != n) {
            perror("write");
            return 2;
        }
    }
}

static int check_reopened(const char *dir, const char *acks_path) {
    mb_node *node = open_node(dir);
    const mb_runtime *runtime = mb_node_runtime(node);
    uint32_t alice = 0;
    uint16_t market = 0;
    alice_and_market(runtime, &alice, &market);
    mb_session *session = NULL;
    check(mb_session_new(runtime, 0, &session), "mb_session_new");
    size_t open_count = 0;
    mb_status s = mb_session_open_orders(session, alice, NULL, 0, &open_count);
    if (s != MB_STATUS_OK && s != MB_STATUS_BUFFER_TOO_SMALL) fail("open orders", s);
    mb_order *orders = calloc(open_count + 1, sizeof *orders);
    check(mb_session_open_orders(session, alice, orders, open_count + 1, &open_count),
          "open orders");
    FILE *acks = fopen(acks_path, "r");
    if (!acks) {
        perror("acks");
        return 2;
    }
    size_t acknowledged = 0, missing = 0;
    uint64_t id = 0;
    while (fscanf(acks, "%" SCNu64, &id) == 1) {
        acknowledged++;
        int found = 0;
        for (size_t i = 0; i < open_count && !found; i++) found = orders[i].order.id == id;
        if (!found) {
            fprintf(stderr, "acknowledged order %" PRIu64 " is not open after the restart\n", id);
            missing++;
        }
    }
    fclose(acks);
    free(orders);
    mb_session_free(session);
    mb_node_free(node);
    printf("acknowledged %zu, open %zu\n", acknowledged, open_count);
    return missing == 0 && acknowledged > 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: node_crash load|check DIR ACKS\n");
        return 2;
    }
    if (strcmp(argv[1], "load") == 0) return load(argv[2], argv[3]);
    if (strcmp(argv[1], "check") == 0) return check_reopened(argv[2], argv[3]);
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
