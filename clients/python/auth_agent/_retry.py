"""What every HTTP adapter shares: whose token it asks for, and when to
refresh and resend."""

from typing import Any, Dict, Generic, NamedTuple, Optional, Sequence, TypeVar

from .results import SignResult


class Pin(NamedTuple):
    """The account and token shape an adapter asks for on every request it
    signs (``None``: the agent's choice). The refresh after a 401 names the
    same account, so the retry goes out as the same user."""

    account: Optional[str] = None
    scopes: Optional[Sequence[str]] = None
    audience: Optional[str] = None
    resource: Optional[str] = None

    def sign_options(self) -> Dict[str, Any]:
        """Keyword arguments for ``sign``."""
        return self._asdict()


AgentT = TypeVar("AgentT")


class Pinned(Generic[AgentT]):
    """What each adapter is built from: the agent, the provider to sign with
    (``None``: the one covering the URL's origin) and its ``Pin``."""

    def __init__(
        self,
        agent: AgentT,
        provider: Optional[str] = None,
        *,
        account: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        audience: Optional[str] = None,
        resource: Optional[str] = None,
    ) -> None:
        self.agent = agent
        self.provider = provider
        self.pin = Pin(account, scopes, audience, resource)


def should_refresh(status: int, sent_authorization: Optional[str], signed: SignResult) -> bool:
    """A 401 that answered the Authorization this client added: refresh once
    (passing that header, so a token another caller already replaced is not
    refreshed again) and resend once. A 401 for a header the caller set
    itself, or for an unsigned request, is the caller's business."""
    return (
        status == 401
        and signed.provider is not None
        and signed.authorization is not None
        and sent_authorization == signed.authorization
    )
