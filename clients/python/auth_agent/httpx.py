"""Authentication for ``httpx``: ``httpx.Client(auth=AgentAuth(agent))`` with
an ``AuthAgent``, ``httpx.AsyncClient(auth=AgentAuth(agent))`` with an
``AsyncAuthAgent``.

Needs the ``httpx`` extra (``pip install 'auth-agent-client[httpx]'``);
nothing else in the package imports it.
"""

from typing import AsyncGenerator, Generator, Optional, Union

import httpx

from ._retry import Pinned, should_refresh
from .aio import AsyncAuthAgent
from .client import AuthAgent
from .results import SignResult


class _Refresh:
    """A step of ``_flow``: refresh ``signed.provider`` after its 401."""

    def __init__(self, signed: SignResult) -> None:
        self.signed = signed


class _Sign:
    """A step of ``_flow``: sign the request with this provider (``None``: by origin)."""

    def __init__(self, provider: Optional[str]) -> None:
        self.provider = provider


_Step = Union[_Sign, _Refresh, httpx.Request]


class AgentAuth(Pinned[Union[AuthAgent, AsyncAuthAgent]], httpx.Auth):
    """Signs each request through the agent and, when the response is a 401
    for the Authorization it added, refreshes and resends once; a second 401
    is returned as is. ``provider``, ``account`` and the shape (``scopes``,
    ``audience``, ``resource``) as in ``auth_agent.requests.AgentAuth``."""


    def _flow(self, request: httpx.Request) -> Generator[_Step, object, None]:
        """The exchange without I/O, driven by the sync and the async flow:
        it yields what to do (sign, refresh, send) and is sent the outcome."""
        signed = yield _Sign(self.provider)
        assert isinstance(signed, SignResult)
        request.headers.update(signed)
        response = yield request
        assert isinstance(response, httpx.Response)
        if not should_refresh(response.status_code, request.headers.get("Authorization"), signed):
            return
        yield _Refresh(signed)
        signed = yield _Sign(signed.provider)
        assert isinstance(signed, SignResult)
        request.headers.update(signed)
        yield request

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        agent = self.agent
        if not isinstance(agent, AuthAgent):
            raise TypeError("httpx.Client needs AgentAuth(AuthAgent(...)); AsyncAuthAgent is for httpx.AsyncClient")
        flow = self._flow(request)
        outcome: object = None
        while True:
            try:
                step = flow.send(outcome)
            except StopIteration:
                return
            if isinstance(step, _Sign):
                outcome = agent.sign(
                    request.method, str(request.url), provider=step.provider, **self.pin.sign_options()
                )
            elif isinstance(step, _Refresh):
                assert step.signed.provider is not None
                outcome = agent.refresh(
                    step.signed.provider, step.signed.authorization, account=self.pin.account
                )
            else:
                outcome = yield step

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        agent = self.agent
        if not isinstance(agent, AsyncAuthAgent):
            raise TypeError("httpx.AsyncClient needs AgentAuth(AsyncAuthAgent(...)); AuthAgent is for httpx.Client")
        flow = self._flow(request)
        outcome: object = None
        while True:
            try:
                step = flow.send(outcome)
            except StopIteration:
                return
            if isinstance(step, _Sign):
                outcome = await agent.sign(
                    request.method, str(request.url), provider=step.provider, **self.pin.sign_options()
                )
            elif isinstance(step, _Refresh):
                assert step.signed.provider is not None
                outcome = await agent.refresh(
                    step.signed.provider, step.signed.authorization, account=self.pin.account
                )
            else:
                outcome = yield step
