"""The synchronous client.

A reader thread matches the agent's answers to requests by id, so calls may
come from any thread and many may be in flight at once; a second thread runs
notification callbacks, so a callback may itself call the agent.
"""

import logging
import math
import os
import queue
import subprocess
import threading
from itertools import count
from typing import (
    IO,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
    cast,
)

from . import _params, _present
from ._launch import PathLike, StderrTail, agent_command, log_stderr_line
from ._socket import SocketConnection
from ._version import __version__
from ._present import CLIENT_NAME, PresentLogin
from ._wire import HostRequest, Notification, RequestId, Response, decode, encode
from .errors import AuthAgentError, cannot_start, ended, timed_out
from .protocol import NOTIFICATIONS, TIMEOUT
from .results import (
    AccountChoice,
    FetchResponse,
    InitializeResult,
    LoginResult,
    ForgetResult,
    LogoutResult,
    RefreshResult,
    SignResult,
    StatusResult,
    SubscribeResult,
    TokenResult,
    with_datetimes,
)

logger = logging.getLogger("auth_agent")

Callback = Callable[[Any], None]


class PendingCall:
    """A request sent to the agent; ``result()`` waits for its answer."""

    def __init__(self, agent: "AuthAgent", id: int, method: str) -> None:
        self.id = id
        self.method = method
        self._agent = agent
        self._answered = threading.Event()
        self._result: Any = None
        self._error: Optional[AuthAgentError] = None

    def done(self) -> bool:
        return self._answered.is_set()

    def cancel(self) -> None:
        """Ask the agent to cancel; ``result()`` then raises its -32800 error
        (or returns the answer, if that was already on its way)."""
        self._agent.cancel(self.id)

    def result(self, timeout: Optional[float] = None) -> Any:
        """The answer, or the error as AuthAgentError.

        ``timeout`` defaults to the client's; ``math.inf`` waits for ever. When
        it runs out the request is cancelled at the agent and AuthAgentError
        with reason ``"timeout"`` is raised.
        """
        limit = self._agent.timeout if timeout is None else timeout
        wait = None if limit is None or math.isinf(limit) else limit
        if not self._answered.wait(wait) and self._agent._abandon(self.id):
            raise timed_out(self.method, limit)
        self._answered.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def _resolve(self, result: Any, error: Optional[AuthAgentError]) -> None:
        self._result = result
        self._error = error
        self._answered.set()


