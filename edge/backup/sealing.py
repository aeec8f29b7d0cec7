"""An archive sealed with a passphrase: the ``cryptography`` package's Fernet (AES-128-CBC with
an HMAC-SHA256 over it) under a key derived from the passphrase with scrypt (n=2**15, r=8, p=1:
about 32 MB and a fraction of a second on a Pi 4). No cipher of our own: this module only frames
the file. A sealed file is :data:`MAGIC`, a 16-byte random salt, then the archive in chunks of
1 MiB, each a Fernet token after its length (4 bytes, big-endian), so sealing and opening hold
one chunk in memory, never the archive. Each token is authenticated; chunks dropped, repeated or
reordered break the gzip stream and the manifest's hashes, which ``backup verify`` checks.

``cryptography`` is installed with the agent on 64-bit systems; on 32-bit Pi OS install Debian's
(``sudo apt install python3-cryptography``, seen by a venv made with --system-site-packages).

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "plain").write_bytes(b"archive" * 200_000)
>>> seal_file(folder / "plain", folder / "sealed", "correct horse")
>>> is_sealed((folder / "sealed").read_bytes()[:64])
True
>>> open_sealed_file(folder / "sealed", folder / "opened", "correct horse")
>>> (folder / "opened").read_bytes() == (folder / "plain").read_bytes()
True
>>> open_sealed_file(folder / "sealed", folder / "opened", "wrong")
Traceback (most recent call last):
...
edge.backup.sealing.WrongPassphrase: the passphrase does not open this archive, or the archive was altered
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import TYPE_CHECKING

from edge.core.exc import EdgeError, UsageError

if TYPE_CHECKING:
    from types import ModuleType

MAGIC = b"edge-backup-sealed-1\n"
SALT_BYTES = 16
SCRYPT_N = 2**15
SCRYPT_R = 8
SCRYPT_P = 1
CHUNK = 1 << 20
LONGEST_TOKEN = 2 * CHUNK
"""Longer than any token of one chunk (base64 of it, IV, HMAC): a longer length was altered."""


class WrongPassphrase(UsageError):
    """A sealed archive that its passphrase does not open (or that was altered): exit 2."""

    def __init__(self) -> None:
        super().__init__("the passphrase does not open this archive, or the archive was altered")


def _fernet() -> ModuleType:
    try:
        import cryptography.fernet as fernet
    except ImportError:
        raise EdgeError("sealing a backup needs the cryptography package: `pip install cryptography` "
                        "in the agent's venv, or on 32-bit Pi OS `sudo apt install "
                        "python3-cryptography`; or back up without a passphrase") from None
    return fernet


def _key(passphrase: str, salt: bytes) -> bytes:
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    derived = Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(passphrase.encode())
    return base64.urlsafe_b64encode(derived)


def is_sealed(head: bytes) -> bool:
    """Whether a file beginning with ``head`` is sealed."""
    return head.startswith(MAGIC)


def seal_file(source: Path, target: Path, passphrase: str) -> None:
    """Write ``source`` sealed with ``passphrase`` to ``target``."""
    fernet = _fernet()
    salt = os.urandom(SALT_BYTES)
    sealer = fernet.Fernet(_key(passphrase, salt))
    with source.open("rb") as plain, target.open("wb") as sealed:
        sealed.write(MAGIC + salt)
        while chunk := plain.read(CHUNK):
            token: bytes = sealer.encrypt(chunk)
            sealed.write(len(token).to_bytes(4, "big") + token)


def open_sealed_file(source: Path, target: Path, passphrase: str) -> None:
    """Write what :func:`seal_file` sealed in ``source`` to ``target``; :class:`WrongPassphrase`
    when ``passphrase`` does not open it, or it was altered."""
    fernet = _fernet()
    with source.open("rb") as sealed, target.open("wb") as plain:
        if sealed.read(len(MAGIC)) != MAGIC:
            raise WrongPassphrase()
        opener = fernet.Fernet(_key(passphrase, sealed.read(SALT_BYTES)))
        while size := sealed.read(4):
            length = int.from_bytes(size, "big")
            token = sealed.read(length) if len(size) == 4 and length <= LONGEST_TOKEN else b""
            if not token or len(token) != length:
                raise WrongPassphrase()
            try:
                plain.write(opener.decrypt(token))
            except fernet.InvalidToken:
                raise WrongPassphrase() from None
