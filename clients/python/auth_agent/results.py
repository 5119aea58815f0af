"""Typed shapes of the agent's answers (see ``schema/openrpc.json``).

Timestamps (``expiresAt``) are RFC 3339 UTC strings, or ``None`` when the
token has no known expiry.
"""

from typing import Any, Dict, List, Optional, TypedDict

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


class _ProviderStatusRequired(TypedDict):
    id: str
    displayName: str
    flow: str
    fields: List[Field]
    state: str


class ProviderStatus(_ProviderStatusRequired, total=False):
    user: User
    expiresAt: Optional[str]


class StatusResult(TypedDict):
    providers: List[ProviderStatus]


class SubscribeResult(TypedDict):
    events: List[str]
    status: StatusResult


class LoginResult(TypedDict):
    provider: str
    user: User
    expiresAt: Optional[str]


class LogoutResult(TypedDict):
    revoked: bool


class RefreshResult(TypedDict):
    provider: str
    refreshed: bool
    expiresAt: Optional[str]


class TokenResult(TypedDict):
    accessToken: str
    tokenType: str
    expiresAt: Optional[str]
