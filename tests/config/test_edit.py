"""Pairing's edit of the config file: the new id goes into the list in the list's own type
(integers stay integers, strings stay strings), comments and layout are kept."""

from __future__ import annotations

import tomllib

import pytest

from edge.config.edit import add_to_list

KEYS = ("channels", "telegram", "allowed_users")


@pytest.mark.parametrize(("written", "sender", "saved"), [
    ("[111]", "999", [111, 999]),
    ('["111"]', "999", ["111", "999"]),
    ("[]", "999", [999]),  # Telegram's ids are numbers, as the example config writes them
    ("[111]", "+4915112345678", [111, "+4915112345678"]),  # not a number: stays text
    ("[]", "007", ["007"]),  # an integer would lose the zero
])
def test_the_list_keeps_its_own_type(tmp_path, written, sender, saved):
    path = tmp_path / "config.toml"
    path.write_text(f"# my agent\n[channels.telegram]\nallowed_users = {written}  # who\n")
    assert add_to_list(path, KEYS, sender)
    text = path.read_text()
    assert tomllib.loads(text)["channels"]["telegram"]["allowed_users"] == saved
    assert text.startswith("# my agent\n") and "# who" in text


def test_a_missing_list_is_created_and_a_present_id_is_not_added_twice(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[agent]\n")
    assert add_to_list(path, ("channels", "signal", "allowed_numbers"), "+4915112345678")
    assert add_to_list(path, KEYS, "999")
    assert not add_to_list(path, KEYS, "999")
    saved = tomllib.loads(path.read_text())["channels"]
    assert saved == {"signal": {"allowed_numbers": ["+4915112345678"]},
                     "telegram": {"allowed_users": [999]}}


def test_the_file_keeps_its_mode(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[channels.telegram]\nallowed_users = [111]\n")
    path.chmod(0o660)
    add_to_list(path, KEYS, "999")
    assert path.stat().st_mode & 0o777 == 0o660
