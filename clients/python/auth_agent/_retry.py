"""What every HTTP adapter shares: whose token it asks for, and when to
refresh and resend."""

from typing import Any, Dict, NamedTuple, Optional, Sequence

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
