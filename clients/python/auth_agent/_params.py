"""Params of each method, built once for the sync and the asyncio client."""

import base64
import math
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from .protocol import PROTOCOL_VERSION


def initialize(
    client_name: str, client_version: str, capabilities: Optional[Mapping[str, Any]] = None
) -> Dict[str, Any]:
    params: Dict[str, Any] = {
        "protocolVersion": PROTOCOL_VERSION,
        "clientInfo": {"name": client_name, "version": client_version},
    }
    if capabilities:
        params["capabilities"] = dict(capabilities)
    return params


def login(
    provider: Optional[str],
    username: Optional[str],
    password: Optional[str],
    token: Optional[str],
    open_browser: Optional[bool] = None,
    flow: Optional[str] = None,
    resource: Optional[str] = None,
    name: Optional[str] = None,
) -> Dict[str, Any]:
    """Only the credentials given are sent, so the agent can say which is missing.
    A login names a configured ``provider`` or, to learn an API, its ``resource``
    URL (``name``: the id the learned API gets): exactly one of them."""
    if (provider is None) == (resource is None):
        raise TypeError("login takes a provider or a resource, exactly one of them")
    credentials = {
        name: value
        for name, value in (("username", username), ("password", password), ("token", token))
        if value is not None
    }
    params: Dict[str, Any] = {"provider": provider} if provider is not None else {"resource": resource}
    if name is not None:
        params["name"] = name
    if flow is not None:
        params["flow"] = flow
    if credentials:
        params["credentials"] = credentials
    if open_browser is not None:
        params["openBrowser"] = open_browser
    return params


def account_and_shape(
    account: Optional[str] = None,
    scopes: Optional[Sequence[str]] = None,
    audience: Optional[str] = None,
    resource: Optional[str] = None,
) -> Dict[str, Any]:
    """The optional params that pick whose token and which token: the
    account (else the one this connection selected, else the provider's
    default) and the token's shape. Only those given are sent, so a request
    without them is exactly the request of before accounts and shapes."""
    params: Dict[str, Any] = {}
    if account is not None:
        params["account"] = account
    if scopes is not None:
        if isinstance(scopes, str):
            raise TypeError("scopes is a list of scope names, not a string")
        params["scopes"] = list(scopes)
    if audience is not None:
        params["audience"] = audience
    if resource is not None:
        params["resource"] = resource
    return params


def sign(
    method: str,
    url: str,
    headers: Optional[Mapping[str, str]],
    provider: Optional[str],
    shape: Mapping[str, Any],
) -> Dict[str, Any]:
    """``shape``: what ``account_and_shape`` built."""
    request: Dict[str, Any] = {"method": method, "url": url}
    if headers:
        request["headers"] = dict(headers)
    params: Dict[str, Any] = {"request": request}
    if provider is not None:
        params["provider"] = provider
    params.update(shape)
    return params


def token(provider: str, shape: Mapping[str, Any]) -> Dict[str, Any]:
    return {"provider": provider, **shape}


def refresh(
    provider: str, failed_authorization: Optional[str], account: Optional[str]
) -> Dict[str, Any]:
    params: Dict[str, Any] = {"provider": provider}
    if failed_authorization is not None:
        params["failedAuthorization"] = failed_authorization
    return {**params, **account_and_shape(account)}


def logout(provider: str, account: Optional[str], all_accounts: bool) -> Dict[str, Any]:
    """``all`` is sent only when true, so the agent's default applies otherwise."""
    params: Dict[str, Any] = {"provider": provider, **account_and_shape(account)}
    if all_accounts:
        params["all"] = True
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


#: Seconds a fetch waits for the agent's answer beyond the request's own
#: timeout, so the agent's requestFailed (which names the cause) arrives first.
FETCH_ANSWER_GRACE = 5.0

#: The agent's limit on timeoutSeconds.
FETCH_MAX_TIMEOUT = 600.0


def fetch(
    method: str,
    url: str,
    headers: Optional[Mapping[str, str]],
    body: Union[str, bytes, None],
    provider: Optional[str],
    timeout: Optional[float],
    max_response_bytes: Optional[int],
    shape: Mapping[str, Any],
    login: Optional[str] = None,
    open_browser: Optional[bool] = None,
) -> Dict[str, Any]:
    """Text bodies travel as ``body``, bytes as ``bodyBase64``. Without a
    finite ``timeout`` the agent applies its default. ``shape``: what
    ``account_and_shape`` built. ``login="ifNeeded"`` lets the agent log in
    to an API it learns from the answer's 401, then resend."""
    request: Dict[str, Any] = {"method": method, "url": url}
    if headers:
        request["headers"] = dict(headers)
    if isinstance(body, str):
        request["body"] = body
    elif body is not None:
        request["bodyBase64"] = base64.b64encode(body).decode("ascii")
    params: Dict[str, Any] = {"request": request}
    if provider is not None:
        params["provider"] = provider
    if timeout is not None and not math.isinf(timeout):
        params["timeoutSeconds"] = min(timeout, FETCH_MAX_TIMEOUT)
    if max_response_bytes is not None:
        params["maxResponseBytes"] = max_response_bytes
    if login is not None:
        params["login"] = login
    if open_browser is not None:
        params["openBrowser"] = open_browser
    params.update(shape)
    return params


def forget(provider: str) -> Dict[str, Any]:
    return {"provider": provider}


def fetch_answer_limit(timeout: Optional[float]) -> Optional[float]:
    """How long the client waits for fetch's answer: the request's timeout
    plus a grace, or for ever when the request has none."""
    if timeout is None or math.isinf(timeout):
        return math.inf
    return min(timeout, FETCH_MAX_TIMEOUT) + FETCH_ANSWER_GRACE
