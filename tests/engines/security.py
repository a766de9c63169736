"""The security set-up of ``tests/engines/run opensearch-2 --secure``: the OpenSearch security
plugin (TLS on HTTP and transport, internal users, roles) in the launcher's node.

* :func:`plugin_jars` unpacks the plugin's zip (``org.opensearch.plugin:opensearch-security``,
  resolved by Maven with the ``security-2`` profile of pom.xml) and gives its jars that the
  engine's classpath does not already hold.
* :func:`make` writes into a directory a CA and a node certificate made with the
  ``openssl`` command (PEM, PKCS#8 key), an expired certificate signed by the same CA (for
  the tests of a server whose certificate expired), and in its ``node/`` what the launcher
  copies into each node's config directory: ``opensearch.yml`` with the plugin's settings,
  its certificate, and ``opensearch-security/``, the plugin's configuration (basic auth
  against the internal users, the roles of docs/engines.md, one user per role), which the
  plugin stores in its index at the first start
  (``plugins.security.allow_default_init_securityindex``).
* :func:`roles_in_docs` reads the OpenSearch roles given in docs/engines.md (each a
  ``PUT _plugins/_security/api/roles/NAME`` request), so the node grants what the docs say.

The passwords are random for each start, kept in ``users.json`` (mode 0600) beside the CA,
and hashed for the plugin by its own hasher (``org.opensearch.security.tools.Hasher``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "engines.md"
PLUGIN_CLASS = "org.opensearch.security.OpenSearchSecurityPlugin"

#: user -> the role of docs/engines.md it is given (admin: the plugin's all_access; ``norole``:
#: a user the cluster knows that has no role at all)
USERS = {
    "admin": "all_access",
    "reader": "neardup_reader",
    "writer": "neardup_writer",
    "init": "neardup_init",
    "attach": "neardup_attach",
    "norole": None,
}


def plugin_jars(zip_path: Path, out: Path, classpath: str) -> list[str]:
    """The plugin's jars, unpacked once from ``zip_path`` into ``out``, less those whose
    artifact the engine's ``classpath`` already has (the engine's version is kept)."""
    stamp = out / ".unpacked"
    if not stamp.exists() or stamp.stat().st_mtime < zip_path.stat().st_mtime:
        shutil.rmtree(out, ignore_errors=True)
        with zipfile.ZipFile(zip_path) as z:
            z.extractall(out)
        stamp.touch()

    def artifact(jar: str) -> str:
        return re.sub(r"-\d[\w.]*\.jar$", "", Path(jar).name)

    have = {artifact(p) for p in classpath.split(os.pathsep) if p.endswith(".jar")}
    return [str(p) for p in sorted(out.glob("*.jar")) if artifact(p.name) not in have]


def roles_in_docs(text: str | None = None) -> dict[str, dict]:
    """The OpenSearch roles docs/engines.md gives, by name: each block
    ``PUT _plugins/_security/api/roles/NAME`` followed by its JSON body.

    >>> roles_in_docs('PUT _plugins/_security/api/roles/r\\n{"cluster_permissions": []\\n}\\n')
    {'r': {'cluster_permissions': []}}
    """
    text = DOCS.read_text() if text is None else text
    found = re.finditer(r"^PUT _plugins/_security/api/roles/(\w+)\n(\{.*?^\})", text, re.M | re.S)
    return {m.group(1): json.loads(m.group(2)) for m in found}


def _openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {r.stderr.strip()}")


def make_certificates(d: Path) -> None:
    """root-ca.pem (+ its key), node.pem / node-key.pem for 127.0.0.1 and localhost (30 days),
    expired.pem / expired-key.pem (the same names, signed by the same CA, expired yesterday),
    and other-ca.pem, a CA that signed none of them."""
    if not shutil.which("openssl"):
        raise RuntimeError(
            "the openssl command is needed to make the certificates (apt-get install openssl)"
        )
    for name, subject in (("root-ca", "/CN=neardup test CA"), ("other-ca", "/CN=another CA")):
        _openssl(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}-key.pem",
            "-out",
            f"{name}.pem",
            "-days",
            "30",
            "-subj",
            subject,
            cwd=d,
        )
    (d / "node.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n"
    )
    for name, days in (("node", "30"), ("expired", "-1")):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}-rsa.pem",
            "-out",
            f"{name}.csr",
            "-subj",
            "/CN=localhost/OU=node/O=neardup",
            cwd=d,
        )
        _openssl(
            "pkcs8",
            "-topk8",
            "-nocrypt",
            "-in",
            f"{name}-rsa.pem",
            "-out",
            f"{name}-key.pem",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "root-ca.pem",
            "-CAkey",
            "root-ca-key.pem",
            "-set_serial",
            str(secrets.randbits(63)),
            "-days",
            days,
            "-extfile",
            "node.ext",
            "-out",
            f"{name}.pem",
            cwd=d,
        )
        (d / f"{name}-rsa.pem").unlink()
        (d / f"{name}.csr").unlink()


NODE_SETTINGS = """\
plugins.security.ssl.transport.pemcert_filepath: node.pem
plugins.security.ssl.transport.pemkey_filepath: node-key.pem
plugins.security.ssl.transport.pemtrustedcas_filepath: root-ca.pem
plugins.security.ssl.transport.enforce_hostname_verification: false
plugins.security.ssl.http.enabled: true
plugins.security.ssl.http.pemcert_filepath: node.pem
plugins.security.ssl.http.pemkey_filepath: node-key.pem
plugins.security.ssl.http.pemtrustedcas_filepath: root-ca.pem
plugins.security.allow_default_init_securityindex: true
plugins.security.nodes_dn: ["CN=localhost,OU=node,O=neardup"]
plugins.security.audit.type: noop
plugins.security.restapi.roles_enabled: ["all_access"]
plugins.security.system_indices.enabled: true
plugins.security.check_snapshot_restore_write_privileges: true
plugins.security.enable_snapshot_restore_privilege: true
"""

AUTH_CONFIG = """\
_meta: {type: config, config_version: 2}
config:
  dynamic:
    http: {anonymous_auth_enabled: false}
    authc:
      basic_internal_auth_domain:
        http_enabled: true
        transport_enabled: true
        order: 0
        http_authenticator: {type: basic, challenge: true}
        authentication_backend: {type: intern}
