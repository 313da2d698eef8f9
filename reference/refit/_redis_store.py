"""A rendezvous store in Redis, for receivers on other hosts.

``redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?namespace=NAME&ttl=SECONDS&retries=N]``
(``rediss://`` for TLS). One namespace is one Redis hash,
``refitwire:rendezvous:<namespace>``, with one field per store key:

* a publish is one ``HSET`` of the whole blob (with ``?ttl=``, in a
  ``MULTI`` with the ``EXPIRE``), so a reader sees the old blob or the new one,
  never part of one, and a publisher that restarts replaces its own field;
* listing is ``HKEYS`` of that one hash: never ``KEYS`` or a scan of the
  whole database, and two namespaces never see each other's blobs;
* values are bytes as sent (no decoding), up to Redis's ``proto-max-bulk-len``
  (512 MB by default, far above the codec's 64 MiB limit);
* a receiver's poll reads the blobs it needs with ``HMGET``, up to ``READ_BATCH`` fields a
  call (``BatchReadStore``): 256 blobs of 138 kB took 56 ms with one ``HGET`` each and 31 ms
  in batches here (2026-12-05, hiredis parsing the replies);
* stamps (``StampedStore``) come from a ``WATCH`` of the hash, held from one call to the next
  on a connection of its own: the next call's ``EXEC`` fails if any client wrote, expired or
  dropped the hash, or the connection dropped, in between. The stamp is one number per call
  for every field, so one publish makes every blob read again (and compared with the bytes
  read last time: only a changed one is decoded). Two watching connections take turns, the
  next ``WATCH`` sent before the last ``EXEC``, so no write falls between them.

Every call has a socket timeout (5 s; connect 2 s) and bounded retries
(``?retries=``, default 5, exponential backoff from 0.1 s to 1 s, about 2.5 s
in all), enough to ride over a server restart; past that the call raises
:class:`StoreUnavailable` naming the store. Other query parameters (``ssl_ca_certs``,
``socket_timeout``, ...) go to the ``redis`` client unchanged. The password, from
the URL or ``$REFITWIRE_REDIS_PASSWORD``, is never part of what is shown.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import secrets
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ._store import _URL_SCHEMES, RunStore, StoreCorrupt, StoreUnavailable, check_key

__all__ = [
    "KEY_PREFIX",
    "PASSWORD_ENV",
    "READ_BATCH",
    "RedisSpec",
    "RedisStore",
    "parse_redis_spec",
    "run_redis_store",
]

#: Where a password comes from when the URL has none (and how a run hands it to its children).
PASSWORD_ENV = "REFITWIRE_REDIS_PASSWORD"
#: One hash per namespace: ``refitwire:rendezvous:<namespace>``.
KEY_PREFIX = "refitwire:rendezvous:"
DEFAULT_NAMESPACE = "default"
#: Fields per ``HMGET``: one reply holds at most this many blobs (at the 64 MiB limit, 2 GiB).
READ_BATCH = 32

_OWN_PARAMS = ("namespace", "ttl", "retries")
_SECRET_PARAMS = ("password", "ssl_password")
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_MASK = "***"
_T = TypeVar("_T")


@dataclass(frozen=True)
class RedisSpec:
    """A parsed store URL. ``client_url`` has neither our parameters nor the password."""

    client_url: str
    shown: str
    namespace: str
    namespace_given: bool
    ttl_s: int | None
    retries: int
    password: str | None

    def with_namespace(self, namespace: str) -> str:
        """The URL (password left out) that names ``namespace``: what a child process is given."""
        own = {"namespace": namespace, "retries": str(self.retries)}
        if self.ttl_s is not None:
            own["ttl"] = str(self.ttl_s)
        return _rebuild(self.client_url, own)


def _rebuild(url: str, extra: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(extra.items())
    return urlunsplit(parts._replace(query=urlencode(query)))


def _netloc(user: str | None, password: str | None, host: str) -> str:
    if user is None and password is None:
        return host
    cred = quote(user or "", safe="") + (":" + password if password is not None else "")
    return f"{cred}@{host}"


def _as_bytes(value: Any) -> bytes | None:
    """A blob as Redis returned it: bytes, or str only if the URL turned decoding on."""
    return value.encode() if isinstance(value, str) else value


def parse_redis_spec(url: str, *, namespace: str | None = None) -> RedisSpec:
    """Parse and check a ``redis://``/``rediss://`` store URL; ``ValueError`` never shows the password.

    ``namespace`` replaces the URL's own (a run's fresh one)."""
    parts = urlsplit(url)
    password = unquote(parts.password) if parts.password else None
    if parts.scheme not in _URL_SCHEMES:
        raise ValueError(f"not a Redis URL: scheme {parts.scheme!r}")
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:
        port = None
        host = ""
    if not host:
        raise ValueError(f"{parts.scheme}://…: want redis://HOST[:PORT][/DB]")
    hostport = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    own: dict[str, str] = {}
    rest: list[tuple[str, str]] = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in _OWN_PARAMS:
            own[name] = value
        elif name == "password":
            password = value
        else:
            rest.append((name, value))
    shown_rest = [(n, _MASK if n in _SECRET_PARAMS else v) for n, v in rest]
    user = unquote(parts.username) if parts.username else None
    if password is None:
        password = os.environ.get(PASSWORD_ENV) or None
    shown_password = _MASK if password is not None else None  # shown as in use, never as itself
    display = f"{parts.scheme}://{_netloc(user, shown_password, hostport)}{parts.path}"
    namespace = namespace or own.get("namespace", DEFAULT_NAMESPACE)
    if not _NAMESPACE.match(namespace):
        raise ValueError(f"{display}: namespace {namespace!r} is not a plain name ([A-Za-z0-9._-], 1-128)")
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise ValueError(f"{display}: database {db!r} is not a number")
    ttl = _positive(own.get("ttl"), "ttl", display)
    retries = _positive(own.get("retries", "5"), "retries", display, zero_ok=True)
    assert retries is not None
    client_url = urlunsplit((parts.scheme, _netloc(user, None, hostport), parts.path, urlencode(rest), ""))
    shown = _rebuild(display, {"namespace": namespace})
    shown = shown if not shown_rest else f"{shown}&{urlencode(shown_rest, safe='*')}"
    return RedisSpec(
        client_url=client_url,
        shown=shown,
        namespace=namespace,
        namespace_given="namespace" in own,
        ttl_s=ttl,
        retries=retries,
        password=password,
    )


def _positive(value: str | None, name: str, shown: str, *, zero_ok: bool = False) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or (int(value) == 0 and not zero_ok):
        raise ValueError(
            f"{shown}: {name}={value!r} is not a {'non-negative' if zero_ok else 'positive'} integer"
        )
    return int(value)


class _Retry(Retry):
    """Bounded retries of connection faults; a refused password is not one, it fails at once."""

    def call_with_retry(
        self,
        do: Callable[[], _T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> _T:
        def retryable(error: Exception) -> bool:
            refused = isinstance(error, redis.AuthenticationError)
            return not refused and (is_retryable is None or is_retryable(error))

        return super().call_with_retry(do, fail, retryable, with_failure_count)


class RedisStore:
    """One namespace of a Redis server as a :class:`RendezvousStore` (one pooled client per store)."""

    def __init__(
        self,
        url: str,
        *,
        password: str | None = None,
        socket_timeout_s: float = 5.0,
        connect_timeout_s: float = 2.0,
    ) -> None:
        self.spec = parse_redis_spec(url)
        if password is not None:
            self.spec = dataclasses.replace(self.spec, password=password)
        self.hash_key = KEY_PREFIX + self.spec.namespace
        self.client: redis.Redis = redis.Redis.from_url(
            self.spec.client_url,
            password=self.spec.password,
            socket_timeout=socket_timeout_s,
            socket_connect_timeout=connect_timeout_s,
            retry=_Retry(ExponentialBackoff(cap=1.0, base=0.05), self.spec.retries),
            retry_on_error=[redis.ConnectionError, redis.TimeoutError],
            socket_read_size=1 << 20,  # blobs run to megabytes: fewer, larger reads
        )
        self._watching: redis.client.Pipeline | None = None  # held between stamps() calls
        self._generation = 0

    def __repr__(self) -> str:
        return f"RedisStore({self.spec.shown!r})"

    __str__ = __repr__

    def publish(self, key: str, blob: bytes) -> None:
        field = check_key(key)
        if self.spec.ttl_s is None:
            self._call("publish", lambda: self.client.hset(self.hash_key, field, blob))
            return
        ttl = self.spec.ttl_s

        def publish_and_expire() -> None:
            with self.client.pipeline(transaction=True) as tx:
                tx.hset(self.hash_key, field, blob)
                tx.expire(self.hash_key, ttl)
                tx.execute()

        self._call("publish", publish_and_expire)

    def keys(self) -> list[str]:
        return self._names(self._call("list", lambda: self.client.hkeys(self.hash_key)))

    def stamps(self) -> dict[str, Hashable | None]:
        names = self._call("list", self._watch_and_list)
        return dict.fromkeys(names, self._generation)

    def _watch_and_list(self) -> list[str]:
        """Start a new ``WATCH``, then end the last one: if its ``EXEC`` fails, something
        changed since, and the generation moves on. The fields are listed under the new one."""
        last, self._watching = self._watching, None
        watch = self.client.pipeline(transaction=True)
        try:
            watch.watch(self.hash_key)  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
            if last is None:
                self._generation += 1
            else:
                last.multi()
                last.ping()
                try:
                    last.execute()
                except redis.WatchError:  # written, expired or dropped, or the connection dropped
                    self._generation += 1
            names = self._names(watch.hkeys(self.hash_key))
        except BaseException:
            watch.reset()
            raise
        finally:
            if last is not None:
                last.reset()
        self._watching = watch
        return names

    def _names(self, fields: list[Any]) -> list[str]:
        names = []
        for raw in fields:
            try:
                names.append(check_key(raw.decode("utf-8") if isinstance(raw, bytes) else raw))
            except (UnicodeDecodeError, ValueError):
                continue  # not a field a store wrote: never listed, as a directory skips stray files
        return sorted(names)

    def read(self, key: str) -> bytes | None:
        field = check_key(key)
        return _as_bytes(self._call("read", lambda: self.client.hget(self.hash_key, field)))

    def read_blobs(self, keys: Sequence[str]) -> list[bytes | None]:
        fields = [check_key(key) for key in keys]
        found: list[bytes | None] = []
        for start in range(0, len(fields), READ_BATCH):
            batch = fields[start : start + READ_BATCH]
            values = self._call("read", functools.partial(self.client.hmget, self.hash_key, batch))
            found += map(_as_bytes, values)
        return found

    def remove(self, key: str) -> None:
        field = check_key(key)
        self._call("remove", lambda: self.client.hdel(self.hash_key, field))

    def drop_namespace(self) -> None:
        """Delete this namespace and every blob in it."""
        self._call("drop the namespace", lambda: self.client.delete(self.hash_key))

    def close(self) -> None:
        if self._watching is not None:
            self._watching.reset()
            self._watching = None
        self.client.close()

    def _call(self, what: str, call: Callable[[], _T]) -> _T:
        try:
            return call()
        except redis.AuthenticationError as exc:
            raise StoreUnavailable(
                self.spec.shown, f"cannot {what}: authentication failed: {self._scrub(exc)}"
            ) from None
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            tries = self.spec.retries + 1
            raise StoreUnavailable(
                self.spec.shown, f"cannot {what} after {tries} tries: {self._scrub(exc)}"
            ) from None
        except redis.ResponseError as exc:
            text = self._scrub(exc)
            if text.startswith("WRONGTYPE"):
                raise StoreCorrupt(
                    self.spec.shown, f"cannot {what}: {self.hash_key!r} is not a rendezvous hash ({text})"
                ) from None
            # NOAUTH, NOPERM, OOM, READONLY, ...: the server is there but will not do it.
            raise StoreUnavailable(self.spec.shown, f"cannot {what}: the server refused: {text}") from None

    def _scrub(self, exc: BaseException) -> str:
        text = str(exc)
        password = self.spec.password
        return text.replace(password, _MASK) if password and len(password) >= 4 else text


def run_redis_store(url: str) -> RunStore:
    """The store of one run: a fresh namespace unless the URL names one (then it is kept);
    the password goes to the children through ``$REFITWIRE_REDIS_PASSWORD``, not their command line."""
    spec = parse_redis_spec(url)
    namespace = spec.namespace
    if not spec.namespace_given:
        namespace = f"refit-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"
    child_url = spec.with_namespace(namespace)
    env = {PASSWORD_ENV: spec.password} if spec.password else {}
    shown = parse_redis_spec(url, namespace=namespace).shown

    def cleanup() -> None:
        if spec.namespace_given:
            return  # the operator's namespace: theirs to keep
        store = RedisStore(child_url, password=spec.password, socket_timeout_s=2.0)
        try:
            store.drop_namespace()
        except (StoreUnavailable, StoreCorrupt):
            pass  # unreachable from here (e.g. inside a network namespace): ?ttl= is the backstop
        finally:
            store.close()

    return RunStore(child_url, shown, env, cleanup)
