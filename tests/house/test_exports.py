"""Every package's face (its ``__init__``) declares ``__all__``: the names its users import, pinned
here as literal lists (as httpx pins its exports), each importable. A face loads nothing of its
package: it exports names lazily (PEP 562, each loaded from its module on first use) or lists the
modules meant for users, so importing one module of a package loads only what that module needs.
A lazy face tells type checkers (under TYPE_CHECKING) exactly the names it exports."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys

import pytest

from tests.helpers import ROOT

EXPORTS: dict[str, list[str]] = {
    "edge": ["__version__"],
    "edge.agent": ["Agent", "AgentSettings", "COMMAND_MENU", "Cancel", "ChannelAccess", "Dispatcher",
                   "Hook", "HookRunner", "Preflight", "ResetPolicy", "SessionStore"],
    "edge.automation": ["ActionFailed", "Automation", "Clock", "ManualClock", "RuleEngine",
                        "SystemClock", "build_sensor_hub"],
    "edge.backup": ["archive", "contents", "restore", "scheduled", "sealing"],
    "edge.cameras": ["base", "registry", "rpicam", "service", "v4l2"],
    "edge.charts": ["Chart", "OutputTrack", "SensorCharts", "chart_png", "draw_chart", "plotting_missing"],
    "edge.channels": ["ApprovalAnswers", "CHANNELS", "Channel", "ChannelCapabilityMissing",
                      "ChannelContext", "ChannelMessage", "ChannelSpec", "CliChannel", "ListenerStalled",
                      "ListenerSupervisor", "MqttChatChannel", "Outbox", "PairingCodes", "SendMessage",
                      "ServiceCheck", "SignalChannel", "SignalRPCError", "TelegramAPI",
                      "TelegramChannel", "TelegramError", "TelegramNetworkError", "admin_table",
                      "channel_spec", "enabled_channels", "pairable", "register"],
    "edge.cli": ["main"],
    "edge.config": ["Config", "LoadedConfig", "RawConfig", "load_config", "load_raw"],
    "edge.control": ["client", "ops", "server"],
    "edge.core": ["durations", "exc", "faces", "files", "heap", "httpclient", "localtime", "logformat",
                  "logsetup", "messages", "ownership", "paths", "ratelimit", "redaction", "requester", "sdnotify",
                  "sqlite_files", "sse", "stopsignals", "storage", "supervision", "validation"],
    "edge.hardware": ["Hardware", "Pin", "build_hardware"],
    "edge.docs": ["cli_page", "config_page", "contract_page", "mqtt_page", "pages"],
    "edge.doctor": ["Check", "Status", "agent", "cameras", "config_verdict", "host", "mcp_servers",
                    "memory", "mqtt", "remote", "worst"],
    "edge.fleet": ["board", "link", "node_board", "protocol", "remote", "responder"],
    "edge.mcp": ["client", "client_servers", "remote_tools", "server",
                 "server_approvals", "server_connections", "server_hosts", "server_http", "server_stdio"],
    "edge.memory": ["Category", "EmbeddingError", "EmbeddingProvider", "Memory", "MemoryEntry",
                    "MemoryFailure", "NothingToReindex", "StaleEmbeddings", "autosave_user_message",
                    "build_memory", "database_path", "hygiene_loop", "run_hygiene", "snapshot_path"],
    "edge.ops": ["catalog", "chat", "handlers", "operation", "reference", "result"],
    "edge.mqtt": ["BadPayload", "MqttBridge", "MqttUnavailable", "round_trip"],
    "edge.providers": ["ChatResponse", "ModelInfo", "ModelSwitch", "Provider", "ProviderError",
                       "StreamDone", "StreamEvent", "StreamInterrupted", "TextDelta", "ToolCallReady",
                       "Usage", "collect", "create_provider", "describe_models", "describe_routes",
                       "mentions_context_overflow"],
    "edge.readings": ["READINGS_FILE", "Bucket", "Entry", "ReadingRecorder", "ReadingStore", "Series",
                      "Summary", "parse_moment", "series_csv", "series_text", "span"],
    "edge.scenario": ["files", "pytest_plugin", "report", "runner", "steps", "world"],
    "edge.security": ["Action", "ApprovalGate", "Approver", "Decision", "PinRule", "SecurityPolicy",
                      "SwitchBudget", "is_admin"],
    "edge.web": ["app", "door", "events", "gate", "server"],
    "edge.tools": ["ModelTool", "Tool", "ToolArgs", "ToolResult", "automation_tools",
                   "configured_admins", "hardware_tools", "memory_tools", "spec_of"],
    "peripherals": ["Board", "BoardContext", "BoardError", "BoardEvent", "BoardListener",
                    "BoardOptions", "BoardSpec", "BoardStatus", "BoardSupervisor", "BoardUnavailable",
                    "DeviceNode", "PinInfo", "PinMode", "PinModeError", "PinState", "Pull",
                    "SensorError", "SensorUnavailable", "UnknownPin", "create_board"],
    "peripherals.sensors": ["Reading", "ScaledOptions", "Scaling", "Sensor", "SensorContext",
                            "SensorOptions", "SensorSpec", "create_sensor"],
}


def packages() -> list[str]:
    return sorted(".".join(path.parent.relative_to(ROOT).parts)
                  for top in ("edge", "peripherals") for path in (ROOT / top).rglob("__init__.py"))


def is_module(package: str, name: str) -> bool:
    return importlib.util.find_spec(f"{package}.{name}") is not None


def typing_names(package: str) -> dict[str, str]:
    """Name -> module for what the face imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse((ROOT / package.replace(".", "/") / "__init__.py").read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                found.update({alias.name: statement.module for alias in statement.names})
    return found


LAZY = [p for p in EXPORTS if hasattr(importlib.import_module(p), "_HOMES")]


def test_every_package_has_a_face_pinned_here():
    assert packages() == sorted(EXPORTS)


@pytest.mark.parametrize("package", EXPORTS)
def test_the_face_declares_its_exports(package):
    assert importlib.import_module(package).__all__ == EXPORTS[package]


@pytest.mark.parametrize("package", EXPORTS)
def test_every_exported_name_is_importable(package):
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)
    assert [name for name in EXPORTS[package] if name not in namespace] == []


def test_importing_the_faces_loads_nothing_else_of_the_house():
    probe = (f"import {', '.join(EXPORTS)}, sys\n"
             "print(' '.join(m for m in sys.modules if m.split('.')[0] in ('edge', 'peripherals')))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert sorted(out.stdout.split()) == sorted([*EXPORTS, "edge.core.faces"])  # the faces' helper


@pytest.mark.parametrize("package", LAZY)
def test_a_lazy_face_tells_type_checkers_what_it_exports(package):
    face = importlib.import_module(package)
    homes = {name: f"{package}.{module}" for module, names in face._HOMES.items() for name in names}
    assert typing_names(package) == homes
    assert sorted(homes) == sorted(face.__all__)
    assert [name for name in homes if is_module(package, name)] == []  # a module would shadow it
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        face.Nothing  # noqa: B018


@pytest.mark.parametrize("package", sorted(set(EXPORTS) - set(LAZY)))
def test_a_plain_face_lists_modules_or_what_it_defines(package):
    face = importlib.import_module(package)
    assert typing_names(package) == {}
    assert [name for name in face.__all__ if not is_module(package, name)
            and getattr(face, name, None) is None] == []