"""


def _yaml(meta_type: str, body: dict) -> str:
    """A security config file (JSON is YAML): ``_meta`` and the entries."""
    return json.dumps({"_meta": {"type": meta_type, "config_version": 2}, **body}, indent=2) + "\n"


def make(d: Path, java: Path, classpath: str) -> dict[str, str]:
    """Write the certificates into ``d``, what each node's config directory takes into
    ``d/node`` (settings, its certificate, the plugin's configuration); the users'
    passwords (also in ``d/users.json``)."""
    d.mkdir(parents=True, exist_ok=True)
    make_certificates(d)
    node = d / "node"
    node.mkdir(exist_ok=True)
    for name in ("node.pem", "node-key.pem", "root-ca.pem"):
        shutil.copy(d / name, node / name)
    (node / "opensearch.yml").write_text(NODE_SETTINGS)
    passwords = {user: secrets.token_urlsafe(18) for user in USERS}
    users_file = d / "users.json"
    users_file.touch(mode=0o600)
    users_file.write_text(json.dumps(passwords, indent=2) + "\n")
    hashes = _hash(java, classpath, passwords)
    roles = roles_in_docs()
    sec = node / "opensearch-security"
    sec.mkdir(exist_ok=True)
    users = {
        name: {"hash": hashes[name], **({"opendistro_security_roles": [role]} if role else {})}
        for name, role in USERS.items()
    }
    (sec / "internal_users.yml").write_text(_yaml("internalusers", users))
    (sec / "roles.yml").write_text(_yaml("roles", roles))
    (sec / "roles_mapping.yml").write_text(
        _yaml("rolesmapping", {"all_access": {"users": ["admin"]}})
    )
    (sec / "config.yml").write_text(AUTH_CONFIG)
    for kind in ("actiongroups", "tenants", "nodesdn", "allowlist", "audit"):
        body = {"config": {"enabled": False}} if kind == "allowlist" else {}
        if kind == "audit":
            body = {"config": {"enabled": False}}
        name = {"actiongroups": "action_groups", "nodesdn": "nodes_dn"}.get(kind, kind)
        (sec / f"{name}.yml").write_text(_yaml(kind, body))
    return passwords


def _hash(java: Path, classpath: str, passwords: dict[str, str]) -> dict[str, str]:
    """Each password hashed (BCrypt) by the plugin's own tool, the password passed in the
    environment, never on a command line."""
    procs = {
        user: subprocess.Popen(
            [
                str(java),
                "-cp",
                classpath,
                "org.opensearch.security.tools.Hasher",
                "-env",
                "NEARDUP_HASH_ME",
            ],
            env={**os.environ, "NEARDUP_HASH_ME": pw},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for user, pw in passwords.items()
    }
    out = {}
    for user, p in procs.items():
        stdout, stderr = p.communicate(timeout=120)
        lines = [x for x in stdout.splitlines() if x.startswith("$2")]
        if p.returncode != 0 or not lines:
            raise RuntimeError(f"hashing the password of {user} failed: {stderr.strip()[-2000:]}")
        out[user] = lines[-1].strip()
    return out
