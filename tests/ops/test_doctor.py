"""edge-cli doctor: each check against real things (loopback HTTP servers speaking the provider,
Telegram and signal-cli formats; real files and accounts; the real disk)."""

import datetime as dt
import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from edge.cli.main import main
from edge.doctor import host, remote

GOOD_KEY, GOOD_TOKEN = "sk-good-key-000000000000", "123456:good-token"


class FakeServices(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/models, Telegram's getMe, and signal-cli's /api/v1/check."""

    def do_GET(self):
        if self.path == "/v1/models":
            if self.headers.get("Authorization") != f"Bearer {GOOD_KEY}":
                return self.reply(401, {"error": {"message": "Incorrect API key provided"}})
            return self.reply(200, {"object": "list", "data": [{"id": "tiny-model", "object": "model"}]})
        if self.path.startswith("/bot") and self.path.endswith("/getMe"):
            if self.path != f"/bot{GOOD_TOKEN}/getMe":
                return self.reply(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
            return self.reply(200, {"ok": True, "result": {"id": 123456, "is_bot": True,
                                                           "username": "edge_test_bot"}})
        if self.path == "/api/v1/check":
            return self.reply(200, None)
        self.reply(404, {"error": "not found"})

    def reply(self, code, body):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeServices)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def provider(base_url, key=GOOD_KEY, model="tiny-model"):
    return {"provider": {"base_url": base_url, "model": model, "api_key": key}}


def test_provider_reachable_with_one_request(server):
    check = remote.check_provider(provider(server + "/v1"))
    assert (check.status, check.detail) == ("ok", f"{server}/v1 reachable, model tiny-model")


def test_provider_check_uses_the_model_the_running_agent_uses(server):
    configured = provider(server + "/v1", model="gpt-9")  # switched away with `models use`
    active = {"model": "tiny-model", "base_url": server + "/v1"}
    assert remote.check_provider(configured, active).status == "ok"
    assert remote.check_provider(provider(server + "/v1"), {"model": "gpt-9",
                                                             "base_url": server + "/v1"}).status == "fail"


def test_provider_failures_say_how_to_fix(server, closed_port):
    wrong_key = remote.check_provider(provider(server + "/v1", key="sk-wrong"))
    assert wrong_key.status == "fail" and "EDGE_PROVIDER__API_KEY" in wrong_key.fix
    wrong_model = remote.check_provider(provider(server + "/v1", model="gpt-9"))
    assert wrong_model.status == "fail" and "tiny-model" in wrong_model.fix
    down = remote.check_provider(provider(closed_port + "/v1"))
    assert down.status == "fail" and "cannot reach" in down.detail and down.fix
    no_models = remote.check_provider(provider(server + "/other"))
    assert no_models.status == "warn"
    assert remote.check_provider({}).status == "skip"


def test_channel_tokens(server, closed_port):
    good = {"channels": {"telegram": {"bot_token": GOOD_TOKEN, "api_base": server},
                         "signal": {"http_url": server}}}
    assert [(c.name, c.status) for c in remote.check_channels(good)] == \
        [("telegram", "ok"), ("signal", "ok")]
    assert "@edge_test_bot" in remote.check_channels(good)[0].detail
    bad = {"channels": {"telegram": {"bot_token": "123456:revoked", "api_base": server},
                        "signal": {"http_url": closed_port}}}
    telegram, signal = remote.check_channels(bad)
    assert telegram.status == "fail" and "@BotFather" in telegram.fix
    assert signal.status == "fail" and "signal-cli" in signal.fix
    disabled = {"channels": {"telegram": {"bot_token": ""}, "signal": {"account": "+49"}}}
    assert [c.status for c in remote.check_channels(disabled)] == ["skip"]


def test_device_permissions_by_mode_bits(tmp_path):
    device = tmp_path / "ttyACM9"
    device.write_text("")
    os.chmod(device, 0o600)
    raw = {"boards": {"uno": {"type": "arduino", "port": str(device)}}}
    denied = host.check_devices(raw, "nobody")
    assert denied.status == "fail" and "cannot read and write" in denied.detail and denied.fix
    if os.geteuid() == 0:
        os.chown(device, 0, host.grp.getgrnam("nogroup").gr_gid)
        os.chmod(device, 0o660)
        assert host.check_devices(raw, "nobody").status == "ok"  # nobody's primary group
    os.chmod(device, 0o666)
    assert host.check_devices(raw, "nobody").status == "ok"
    missing = host.check_devices({"boards": {"uno": {"type": "stm32", "port": "/dev/edge-nope"}}},
                                 "nobody")
    assert missing.status == "fail" and "serial_number" in missing.fix
    assert host.check_devices({"boards": {"gpio": {"simulate": True}}}, "nobody").status == "ok"


def test_device_nodes_come_from_each_types_spec(tmp_path):
    """A sensor on I2C or hardware SPI needs its bus node and group, as a serial board its port;
    an analog pin, the Pi's health, a simulated header or a section that is not valid need none
    here (the config check reports the last)."""
    raw = {"boards": {"uno": {"type": "arduino", "port": "/dev/ttyACM7"}, "emu": {"type": "stm32",
                      "port": "socket://127.0.0.1:9"}, "pi": {}, "bad": {"type": "esp32"}},
           "sensors": {"greenhouse": {"type": "bme280", "bus": 7}, "soil": {"type": "mcp3008",
                       "channel": 0, "device": 1}, "tank": {"type": "analog", "pin": "uno:A0"},
                       "host": {"type": "pi"}, "broken": {"type": "bme280", "address": 1}}}
    assert [(node.path, node.group, owner) for node, owner in host.device_nodes(raw)] == [
        ("/dev/ttyACM7", "dialout", "board uno"), ("/dev/i2c-7", "i2c", "sensor greenhouse"),
        ("/dev/spidev0.1", "spi", "sensor soil")]
    missing = host.check_devices(raw, "nobody")
    assert missing.status == "fail" and "/dev/i2c-7 (sensor greenhouse) does not exist" in missing.detail
    assert "raspi-config nonint do_i2c 0" in missing.fix and "do_spi" in missing.fix
    assert "usermod -aG dialout,i2c,spi nobody" in host.check_groups(raw, "nobody", False).fix


def test_group_membership():
    raw = {"boards": {"uno": {"type": "arduino", "port": "/dev/ttyACM0"}}}
    check = host.check_groups(raw, "nobody", unit_installed=False)
    assert check.status == "fail" and "usermod -aG dialout nobody" in check.fix
    assert host.check_groups({}, "nobody", unit_installed=False).status == "ok"
    assert host.check_groups(raw, "no-such-user-xyz", unit_installed=False).status == "fail"


def test_disk_space(tmp_path):
    assert host.check_disk(tmp_path / "not" / "yet").status == "ok"
    full = host.check_disk(tmp_path, min_free=2**62)
    assert full.status == "fail" and "journalctl --vacuum-size" in full.fix


def test_clock():
    now = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    assert host.check_clock(now, synchronized=True).status == "ok"
    assert host.check_clock(now, synchronized=False).status == "fail"
    assert host.check_clock(now, synchronized=None).status == "warn"
    past = host.check_clock(dt.datetime(2021, 1, 1, tzinfo=dt.UTC), synchronized=None)
    assert past.status == "fail" and "set-ntp" in past.fix


def write_config(tmp_path, base_url):
    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nstate_dir = "{tmp_path / "state"}"\n'
                      f'[provider]\nbase_url = "{base_url}"\nmodel = "tiny-model"\n')
    os.chmod(config, 0o640)
    return config


def test_doctor_command_exit_codes_and_json(server, tmp_path, capsys, monkeypatch):
    config = write_config(tmp_path, server + "/v1")
    monkeypatch.setenv("EDGE_PROVIDER__API_KEY", "sk-wrong")
    assert main(["doctor", "--config", str(config), "--user", "nobody", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in report["data"]["checks"]}
    assert checks["provider"]["status"] == "fail" and checks["provider"]["fix"]
    assert checks["config"]["status"] == "ok"
    assert checks["boards"]["status"] == "warn"  # simulated pins
    assert all(c["fix"] for c in report["data"]["checks"] if c["status"] == "fail")

    monkeypatch.setenv("EDGE_PROVIDER__API_KEY", GOOD_KEY)
    code = main(["doctor", "--config", str(config), "--user", "nobody"])
    text = capsys.readouterr().out
    failing = [line for line in text.splitlines() if line.startswith("[FAIL]")]
    # the only thing that may fail here is the clock, when this machine says it is unsynced
    assert all(line.startswith("[FAIL] clock") for line in failing), text
    assert code == (1 if failing else 4)  # 4: no failure, but warnings (simulated pins)
    assert "[ok  ] provider:" in text


def test_config_errors_are_reported_with_a_fix(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text("[provider]\nbase_urll = 'x'\n")
    assert main(["doctor", "--config", str(config), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["data"]["checks"]}
    assert checks["config"]["status"] == "fail" and "base_urll" in checks["config"]["detail"]
    assert "edge-cli config check" in checks["config"]["fix"]


@pytest.mark.parametrize("section", ['[channels.telegram]\nallowed_users = ["*"]',
                                     '[channels.signal]\nallowed_numbers = ["*"]'])
def test_a_wildcard_allowlist_on_a_network_channel_is_a_warning(tmp_path, isolated_env, section):
    from edge.doctor.agent import check_config

    path = tmp_path / "config.toml"
    path.write_text(section + "\n")
    path.chmod(0o600)
    check, loaded = check_config(str(path))
    assert loaded is not None and check.status == "warn"
    assert '= ["*"]: anyone on' in check.detail and "explicit list" in check.fix


def test_sensors_are_read_and_a_failing_one_says_what_to_do(tmp_path, isolated_env):
    from edge.config.loader import load_config
    from edge.doctor import agent

    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nstate_dir = "{tmp_path / "state"}"\n'
                      '[sensors.air]\ntype = "bme280"\nbus = 99\n')
    check = agent.check_sensors(load_config(str(config), env=isolated_env))
    assert check.status == "warn" and "via direct read: air: " in check.detail
    assert "/dev/i2c-99" in check.detail


def test_a_rule_the_policy_forbids_fails_the_config_check(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text('[[rules]]\nname = "boom"\nwhen = "button pressed"\n'
                      'then = "gpio write GPIO5 on"\n')
    assert main(["doctor", "--config", str(config), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    config_check = next(c for c in report["data"]["checks"] if c["name"] == "config")
    assert config_check["status"] == "fail" and "rules.0.then: rule 'boom'" in config_check["detail"]


def test_cameras_need_their_device_group_and_program(tmp_path, isolated_env):
    """A webcam's node is the devices check's (group video); a Pi camera whose rpicam-still is
    not on the PATH fails the cameras check, saying what to install."""
    from edge.config.loader import load_config
    from edge.doctor.cameras import check_cameras

    raw = {"cameras": {"door": {"type": "v4l2", "device": "/dev/video7"},
                       "porch": {"type": "rpicam", "command": "no-such-rpicam-still"}}}
    assert [(node.path, node.group, owner) for node, owner in host.device_nodes(raw)] == [
        ("/dev/video7", "video", "camera door")]
    assert "usermod -aG video nobody" in host.check_groups(raw, "nobody", False).fix
    config = tmp_path / "config.toml"
    config.write_text('[cameras.door]\ntype = "v4l2"\ndevice = "/dev/video7"\n'
                      '[cameras.porch]\ntype = "rpicam"\ncommand = "no-such-rpicam-still"\n')
    check = check_cameras(load_config(str(config), env=isolated_env))
    assert check is not None and check.status == "fail"
    assert check.detail == ("porch: no-such-rpicam-still not found; install rpicam-apps (sudo apt "
                            "install rpicam-apps; Pi OS Lite has it as rpicam-apps-lite)")
    config.write_text('[cameras.door]\ntype = "v4l2"\ndevice = "/dev/video7"\n')
    fine = check_cameras(load_config(str(config), env=isolated_env))
    assert fine is not None and (fine.status, fine.detail) == ("ok", "door (v4l2)")
    config.write_text("")
    assert check_cameras(load_config(str(config), env=isolated_env)) is None
