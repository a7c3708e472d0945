"""The Redis URL: one parser, for connecting and for showing it (ADR 0015).

``redis[s]://[user[:password]@]host[:port][/db][?query]``,
``unix://[user[:password]@]/path/to/socket[?query]``, a Redis Cluster's
``redis+cluster://[user[:password]@]host[:port][,host[:port]...][/0]`` (any of its nodes:
the client learns the others), or Sentinel-managed
``redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/service[/db]`` (the
sentinels, and the name they know the master by). The user-info ends at the LAST
``@``, as urllib and curl read it and as every message's redaction does
(:func:`split_userinfo`): a raw ``@``, ``/`` or ``:`` in a password belongs to the
password. User name and password are percent-decoded, so every password has a form
that works (``%`` itself is ``%25``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote

import coredis

from ..._domain.urls import check_host, mask_userinfo, split_userinfo, visible

__all__ = ["RedisURL", "parse_redis_url"]

CLUSTER, SENTINEL = "redis+cluster", "redis+sentinel"
_SCHEMES = frozenset({"redis", "rediss", "unix", CLUSTER, SENTINEL})
_DEFAULT_PORTS = {CLUSTER: 6379, SENTINEL: 26379}
# host (a name, an IPv4 address or a bracketed IPv6 one), then :port and /db.
_TCP_LOCATION = re.compile(
    r"^(?P<host>\[[^\]]*\]|[^:/\[\]]+)(?::(?P<port>\d{1,5}))?(?:/(?P<db>\d*))?$"
)
# A cluster's or the sentinels' nodes, comma-separated, then what follows the first "/".
_NODE = re.compile(r"^(?P<host>\[[^\]]*\]|[^:/\[\],]+)(?::(?P<port>\d{1,5}))?$")
_SERVICE = re.compile(r"^[A-Za-z0-9._-]+$")
# The query of a cluster or Sentinel URL: only what clonegate reads itself.
# sentinel_auth=none: the sentinels are asked without the URL's credentials (which
# are then the master's only: for an ACL user the sentinels lack); by default both
# get them (a sentinel without a password accepts any). replicas=N: a write counts
# only once N replicas have it (WAIT), so a failover cannot lose it.
_REPLICAS = tuple(str(n) for n in range(10))
_OWN_PARAMETERS = {
    SENTINEL: {"sentinel_auth": ("same", "none"), "replicas": _REPLICAS},
    CLUSTER: {"replicas": _REPLICAS},
}
# Query parameters that would put a credential where messages show the URL.
_CREDENTIAL_PARAMETERS = frozenset({"username", "password"})


@dataclass(frozen=True, slots=True)
class RedisURL:
    """A validated Redis URL. ``str()`` and ``repr()`` never show the credentials."""

    scheme: str  # redis, rediss, unix, redis+cluster or redis+sentinel
    location: str  # host[:port][/db], the socket's path, or nodes[/service][/db]
    query: str
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    # redis+cluster and redis+sentinel: the nodes (host, port) named; the sentinels'
    # service name and db; whether the sentinels get the credentials too.
    nodes: tuple[tuple[str, int], ...] = ()
    service: str = ""
    db: int = 0
    sentinel_auth: bool = True
    replicas: int = 0  # replicas each write must reach before it counts (WAIT)

    @property
    def kind(self) -> str:
        """``cluster``, ``sentinel``, or ``server`` (one Redis server)."""
        return {CLUSTER: "cluster", SENTINEL: "sentinel"}.get(self.scheme, "server")

    @property
    def redacted(self) -> str:
        """The URL for people and logs: user name and password replaced by ``***``."""
        credentials = self.username is not None or self.password is not None
        return self._format("***@" if credentials else "")

    @property
    def without_credentials(self) -> str:
        """The URL to give the client, with the credentials given apart from it."""
        return self._format("")

    def with_password(self, password: str) -> str:
        """This URL with ``password`` (percent-encoded) and the same user name."""
        user = quote(self.username or "", safe="")
        return self._format(f"{user}:{quote(password, safe='')}@")

    def __str__(self) -> str:
        return self.redacted

    def _format(self, userinfo: str) -> str:
        query = f"?{self.query}" if self.query else ""
        return f"{self.scheme}://{userinfo}{self.location}{query}"


def parse_redis_url(text: str) -> RedisURL:
    """Validate ``text`` as a Redis URL, or raise ValueError saying why, which shows the
    URL with its user-info masked."""
    shown = visible(mask_userinfo(text))
    if not text.isprintable() or any(ch.isspace() for ch in text):
        raise ValueError(
            f"the Redis URL {shown} contains whitespace or control characters "
            "(percent-encode them: a space is %20)"
        )
    scheme, userinfo, rest = split_userinfo(text)
    scheme = scheme.removesuffix("://").lower()
    if scheme not in _SCHEMES:
        raise ValueError(
            "not a Redis URL (redis://, rediss://, unix://, redis+cluster:// or "
            f"redis+sentinel://): {shown}"
        )
    location, _, query = rest.partition("?")
    if "#" in rest:
        raise ValueError(f"the Redis URL {shown} has a fragment (#): percent-encode # as %23")
    username, password = _credentials(userinfo)
    if scheme in _OWN_PARAMETERS:
        nodes, service, db = _nodes(scheme, location, shown)
        options = _own_query(scheme, query, shown)
        return RedisURL(
            scheme, location, query, username, password, nodes, service, db,
            sentinel_auth=options.get("sentinel_auth", "same") == "same",
            replicas=int(options.get("replicas", "0")),
        )  # fmt: skip
    if scheme == "unix":
        if not location.startswith("/"):
            raise ValueError(f"the Redis URL {shown} names no socket path (unix:///path)")
    else:
        _check_location(location, shown)
    _check_query(query, shown)
    return RedisURL(scheme, location, query, username, password)


def _nodes(scheme: str, location: str, shown: str) -> tuple[tuple[tuple[str, int], ...], str, int]:
    """A cluster's or the sentinels' nodes, the service name and the db."""
    hosts, _, path = location.partition("/")
    parts = path.split("/") if path else []
    if scheme == SENTINEL:
        if not parts or not _SERVICE.match(parts[0]):
            raise ValueError(
                f"the Redis URL {shown} names no master: "
                "redis+sentinel://host:port[,host:port...]/service_name[/db]"
            )
        service, parts = parts[0], parts[1:]
    else:
        service = ""
    if len(parts) > 1 or (parts and not parts[0].isdigit() and parts[0] != ""):
        raise ValueError(f"the Redis URL {shown} has a path that is not /db")
    db = int(parts[0]) if parts and parts[0] else 0
    if scheme == CLUSTER and db != 0:
        raise ValueError(f"the Redis URL {shown} names db {db}: a Redis Cluster has only db 0")
    return _node_list(scheme, hosts, shown), service, db


def _node_list(scheme: str, hosts: str, shown: str) -> tuple[tuple[str, int], ...]:
    """``host[:port][,host[:port]...]`` as (host, port) pairs."""
    nodes = []
    for node in hosts.split(","):
        found = _NODE.match(node)
        if found is None:
            raise ValueError(f"the Redis URL {shown} is not host[:port][,host[:port]...]")
        _check_location(node, shown)
        port = int(found["port"]) if found["port"] else _DEFAULT_PORTS[scheme]
        nodes.append((found["host"].removeprefix("[").removesuffix("]"), port))
    return tuple(nodes)


def _own_query(scheme: str, query: str, shown: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ValueError(f"the Redis URL {shown} has a query that is not name=value&...") from None
    known = _OWN_PARAMETERS[scheme]
    for name, value in pairs:
        if name not in known:
            raise ValueError(f"the Redis URL {shown}: {scheme}:// takes no parameter {name}")
        if value not in known[name]:
            raise ValueError(f"the Redis URL {shown}: {name} is {' or '.join(known[name])}")
    return dict(pairs)


def _check_location(location: str, shown: str) -> None:
    found = _TCP_LOCATION.match(location)
    if found is None:
        raise ValueError(f"the Redis URL {shown} is not host[:port][/db] after its user-info")
    try:
        check_host(found["host"].removeprefix("[").removesuffix("]").lower())
    except ValueError as exc:
        raise ValueError(f"the Redis URL {shown}: {exc}") from None
    if found["port"] is not None and not 0 < int(found["port"]) < 65536:
        raise ValueError(f"the Redis URL {shown} has port {found['port']}, not 1-65535")


def _check_query(query: str, shown: str) -> None:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ValueError(f"the Redis URL {shown} has a query that is not name=value&...") from None
    parsers = coredis.ConnectionPool.URL_QUERY_ARGUMENT_PARSERS
    for name, value in pairs:
        if name in _CREDENTIAL_PARAMETERS:
            raise ValueError(
                f"the Redis URL {shown}: {name} belongs in its user-info, user:password@"
            )
        try:
            if name in parsers:
                parsers[name](value)
        except (ValueError, TypeError):
            raise ValueError(f"the Redis URL {shown}: {name} is not valid") from None


def _credentials(userinfo: str | None) -> tuple[str | None, str | None]:
    if userinfo is None:
        return None, None
    user, colon, password = userinfo.partition(":")
    return (unquote(user) or None), (unquote(password) if colon and password else None)
