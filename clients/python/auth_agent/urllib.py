"""Authentication for ``urllib.request``:
``urllib.request.build_opener(AgentAuthHandler(agent))``. Standard library only.
"""

import urllib.request
from http.client import HTTPMessage
from typing import IO, Optional

from ._retry import Pinned, should_refresh
from .client import AuthAgent
from .results import SignResult

#: Attributes the handler keeps on a Request between sending it and its answer.
_SIGNED = "_auth_agent_signed"
_RESENT = "_auth_agent_resent"


class AgentAuthHandler(Pinned[AuthAgent], urllib.request.BaseHandler):
    """Signs each request through the agent and, when the answer is a 401 for
    the Authorization it added, refreshes and resends once; a second 401
    raises ``HTTPError`` as usual. The headers are "unredirected", so urllib
    does not carry them to another host on a redirect. ``provider``,
    ``account`` and the shape (``scopes``, ``audience``, ``resource``) as in
    ``auth_agent.requests.AgentAuth``."""


    def http_request(self, request: urllib.request.Request) -> urllib.request.Request:
        signed = self.agent.sign(
            request.get_method(), request.full_url, provider=self.provider, **self.pin.sign_options()
        )
        for name, value in signed.items():
            request.add_unredirected_header(name, value)
        setattr(request, _SIGNED, signed)
        return request

    https_request = http_request

    def http_error_401(
        self,
        request: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
    ) -> Optional[IO[bytes]]:
        signed: Optional[SignResult] = getattr(request, _SIGNED, None)
        if signed is None or getattr(request, _RESENT, False):
            return None
        if not should_refresh(code, request.get_header("Authorization"), signed):
            return None
        assert signed.provider is not None
        self.agent.refresh(signed.provider, signed.authorization, account=self.pin.account)
        fp.read()
        fp.close()
        setattr(request, _RESENT, True)
        try:
            assert self.parent is not None
            resent: IO[bytes] = self.parent.open(request, timeout=request.timeout)
            return resent
        finally:
            setattr(request, _RESENT, False)
