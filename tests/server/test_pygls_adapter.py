"""pygls internals are used in server/pygls_adapter.py only, checked on one pygls version; the
server's features are found by type, never through attributes one feature sets on the server."""
from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path

from tritonify.server import pygls_adapter

SERVER = Path(__file__).resolve().parents[2] / "server"
PRIVATE = {"_send_response", "_request_futures", "_shutdown", "_client_info", "_stop_event"}


def test_the_installed_pygls_is_the_one_the_adapter_was_checked_on():
    assert importlib.metadata.version("pygls") == pygls_adapter.PYGLS_CHECKED, (
        "pygls changed: check each function of server/pygls_adapter.py against it, then update PYGLS_CHECKED")


def test_the_private_attributes_the_adapter_uses_exist():
    from tritonify.server.app import create_server

    server = create_server()
    protocol = server.protocol
    assert callable(protocol._send_response) and isinstance(protocol._request_futures, dict)
    assert pygls_adapter.shutdown_received(protocol) is False
    assert pygls_adapter.current_request_future(protocol) is None
    assert pygls_adapter.take_request_future(protocol, 12345) is None
    pygls_adapter.set_client_info(protocol, None)
    assert hasattr(protocol, "_client_info")


def test_no_other_server_module_touches_pygls_internals():
    found = []
    for path in sorted(SERVER.glob("*.py")):
        if path.name == "pygls_adapter.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in PRIVATE:
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert not found, found


def test_features_are_registered_and_found_by_type():
    from tritonify.server.app import create_server
    from tritonify.server.diagnostics_feature import DiagnosticsFeature
    from tritonify.server.inspect_feature import InspectFeature
    from tritonify.server.jobs_feature import JobsFeature

    server = create_server()
    for kind in (DiagnosticsFeature, InspectFeature, JobsFeature):
        assert isinstance(server.get_feature(kind), kind)
    assert server.get_feature(int) is None


def test_no_feature_sets_attributes_on_the_server():
    """`server.x = ...` outside app.py (the server's own class) and the pygls adapter is one feature
    leaving something for another."""
    found = []
    for path in sorted(SERVER.glob("*.py")):
        if path.name in ("app.py", "pygls_adapter.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "server":
                    found.append(f"{path.name}:{node.lineno}: server.{t.attr}")
    assert not found, found