class AuthAgent:
    """A running auth-agent process and the JSON-RPC session with it.

    ``binary`` is the executable (default ``$AUTH_AGENT_BIN``, else the agent
    the platform wheel carries, else ``auth-agent`` on PATH); ``config`` its config file (default: the agent
    reads ``$AUTH_AGENT_CONFIG``). The agent's stderr goes to this process's
    stderr unless ``capture_stderr``; either way its last lines are kept in
    ``stderr_tail``. ``timeout`` is the default per-call limit in seconds
    (``None``: none). Use as a context manager, or call ``close()``.

    ``present_login``: a callback that presents this client's interactive
    logins itself (opens the URL, shows the code, or hands back the redirect
    URL its person pasted): the client then declares the capability in an
    ``initialize`` it sends at once, and the agent asks it with the
    ``presentLogin`` request before falling back to ``loginPrompt``. It is
    called on a thread of its own with the request's params and returns
    ``{"opened": True}``, ``{"redirectUrl": url}`` or ``{"cancelled": True}``;
    raising answers an error (the agent then prompts as without it).
    """

    def __init__(
        self,
        binary: Optional[PathLike] = None,
        *,
        config: Optional[PathLike] = None,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        capture_stderr: bool = False,
        timeout: Optional[float] = 30.0,
        shutdown_grace: float = 3.0,
        present_login: Optional[PresentLogin] = None,
    ) -> None:
        command = agent_command(binary, config, args)
        self.timeout = timeout
        self.shutdown_grace = shutdown_grace
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        except OSError as error:
            raise cannot_start(command[0], error) from error
        self._start(capture_stderr, present_login)

    @classmethod
    def connect(
        cls,
        binary: Optional[PathLike] = None,
        *,
        socket_path: Optional[str] = None,
        connect_timeout: float = 1.0,
        **options: Any,
    ) -> "AuthAgent":
        """The socket agent ``AUTH_AGENT_SOCK`` (or ``socket_path``) names —
        one agent, one memory and one login for every tool of the session —
        when it is this user's and answers a ``ping`` within
        ``connect_timeout`` seconds; otherwise (unset, absent, silent: with a
        warning when it was named) an agent started as ``AuthAgent(binary,
        **options)`` would. ``close()`` ends this connection only."""
        path = socket_path or os.environ.get("AUTH_AGENT_SOCK")
        if path:
            try:
                connection = SocketConnection(path, connect_timeout)
            except OSError as error:
                logger.warning("not using the agent at %s (%s); starting one", path, error)
            else:
                agent = cls.__new__(cls)
                agent.timeout = options.get("timeout", 30.0)
                agent.shutdown_grace = options.get("shutdown_grace", 3.0)
                agent._process = connection  # type: ignore[assignment]
                agent._start(True, options.get("present_login"))
                try:
                    agent.call("ping", timeout=connect_timeout)
                    return agent
                except AuthAgentError as error:
                    agent._closing = True
                    connection.kill()
                    agent._reader.join(connect_timeout)
                    connection.stdout.close()
                    connection.stderr.close()
                    logger.warning("not using the agent at %s (%s); starting one", path, error)
        return cls(binary, **options)

    def _start(self, capture_stderr: bool, present_login: Optional[PresentLogin]) -> None:
        self._stdin = cast(IO[bytes], self._process.stdin)
        self._ids = count(1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: Dict[RequestId, PendingCall] = {}
        self._ended = False
        self._closing = False
        self._callbacks: Dict[str, List[Callback]] = {}
        self._notifications: "queue.Queue[Optional[Notification]]" = queue.Queue()
        self._stderr = StderrTail()
        self._stderr_thread = self._start_thread(self._copy_stderr, capture_stderr)
        self._reader = self._start_thread(self._read_answers)
        self._dispatcher = self._start_thread(self._dispatch_notifications)
        self._present_login = present_login
        # Sent before any other request, so the agent knows the capability
        # before the first login; initialize() answers with its result.
        self._initialized: Optional[PendingCall] = None
        if present_login is not None:
            self._initialized = self._initialize(CLIENT_NAME, __version__)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> Optional[int]:
        """The agent's exit code once it has ended, else ``None``."""
        return self._process.poll()

    @property
    def stderr_tail(self) -> str:
        """The last lines the agent wrote to stderr."""
        return self._stderr.text()

    def __enter__(self) -> "AuthAgent":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Notifications

    def on(self, event: str, callback: Callback) -> Callable[[], None]:
        """Call ``callback(params)`` for each ``event`` notification; returns
        a function that removes it. Callbacks run one at a time on the
        client's notification thread and only after ``subscribe()``."""
        if event not in NOTIFICATIONS:
            raise ValueError(f"unknown notification {event!r}; known: {', '.join(NOTIFICATIONS)}")
        with self._lock:
            self._callbacks.setdefault(event, []).append(callback)
        return lambda: self.off(event, callback)

    def off(self, event: str, callback: Callback) -> None:
        with self._lock:
            callbacks = self._callbacks.get(event, [])
            if callback in callbacks:
                callbacks.remove(callback)

    # Requests

    def submit(self, method: str, params: Optional[Mapping[str, Any]] = None) -> PendingCall:
        """Send a request without waiting; see ``PendingCall``."""
        with self._lock:
            if self._ended:
                raise self._end_error()
            call = PendingCall(self, next(self._ids), method)
            self._pending[call.id] = call
        self._write(encode(method, params, call.id))
        return call

    def call(
        self,
        method: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Any:
        """Send a request and wait for its result (the raw JSON value)."""
        return self.submit(method, params).result(timeout)

    def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Send a notification: no answer comes, and none is waited for."""
        self._write(encode(method, params))

    def cancel(self, request_id: RequestId) -> None:
        """Ask the agent to cancel a request in flight; unknown ids are ignored."""
        self.notify("$/cancelRequest", {"id": request_id})

    def initialize(
        self,
        client_name: str = CLIENT_NAME,
        client_version: str = __version__,
        *,
        timeout: Optional[float] = None,
    ) -> InitializeResult:
        """Optional handshake; answers the protocol version and capabilities.
        With ``present_login`` the client sent it when it started (declaring
        the capability): this answers that result."""
        if self._initialized is None:
            self._initialized = self._initialize(client_name, client_version)
        try:
            return cast(InitializeResult, self._initialized.result(timeout))
        except AuthAgentError as error:
            if error.reason == TIMEOUT:
                # Cancelled and forgotten: a later call asks again (and hears
                # -32600 if the agent had taken the first one after all).
                self._initialized = None
            raise

    def _initialize(self, client_name: str, client_version: str) -> PendingCall:
        capabilities = _present.capabilities(self._present_login)
        return self.submit("initialize", _params.initialize(client_name, client_version, capabilities))

    def ping(self, *, timeout: Optional[float] = None) -> None:
        """Return once the agent answers; a liveness check."""
        self.call("ping", timeout=timeout)

    def status(self, *, timeout: Optional[float] = None) -> StatusResult:
        """Every configured provider, its login state and the fields a login asks for."""
        return cast(StatusResult, with_datetimes(self.call("status", timeout=timeout)))

    def login(
        self,
        provider: Optional[str] = None,
        *,
        resource: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        token: Optional[str] = None,
        open_browser: Optional[bool] = None,
        flow: Optional[str] = None,
        name: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> LoginResult:
        """Log in through ``provider`` with the credentials its flow needs
        (username and password, or token); emits userLoggedIn. ``flow`` picks one
        of the provider's ``flows`` (status), default its first.

        Or, instead of ``provider``, ``resource``: the URL of an API the agent
        has no configuration for. The agent learns it from its metadata
        (discovery, registration) and runs a browser login (``flow="deviceCode"``:
        a device login where offered); the result's ``provider`` is the learned
        provider's id (``name``: the id to give it instead of one made from its URL)."""
        params = _params.login(provider, username, password, token, open_browser, flow, resource, name)
        return cast(LoginResult, with_datetimes(self.call("login", params, timeout=timeout)))

    def logout(
        self,
        provider: str,
        *,
        account: Optional[str] = None,
        all: bool = False,
        timeout: Optional[float] = None,
    ) -> LogoutResult:
        """Log out of one account of ``provider`` (``account``, else the one
        this connection would use), or of every account with ``all=True``,
        revoking the tokens at the server when configured; emits userLoggedOut."""
        params = _params.logout(provider, account, all)
        return cast(LogoutResult, self.call("logout", params, timeout=timeout))

    def forget(self, provider: str, *, timeout: Optional[float] = None) -> ForgetResult:
        """Remove a learned provider: log out of its accounts, revoke, and
        delete its registration; a later ``login(resource=...)`` learns it again."""
        return cast(ForgetResult, self.call("forget", _params.forget(provider), timeout=timeout))

    def select_account(
        self, provider: str, account: Optional[str], *, timeout: Optional[float] = None
    ) -> AccountChoice:
        """Use ``account`` for this connection's requests to ``provider`` that
        name none (``None``: back to the provider's default). Only this
        client's agent connection is affected, never another program's."""
        params = {"provider": provider, "account": account}
        return cast(AccountChoice, self.call("selectAccount", params, timeout=timeout))

    def set_default_account(
        self, provider: str, account: str, *, timeout: Optional[float] = None
    ) -> AccountChoice:
        """Make ``account`` the provider's default, for every connection,
        agent and the command line (kept in the store)."""
        params = {"provider": provider, "account": account}
        return cast(AccountChoice, self.call("setDefaultAccount", params, timeout=timeout))

    def complete_login(
        self, request_id: Any, redirect_url: str, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """Finish a waiting browser login with the whole redirect URL its
        browser ended at (``http://127.0.0.1:PORT/callback?…``), pasted back by
        the person because that browser could not reach the agent; any
        connection of the agent may send it, ``request_id`` being the id of the
        ``login`` (a ``loginPrompt``'s ``requestId``). A wrong ``state``, a used
        URL or an unknown request raises (-32602) and the login keeps waiting."""
        params = {"requestId": request_id, "redirectUrl": redirect_url}
        return cast(Dict[str, Any], self.call("completeLogin", params, timeout=timeout))

    def sign(
        self,
        method: str,
        url: str,
        headers: Optional[Mapping[str, str]] = None,
        provider: Optional[str] = None,
        *,
        account: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        audience: Optional[str] = None,
        resource: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> SignResult:
        """The headers to add to this HTTP request (empty when no provider
        covers its origin), refreshing the token first when it is due; the
        result is that mapping, with the ``provider`` that signed.

        ``account`` signs as that account (default: the one this connection
        selected, else the provider's default); ``scopes``, ``audience`` and
        ``resource`` (RFC 8707) ask for a token shaped for the API called.
        A shape the server refuses raises ``ScopeNotGranted``."""
        shape = _params.account_and_shape(account, scopes, audience, resource)
        params = _params.sign(method, url, headers, provider, shape)
        return SignResult(self.call("sign", params, timeout=timeout))

    def fetch(
        self,
        method: str,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        body: Union[str, bytes, None] = None,
        provider: Optional[str] = None,
        account: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        audience: Optional[str] = None,
        resource: Optional[str] = None,
        timeout: Optional[float] = None,
        max_response_bytes: Optional[int] = None,
        login: Optional[str] = None,
        open_browser: Optional[bool] = None,
    ) -> FetchResponse:
        """Send the request through the agent, signed like ``sign``; after a
        401 for the token it sent the agent refreshes once and resends once.

        ``timeout`` (default: the client's) bounds the whole request; running
        out raises ``RequestFailed``. Any HTTP status is a response, not an
        exception.

        When no provider covers the URL and it answers 401 with a Bearer
        challenge, the response's ``login`` is ``{"resource", "authorizationServer",
        "scopes"}``: pass its ``resource`` to ``login(resource=...)``. With
        ``login="ifNeeded"`` the agent runs that login itself (prompting this
        client, as ``login`` does; ``open_browser`` as ``login``'s) and resends.
        """
        limit = self.timeout if timeout is None else timeout
        shape = _params.account_and_shape(account, scopes, audience, resource)
        params = _params.fetch(
            method, url, headers, body, provider, limit, max_response_bytes, shape, login, open_browser
        )
        result = self.call("fetch", params, timeout=_params.fetch_answer_limit(limit))
        return FetchResponse(result)

    def refresh(
        self,
        provider: str,
        failed_authorization: Optional[str] = None,
        *,
        account: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> RefreshResult:
        """After a 401: pass the Authorization header that failed, so a token
        that was already replaced is not refreshed twice, and the ``account``
        it was signed for (default: as for ``sign``)."""
        params = _params.refresh(provider, failed_authorization, account)
        return cast(RefreshResult, with_datetimes(self.call("refresh", params, timeout=timeout)))

    def token(
        self,
        provider: str,
        *,
        account: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        audience: Optional[str] = None,
        resource: Optional[str] = None,
        min_valid_seconds: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> TokenResult:
        """The current access token, for scripts that cannot use ``sign``;
        refreshed first when due. ``account`` and the shape as in ``sign``;
        ``min_valid_seconds`` refreshes first unless it is valid that long
        (then ``refreshed`` says whether it was)."""
        shape = _params.account_and_shape(account, scopes, audience, resource)
        if min_valid_seconds is not None:
            shape = {**shape, "minValidSeconds": min_valid_seconds}
        result = self.call("token", _params.token(provider, shape), timeout=timeout)
        return cast(TokenResult, with_datetimes(result))

    def subscribe(
        self,
        events: Optional[Iterable[str]] = None,
        providers: Optional[Iterable[str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> SubscribeResult:
        """Start notifications (default: userLoggedIn and userLoggedOut)."""
        params = _params.subscribe(events, providers)
        return cast(SubscribeResult, with_datetimes(self.call("subscribe", params, timeout=timeout)))

    def unsubscribe(self, *, timeout: Optional[float] = None) -> None:
        """Stop notifications."""
        self.call("unsubscribe", timeout=timeout)

    def close(self) -> Optional[int]:
        """Shut the agent down (shutdown, exit, end of input), kill it if it
        has not ended within ``shutdown_grace`` seconds; returns its exit code.

        Calls still in flight fail with reason ``"closed"``.
        """
        with self._lock:
            stop_politely = not self._closing and not self._ended
            self._closing = True
        if stop_politely:
            try:
                self.call("shutdown", timeout=self.shutdown_grace)
                self.notify("exit")
            except AuthAgentError:
                pass
        try:
            self._stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(self.shutdown_grace)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join()
        self._stderr_thread.join(1.0)
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None:
                pipe.close()
        if threading.current_thread() is not self._dispatcher:
            self._dispatcher.join()
        return self._process.returncode

    # Internals

    def _start_thread(self, target: Callable[..., None], *args: Any) -> threading.Thread:
        thread = threading.Thread(
            target=target, args=args, name=f"auth-agent-{target.__name__}", daemon=True
        )
        thread.start()
        return thread

    def _write(self, line: bytes) -> None:
        with self._write_lock:
            try:
                self._stdin.write(line)
                self._stdin.flush()
            except (OSError, ValueError):
                pass  # The agent is gone; the reader fails the pending calls.

    def _abandon(self, request_id: RequestId) -> bool:
        """Forget a request nobody waits for any more and cancel it at the agent."""
        with self._lock:
            abandoned = self._pending.pop(request_id, None) is not None
        if abandoned:
            self.cancel(request_id)
        return abandoned

    def _read_answers(self) -> None:
        stdout = cast(IO[bytes], self._process.stdout)
        for line in iter(stdout.readline, b""):
            message = decode(line)
            if isinstance(message, Response):
                with self._lock:
                    call = self._pending.pop(message.id, None)
                if call is not None:
                    call._resolve(message.result, message.error)
            elif isinstance(message, Notification):
                self._notifications.put(message)
            elif isinstance(message, HostRequest):
                self._answer(message)
        self._end()

    def _answer(self, request: HostRequest) -> None:
        """Every agent→host request gets one answer: -32601 for those this
        client has no handler for, else the callback's, from a thread of its
        own (the person may take a while; answers keep being read meanwhile)."""
        refusal = _present.unanswerable(request, self._present_login)
        if refusal is not None:
            self._write(refusal)
            return
        present_login = cast(PresentLogin, self._present_login)

        def present() -> None:
            try:
                line = _present.result_line(request.id, present_login(request.params))
            except Exception as error:
                line = _present.error_line(request.id, error)
            self._write(line)

        self._start_thread(present)

    def _end(self) -> None:
        """The agent closed its output: fail every call still waiting."""
        try:
            self._process.wait(self.shutdown_grace)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_thread.join(1.0)
        with self._lock:
            self._ended = True
            pending, self._pending = self._pending, {}
        for call in pending.values():
            call._resolve(None, self._end_error())
        self._notifications.put(None)

    def _end_error(self) -> AuthAgentError:
        return ended(self._closing, self._process.poll(), self._stderr.text())

    def _copy_stderr(self, capture: bool) -> None:
        stderr = cast(IO[bytes], self._process.stderr)
        for line in iter(stderr.readline, b""):
            self._stderr.add(line)
            if not capture:
                log_stderr_line(line)

    def _dispatch_notifications(self) -> None:
        while True:
            notification = self._notifications.get()
            if notification is None:
                return
            with self._lock:
                callbacks = list(self._callbacks.get(notification.method, ()))
            for callback in callbacks:
                try:
                    callback(notification.params)
                except Exception:
                    logger.exception("auth-agent %s callback raised", notification.method)
