"""Redis round trips on a connection the calling thread holds: the sink writers'
MULTI/EXECs, the keeper's poll and a task's claim.

redis-py's transaction pipeline costs ~70 µs of CPU per MULTI/EXEC of two or three
commands: a connection taken from the pool and given back (a lock, a readiness poll of
the socket, observability counters each way), a Pipeline object, each reply parsed
through its command's callback. A run writes its events in many small batches (each
delta of a streamed answer is one when Redis keeps up), so that was most of a writer's
CPU per run. Here each writer thread keeps one connection of its own (made from the
client's pool's settings: same server, credentials and timeouts) and sends the
MULTI, the commands and the EXEC in one write, then reads the replies: ~30 µs. The
keeper's poll (a GET every 50 ms) and a task's claim (one EVALSHA) go the same way
(`command`).

What it answers is what the pipeline answered: the EXEC's replies, unparsed (bytes,
ints, lists), or the same exceptions: a connection error or timeout (the connection is
dropped and made again on the next call), a command refused while queued (OOM, READONLY,
a wrong argument: raised once every reply is read, so the connection stays usable),
an error reply inside the EXEC.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import redis
from redis.connection import AbstractConnection

Command = tuple[Any, ...]

_held = threading.local()


def _after_fork() -> None:
    global _held
    _held = threading.local()  # a parent's sockets are not a child's


os.register_at_fork(after_in_child=_after_fork)


def _connection(client: redis.Redis) -> AbstractConnection:
    """This thread's connection for `client`'s pool, made on first use. Keyed by the pool
    itself (a weak reference: a pool gone, its connection is dropped with it), never by
    an id another pool may reuse."""
    pool = client.connection_pool
    held: weakref.WeakKeyDictionary[Any, AbstractConnection] | None = getattr(
        _held, "connections", None)
    if held is None:
        held = _held.connections = weakref.WeakKeyDictionary()
    connection = held.get(pool)
    if connection is None:
        connection = held[pool] = pool.connection_class(**pool.connection_kwargs)
    return connection


def command(client: redis.Redis, *args: Any) -> Any:
    """One command on this thread's own connection to `client`'s server: its reply,
    unparsed; an error reply is raised (redis-py's exception for it)."""
    connection = _connection(client)
    try:
        connection.send_packed_command(connection.pack_command(*args), check_health=False)
        return connection.read_response()
    except redis.ResponseError:
        raise  # the reply was read: the connection stays usable
    except BaseException:
        connection.disconnect()
        raise


def transaction(client: redis.Redis, commands: list[Command]) -> list[Any]:
    """MULTI, `commands`, EXEC in one round trip on this thread's own connection to
    `client`'s server; the EXEC's replies."""
    outcome = transactions(client, [commands])[0]
    if isinstance(outcome, redis.ResponseError):
        raise outcome
    return outcome


def transactions(client: redis.Redis, bodies: list[list[Command]]
                 ) -> list[list[Any] | redis.ResponseError]:
    """Several MULTI/EXECs (one per body) in one round trip: each one's replies, or
    the error that refused it (a command refused while queued, else the first error
    reply inside its EXEC). Raises only when the connection failed (which of them
    applied is then unknown)."""
    connection = _connection(client)
    packed: list[Command] = []
    for commands in bodies:
        packed += [("MULTI",), *commands, ("EXEC",)]
    try:
        # connect() when there is no socket yet (or it was dropped after an error).
        connection.send_packed_command(connection.pack_commands(packed), check_health=False)
        return [_exec_reply(connection, len(commands)) for commands in bodies]
    except BaseException:
        # A connection error, a timeout, an interrupted read: the replies not read
        # would be taken for the next call's.
        connection.disconnect()
        raise


def _exec_reply(connection: AbstractConnection, queued: int
                ) -> list[Any] | redis.ResponseError:
    refused: redis.ResponseError | None = None
    for _ in range(queued + 1):  # MULTI's OK, then QUEUED or an error each
        try:
            connection.read_response()
        except redis.ResponseError as exc:
            refused = refused or exc
    try:
        answers = connection.read_response()
    except redis.ResponseError as exc:  # EXECABORT: the command refused says why
        return refused or exc
    if refused is not None:
        return refused
    if not isinstance(answers, list):
        return redis.ResponseError(f"unexpected EXEC reply {answers!r}")
    for answer in answers:
        if isinstance(answer, redis.ResponseError):
            return answer
    return answers
