"""The guest's side of the mailbox: runs commands the host drops into a shared directory.

Started by the guest's /init after it chroots into the host's root (stdlib only):

    python guest_server.py /mailbox

The host writes ``cmd/<seq>.json`` (a JSON object with an ``op``; written under a dot-name and
renamed), the server answers in ``res/<seq>.json`` the same way. Each command runs in its own
thread, so a long ``run`` does not hold up a ``signal``. A command that fails answers
``{"error": "..."}``; nothing a command does stops the server, except ``exit``.

Ops: ``ping``; ``run`` (argv, env, cwd, timeout, user) -> rc, stdout, stderr, timed_out;
``spawn`` (id, argv, env, cwd, user) -> pid, output in ``procs/<id>.out`` and ``.err``;
``signal`` (id, signum); ``wait`` (id, timeout) -> as ``run``; ``read`` (path) -> text;
``write`` (path, text); ``chmod`` (path, mode); ``glob`` (pattern) -> paths; ``exit``.

Every process gets the base environment (the venv's bin first on PATH), then the command's
``env`` over it, and its own ``LG_WD`` directory on tmpfs: lgpio makes its notification FIFO
there under a fixed name (``.lgd-nfy0``), so two processes sharing one directory would read
each other's line events.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Any

LGPIO_DIRS = Path("/run/lgpio")
IDLE_POLL = 0.02  # seconds between looks at an idle mailbox; 9p reads cost CPU under TCG
BUSY_POLL = 0.002

Result = dict[str, Any]


def base_env() -> dict[str, str]:
    venv_bin = os.path.dirname(sys.executable)  # the venv's python, as /init started us
    return {"PATH": f"{venv_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/root", "LANG": "C.UTF-8", "TERM": "dumb"}


def write_json(path: Path, data: Result) -> None:
    """Write under a dot-name, then rename: the host never sees half a file."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)


def as_user(uid: int | None) -> dict[str, Any]:
    """Popen arguments that drop root for ``uid`` (its primary group, no supplementary groups);
    Popen does setgroups, setregid and setreuid in the child, in that order."""
    if uid is None:
        return {}
    try:
        gid = pwd.getpwuid(uid).pw_gid
    except KeyError:
        gid = uid
    return {"user": uid, "group": gid, "extra_groups": []}


class Spawned:
    """A background process whose output goes to files in the mailbox."""

    def __init__(self, proc: subprocess.Popen, out: Path, err: Path, lg_wd: Path | None):
        self.proc, self.out, self.err, self.lg_wd = proc, out, err, lg_wd


