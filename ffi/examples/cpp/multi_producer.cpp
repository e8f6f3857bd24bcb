// Four producer threads share one thread-safe engine (mb_runtime), each through its own
// mb_session: no lock anywhere on the caller's side. Each buyer quotes 200 bids at prices
// of its own and cancels every second one; then a seller sweeps the book with one market
// order and the main thread checks what everyone got.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "matchbook.h"

namespace {

// Turns a failed status into an exception carrying the library's message.
void check(mb_status status, const char *what) {
    if (status != MB_STATUS_OK) {
        char message[256] = {0};
        size_t len = 0;
        mb_last_error(message, sizeof message, &len);
        throw std::runtime_error(std::string(what) + ": " + mb_status_str(status) + " (" +
                                 message + ")");
    }
}

struct RuntimeFree {
    void operator()(mb_runtime *r) const { mb_runtime_free(r); }
};
struct SessionFree {
    void operator()(mb_session *s) const { mb_session_free(s); }
};
using Runtime = std::unique_ptr<mb_runtime, RuntimeFree>;
using Session = std::unique_ptr<mb_session, SessionFree>;

Session open_session(mb_runtime *runtime, bool keep_events) {
    mb_session *raw = nullptr;
    check(mb_session_new(runtime, keep_events ? 1 : 0, &raw), "mb_session_new");
    return Session(raw);
}

constexpr int kProducers = 4;
constexpr int kOrdersEach = 200;
constexpr int64_t kLots = 100;  // 0.00100 BTC

std::string exchange() {
    std::string toml;
    for (int i = 0; i < kProducers; i++) {
        toml += "[[holders]]\nname = \"buyer" + std::to_string(i) +
                "\"\n[[holders.accounts]]\nname = \"main\"\ndeposits = { EUR = \"1000000\" }\n";
    }
    toml += "[[holders]]\nname = \"seller\"\n[[holders.accounts]]\nname = \"main\"\n"
            "deposits = { BTC = \"100\" }\n";
    return toml;
}

struct Tally {
    int placed = 0;
    int cancelled = 0;
};

// One producer: bids at prices no other producer uses, every second one cancelled.
Tally produce(mb_runtime *runtime, uint32_t account, uint16_t market, int index) {
    Session session = open_session(runtime, false);
    Tally tally;
    for (int i = 0; i < kOrdersEach; i++) {
        const int64_t price = 5000000 + index * kOrdersEach + i;  // 50000.00 + cents
        mb_command place = mb_cmd_place_limit(account, market, MB_SIDE_BUY, price, kLots,
                                              MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
        mb_result placed{};
        check(mb_session_submit(session.get(), &place, &placed), "place");
        tally.placed++;
        if (i % 2 == 1) {
            mb_command cancel = mb_cmd_cancel(account, placed.order);
            check(mb_session_submit(session.get(), &cancel, nullptr), "cancel");
            tally.cancelled++;
        }
    }
    return tally;
}

}  // namespace

int main() {
    try {
        mb_config *config = nullptr;
        check(mb_config_parse(exchange().c_str(), 0, &config), "mb_config_parse");
        mb_runtime *raw = nullptr;
        const mb_status started = mb_runtime_new(config, nullptr, &raw);
        mb_config_free(config);
        check(started, "mb_runtime_new");
        Runtime runtime(raw);
        const mb_refdata *ref = mb_runtime_refdata(runtime.get());

        uint16_t market = 0, btc = 0;
        uint8_t scale = 0;
        check(mb_refdata_instrument(ref, "BTC_EUR", &market), "instrument");
        check(mb_refdata_currency(ref, "BTC", &btc, &scale), "currency");
        std::vector<uint32_t> buyers(kProducers);
        uint32_t holder = 0, seller = 0;
        for (int i = 0; i < kProducers; i++) {
            const std::string name = "buyer" + std::to_string(i);
            check(mb_refdata_account(ref, name.c_str(), "main", &holder, &buyers[i]), "account");
        }
        check(mb_refdata_account(ref, "seller", "main", &holder, &seller), "account");

        std::vector<Tally> tallies(kProducers);
        std::vector<std::thread> producers;
        for (int i = 0; i < kProducers; i++) {
            producers.emplace_back([&, i] {
                try {
                    tallies[i] = produce(runtime.get(), buyers[i], market, i);
                } catch (const std::exception &e) {
                    std::fprintf(stderr, "producer %d: %s\n", i, e.what());
                }
            });
        }
        for (auto &t : producers) t.join();
        for (int i = 0; i < kProducers; i++) {
            std::printf("producer %d: placed %d, cancelled %d\n", i, tallies[i].placed,
                        tallies[i].cancelled);
        }

        Session main = open_session(runtime.get(), true);
        size_t open = 0;
        for (uint32_t buyer : buyers) {
            size_t n = 0;
            mb_status s = mb_session_open_orders(main.get(), buyer, nullptr, 0, &n);
            if (s != MB_STATUS_OK && s != MB_STATUS_BUFFER_TOO_SMALL) check(s, "open orders");
            open += n;
        }
        std::vector<mb_level> bids(1024), asks(1);
        size_t nbids = 0, nasks = 0;
        check(mb_session_book_levels(main.get(), market, bids.size(), bids.data(), bids.size(),
                                     &nbids, asks.data(), asks.size(), &nasks),
              "book");
        std::printf("open bids %zu on %zu levels, best ", open, nbids);
        char text[32];
        size_t len = 0;
        check(mb_refdata_format(ref, MB_UNIT_PRICE, market, bids[0].price, text, sizeof text, &len),
              "format");
        std::printf("%s\n", text);

        const int64_t total = static_cast<int64_t>(open) * kLots;
        mb_command sweep = mb_cmd_place_market(seller, market, MB_SIDE_SELL, total, 0);
        check(mb_session_submit(main.get(), &sweep, nullptr), "sweep");
        std::vector<mb_event> events(4096);
        size_t got = 0;
        check(mb_session_poll_events(main.get(), events.data(), events.size(), &got), "poll");
        size_t trades = 0;
        for (size_t i = 0; i < got; i++) trades += events[i].kind == MB_EVENT_KIND_TRADE;
        std::printf("sold in %zu trades\n", trades);

        for (int i = 0; i < kProducers; i++) {
            std::vector<mb_balance> balances(16);
            size_t n = 0;
            check(mb_session_balances(main.get(), buyers[i], balances.data(), balances.size(), &n),
                  "balances");
            check(mb_refdata_format(ref, MB_UNIT_FUNDS, btc, balances[btc].available, text,
                                    sizeof text, &len),
                  "format");
            std::printf("buyer %d BTC %s\n", i, text);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
