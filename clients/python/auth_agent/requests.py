"""Authentication for ``requests``: ``session.auth = AgentAuth(agent)``.

Needs the ``requests`` extra (``pip install 'auth-agent-client[requests]'``);
nothing else in the package imports it.
"""

from typing import Any, Callable, Optional

import requests
from requests.cookies import extract_cookies_to_jar

from ._retry import Pinned, should_refresh
from .client import AuthAgent
from .results import SignResult


class AgentAuth(Pinned[AuthAgent], requests.auth.AuthBase):
    """Signs each request through the agent and, when the response is a 401
    for the Authorization it added, refreshes and resends once.

    ``provider`` names the provider to sign with; by default the one covering
    the URL's origin (requests to origins no provider covers go out unsigned).
    ``account`` signs as that account (default: the one the agent's
    connection selected, else the provider's default), so two sessions can
    work as two users; ``scopes``, ``audience`` and ``resource`` ask for a
    token shaped for the API. A second 401 is returned as is. Errors of the
    agent (``NotLoggedIn``, ``SessionExpired``, ``ScopeNotGranted``, ...) are
    raised from the call that sent the request.
    """


    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        signed = self._sign(request, self.provider)
        body_position = _tell(request.body)

        def retry_after_401(response: requests.Response, **send_options: Any) -> requests.Response:
            sent = response.request.headers.get("Authorization")
            if not should_refresh(response.status_code, sent, signed):
                return response
            assert signed.provider is not None
            self.agent.refresh(signed.provider, signed.authorization, account=self.pin.account)
            retry = response.request.copy()
            retry.deregister_hook("response", retry_after_401)  # type: ignore[no-untyped-call]
            if body_position is not None:
                retry.body.seek(body_position)  # type: ignore[union-attr]
            extract_cookies_to_jar(retry._cookies, response.request, response.raw)  # type: ignore
            retry.prepare_cookies(retry._cookies)  # type: ignore[attr-defined]
            self._sign(retry, signed.provider)
            response.content  # noqa: B018  (read it, so the connection can be reused)
            response.close()
            resent: requests.Response = response.connection.send(retry, **send_options)
            resent.history.append(response)
            resent.request = retry
            return resent

        request.register_hook("response", retry_after_401)  # type: ignore[no-untyped-call]
        return request

    def _sign(self, request: requests.PreparedRequest, provider: Optional[str]) -> SignResult:
        assert request.method is not None and request.url is not None
        signed = self.agent.sign(request.method, request.url, provider=provider, **self.pin.sign_options())
        request.headers.update(signed)
        return signed


def _tell(body: Any) -> Optional[int]:
    """Where a file-like body starts, so a resend can rewind it."""
    tell: Optional[Callable[[], int]] = getattr(body, "tell", None)
    if tell is None:
        return None
    try:
        return tell()
    except OSError:
        return None