class Server:
    def __init__(self, mailbox: Path):
        self.mailbox = mailbox
        self.commands, self.results, self.procs = (mailbox / "cmd", mailbox / "res",
                                                   mailbox / "procs")
        self.spawned: dict[str, Spawned] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    # -- the loop --------------------------------------------------------------------------

    def serve(self) -> None:
        for directory in (self.commands, self.results, self.procs):
            directory.mkdir(exist_ok=True)
        LGPIO_DIRS.mkdir(mode=0o755, parents=True, exist_ok=True)
        with open("/proc/uptime") as uptime:
            ready_at = float(uptime.read().split()[0])
        write_json(self.mailbox / "ready.json", {"pid": os.getpid(), "uptime": ready_at,
                                                 "kernel": os.uname().release})
        pause = BUSY_POLL
        while not self.stopping.is_set():
            names = sorted(n for n in os.listdir(self.commands) if not n.startswith("."))
            for name in names:
                self.dispatch(self.commands / name)
            pause = BUSY_POLL if names else min(pause * 2, IDLE_POLL)
            self.stopping.wait(pause)
        self.kill_all()

    def dispatch(self, path: Path) -> None:
        try:
            command = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            command = {"op": "invalid", "error": f"unreadable command {path.name}: {error}"}
        path.unlink(missing_ok=True)
        threading.Thread(target=self.answer, args=(path.stem, command), daemon=True).start()

    def answer(self, seq: str, command: Result) -> None:
        op = command.pop("op", None)
        handler = getattr(self, f"op_{op}", None) if isinstance(op, str) else None
        try:
            if handler is None:
                raise ValueError(command.get("error") or f"unknown op {op!r}")
            result = handler(**command)
        except Exception as error:  # a bad command answers an error, the server carries on
            print(f"command={seq} op={op} error={error!r}", file=sys.stderr, flush=True)
            if not isinstance(error, (OSError, ValueError, TypeError, KeyError)):
                traceback.print_exc()
            result = {"error": f"{type(error).__name__}: {error}"}
        write_json(self.results / f"{seq}.json", result)
        if op == "exit":
            self.stopping.set()

    # -- processes -------------------------------------------------------------------------

    def environment(self, env: dict[str, str] | None, uid: int | None) -> tuple[dict, Path | None]:
        merged = {**base_env(), **(env or {})}
        lg_wd = None
        if "LG_WD" not in merged:
            lg_wd = Path(tempfile.mkdtemp(dir=LGPIO_DIRS))
            if uid is not None:
                os.chown(lg_wd, uid, -1)
            merged["LG_WD"] = str(lg_wd)
        return merged, lg_wd

    def op_ping(self) -> Result:
        return {"pong": True}

    def op_run(self, argv: list[str], env: dict[str, str] | None = None, cwd: str = "/",
               timeout: float = 60, user: int | None = None) -> Result:
        merged, lg_wd = self.environment(env, user)
        try:
            proc = subprocess.Popen(argv, env=merged, cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, **as_user(user))
            try:
                out, err = proc.communicate(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                timed_out = True
        finally:
            if lg_wd:
                shutil.rmtree(lg_wd, ignore_errors=True)
        return {"rc": None if timed_out else proc.returncode, "timed_out": timed_out,
                "stdout": out.decode(errors="replace"), "stderr": err.decode(errors="replace")}

    def op_spawn(self, id: str, argv: list[str], env: dict[str, str] | None = None,
                 cwd: str = "/", user: int | None = None) -> Result:
        with self.lock:
            running = self.spawned.get(id)
            if running and running.proc.poll() is None:
                raise ValueError(f"{id} is still running (pid {running.proc.pid})")
            merged, lg_wd = self.environment(env, user)
            out, err = self.procs / f"{id}.out", self.procs / f"{id}.err"
            with open(out, "wb") as stdout, open(err, "wb") as stderr:
                proc = subprocess.Popen(argv, env=merged, cwd=cwd, stdin=subprocess.DEVNULL,
                                        stdout=stdout, stderr=stderr, start_new_session=True,
                                        **as_user(user))
            self.spawned[id] = Spawned(proc, out, err, lg_wd)
        return {"pid": proc.pid}

    def process(self, id: str) -> Spawned:
        with self.lock:
            if id not in self.spawned:
                raise KeyError(f"no spawned process {id!r}")
            return self.spawned[id]

    def op_signal(self, id: str, signum: int) -> Result:
        self.process(id).proc.send_signal(signum)
        return {}

    def op_wait(self, id: str, timeout: float = 60) -> Result:
        spawned = self.process(id)
        try:
            rc = spawned.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        else:
            with self.lock:
                self.spawned.pop(id, None)
            if spawned.lg_wd:
                shutil.rmtree(spawned.lg_wd, ignore_errors=True)
        return {"rc": rc, "timed_out": rc is None,
                "stdout": spawned.out.read_text(errors="replace"),
                "stderr": spawned.err.read_text(errors="replace")}

    def kill_all(self) -> None:
        with self.lock:
            for spawned in self.spawned.values():
                if spawned.proc.poll() is None:
                    os.killpg(spawned.proc.pid, signal.SIGKILL)

    # -- files -----------------------------------------------------------------------------

    def op_read(self, path: str) -> Result:
        return {"text": Path(path).read_text(errors="replace")}

    def op_write(self, path: str, text: str) -> Result:
        with open(path, "w") as file:  # no temp file: sysfs attributes take one plain write
            file.write(text)
        return {}

    def op_chmod(self, path: str, mode: int) -> Result:
        os.chmod(path, mode)
        return {}

    def op_glob(self, pattern: str) -> Result:
        return {"paths": sorted(glob.glob(pattern))}

    def op_exit(self) -> Result:
        return {}  # answer() stops the loop once this answer is written


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: guest_server.py MAILBOX_DIR")
    Server(Path(sys.argv[1])).serve()


if __name__ == "__main__":
    main()
