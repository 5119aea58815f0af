"""Params of each method, built once for the sync and the asyncio client."""

from typing import Any, Dict, Iterable, Mapping, Optional

from .protocol import PROTOCOL_VERSION


def initialize(client_name: str, client_version: str) -> Dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "clientInfo": {"name": client_name, "version": client_version},
    }


def login(
    provider: str,
    username: Optional[str],
    password: Optional[str],
    token: Optional[str],
    open_browser: Optional[bool] = None,
) -> Dict[str, Any]:
    """Only the credentials given are sent, so the agent can say which is missing."""
    credentials = {
        name: value
        for name, value in (("username", username), ("password", password), ("token", token))
        if value is not None
    }
    params: Dict[str, Any] = {"provider": provider}
    if credentials:
        params["credentials"] = credentials
    if open_browser is not None:
        params["openBrowser"] = open_browser
    return params


def sign(
    method: str,
    url: str,
    headers: Optional[Mapping[str, str]],
    provider: Optional[str],
) -> Dict[str, Any]:
    request: Dict[str, Any] = {"method": method, "url": url}
    if headers:
        request["headers"] = dict(headers)
    params: Dict[str, Any] = {"request": request}
    if provider is not None:
        params["provider"] = provider
    return params


def refresh(provider: str, failed_authorization: Optional[str]) -> Dict[str, Any]:
    params: Dict[str, Any] = {"provider": provider}
    if failed_authorization is not None:
        params["failedAuthorization"] = failed_authorization
    return params


def subscribe(
    events: Optional[Iterable[str]], providers: Optional[Iterable[str]]
) -> Dict[str, Any]:
    params: Dict[str, Any] = {}
    if events is not None:
        params["events"] = list(events)
    if providers is not None:
        params["providers"] = list(providers)
    return params
