"""Reads the admin listener's /admin/metrics, after the conformance run's traffic, with
Prometheus's own Python parser (prometheus_client): the text must parse, name the families
the exchange documents with their types, and count the answers that traffic was given."""

import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

EXPECTED = {
    "matchbook_commands_acknowledged": "counter",
    "matchbook_commands_in_flight": "gauge",
    "matchbook_matching_command_seconds": "histogram",
    "matchbook_log_commit_seconds": "histogram",
    "matchbook_snapshots_written": "counter",
    "matchbook_snapshot_failures": "counter",
    "matchbook_snapshots_superseded": "counter",
    "matchbook_http_responses": "counter",
    "matchbook_http_request_duration_seconds": "histogram",
    "matchbook_rate_limit_clients_tracked": "gauge",
    "matchbook_rate_limit_overflow": "counter",
}


def main(admin: str, key: str) -> None:
    request = urllib.request.Request(f"{admin}/admin/metrics")
    request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = answer.read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name, kind in EXPECTED.items():
        assert name in families, f"{name} missing: {sorted(families)}"
        assert families[name].type == kind, f"{name}: {families[name].type}, not {kind}"
    answers = {(s.labels["listener"], s.labels["code"]): s.value
               for s in families["matchbook_http_responses"].samples}
    admin_answers = sum(v for (listener, _), v in answers.items() if listener == "admin")
    assert admin_answers > 100, f"the admin run's answers were counted: {answers}"
    assert any(code.startswith("4") for _, code in answers), f"no refusal counted: {answers}"
    print(f"metrics: {len(families)} families, {int(admin_answers)} admin answers counted")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
