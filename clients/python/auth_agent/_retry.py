"""The one rule every HTTP adapter shares: when to refresh and resend."""

from typing import Optional

from .results import SignResult


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
