// A durable node with a dead-man switch: the exchange on a data directory (journal,
// snapshots, recovery), its deadline keeper firing a switch with no other traffic, and the
// state found again after the node is closed and reopened.
//
//   durable_node [DIR]   (default: a fresh directory under the system's temporary one,
//                         removed at the end)
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "matchbook.h"

namespace {

void check(mb_status status, const char *what) {
    if (status != MB_STATUS_OK) {
        char message[512] = {0};
        size_t len = 0;
        mb_last_error(message, sizeof message, &len);
        throw std::runtime_error(std::string(what) + ": " + mb_status_str(status) + " (" +
                                 message + ")");
    }
}

struct NodeFree {
    void operator()(mb_node *n) const { mb_node_free(n); }
};
struct SessionFree {
    void operator()(mb_session *s) const { mb_session_free(s); }
};
using Node = std::unique_ptr<mb_node, NodeFree>;
using Session = std::unique_ptr<mb_session, SessionFree>;

const char kDefinition[] =
    "[[holders]]\nname = \"trader\"\n"
    "accounts = [{ name = \"main\", deposits = { EUR = \"100000\" } }]\n";

Node open_node(const std::string &dir) {
    mb_config *config = nullptr;
    check(mb_config_parse(kDefinition, 0, &config), "mb_config_parse");
    mb_node *raw = nullptr;
    const mb_status opened = mb_node_open(config, dir.c_str(), nullptr, &raw);
    mb_config_free(config);
    check(opened, "mb_node_open");
    return Node(raw);
}

Session open_session(const mb_runtime *runtime) {
    mb_session *raw = nullptr;
    check(mb_session_new(runtime, 0, &raw), "mb_session_new");
    return Session(raw);
}

uint32_t trader_of(const mb_runtime *runtime) {
    uint32_t holder = 0, account = 0;
    check(mb_refdata_account(mb_runtime_refdata(runtime), "trader", "main", &holder, &account),
          "account");
    return account;
}

size_t open_orders(mb_session *session, uint32_t account) {
    size_t n = 0;
    const mb_status s = mb_session_open_orders(session, account, nullptr, 0, &n);
    if (s != MB_STATUS_OK && s != MB_STATUS_BUFFER_TOO_SMALL) check(s, "open orders");
    return n;
}

// Waits (at most `patience`) for the cancel of `order` among the followed events.
bool wait_for_cancel(mb_session *session, uint64_t order, std::chrono::seconds patience) {
    const auto give_up = std::chrono::steady_clock::now() + patience;
    std::vector<mb_event> events(256);
    while (std::chrono::steady_clock::now() < give_up) {
        size_t got = 0;
        check(mb_session_poll_followed(session, events.data(), events.size(), &got), "poll");
        for (size_t i = 0; i < got; i++) {
            if (events[i].kind == MB_EVENT_KIND_ORDER_CANCELLED && events[i].order == order) {
                return true;
            }
        }
        if (got == 0) usleep(10 * 1000);
    }
    return false;
}

void run(const std::string &dir) {
    uint64_t order = 0;
    {
        Node node = open_node(dir);
        const mb_runtime *runtime = mb_node_runtime(node.get());
        const uint32_t trader = trader_of(runtime);
        uint16_t market = 0;
        check(mb_refdata_instrument(mb_runtime_refdata(runtime), "BTC_EUR", &market), "market");
        Session session = open_session(runtime);
        check(mb_session_follow(session.get(), &trader, 1), "follow");
        // A bid at 50000.00 for 0.01000 BTC, resting.
        mb_command bid = mb_cmd_place_limit(trader, market, MB_SIDE_BUY, 5000000, 1000,
                                            MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
        mb_result placed{};
        check(mb_session_submit(session.get(), &bid, &placed), "place");
        order = placed.order.id;
        std::printf("placed order %" PRIu64 "; open orders %zu\n", order,
                    open_orders(session.get(), trader));
        // The trading system stops sending heartbeats: nothing else reaches the node.
        mb_command arm = mb_cmd_set_cancel_all_after(trader, 300ull * 1000 * 1000);
        check(mb_session_submit(session.get(), &arm, nullptr), "arm");
        const auto armed = std::chrono::steady_clock::now();
        if (!wait_for_cancel(session.get(), order, std::chrono::seconds(10))) {
            throw std::runtime_error("the dead-man switch did not fire within 10 s");
        }
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - armed);
        std::printf("dead-man switch fired: order %" PRIu64 " cancelled with no other traffic%s\n",
                    order, waited.count() >= 300 ? " after its 300 ms" : " too early");
        std::printf("open orders %zu\n", open_orders(session.get(), trader));
    }
    // Closed (last snapshot written, directory unlocked) and reopened: the cancel was
    // journalled, the holder provisioned once.
    Node node = open_node(dir);
    const mb_runtime *runtime = mb_node_runtime(node.get());
    Session session = open_session(runtime);
    std::printf("reopened: open orders %zu, trader is account %" PRIu32 "\n",
                open_orders(session.get(), trader_of(runtime)), trader_of(runtime));
}

}  // namespace

int main(int argc, char **argv) {
    namespace fs = std::filesystem;
    const bool temporary = argc < 2;
    const std::string dir =
        temporary ? (fs::temp_directory_path() / ("matchbook-node-" + std::to_string(getpid())))
                        .string()
                  : argv[1];
    int code = 0;
    try {
        run(dir);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        code = 1;
    }
    if (temporary) fs::remove_all(dir);
    return code;
}
