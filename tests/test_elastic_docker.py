"""The docker compose files (not run here: no Docker engine on CI machines) checked as
YAML: services, images, security on, passwords from the env file, healthchecks, ports on
loopback only, start order by health."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

DOCKER = Path(__file__).resolve().parents[1] / "docker"
_VAR = re.compile(r"\$\{([A-Z_]+)(?::?[-?][^}]*)?\}")


def _load(stack: str) -> tuple[dict, dict[str, str], str]:
    text = (DOCKER / stack / "compose.yaml").read_text()
    env = {}
    for line in (DOCKER / stack / ".env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            k, _, v = line.partition("=")
            env[k.strip()] = v.strip()
    return yaml.safe_load(text), env, text


def _env(service: dict) -> dict[str, str]:
    e = service.get("environment", {})
    return dict(x.split("=", 1) for x in e) if isinstance(e, list) else dict(e)


@pytest.mark.parametrize(
    "stack,engine,ui",
    [("elasticsearch", "elasticsearch", "kibana"), ("opensearch", "opensearch", "dashboards")],
)
def test_compose_structure(stack, engine, ui):
    doc, env, text = _load(stack)
    services = doc["services"]
    assert {engine, ui} <= set(services)
    for name in (engine, ui):
        s = services[name]
        assert s["image"].split(":")[0].split("/")[-1] in {
            "elasticsearch",
            "kibana",
            "opensearch",
            "opensearch-dashboards",
        }
        hc = s["healthcheck"]
        assert hc["test"][0] == "CMD-SHELL" and "curl" in hc["test"][1] and hc["retries"] > 0
        for port in s.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond loopback"
    assert services[ui]["depends_on"][engine]["condition"] == "service_healthy"
    # every variable the file uses is documented in .env.example or has a default
    for var in set(_VAR.findall(text)):
        assert var in env or re.search(r"\$\{" + var + r":-", text), (
            f"{var} is neither in .env.example nor defaulted"
        )
    # $ in healthcheck commands must reach the container's shell, not compose interpolation
    for s in services.values():
        if "healthcheck" in s:
            test = s["healthcheck"]["test"][1]
            assert "${" not in test.replace("$${", "") and "\n" not in test


def test_elasticsearch_security_on_and_kibana_password():
    doc, env, _ = _load("elasticsearch")
    es = _env(doc["services"]["elasticsearch"])
    assert es["xpack.security.enabled"] == "true" and es["discovery.type"] == "single-node"
    assert es["ELASTIC_PASSWORD"].startswith("${ELASTIC_PASSWORD:?")
    kb = _env(doc["services"]["kibana"])
    assert kb["ELASTICSEARCH_USERNAME"] == "kibana_system" and kb[
        "ELASTICSEARCH_PASSWORD"
    ].startswith("${KIBANA_PASSWORD")
    assert (
        doc["services"]["kibana"]["depends_on"]["setup"]["condition"]
        == "service_completed_successfully"
    )
    cmd = doc["services"]["setup"]["command"]
    assert cmd[:2] == ["bash", "-c"] and "_security/user/kibana_system/_password" in cmd[2]
    assert (
        "\n" not in cmd[2].strip()
    )  # one shell line: a folded YAML block would split the curl command
    assert {"ELASTIC_PASSWORD", "KIBANA_PASSWORD"} <= set(env)


def test_opensearch_security_plugin_on_with_admin_password():
    doc, env, _ = _load("opensearch")
    os_ = _env(doc["services"]["opensearch"])
    assert "DISABLE_SECURITY_PLUGIN" not in os_ and "plugins.security.disabled" not in os_
    assert os_["OPENSEARCH_INITIAL_ADMIN_PASSWORD"].startswith(
        "${OPENSEARCH_INITIAL_ADMIN_PASSWORD:?"
    )
    assert "https://localhost:9200" in doc["services"]["opensearch"]["healthcheck"]["test"][1]
    assert _env(doc["services"]["dashboards"])["OPENSEARCH_HOSTS"] == '["https://opensearch:9200"]'
    pw = env["OPENSEARCH_INITIAL_ADMIN_PASSWORD"]
    assert (
        len(pw) >= 8
        and re.search(r"[A-Z]", pw)
        and re.search(r"[a-z]", pw)
        and re.search(r"\d", pw)
        and re.search(r"\W", pw)
    )
