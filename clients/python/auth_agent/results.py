"""Typed shapes of the agent's answers (see ``schema/openrpc.json``).

In the typed results timestamps (``expiresAt``) are timezone-aware
``datetime`` objects in UTC, or ``None`` when the token has no known expiry;
``call()`` and notification params keep the agent's RFC 3339 strings.
"""

import base64
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Iterator, List, Mapping, Optional, TypedDict, cast

User = Dict[str, Any]


class ServerInfo(TypedDict):
    name: str
    version: str


class InitializeResult(TypedDict):
    protocolVersion: str
    serverInfo: ServerInfo
    capabilities: Dict[str, Any]


class Field(TypedDict):
    name: str
    label: str
    secret: bool




class AccountStatus(TypedDict):
    """One logged-in identity of a provider; ``default`` is the provider's
    default account (used when neither the request nor the connection names one)."""

    id: str
    user: User
    expiresAt: Optional[datetime]
    default: bool


class _ProviderStatusRequired(TypedDict):
    id: str
    displayName: str
    #: The default flow; ``flows`` lists every one ``login(flow=...)`` may name.
    flow: str
    flows: List[str]
    fields: List[Field]
    state: str
    #: Every logged-in account; empty when logged out.
    accounts: List[AccountStatus]


class ProviderStatus(_ProviderStatusRequired, total=False):
    """``state``, ``user``, ``expiresAt`` and ``account`` describe the
    account this connection would use (``account`` is absent when logged out)."""

    user: User
    expiresAt: Optional[datetime]
    account: str


class StatusResult(TypedDict):
    providers: List[ProviderStatus]


class SubscribeResult(TypedDict):
    events: List[str]
    status: StatusResult


class LoginResult(TypedDict):
    provider: str
    #: The id of the account logged in: a new one when this identity was not
    #: logged in yet, else the one whose session was replaced.
    account: str
    user: User
    expiresAt: Optional[datetime]


class AccountChoice(TypedDict):
    """What ``select_account`` and ``set_default_account`` answer."""

    provider: str
    account: Optional[str]


class LogoutResult(TypedDict):
    revoked: bool


class ForgetResult(TypedDict):
    """What ``forget`` answers: the learned provider is gone, and whether its tokens were revoked."""

    forgotten: bool
    revoked: bool


class _LoginHintRequired(TypedDict):
    resource: str
    scopes: List[str]


class LoginHint(_LoginHintRequired, total=False):
    """``FetchResponse.login``: what ``login(resource=...)`` would learn and ask for.

    ``authorizationServer`` is absent, and ``resourceMetadata`` names the metadata URL,
    when that metadata is on another origin: only ``fetch(..., login="ifNeeded")`` reads it.
    """

    authorizationServer: str
    resourceMetadata: str


class RefreshResult(TypedDict):
    provider: str
    refreshed: bool
    expiresAt: Optional[datetime]


class _TokenResultBase(TypedDict):
    accessToken: str
    tokenType: str
    expiresAt: Optional[datetime]


class TokenResult(_TokenResultBase, total=False):
    #: Only with ``min_valid_seconds``: whether it was refreshed first.
    refreshed: bool


_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)"
)


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp as an aware UTC datetime. Written out because
    ``datetime.fromisoformat`` before Python 3.11 refuses ``Z`` and most
    fraction lengths."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction, zone = match.group(7) or "0", match.group(8)
    offset = timedelta(0)
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    local = datetime(year, month, day, hour, minute, second, int(fraction[:6].ljust(6, "0")))
    return (local - offset).replace(tzinfo=timezone.utc)


def with_datetimes(value: Any) -> Any:
    """``value`` with every ``expiresAt`` string, at any depth, parsed by
    ``parse_time``; what the typed methods of both clients return."""
    if isinstance(value, dict):
        return {
            key: parse_time(item)
            if key == "expiresAt" and isinstance(item, str)
            else with_datetimes(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [with_datetimes(item) for item in value]
    return value


class SignResult(Mapping[str, str]):
    """What ``sign`` answers. It is the mapping of headers to add (so
    ``session.headers.update(agent.sign(...))`` works), and carries
    ``provider`` (``None`` when no provider covers the URL), which a refresh
    after a 401 needs, and ``expires_at``."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        self.headers: Dict[str, str] = dict(result.get("headers") or {})
        self.signed: bool = bool(result.get("signed", bool(self.headers)))
        provider = result.get("provider")
        self.provider: Optional[str] = provider if isinstance(provider, str) else None
        expires_at = result.get("expiresAt")
        self.expires_at: Optional[datetime] = (
            parse_time(expires_at) if isinstance(expires_at, str) else None
        )

    @property
    def authorization(self) -> Optional[str]:
        """The ``Authorization`` value added, to compare with the header a 401 answered."""
        return self.headers.get("Authorization")

    def __getitem__(self, name: str) -> str:
        return self.headers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.headers)

    def __len__(self) -> int:
        return len(self.headers)

    def __repr__(self) -> str:
        names = ", ".join(self.headers)  # never the values: they are credentials
        return f"SignResult(provider={self.provider!r}, headers=[{names}])"


class FetchResponse:
    """The response ``fetch`` got: ``status``, ``headers`` (lowercased names),
    ``content`` (bytes), ``text``, ``json()``; ``provider`` that signed it (or
    ``None``), ``signed``, and ``retried`` (sent again after a 401 and a refresh)."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        self.status: int = int(result["status"])
        self.headers: Dict[str, str] = dict(result.get("headers") or {})
        body = result.get("body")
        self.content: bytes = (
            body.encode("utf-8")
            if isinstance(body, str)
            else base64.b64decode(result.get("bodyBase64") or "")
        )
        provider = result.get("provider")
        self.provider: Optional[str] = provider if isinstance(provider, str) else None
        self.signed: bool = bool(result.get("signed"))
        self.retried: bool = bool(result.get("retried"))
        login = result.get("login")
        #: When no provider covers the URL and it answered with a Bearer challenge (or a
        #: learned one asks for more scope): ``{"resource", "authorizationServer", "scopes"}``.
        self.login: Optional[LoginHint] = cast(LoginHint, login) if isinstance(login, dict) else None

    @property
    def ok(self) -> bool:
        """Whether the status is below 400."""
        return self.status < 400

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (undecodable bytes replaced)."""
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)

    def __repr__(self) -> str:
        return f"<FetchResponse [{self.status}]>"
