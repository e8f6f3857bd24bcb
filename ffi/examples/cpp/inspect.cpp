// What a trading system looks up instead of parsing events: after a few orders through a
// thread-safe runtime, it lists the accounts, describes the instruments, reads the open
// orders, walks the order history page by page with each order's trades, and reads the
// fees the exchange collected. Every figure printed comes from a query.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "matchbook.h"

namespace {

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

// A list query: asks for the length, then reads that many (both in one helper).
template <typename T, typename Query>
std::vector<T> read_all(Query query, const char *what) {
    size_t len = 0;
    mb_status sized = query(static_cast<T *>(nullptr), 0, &len);
    if (sized != MB_STATUS_OK && sized != MB_STATUS_BUFFER_TOO_SMALL) check(sized, what);
    std::vector<T> items(len);
    check(query(items.data(), items.size(), &len), what);
    items.resize(len);
    return items;
}

std::string decimal(const mb_refdata *ref, uint32_t unit, uint16_t index, int64_t value) {
    size_t len = 0;
    mb_refdata_format(ref, unit, index, value, nullptr, 0, &len);
    std::string text(len, '\0');
    check(mb_refdata_format(ref, unit, index, value, text.data(), text.size(), &len), "format");
    text.resize(len - 1);
    return text;
}

const char *status_name(uint32_t status) {
    static const char *names[] = {"OPEN", "FILLED_FULLY", "FILLED_CLOSED", "CANCELLED",
                                  "FILLED_REJECTED"};
    return status < 5 ? names[status] : "?";
}

const char *kExchange =
    "[[holders]]\nname = \"maker\"\n"
    "[[holders.accounts]]\nname = \"main\"\ndeposits = { BTC = \"1\", EUR = \"100000\" }\n"
    "[[holders.accounts]]\nname = \"hedge\"\nkind = \"blp\"\n"
    "[[holders]]\nname = \"taker\"\n"
    "[[holders.accounts]]\nname = \"main\"\ndeposits = { EUR = \"100000\" }\n";

}  // namespace

int main() {
    try {
        mb_config *config = nullptr;
        check(mb_config_parse(kExchange, 0, &config), "parse");
        mb_runtime_options options = {0, 1, INT64_C(1767225600000000000), 0};
        mb_runtime *raw_runtime = nullptr;
        mb_status built = mb_runtime_new(config, &options, &raw_runtime);
        mb_config_free(config);
        check(built, "runtime");
        std::unique_ptr<mb_runtime, RuntimeFree> runtime(raw_runtime);
        mb_session *raw_session = nullptr;
        check(mb_session_new(runtime.get(), 0, &raw_session), "session");
        std::unique_ptr<mb_session, SessionFree> session(raw_session);
        mb_session *s = session.get();
        const mb_refdata *ref = mb_runtime_refdata(runtime.get());

        uint32_t holder = 0, maker = 0, taker = 0;
        uint16_t btc_eur = 0;
        check(mb_refdata_account(ref, "maker", "main", &holder, &maker), "maker");
        check(mb_refdata_account(ref, "taker", "main", &holder, &taker), "taker");
        check(mb_refdata_instrument(ref, "BTC_EUR", &btc_eur), "BTC_EUR");
        // Three asks of 0.01 BTC; the taker buys 0.015 (one fill and a half) and cancels
        // one of its own bids.
        for (int64_t price : {6010000, 6020000, 6030000}) {
            mb_command c = mb_cmd_place_limit(maker, btc_eur, MB_SIDE_SELL, price, 1000,
                                              MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
            check(mb_session_submit(s, &c, nullptr), "ask");
        }
        mb_command lift = mb_cmd_place_limit(taker, btc_eur, MB_SIDE_BUY, 6020000, 1500,
                                             MB_TIME_IN_FORCE_IMMEDIATE_OR_CANCELLED);
        check(mb_session_submit(s, &lift, nullptr), "lift");
        mb_command bid = mb_cmd_place_limit(taker, btc_eur, MB_SIDE_BUY, 5900000, 1000,
                                            MB_TIME_IN_FORCE_GOOD_TILL_CANCELLED);
        mb_result placed;
        check(mb_session_submit(s, &bid, &placed), "bid");
        mb_command cancel = mb_cmd_cancel(taker, placed.order);
        check(mb_session_submit(s, &cancel, nullptr), "cancel");

        auto accounts = read_all<mb_account_info>(
            [&](mb_account_info *b, size_t c, size_t *l) { return mb_session_accounts(s, b, c, l); },
            "accounts");
        for (const auto &a : accounts) {
            std::printf("account %u holder %u %s kind %u\n", a.account, a.holder, a.name, a.kind);
        }

        mb_instrument_info info;
        int futures = 0;
        uint16_t count = 0;
        while (mb_session_instrument_info(s, count, &info) == MB_STATUS_OK) {
            futures += info.is_future;
            count++;
        }
        check(mb_session_instrument_info(s, btc_eur, &info), "instrument");
        std::printf("instruments %u (%d futures); %s %s min price %s\n", count, futures,
                    info.code, info.kind, decimal(ref, MB_UNIT_PRICE, btc_eur, info.min_price).c_str());

        auto open = read_all<mb_order>(
            [&](mb_order *b, size_t c, size_t *l) { return mb_session_open_orders(s, maker, b, c, l); },
            "open orders");
        std::printf("maker open orders %zu\n", open.size());

        // The taker's history, one order a page.
        uint64_t before = 0;
        int page = 0;
        do {
            mb_order_record records[1];
            size_t len = 0;
            uint64_t next = 0;
            check(mb_session_order_history(s, taker, before, records, 1, &len, &next), "history");
            page++;
            for (size_t i = 0; i < len; i++) {
                const mb_order_record &r = records[i];
                auto trades = read_all<mb_trade>(
                    [&](mb_trade *b, size_t c, size_t *l) {
                        return mb_session_order_trades(s, taker, r.order.id, b, c, l);
                    },
                    "trades");
                std::printf("page %d: order %" PRIu64 " %s filled %s of %s in %zu trades\n", page,
                            r.order.id, status_name(r.status),
                            decimal(ref, MB_UNIT_AMOUNT, btc_eur, r.filled).c_str(),
                            decimal(ref, MB_UNIT_AMOUNT, btc_eur, r.amount).c_str(), trades.size());
            }
            before = next;
        } while (before != 0);

        auto fees = read_all<int64_t>(
            [&](int64_t *b, size_t c, size_t *l) { return mb_session_fees_collected(s, b, c, l); },
            "fees");
        uint16_t btc = 0, eur = 0;
        uint8_t scale = 0;
        check(mb_refdata_currency(ref, "BTC", &btc, &scale), "BTC");
        check(mb_refdata_currency(ref, "EUR", &eur, &scale), "EUR");
        std::printf("fees collected BTC %s EUR %s\n", decimal(ref, MB_UNIT_FUNDS, btc, fees[btc]).c_str(),
                    decimal(ref, MB_UNIT_FUNDS, eur, fees[eur]).c_str());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
