"""An archive sealed with a passphrase: the ``cryptography`` package's Fernet (AES-128-CBC with
an HMAC-SHA256 over it) under a key derived from the passphrase with scrypt (n=2**15, r=8, p=1:
about 32 MB and a fraction of a second on a Pi 4). A sealed file is :data:`MAGIC`, a 16-byte
random salt, then the Fernet token. No cipher of our own: this module only frames the file.

``cryptography`` is installed with the agent on 64-bit systems; on 32-bit Pi OS install Debian's
(``sudo apt install python3-cryptography``, seen by a venv made with --system-site-packages).

>>> sealed = seal(b"archive", "correct horse")
>>> is_sealed(sealed), open_sealed(sealed, "correct horse")
(True, b'archive')
>>> open_sealed(sealed, "wrong")
Traceback (most recent call last):
...
edge.backup.sealing.WrongPassphrase: the passphrase does not open this archive, or the archive was altered
"""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING

from edge.core.exc import EdgeError, UsageError

if TYPE_CHECKING:
    from types import ModuleType

MAGIC = b"edge-backup-sealed-1\n"
SALT_BYTES = 16
SCRYPT_N = 2**15
SCRYPT_R = 8
SCRYPT_P = 1


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


def is_sealed(data: bytes) -> bool:
    return data.startswith(MAGIC)


def seal(data: bytes, passphrase: str) -> bytes:
    """``data`` sealed with ``passphrase``."""
    fernet = _fernet()
    salt = os.urandom(SALT_BYTES)
    token: bytes = fernet.Fernet(_key(passphrase, salt)).encrypt(data)
    return MAGIC + salt + token


def open_sealed(data: bytes, passphrase: str) -> bytes:
    """What :func:`seal` sealed; :class:`WrongPassphrase` when ``passphrase`` does not open it."""
    fernet = _fernet()
    salt = data[len(MAGIC):len(MAGIC) + SALT_BYTES]
    try:
        opened: bytes = fernet.Fernet(_key(passphrase, salt)).decrypt(data[len(MAGIC) + SALT_BYTES:])
    except fernet.InvalidToken:
        raise WrongPassphrase() from None
    return opened
