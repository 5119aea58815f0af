"""The asyncio client.

A reader task matches answers to requests by id. Cancelling a task that awaits
a call (directly, or through ``asyncio.wait_for``) sends ``$/cancelRequest``
for it, so the agent stops work nobody waits for.
"""

import asyncio
import inspect
import logging
import math
import os
from itertools import count
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Union,
    cast,
)

from . import _params, _present
from ._launch import PathLike, StderrTail, agent_command, log_stderr_line
from ._present import CLIENT_NAME, PresentLogin
from ._socket import AsyncSocketConnection
from ._version import __version__
from ._wire import HostRequest, Notification, RequestId, Response, decode, encode
from .errors import AuthAgentError, cannot_start, ended, timed_out
from .protocol import CLOSED, NOTIFICATIONS
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

AsyncCallback = Callable[[Any], Union[None, Awaitable[None]]]

#: Longest line read from the agent; its own default message limit is 1 MiB.
MAX_LINE_BYTES = 16 * 1024 * 1024


class NotificationStream(AsyncIterator[Notification]):
    """Every notification from its creation until the agent ends or
    ``close()`` is called, in order, for ``async for``."""

    def __init__(self, agent: "AsyncAuthAgent") -> None:
        self._agent = agent
        self._queue: "asyncio.Queue[Optional[Notification]]" = asyncio.Queue()
        if agent._ended:
            self._queue.put_nowait(None)
        else:
            agent._streams.add(self)

    def __aiter__(self) -> "NotificationStream":
        return self

    async def __anext__(self) -> Notification:
        notification = await self._queue.get()
        if notification is None:
            self._queue.put_nowait(None)
            raise StopAsyncIteration
        return notification

    def close(self) -> None:
        self._agent._streams.discard(self)
        self._queue.put_nowait(None)


