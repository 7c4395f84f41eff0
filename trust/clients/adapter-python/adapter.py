#!/usr/bin/env python3
"""A clean-room Orbtile Adapter Protocol v1.2 adapter: Python 3.11, standard library only.

Written from the protocol's JSON Schema and orbtest's public docs alone.

Shape:
- three worker threads (heartbeats, events, the agent's own UI), each with its own persistent
  HTTP/1.1 keep-alive connection over the Unix socket, reconnecting when the app closes it;
- every session heartbeated by one batch `PUT .../sessions` every ttlSeconds / 2;
- capabilities tap, approvals and questions; the agent's own UI withdraws a request left
  undecided for about 3 s and later asks a new one under a new id;
- the GET /info proof is checked (HMAC-SHA256 of a fresh nonce, keyed by the discovery token)
  before anything is registered or posted to a socket, and again whenever the discovery file
  names another socket or token;
- SIGTERM: the poll in flight completes, its decisions are applied or discarded and acknowledged,
  then the adapter unregisters and exits 0.

The adapter token lives in memory only: it is never printed, logged or written anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections import deque

ADAPTER_ID = "dev.cleanroom.python-stdlib"
ADAPTER_TOKEN_HEADER = "X-Orbtile-Adapter-Token"
# The spec's smallest session TTL (SessionUpdate.ttlSeconds: minimum 10); batch heartbeat at half.
TTL_SECONDS = 10
HEARTBEAT_EVERY = TTL_SECONDS / 2
POLL_WAIT_SECONDS = 2
WITHDRAW_AFTER = 3.0  # the agent's own UI gives up on an undecided request after this long
IMPOSTOR_RETRY = 3.0  # seconds before checking a socket with a wrong proof again
SOCKET_TIMEOUT = POLL_WAIT_SECONDS + 15

stop = threading.Event()


def log(message: str) -> None:
    now = time.time()
    stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    print(f"{stamp} [python-adapter] {message}", file=sys.stderr, flush=True)


def discovery_path() -> str:
    named = os.environ.get("ORBTILE_DISCOVERY")
    if named:
        return named
    home = os.environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, "Library", "Application Support", "Orbtile", "adapter-api.json")


class Discovery:
    def __init__(self, socket_path: str, base_path: str, token: str):
        self.socket_path = socket_path
        self.base_path = base_path.rstrip("/")
        self.token = token

    @property
    def identity(self) -> tuple[str, str]:
        return (self.socket_path, self.token)

    def __repr__(self) -> str:  # never shows the token
        return f"Discovery(socket={self.socket_path!r}, base={self.base_path!r})"


def read_discovery() -> Discovery:
    with open(discovery_path(), encoding="utf-8") as f:
        data = json.load(f)
    fields = []
    for key in ("socketPath", "basePath", "token"):
        value = data.get(key) if isinstance(data, dict) else None
        if not isinstance(value, str) or not value:
            raise ValueError(f"the discovery file has no {key}")
        fields.append(value)
    return Discovery(*fields)


class Impostor(Exception):
    """The socket did not prove it is Orbtile: send it nothing of ours."""


class GiveUp(Exception):
    """Shutting down: a request that keeps failing is abandoned."""


class StaleConnection(Exception):
    """A kept-alive connection the app had closed: nothing was answered on it."""


ATTEMPTS_AFTER_STOP = 3  # after SIGTERM a request is tried at most this many more times


class NoLease(Exception):
    """A request that needs the lease, while none is held."""

    def __init__(self, generation: int):
        super().__init__(generation)
        self.generation = generation


class LeaseLost:
    def __init__(self, generation: int):
        self.generation = generation


class Reply:
    def __init__(self, status: int, body, generation: int):
        self.status = status
        self.body = body
        self.generation = generation

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def error_code(body) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        return code if isinstance(code, str) else ""
    return ""


def error_field(body) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        field = body["error"].get("field")
        return field if isinstance(field, str) else ""
    return ""


def sleep(seconds: float) -> None:
    """A pause that ends early on SIGTERM."""
    stop.wait(seconds)


# ------------------------------------------------------------------------------------------------
# The agent's sessions and requests


class Request:
    def __init__(self, request_id: str, kind: str, payload: dict, generation: int):
        self.id = request_id
        self.kind = kind  # "approval" or "question"
        self.payload = payload
        self.generation = generation
        self.posted = time.monotonic()


class Session:
    def __init__(self, session_id: str, title: str, kind: str):
        self.id = session_id
        self.title = title
        self.kind = kind  # the kind of request this session's agent asks
        self.pending: Request | None = None
        self.next_ask = 0.0
        self.asked = 0

    def activity(self) -> str:
        if self.pending is None:
            return "thinking"
        return "waitingPermission" if self.pending.kind == "approval" else "waitingQuestion"


def picks_valid(picks, questions: list) -> bool:
    """The spec's rules: one array per question, unique existing option indices, exactly one
    for a single-select question (at least one for a multi-select one)."""
    if not isinstance(picks, list) or len(picks) != len(questions):
        return False
    for pick, question in zip(picks, questions):
        if not isinstance(pick, list) or not pick:
            return False
        indices = []
        for index in pick:
            if isinstance(index, bool):
                return False
            if isinstance(index, float) and index.is_integer():
                index = int(index)
            if not isinstance(index, int):
                return False
            indices.append(index)
        if len(set(indices)) != len(indices):
            return False
        if any(i < 0 or i >= len(question["options"]) for i in indices):
            return False
        if not question.get("multiSelect", False) and len(indices) != 1:
            return False
    return True


# ------------------------------------------------------------------------------------------------
# Transport: HTTP/1.1 keep-alive over a Unix socket


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over AF_UNIX; the Host header stays `localhost`."""

    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.unix_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class Shared:
    """What the threads share: the discovery file, the proof check, the lease, the rate buckets
    and the agent's state."""

    def __init__(self):
        self._discovery: Discovery | None = None
        self._discovery_lock = threading.Lock()
        self.verify_lock = threading.Lock()
        self.verified: tuple[str, str] | None = None
        self.impostor: tuple[str, str] | None = None
        self.impostor_retry_at = 0.0
        self.api_minor = 0
        self.register_lock = threading.Lock()
        self.lease: tuple[str | None, int] = (None, 0)  # (adapter token, generation), swapped whole
        self.keypad_decisions = False
        self.bucket_lock = threading.Lock()
        self.not_before = {"adapter": 0.0, "shared": 0.0}
        # The agent's state; also orders every session write (batch, ask, withdraw, apply).
        self.state_lock = threading.RLock()
        self.sessions = [
            Session("py-edit", "Python agent: refactor", "approval"),
            Session("py-plan", "Python agent: planning", "question"),
        ]
        self.withdrawn: deque[str] = deque(maxlen=512)
        self.id_prefix = secrets.token_hex(4)
        self.id_counter = 0

    # -- discovery

    def discovery(self) -> Discovery:
        with self._discovery_lock:
            if self._discovery is None:
                self._discovery = read_discovery()
            return self._discovery

    def forget_discovery(self) -> None:
        with self._discovery_lock:
            self._discovery = None

    # -- the proof

    def is_verified(self, discovery: Discovery) -> bool:
        return self.verified == discovery.identity

    def verify(self, client: "Client") -> bool:
        """GET /info with a fresh nonce; true when its proof is HMAC-SHA256(token, nonce)."""
        with self.verify_lock:
            discovery = self.discovery()
            if self.is_verified(discovery):
                return True
            if self.impostor == discovery.identity and time.monotonic() < self.impostor_retry_at:
                return False
            nonce = secrets.token_hex(16)
            status, info, used, _ = client.send("GET", "/info", nonce=nonce, abort_on_stop=True)
            expected = hmac.new(used.token.encode(), nonce.encode(), hashlib.sha256).hexdigest()
            proof = info.get("proof") if isinstance(info, dict) else None
            good = (
                status == 200
                and isinstance(proof, str)
                and hmac.compare_digest(proof.encode("utf-8", "replace"), expected.encode())
            )
            if good:
                minor = info.get("apiMinor")
                self.api_minor = minor if isinstance(minor, int) and not isinstance(minor, bool) else 0
                self.verified = used.identity
                self.impostor = None
                log(f"GET /info proof checked (apiMinor {self.api_minor})")
                return True
            log(f"GET /info ({status}) gave a wrong or missing proof: not trusting this socket; retrying later")
            self.verified = None
            self.impostor = used.identity
            self.impostor_retry_at = time.monotonic() + IMPOSTOR_RETRY
            self.forget_discovery()  # read the file afresh next time
            return False

    # -- rate buckets (OT-A20: the adapter's own, and a shared one for /info)

    def wait_bucket(self, bucket: str) -> None:
        while True:
            with self.bucket_lock:
                remaining = self.not_before[bucket] - time.monotonic()
            if remaining <= 0:
                return
            time.sleep(min(remaining, 0.5))

    def close_bucket(self, bucket: str, seconds: float) -> None:
        with self.bucket_lock:
            until = time.monotonic() + max(0.0, min(seconds, 3600.0))
            self.not_before[bucket] = max(self.not_before[bucket], until)

    # -- the lease

    def generation(self) -> int:
        return self.lease[1]

    def fresh_request_id(self) -> str:
        with self.state_lock:
            self.id_counter += 1
            return f"py-{self.id_prefix}-{self.id_counter}"

    def registration_body(self) -> dict:
        palette = {"baseHue": 150, "attentionHue": 330}
        if self.api_minor >= 2:
            palette["states"] = {"done": "#2F8F5B"}  # v1.2 only (OT-A28)
        return {
            "name": "Python clean-room",
            "shortName": "PyCR",
            "palette": palette,
            "glyph": {"symbol": "terminal", "monogram": "Py"},
            "version": "0.1.0",
            "capabilities": ["tap", "approvals", "questions"],
            "tapBehavior": "eventOnly",
        }

    def ensure_lease(self, client: "Client", seen_generation: int) -> None:
        """Registers again, unless another thread did since `seen_generation`."""
        with self.register_lock:
            token, generation = self.lease
            if generation != seen_generation and token is not None:
                return
            while not stop.is_set():
                token, generation = self.lease
                try:
                    status, body, _, _ = client.send(
                        "PUT", f"/adapters/{ADAPTER_ID}", self.registration_body(), adapter_token=token,
                        abort_on_stop=True,
                    )
                except Impostor:
                    sleep(1.0)
                    continue
                except GiveUp:
                    return
                if 200 <= status < 300 and isinstance(body, dict):
                    new_token = body.get("adapterToken")
                    enabled = body.get("enabled")
                    self.keypad_decisions = body.get("keypadDecisions") is True
                    if isinstance(new_token, str) and new_token:
                        if new_token != token:
                            self.lease = (new_token, generation + 1)
                            log(
                                f"registered: new lease #{generation + 1}, enabled={enabled}, "
                                f"reason={body.get('reason', '-')}, keypadDecisions={self.keypad_decisions}"
                            )
                        else:
                            log("registered again: the same lease")
                            sleep(0.5)  # the lease was live after all; do not spin
                        return
                    log(f"registered without a lease (enabled={enabled}, reason={body.get('reason')}); asking again soon")
                    self.lease = (None, generation)
                    sleep(2.0)
                elif status == 401:
                    log("registration refused (401); retrying without the old adapter token")
                    self.lease = (None, generation)
                    sleep(1.0)
                else:
                    log(f"registration refused: {status} {error_code(body)}; retrying")
                    sleep(2.0)


