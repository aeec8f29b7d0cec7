"""``edge-cli config check`` gives doctor's verdict and every problem at once; ``config show``
shows each key where it means something."""

from __future__ import annotations

import json

from edge.cli.main import main
from edge.doctor.agent import check_config

PUMP = ('[boards.gpio]\ntype = "gpio"\nsimulate = true\n'
        '[boards.gpio.pins]\nGPIO17 = { mode = "output" }\nGPIO27 = { mode = "input" }\n'
        '[boards.gpio.aliases]\npump = "GPIO17"\nfloat = "GPIO27"\n')

THREE_PROBLEMS = PUMP + (
    '[[schedules]]\nname = "pump-morning"\ncron = "61 6 * * *"\naction = "gpio write pump on"\n'
    '[[rules]]\nname = "dry"\nwhen = "nosuch on"\nthen = "gpio write pump off"\n'
    '[[schedules]]\nname = "pump-evening"\ncron = "0 19 * * *"\naction = "gpio write pump on"\n'
    '[[rules]]\nname = "full"\nwhen = "float on"\nthen = "gpio write nothing off"\n')


def test_a_bad_cron_does_not_hide_two_bad_rules(write_config, isolated_env, capsys):
    """The cron fails pydantic, the rules fail against the pins: one run says all three, each
    at its key in the file (the rules after the left-out schedule keep their places)."""
    path = write_config(THREE_PROBLEMS)
    assert main(["config", "check", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"edge-cli: {path}: invalid configuration"
    assert "  schedules.0.cron: schedule 'pump-morning': invalid cron expression '61 6 * * *'" in err
    assert "  rules.0.when: rule 'dry': 'nosuch on': 'nosuch' is not a pin on board gpio" in err
    assert "  rules.1.then: rule 'full': 'nothing' is not a pin on board gpio" in err
    assert main(["config", "check", "--config", str(path), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert [p["key"] for p in report["data"]["problems"]] == [
        "schedules.0.cron", "rules.0.when", "rules.1.then"]
    assert report["exit_code"] == 2 and not report["ok"]


def test_doctor_gives_the_same_problems(write_config, isolated_env):
    check, loaded = check_config(str(write_config(THREE_PROBLEMS)))
    assert check.status == "fail" and loaded is None
    assert [line.split(":")[0].strip() for line in check.detail.splitlines()[1:]] == [
        "schedules.0.cron", "rules.0.when", "rules.1.then"]


def test_a_schedule_s_error_names_the_schedule(write_config, isolated_env, capsys):
    path = write_config(PUMP + '[[schedules]]\nname = "pump-night"\nevery = "0m"\n'
                               'action = "gpio write pump on"\n')
    assert main(["config", "check", "--config", str(path)]) == 2
    assert ("  schedules.0.every: schedule 'pump-night': must be at least 1s (got '0m')"
            in capsys.readouterr().err)


def test_a_world_readable_secret_fails_check_in_doctor_s_words(write_config, isolated_env,
                                                               capsys):
    path = write_config(PUMP + '[channels.telegram]\nbot_token = "123456:inline-secret"\n'
                               'allowed_users = [42]\n')
    path.chmod(0o644)
    doctor, _ = check_config(str(path))
    assert doctor.status == "fail"
    assert main(["config", "check", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"edge-cli: {doctor.detail}; {doctor.fix}\n"
    assert doctor.detail == f"{path} holds a secret and is world-readable"
    assert main(["config", "check", "--config", str(path), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["data"]["problems"] == [
        {"key": "", "message": f"{doctor.detail}; {doctor.fix}"}]
    path.chmod(0o640)
    assert main(["config", "check", "--config", str(path)]) == 0
    assert check_config(str(path))[0].status == "ok"


def test_a_secret_from_the_environment_is_not_in_the_file(write_config, isolated_env,
                                                         monkeypatch, capsys):
    path = write_config(PUMP + '[channels.telegram]\nallowed_users = [42]\n')
    path.chmod(0o644)
    monkeypatch.setenv("EDGE_CHANNELS__TELEGRAM__BOT_TOKEN", "123456:from-the-env")
    assert main(["config", "check", "--config", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: OK")


def test_show_gives_pull_to_inputs_only(write_config, isolated_env, capsys):
    path = write_config(PUMP.replace('{ mode = "input" }', '{ mode = "input", pull = "down" }'))
    assert main(["config", "show", "--config", str(path)]) == 0
    shown = capsys.readouterr().out
    assert 'boards.gpio.pins.GPIO27.pull = "down"' in shown
    assert "boards.gpio.pins.GPIO17.mode" in shown and "GPIO17.pull" not in shown