class AsyncAuthAgent:
    """A running auth-agent process, driven from asyncio.

    Options are those of ``AuthAgent``; ``present_login`` may also be a
    coroutine function (it runs as a task). Start it with ``async with
    AsyncAuthAgent(...) as agent:`` or ``agent = await AsyncAuthAgent(...).start()``
    (then ``await agent.aclose()``).
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
        self._command = agent_command(binary, config, args)
        self._present_login = present_login
        self._initialized: "Optional[asyncio.Future[Any]]" = None
        self._env = env
        self._capture_stderr = capture_stderr
        self.timeout = timeout
        self.shutdown_grace = shutdown_grace
        self._process: Optional[asyncio.subprocess.Process] = None
        self._ids = count(1)
        self._pending: Dict[RequestId, "asyncio.Future[Any]"] = {}
        self._ended = False
        self._closing = False
        self._callbacks: Dict[str, List[AsyncCallback]] = {}
        self._callback_tasks: Set["asyncio.Future[Any]"] = set()
        #: present_login calls in progress; a person may never answer, so
        #: aclose() cancels them instead of waiting.
        self._present_tasks: Set["asyncio.Future[Any]"] = set()
        self._streams: Set[NotificationStream] = set()
        self._stderr = StderrTail()

    async def start(self) -> "AsyncAuthAgent":
        """Spawn the agent process; returns ``self``."""
        if self._process is not None:
            return self
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                limit=MAX_LINE_BYTES,
            )
        except OSError as error:
            raise cannot_start(self._command[0], error) from error
        self._attach()
        return self

    def _attach(self) -> None:
        self._write_lock = asyncio.Lock()
        self._stderr_task = asyncio.ensure_future(self._copy_stderr())
        self._reader_task = asyncio.ensure_future(self._read_answers())
        if self._present_login is not None:
            # Written before start() returns, so before any request of the
            # caller: the agent knows the capability before the first login.
            _, self._initialized = self._send_now("initialize", self._initialize_params(CLIENT_NAME, __version__))
            # Nobody need await it: its failure (the agent ended) is not an unretrieved exception.
            self._initialized.add_done_callback(lambda answer: answer.cancelled() or answer.exception())

    @classmethod
    async def connect(
        cls,
        binary: Optional[PathLike] = None,
        *,
        socket_path: Optional[str] = None,
        connect_timeout: float = 1.0,
        **options: Any,
    ) -> "AsyncAuthAgent":
        """The socket agent ``AUTH_AGENT_SOCK`` (or ``socket_path``) names, as
        ``AuthAgent.connect()``; otherwise an agent started as
        ``await AsyncAuthAgent(binary, **options).start()`` would be."""
        path = socket_path or os.environ.get("AUTH_AGENT_SOCK")
        if path:
            agent = cls(binary, **options)
            try:
                connection = await asyncio.wait_for(AsyncSocketConnection.open(path), connect_timeout)
            except (OSError, asyncio.TimeoutError) as error:
                logger.warning("not using the agent at %s (%s); starting one", path, error or "no answer")
            else:
                agent._process = connection  # type: ignore[assignment]
                agent._attach()
                try:
                    await agent.call("ping", timeout=connect_timeout)
                    return agent
                except AuthAgentError as error:
                    agent._closing = True
                    connection.kill()
                    await agent._reader_task
                    logger.warning("not using the agent at %s (%s); starting one", path, error)
        return await cls(binary, **options).start()

    async def __aenter__(self) -> "AsyncAuthAgent":
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def pid(self) -> int:
        return self._started().pid

    @property
    def returncode(self) -> Optional[int]:
        return self._process.returncode if self._process else None

    @property
    def stderr_tail(self) -> str:
        return self._stderr.text()

    # Notifications

    def on(self, event: str, callback: AsyncCallback) -> Callable[[], None]:
        """Call ``callback(params)`` for each ``event`` notification (a
        coroutine function runs as its own task); returns a remover. Only
        after ``subscribe()`` does the agent send notifications."""
        if event not in NOTIFICATIONS:
            raise ValueError(f"unknown notification {event!r}; known: {', '.join(NOTIFICATIONS)}")
        self._callbacks.setdefault(event, []).append(callback)
        return lambda: self.off(event, callback)

    def off(self, event: str, callback: AsyncCallback) -> None:
        callbacks = self._callbacks.get(event, [])
        if callback in callbacks:
            callbacks.remove(callback)

    def notifications(self) -> NotificationStream:
        """Every notification from now on, including names this client does
        not know yet: ``async for method, params in agent.notifications():``."""
        return NotificationStream(self)

    # Requests

    async def call(
        self,
        method: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Any:
        """Send a request and await its result (the raw JSON value).

        ``timeout`` defaults to the client's (``math.inf``: none); when it runs
        out the request is cancelled and AuthAgentError reason ``"timeout"``
        raised.
        """
        request_id, answer = self._send_now(method, params)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._drain()
            if limit is None or math.isinf(limit):
                return await answer
            return await asyncio.wait_for(answer, limit)
        except asyncio.TimeoutError:
            self._abandon(request_id)
            raise timed_out(method, limit) from None
        except asyncio.CancelledError:
            self._abandon(request_id)
            raise

    async def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Send a notification: no answer comes, and none is waited for."""
        await self._write(encode(method, params))

    async def initialize(
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
            _, self._initialized = self._send_now("initialize", self._initialize_params(client_name, client_version))
        limit = self.timeout if timeout is None else timeout
        waited = asyncio.shield(self._initialized)
        try:
            result = await (waited if limit is None or math.isinf(limit) else asyncio.wait_for(waited, limit))
        except asyncio.TimeoutError:
            raise timed_out("initialize", limit) from None
        return cast(InitializeResult, result)

    def _initialize_params(self, client_name: str, client_version: str) -> Dict[str, Any]:
        capabilities = _present.capabilities(self._present_login)
        return _params.initialize(client_name, client_version, capabilities)

    def _send_now(
        self, method: str, params: Optional[Mapping[str, Any]]
    ) -> "tuple[RequestId, asyncio.Future[Any]]":
        """Write a request at once — no await between the call and the write,
        so requests reach the agent in the order they were made — and return
        its id and the future its answer settles (the caller drains)."""
        self._started()
        if self._ended:
            raise self._end_error()
        request_id = next(self._ids)
        answer: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        stdin = self._started().stdin
        if stdin is not None and not stdin.is_closing():
            try:
                stdin.write(encode(method, params, request_id))
            except (ConnectionError, OSError):
                pass  # The agent is gone; the reader fails the pending calls.
        return request_id, answer

    async def ping(self, *, timeout: Optional[float] = None) -> None:
        """Return once the agent answers; a liveness check."""
        await self.call("ping", timeout=timeout)

    async def status(self, *, timeout: Optional[float] = None) -> StatusResult:
        """Every configured provider, its login state and the fields a login asks for."""
        return cast(StatusResult, with_datetimes(await self.call("status", timeout=timeout)))

    async def login(
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
        return cast(LoginResult, with_datetimes(await self.call("login", params, timeout=timeout)))

    async def logout(
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
        return cast(LogoutResult, await self.call("logout", params, timeout=timeout))

    async def forget(self, provider: str, *, timeout: Optional[float] = None) -> ForgetResult:
        """Remove a learned provider: log out of its accounts, revoke, and
        delete its registration; a later ``login(resource=...)`` learns it again."""
        return cast(ForgetResult, await self.call("forget", _params.forget(provider), timeout=timeout))

    async def select_account(
        self, provider: str, account: Optional[str], *, timeout: Optional[float] = None
    ) -> AccountChoice:
        """Use ``account`` for this connection's requests to ``provider`` that
        name none (``None``: back to the provider's default). Only this
        client's agent connection is affected, never another program's."""
        params = {"provider": provider, "account": account}
        return cast(AccountChoice, await self.call("selectAccount", params, timeout=timeout))

    async def set_default_account(
        self, provider: str, account: str, *, timeout: Optional[float] = None
    ) -> AccountChoice:
        """Make ``account`` the provider's default, for every connection,
        agent and the command line (kept in the store)."""
        params = {"provider": provider, "account": account}
        return cast(AccountChoice, await self.call("setDefaultAccount", params, timeout=timeout))

    async def complete_login(
        self, request_id: Any, redirect_url: str, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """Finish a waiting browser login with the whole redirect URL its
        browser ended at (``http://127.0.0.1:PORT/callback?…``), pasted back by
        the person because that browser could not reach the agent; any
        connection of the agent may send it, ``request_id`` being the id of the
        ``login`` (a ``loginPrompt``'s ``requestId``). A wrong ``state``, a used
        URL or an unknown request raises (-32602) and the login keeps waiting."""
        params = {"requestId": request_id, "redirectUrl": redirect_url}
        return cast(Dict[str, Any], await self.call("completeLogin", params, timeout=timeout))

    async def sign(
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
        return SignResult(await self.call("sign", params, timeout=timeout))

    async def fetch(
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
        """``AuthAgent.fetch``, awaited."""
        limit = self.timeout if timeout is None else timeout
        shape = _params.account_and_shape(account, scopes, audience, resource)
        params = _params.fetch(
            method, url, headers, body, provider, limit, max_response_bytes, shape, login, open_browser
        )
        result = await self.call("fetch", params, timeout=_params.fetch_answer_limit(limit))
        return FetchResponse(result)

    async def refresh(
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
        return cast(RefreshResult, with_datetimes(await self.call("refresh", params, timeout=timeout)))

    async def token(
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
        result = await self.call("token", _params.token(provider, shape), timeout=timeout)
        return cast(TokenResult, with_datetimes(result))

    async def subscribe(
        self,
        events: Optional[Iterable[str]] = None,
        providers: Optional[Iterable[str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> SubscribeResult:
        """Start notifications (default: userLoggedIn and userLoggedOut)."""
        params = _params.subscribe(events, providers)
        result = await self.call("subscribe", params, timeout=timeout)
        return cast(SubscribeResult, with_datetimes(result))

    async def unsubscribe(self, *, timeout: Optional[float] = None) -> None:
        """Stop notifications."""
        await self.call("unsubscribe", timeout=timeout)

    async def aclose(self) -> Optional[int]:
        """Shut the agent down (shutdown, exit, end of input), kill it if it
        has not ended within ``shutdown_grace`` seconds; returns its exit code.
        Calls still in flight fail with reason ``"closed"``."""
        process = self._process
        if process is None:
            return None
        if not self._closing and not self._ended:
            self._closing = True
            try:
                await self.call("shutdown", timeout=self.shutdown_grace)
                await self.notify("exit")
            except AuthAgentError:
                pass
        self._closing = True
        stdin = process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(process.wait(), self.shutdown_grace)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        await self._reader_task
        for task in list(self._present_tasks):
            task.cancel()
        current = asyncio.current_task()
        await asyncio.gather(
            *(task for task in self._callback_tasks if task is not current),
            return_exceptions=True,
        )
        return process.returncode

    # Internals

    def _started(self) -> asyncio.subprocess.Process:
        if self._process is None:
            raise AuthAgentError(
                "the agent is not started: use 'async with' or 'await agent.start()'",
                reason=CLOSED,
            )
        return self._process

    async def _write(self, line: bytes) -> None:
        stdin = self._started().stdin
        if stdin is None or stdin.is_closing():
            return
        try:
            stdin.write(line)
        except (ConnectionError, OSError):
            return  # The agent is gone; the reader fails the pending calls.
        await self._drain()

    async def _drain(self) -> None:
        stdin = self._started().stdin
        if stdin is None or stdin.is_closing():
            return
        try:
            async with self._write_lock:
                await stdin.drain()
        except (ConnectionError, OSError):
            pass  # The agent is gone; the reader fails the pending calls.

    def _abandon(self, request_id: RequestId) -> None:
        """Forget a request nobody awaits any more and cancel it at the agent."""
        if self._pending.pop(request_id, None) is None or self._ended:
            return
        stdin = self._started().stdin
        if stdin is not None and not stdin.is_closing():
            try:
                stdin.write(encode("$/cancelRequest", {"id": request_id}))
            except (ConnectionError, OSError):
                pass

    async def _read_answers(self) -> None:
        stdout = self._started().stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except ValueError:
                continue  # Longer than MAX_LINE_BYTES: dropped.
            if not line:
                break
            message = decode(line)
            if isinstance(message, Response):
                answer = self._pending.pop(message.id, None)
                if answer is not None and not answer.done():
                    if message.error is not None:
                        answer.set_exception(message.error)
                    else:
                        answer.set_result(message.result)
            elif isinstance(message, Notification):
                self._deliver(message)
            elif isinstance(message, HostRequest):
                self._answer(message)
        await self._end()

    def _answer(self, request: HostRequest) -> None:
        """Every agent→host request gets one answer: -32601 for those this
        client has no handler for, else the callback's, from a task (the
        person may take a while; answers keep being read meanwhile)."""
        refusal = _present.unanswerable(request, self._present_login)
        if refusal is None:
            task = asyncio.ensure_future(self._present(request, cast(PresentLogin, self._present_login)))
            self._present_tasks.add(task)
            task.add_done_callback(self._present_tasks.discard)
        else:
            asyncio.ensure_future(self._write(refusal))

    async def _present(self, request: HostRequest, present_login: PresentLogin) -> None:
        try:
            answer = present_login(request.params)
            if inspect.isawaitable(answer):
                answer = await answer
            line = _present.result_line(request.id, answer)
        except Exception as error:
            line = _present.error_line(request.id, error)
        await self._write(line)

    def _deliver(self, notification: Notification) -> None:
        for stream in list(self._streams):
            stream._queue.put_nowait(notification)
        for callback in list(self._callbacks.get(notification.method, ())):
            try:
                outcome = callback(notification.params)
            except Exception:
                logger.exception("auth-agent %s callback raised", notification.method)
                continue
            if inspect.isawaitable(outcome):
                task = asyncio.ensure_future(outcome)
                self._callback_tasks.add(task)
                task.add_done_callback(self._callback_done)

    def _callback_done(self, task: "asyncio.Future[Any]") -> None:
        self._callback_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("auth-agent notification callback raised", exc_info=task.exception())

    async def _end(self) -> None:
        """The agent closed its output: fail every call still waiting."""
        process = self._started()
        try:
            await asyncio.wait_for(process.wait(), self.shutdown_grace)
        except asyncio.TimeoutError:
            pass
        try:
            await asyncio.wait_for(self._stderr_task, 1.0)
        except asyncio.TimeoutError:
            pass
        self._ended = True
        pending, self._pending = self._pending, {}
        for answer in pending.values():
            if not answer.done():
                answer.set_exception(self._end_error())
        for stream in list(self._streams):
            stream.close()

    def _end_error(self) -> AuthAgentError:
        return ended(self._closing, self.returncode, self._stderr.text())

    async def _copy_stderr(self) -> None:
        stderr = self._started().stderr
        assert stderr is not None
        while True:
            try:
                line = await stderr.readline()
            except ValueError:
                continue
            if not line:
                return
            self._stderr.add(line)
            if not self._capture_stderr:
                log_stderr_line(line)