class Client:
    """One thread's connection and request logic."""

    def __init__(self, shared: Shared, name: str):
        self.shared = shared
        self.name = name
        self.conn: UnixHTTPConnection | None = None
        self.conn_path: str | None = None
        self.conn_used = False

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
        self.conn = None
        self.conn_used = False

    def _exchange(self, discovery: Discovery, method: str, target: str, headers: dict, payload: bytes | None):
        """One request on the keep-alive connection (opened on first use or when the socket
        moved). StaleConnection when a reused connection turns out closed."""
        if self.conn is None or self.conn_path != discovery.socket_path:
            self.close()
            self.conn = UnixHTTPConnection(discovery.socket_path, SOCKET_TIMEOUT)
            self.conn_path = discovery.socket_path
        reused = self.conn_used
        try:
            self.conn.request(method, target, body=payload, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
            self.close()
            if reused:
                raise StaleConnection() from e
            raise
        except BaseException:
            self.close()
            raise
        self.conn_used = True
        if response.will_close:
            self.close()
        return response.status, response.headers, data

    def send(self, method: str, route: str, body=None, *, adapter_token=None, use_lease=False, nonce=None,
             abort_on_stop=False):
        """Sends one request and rides out connection errors and 503 (backoff, re-reading the
        discovery file), 429 (Retry-After on its bucket) and a 401 on the bearer token (the file
        read once more, the request retried once). Adapter routes go only to a socket whose proof
        was checked. `body` may be a function, called for every attempt. After SIGTERM a request
        is tried ATTEMPTS_AFTER_STOP more times at most; with `abort_on_stop` (the proof check,
        registration) not at all. With
        `use_lease` every attempt carries the lease's token as it is then (a retry after a 429 must
        not carry the token of a lease replaced meanwhile); NoLease when none is held. Returns
        (status, parsed body, discovery used, lease generation used)."""
        adapter_route = route.startswith("/adapters/")
        bucket = "adapter" if adapter_route else "shared"
        backoff = 0.2
        bearer_retried = False
        attempts_after_stop = 0
        while True:
            self.shared.wait_bucket(bucket)
            if stop.is_set():
                attempts_after_stop += 1
                if abort_on_stop or attempts_after_stop > ATTEMPTS_AFTER_STOP:
                    raise GiveUp()
            try:
                discovery = self.shared.discovery()
            except (OSError, ValueError) as e:
                log(f"discovery file: {e}")
                time.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            if adapter_route and not self.shared.is_verified(discovery):
                if not self.shared.verify(self):
                    raise Impostor()
                continue
            headers = {
                "Content-Type": "application/json",
                "Authorization": f"Bearer {discovery.token}",
            }
            generation = self.shared.generation()
            token = adapter_token
            if use_lease:
                token, generation = self.shared.lease
                if token is None:
                    raise NoLease(generation)
            if token is not None:
                headers[ADAPTER_TOKEN_HEADER] = token
            if nonce is not None:
                headers["X-Orbtile-Nonce"] = nonce
            content = body() if callable(body) else body
            payload = None if content is None else json.dumps(content, separators=(",", ":")).encode()
            try:
                status, reply_headers, data = self._exchange(
                    discovery, method, discovery.base_path + route, headers, payload
                )
            except StaleConnection:
                continue  # at once, on a fresh connection
            except (OSError, http.client.HTTPException) as e:
                log(f"{self.name}: {method} {route}: connection failed ({type(e).__name__}); retrying")
                self.shared.forget_discovery()  # the app may have moved its socket
                time.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            try:
                parsed = json.loads(data) if data.strip() else {}
            except ValueError:
                parsed = {}
            if status == 429:
                try:
                    wait = float(reply_headers.get("Retry-After", "1"))
                except ValueError:
                    wait = 1.0
                log(f"{self.name}: {method} {route}: 429, nothing on the {bucket} bucket for {wait:g} s")
                self.shared.close_bucket(bucket, wait)
                continue
            if status == 503:
                log(f"{self.name}: {method} {route}: 503 {error_code(parsed)}; retrying")
                time.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            if status == 401 and error_field(parsed) != ADAPTER_TOKEN_HEADER and not bearer_retried:
                bearer_retried = True
                log(f"{self.name}: the bearer token was refused; reading the discovery file again")
                self.shared.forget_discovery()
                continue
            return status, parsed, discovery, generation

    def call(self, method: str, route: str, body=None):
        """A request on an adapter route under the current lease."""
        try:
            status, parsed, _, generation = self.send(method, route, body, use_lease=True)
        except NoLease as e:
            return LeaseLost(e.generation)
        if status == 401 or (status == 404 and error_code(parsed) == "adapter_not_registered"):
            return LeaseLost(generation)
        return Reply(status, parsed, generation)


def session_route(session_id: str) -> str:
    return f"/adapters/{ADAPTER_ID}/sessions/{session_id}"


# ------------------------------------------------------------------------------------------------
# The three loops


def heartbeat_loop(shared: Shared) -> None:
    """One batch PUT listing every session, every ttlSeconds / 2 (it also creates them)."""
    client = Client(shared, "heartbeat")
    next_at = time.monotonic()
    while not stop.is_set():
        delay = next_at - time.monotonic()
        if delay > 0 and stop.wait(delay):
            break
        started = time.monotonic()
        lost = None
        try:
            with shared.state_lock:
                body = {
                    "sessions": [
                        {"id": s.id, "title": s.title, "activity": s.activity(), "ttlSeconds": TTL_SECONDS}
                        for s in shared.sessions
                    ]
                }
                outcome = client.call("PUT", f"/adapters/{ADAPTER_ID}/sessions", body)
        except Impostor:
            sleep(1.0)
            continue
        except GiveUp:
            break
        if isinstance(outcome, LeaseLost):
            lost = outcome.generation
        elif outcome.ok:
            next_at = started + HEARTBEAT_EVERY
        else:
            log(f"heartbeat batch refused: {outcome.status} {error_code(outcome.body)}")
            next_at = time.monotonic() + 0.5
        if lost is not None:
            shared.ensure_lease(client, lost)
            next_at = time.monotonic()
    client.close()


def new_request(shared: Shared, session: Session, generation: int) -> Request:
    session.asked += 1
    request_id = shared.fresh_request_id()
    if session.kind == "approval":
        payload = {
            "id": request_id,
            "toolName": "Edit",
            "commandSummary": f"apply the refactoring patch to src/app.py (step {session.asked})",
        }
    else:
        payload = {
            "id": request_id,
            "questions": [
                {
                    "text": "Which test suite should run next?",
                    "header": "Tests",
                    "options": [
                        {"label": "unit"},
                        {"label": "integration", "description": "slower, needs the database"},
                        {"label": "both"},
                    ],
                },
                {
                    "text": "Which extra checks should run?",
                    "header": "Extras",
                    "multiSelect": True,
                    "options": [{"label": "lint"}, {"label": "types"}, {"label": "docs"}],
                },
            ],
        }
    return Request(request_id, session.kind, payload, generation)


def ui_loop(shared: Shared) -> None:
    """The agent's own UI: asks, and withdraws what stays undecided for WITHDRAW_AFTER."""
    client = Client(shared, "ui")
    while not stop.wait(0.1):
        generation = shared.generation()
        if shared.lease[0] is None:
            continue
        for session in shared.sessions:
            if stop.is_set():
                break  # no new UI work after SIGTERM
            lost = None
            try:
                with shared.state_lock:
                    now = time.monotonic()
                    request = session.pending
                    if request is not None and request.generation != generation:
                        # Pending requests retire with their lease.
                        session.pending = None
                        session.next_ask = now + 0.5
                    elif request is not None and now - request.posted >= WITHDRAW_AFTER:
                        body = {session.kind: None, "activity": "thinking"}
                        outcome = client.call("POST", session_route(session.id), body)
                        if isinstance(outcome, LeaseLost) or outcome.ok:
                            shared.withdrawn.append(request.id)
                            session.pending = None
                            session.next_ask = time.monotonic() + 1.0
                            log(f"{session.id}: withdrew {request.kind} {request.id} (undecided for {now - request.posted:.1f} s)")
                        else:
                            log(f"{session.id}: withdrawing {request.id} refused: {outcome.status} {error_code(outcome.body)}")
                        if isinstance(outcome, LeaseLost):
                            lost = outcome.generation
                    elif request is None and now >= session.next_ask:
                        request = new_request(shared, session, generation)
                        body = {
                            "title": session.title,
                            "activity": "waitingPermission" if session.kind == "approval" else "waitingQuestion",
                            "ttlSeconds": TTL_SECONDS,
                            session.kind: request.payload,
                        }
                        outcome = client.call("POST", session_route(session.id), body)
                        if isinstance(outcome, LeaseLost):
                            lost = outcome.generation
                        elif outcome.ok:
                            request.generation = outcome.generation
                            request.posted = time.monotonic()  # pending from now (after any 429 wait)
                            session.pending = request
                            log(f"{session.id}: asked {request.kind} {request.id}")
                        else:
                            log(f"{session.id}: asking {request.id} refused: {outcome.status} {error_code(outcome.body)}")
                            session.next_ask = time.monotonic() + 2.0
            except Impostor:
                sleep(1.0)
                break
            except GiveUp:
                break
            if lost is not None:
                shared.ensure_lease(client, lost)
    client.close()


def handle_event(shared: Shared, client: Client, event, generation: int):
    """Applies a fresh, valid, still-pending decision (the request cleared in a session update),
    or discards it. Returns a LeaseLost when the lease went while applying."""
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    sequence = event.get("sequence")
    if kind == "tap":
        log(f"event {sequence}: tap on {event.get('sessionId')}")
        return None
    if kind not in ("approval", "question"):
        log(f"event {sequence}: unknown type {kind!r}; discarded")
        return None
    request_id = event.get("requestId")
    session_id = event.get("sessionId")
    expires_at = event.get("expiresAt")
    with shared.state_lock:
        session = next((s for s in shared.sessions if s.id == session_id), None)
        request = session.pending if session is not None else None
        if request_id in shared.withdrawn:
            reason = "withdrawn by the agent's own UI"
        elif request is None or request.id != request_id or request.kind != kind or request.generation != generation:
            reason = "not pending"
        elif isinstance(expires_at, bool) or not isinstance(expires_at, (int, float)) or time.time() >= expires_at:
            reason = "expired"
        elif kind == "approval" and event.get("decision") not in ("allow", "deny"):
            reason = "not a decision"
        elif kind == "question" and not picks_valid(event.get("picks"), request.payload["questions"]):
            reason = "invalid picks"
        else:
            reason = None
        if reason is not None:
            log(f"event {sequence}: {kind} for {request_id} discarded ({reason})")
            return None
        answer = event.get("decision") if kind == "approval" else event.get("picks")
        try:
            outcome = client.call("POST", session_route(session.id), {kind: None, "activity": "thinking"})
        except (Impostor, GiveUp):
            outcome = None
        # The agent took the answer: the request is no longer pending in its own UI.
        session.pending = None
        session.next_ask = time.monotonic() + 0.8
        log(f"event {sequence}: {kind} {request_id} applied ({answer})")
        if isinstance(outcome, LeaseLost):
            return outcome
        if isinstance(outcome, Reply) and not outcome.ok:
            log(f"clearing {request_id} refused: {outcome.status} {error_code(outcome.body)}")
    return None


def events_loop(shared: Shared) -> None:
    """One poll at a time. `after` and `ack` are the last sequence applied or discarded, so an
    event is acknowledged only by the poll after the one that delivered it."""
    client = Client(shared, "events")
    cursor = 0
    acknowledged = 0
    cursor_generation = shared.generation()
    final_rounds = 0
    while True:
        generation = shared.generation()
        if generation != cursor_generation:
            cursor, acknowledged, cursor_generation = 0, 0, generation  # a new lease
        if stop.is_set():
            # Finish: acknowledge what the last poll delivered, then leave.
            if cursor == acknowledged or final_rounds >= 3 or shared.lease[0] is None:
                break
            final_rounds += 1
            wait = 0
        else:
            wait = POLL_WAIT_SECONDS
        sent_cursor = cursor
        # A retry after SIGTERM (the poll cut, a 429) no longer waits for events.
        body = lambda: {"after": sent_cursor, "ack": sent_cursor, "waitSeconds": 0 if stop.is_set() else wait}
        try:
            outcome = client.call("POST", f"/adapters/{ADAPTER_ID}/events", body)
        except Impostor:
            sleep(1.0)
            continue
        except GiveUp:
            break
        if isinstance(outcome, LeaseLost):
            if stop.is_set():
                break
            shared.ensure_lease(client, outcome.generation)
            continue
        if outcome.generation != cursor_generation:
            continue  # answered under another lease than the cursor's
        if outcome.status == 200 and isinstance(outcome.body, dict):
            acknowledged = sent_cursor
            events = outcome.body.get("events")
            lost = None
            for event in events if isinstance(events, list) else []:
                sequence = event.get("sequence") if isinstance(event, dict) else None
                if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence <= cursor:
                    continue
                lost = handle_event(shared, client, event, outcome.generation) or lost
                cursor = sequence  # applied or discarded
            if lost is not None and not stop.is_set():
                shared.ensure_lease(client, lost.generation)
        elif error_code(outcome.body) == "invalid_cursor":
            log("invalid_cursor: the cursor starts again from 0")
            cursor, acknowledged = 0, 0
        elif error_code(outcome.body) in ("poll_pending", "limit_exceeded"):
            sleep(0.5)
        else:
            log(f"events poll refused: {outcome.status} {error_code(outcome.body)}")
            sleep(1.0)
    client.close()


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    shared = Shared()
    client = Client(shared, "main")
    log(f"starting; discovery file {discovery_path()}")

    shared.ensure_lease(client, 0)
    threads = []
    if not stop.is_set():
        for loop in (heartbeat_loop, events_loop, ui_loop):
            thread = threading.Thread(target=loop, args=(shared,), name=loop.__name__, daemon=True)
            thread.start()
            threads.append(thread)
    while not stop.wait(0.2):
        pass
    log("SIGTERM: finishing the work in flight")
    for thread in threads:
        thread.join(timeout=10)

    if shared.lease[0] is not None:
        try:
            status, _, _, _ = client.send("DELETE", f"/adapters/{ADAPTER_ID}", use_lease=True)
            log(f"unregistered ({status})")
        except (Impostor, GiveUp, NoLease):
            log("could not unregister; the lease will end by silence")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
