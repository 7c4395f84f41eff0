#!/usr/bin/env python3
"""Reference Orbtile adapter in Python 3.11, standard library only, for orbtest's client conformance suite.

It plays a tiny agent with two sessions: s1 asks approvals, s2 asks questions. Comments cite the rules of the
project's ledger (OT-nnn from the spec, OT-Annn the ledger's proposals). Two threads: the control loop (discovery,
proof, registration, sessions, heartbeats, asks) and the events loop (the one long poll, and applying decisions),
each on its own keep-alive connection; the main thread waits for SIGTERM.
"""
import base64, hashlib, hmac, http.client, json, os, secrets, signal, socket, struct, sys, threading, time, zlib

ADAPTER_ID = 'dev.orbtest.example-python'
TOKEN_HEADER = 'X-Orbtile-Adapter-Token'
DEFAULT_DISCOVERY = os.path.expanduser('~/Library/Application Support/Orbtile/adapter-api.json')
ROUTE = f'/adapters/{ADAPTER_ID}'
TTL_SECONDS = 10
HEARTBEAT_S = 3.0         # OT-113: a contact well inside ttlSeconds 10
REREGISTER_S = 4.0        # OT-058: keypadDecisions is a snapshot; register again to re-read it
REQUEST_LIFE_S = 600.0    # own UI: a request stays pending until applied or 600 s old (OT-A22)
QUESTIONS = [
    {'text': 'Which?', 'header': 'Pick', 'multiSelect': False, 'options': [{'label': 'A'}, {'label': 'B'}]},
    {'text': 'Which ones?', 'multiSelect': True, 'options': [{'label': 'x'}, {'label': 'y'}, {'label': 'z'}]},
]


def log(line):
    """Short lines on stderr; never a token (OT-022)."""
    print(f'[python-adapter] {line}', file=sys.stderr, flush=True)


def make_icon_png(size=16):
    """A 16x16 RGBA PNG (a blue orb on transparency), built with zlib and struct."""
    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
    centre, radius2 = (size - 1) / 2, (size / 2 - 1) ** 2
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter type: none
        for x in range(size):
            inside = (x - centre) ** 2 + (y - centre) ** 2 <= radius2
            rows += bytes((70, 110, 230, 255) if inside else (0, 0, 0, 0))
    ihdr = struct.pack('>IIBBBBB', size, size, 8, 6, 0, 0, 0)  # 8 bits per channel, colour type 6 (RGBA)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', zlib.compress(bytes(rows)))
            + chunk(b'IEND', b''))


def valid_picks(picks, questions):
    """OT-146, OT-148: one non-empty array of unique, existing option indices per question; single-select: one."""
    if not isinstance(picks, list) or len(picks) != len(questions):
        return False
    for pick, question in zip(picks, questions):
        if not isinstance(pick, list) or not pick or not question.get('multiSelect') and len(pick) != 1:
            return False
        if not all(type(i) is int and 0 <= i < len(question['options']) for i in pick) or len(set(pick)) != len(pick):
            return False
    return True


def discard(what):
    """A deliberate discard: logged, and acknowledged like an applied event (OT-139, OT-147)."""
    log(f'discarded {what}')
    return True


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix socket, never TCP (OT-002). http.client is given the host 'localhost' and the default
    port, so the Host header it writes is exactly `Host: localhost` (OT-011)."""

    def __init__(self, path, timeout):
        super().__init__('localhost', timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # closed by close() if connect() fails
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


class Channel:
    """One keep-alive connection, owned by one thread."""

    def __init__(self):
        self.conn, self.path, self.used = None, None, 0.0

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def get(self, path, timeout):
        if self.conn is None or self.path != path or time.monotonic() - self.used > 4.0:
            self.close()  # a new socket, or idle long enough that the server may have dropped it
            self.conn, self.path = UnixHTTPConnection(path, timeout), path
        self.conn.timeout = timeout
        if self.conn.sock is not None:
            self.conn.sock.settimeout(timeout)
        return self.conn


class Reply:
    """A reply, read leniently: unknown fields are ignored everywhere (OT-008)."""

    def __init__(self, status, headers, raw, disc, version):
        self.status, self.headers, self.disc, self.version = status, headers, disc, version
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        self.body = body if isinstance(body, dict) else {}
        error = self.body.get('error')
        error = error if isinstance(error, dict) else {}
        self.code, self.message = str(error.get('code', '')), str(error.get('message', ''))[:200]
        self.field = error.get('field')


class Api:
    """The transport: the discovery file, the proof, the shared 429 pause, and one request at a time per Channel."""

    def __init__(self, discovery_path):
        self.discovery_path = discovery_path
        self.lock = threading.Lock()
        self.disc = None          # (socketPath, basePath, token) as last read; never cached past a failure
        self.version = 0          # bumped whenever the file says something new (or disappears)
        self.verified = -1        # the version whose GET /info proof checked out (OT-039)
        self.api_minor = 0
        self.pause_until = 0.0    # monotonic time before which nothing at all is sent (OT-027, OT-A20)
        self.closing = False

    def read_discovery(self):
        """Reads the discovery file afresh (OT-005, OT-A04). True when it names a socket and a token."""
        try:
            with open(self.discovery_path, encoding='utf-8') as f:
                d = json.load(f)
            disc = (d['socketPath'], d['basePath'], d['token'])
            if not all(isinstance(v, str) and v for v in disc):
                disc = None
        except (OSError, ValueError, KeyError, TypeError):
            disc = None  # OT-A03: no file means the API is off
        with self.lock:
            if disc != self.disc:
                self.disc, self.version = disc, self.version + 1
        return disc is not None

    def is_verified(self):
        with self.lock:
            return self.disc is not None and self.verified == self.version

    def bearer(self):
        return self.disc[2] if self.disc else None

    def wait_pause(self):
        while True:
            with self.lock:
                left = self.pause_until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.2))

    def note_rate_limit(self, method, route, resp):
        """A 429: nothing at all is sent on any route for its Retry-After (OT-027, OT-A20: 1 s when absent)."""
        try:
            wait = max(0.0, float(resp.headers.get('Retry-After', '1')))
        except ValueError:
            wait = 1.0
        with self.lock:
            self.pause_until = max(self.pause_until, time.monotonic() + wait + 0.05)
        log(f'{method} {route}: rate limited, sending nothing for {wait:g} s')

    def call(self, chan, method, route, body=None, token=None, timeout=5.0, nonce=None, fail_pause=0.3, final=False):
        """One request; a Reply, or None when nothing was sent or the connection failed."""
        retried = False
        while True:
            self.wait_pause()  # OT-027: after a 429, nothing goes out on any route until Retry-After has passed
            with self.lock:
                disc, version = self.disc, self.version
                allowed = disc is not None and (nonce is not None or self.verified == version)
                allowed = allowed and (final or not self.closing)
            if not allowed:
                return None  # OT-039: only GET /info goes to a socket whose proof has not checked out
            sock_path, base, bearer = disc
            data = None if body is None else json.dumps(body).encode('utf-8')
            try:
                conn = chan.get(sock_path, timeout)
                conn.putrequest(method, base + route, skip_accept_encoding=True)  # OT-003; Host: localhost (OT-011)
                conn.putheader('Content-Type', 'application/json')  # OT-012: on every request, GET included
                conn.putheader('Authorization', f'Bearer {bearer}')  # OT-013; no Origin header, ever (OT-014)
                if token is not None:
                    conn.putheader(TOKEN_HEADER, token)  # OT-019
                if nonce is not None:
                    conn.putheader('X-Orbtile-Nonce', nonce)
                if data is not None:
                    conn.putheader('Content-Length', str(len(data)))
                # OT-027: the pause is checked again and the request sent under the lock a 429 is noted under, so
                # no thread sends once another has read a 429 (only what was already on its way goes out). The
                # connection is made first, outside it: a connect that waits must not hold up the other threads.
                if conn.sock is None:
                    conn.connect()
                with self.lock:
                    paused = time.monotonic() < self.pause_until
                    if not paused:
                        conn.endheaders(data)
                if paused:
                    chan.close()  # its head was begun: this connection is done with; wait, then begin again
                    continue
                resp = conn.getresponse()
                if resp.status == 429:
                    self.note_rate_limit(method, route, resp)  # at its status line, before its body is read
                raw = resp.read()
                chan.used = time.monotonic()
            except (OSError, http.client.HTTPException) as e:
                # ENOENT, ECONNREFUSED, ECONNRESET, EPIPE, a timeout: read the discovery file afresh (OT-A03)
                chan.close()
                log(f'{method} {route}: connection failed ({type(e).__name__}); re-reading discovery')
                self.read_discovery()
                time.sleep(fail_pause)
                return None
            reply = Reply(resp.status, resp.headers, raw, disc, version)
            if reply.status == 401 and reply.field != TOKEN_HEADER and not retried and nonce is None:
                retried = True
                self.read_discovery()  # OT-A04: the bearer token may be new: read the file again, retry once
                continue
            return reply

    def verify(self, chan):
        """GET /info with a fresh nonce; checks the proof in constant time (OT-039, OT-A29). True once proved."""
        if self.is_verified():
            return True
        if not self.read_discovery():
            time.sleep(0.3)  # OT-A03: the API is off; try again
            return False
        nonce = secrets.token_hex(16)  # 32 random hex characters, fresh each time
        reply = self.call(chan, 'GET', '/info', nonce=nonce)
        if reply is None:
            return False
        if reply.status != 200:
            if reply.status != 429:
                log(f'GET /info: {reply.status} {reply.code}: {reply.message}')
                time.sleep(0.5)  # 503 api_disabled: wait 500 ms and try again
            return False
        expected = hmac.new(reply.disc[2].encode('utf-8'), nonce.encode('ascii'), hashlib.sha256).hexdigest()
        proof = reply.body.get('proof')
        if not isinstance(proof, str) or not hmac.compare_digest(proof.encode('utf-8'), expected.encode('ascii')):
            log('impostor: GET /info proof missing or wrong; registering nothing there')
            time.sleep(1.0)
            self.read_discovery()
            return False
        minor = reply.body.get('apiMinor')
        with self.lock:
            if reply.version != self.version:
                return False  # the file changed meanwhile: prove the new one
            self.verified = reply.version
            self.api_minor = minor if type(minor) is int else 0
        log(f'Orbtile proved itself (apiMinor {self.api_minor})')
        return True


class Session:
    def __init__(self, sid, title, kind):
        self.sid, self.title, self.kind = sid, title, kind  # kind: what it asks, 'approval' or 'question'
        self.pending = None   # {'kind', 'id', 'body', 'posted', 'confirmed'}: the one open request (OT-122)
        self.ask_at = 0.0


class Adapter:
    def __init__(self, api):
        self.api = api
        self.lock = threading.Lock()
        self.token = None          # adapterToken: in memory only, never printed, written or exported (OT-022)
        self.lease_bearer = None   # the discovery token the lease was made under
        self.gen = 0               # bumped at every lease change: cursor, sessions and requests start over
        self.keypad = None
        self.need_batch = False
        self.sessions = {}
        self.id_prefix, self.id_counter = secrets.token_hex(3), 0
        self.icon = base64.b64encode(make_icon_png()).decode('ascii')

    def reset(self, token, bearer):
        """A new lease (or none): new sessions, and the events cursor back to 0 (OT-A23). Caller holds the lock."""
        self.token, self.lease_bearer, self.gen = token, bearer, self.gen + 1
        self.sessions = {'s1': Session('s1', 'Python agent: approvals', 'approval'),
                         's2': Session('s2', 'Python agent: questions', 'question')}
        self.need_batch = token is not None

    def drop_lease(self, token_used, why):
        with self.lock:
            if self.token is not None and self.token == token_used and not self.api.closing:
                log(f'lease gone ({why}); registering anew')
                self.reset(None, None)

    def trouble(self, reply, token_used, what):
        """A failed reply on an adapter route: never a crash, a log line (code and message only) and a pause."""
        if reply is None or reply.status == 429:
            return  # the connection failure or the 429 pause is already handled
        if (reply.status == 404 and reply.code == 'adapter_not_registered'
                or reply.status == 401 and reply.field == TOKEN_HEADER):
            if token_used is None:
                log(f'{what}: {reply.status} {reply.code}: {reply.message}')
                time.sleep(1.0)  # another holder has the lease
            self.drop_lease(token_used, reply.code)  # OT-A06
        elif reply.status == 503:
            time.sleep(0.5)  # api_disabled (OT-155)
        else:
            log(f'{what}: {reply.status} {reply.code}: {reply.message}')
            time.sleep(0.5)

    def register(self, chan, token):
        body = {'name': 'orbtest Python example', 'shortName': 'Python', 'palette': {'baseHue': 250},  # OT-074
                'capabilities': ['tap', 'approvals', 'questions']}
        if self.api.api_minor >= 2:
            body['icon'] = {'png': self.icon}  # OT-A28; sent again at every re-registration (OT-064)
        reply = self.api.call(chan, 'PUT', ROUTE, body, token)  # the token too while holding one (OT-019, OT-021)
        if reply is None or reply.status != 200:
            self.trouble(reply, token, 'register')
            return False
        new = reply.body.get('adapterToken')
        if not isinstance(new, str) or not new:
            log('register: reply without adapterToken')
            time.sleep(0.5)
            return False
        keypad = reply.body.get('keypadDecisions') is True  # OT-A27: a missing keypadDecisions reads as false
        with self.lock:
            if new != self.token:
                self.reset(new, reply.disc[2])  # a new lease: a new token means sequences restart (OT-A23)
                log(f'registered (enabled: {reply.body.get("enabled")}, keypadDecisions: {keypad})')
            elif keypad != self.keypad:
                log(f'keypadDecisions now {keypad}')
            self.keypad = keypad
        return True

    def batch(self, chan, token, sessions):
        items = [{'id': s.sid, 'title': s.title, 'activity': 'thinking', 'ttlSeconds': TTL_SECONDS} for s in sessions]
        reply = self.api.call(chan, 'PUT', ROUTE + '/sessions', {'sessions': items}, token)  # OT-114
        if reply is None or reply.status != 200:
            self.trouble(reply, token, 'sessions batch')
            return False
        with self.lock:
            if self.token == token:
                self.need_batch = False
                for s in sessions:  # a session created anew has no request open: ask again
                    s.pending, s.ask_at = None, time.monotonic()
        log('sessions s1 and s2 created')
        return True

    def heartbeat(self, chan, token, s):
        reply = self.api.call(chan, 'POST', f'{ROUTE}/sessions/{s.sid}', {}, token)  # OT-A18: {} restarts the TTL
        if reply is not None and reply.status == 400:
            with self.lock:
                self.need_batch = self.token == token  # the session is gone: create it again
        elif reply is None or reply.status != 200:
            self.trouble(reply, token, f'heartbeat {s.sid}')

    def new_request(self, s):
        """A request id never used before in this process, so never reused in a registration (OT-125, OT-128)."""
        self.id_counter += 1
        rid = f'{self.id_prefix}-{self.id_counter}'
        if s.kind == 'approval':
            body = {'activity': 'waitingPermission',
                    'approval': {'id': rid, 'toolName': 'Bash', 'commandSummary': 'npm test'}}
        else:
            body = {'activity': 'waitingQuestion', 'question': {'id': rid, 'questions': QUESTIONS}}
        return {'kind': s.kind, 'id': rid, 'body': body, 'posted': time.monotonic(), 'confirmed': False}

    def ask(self, chan, token, s):
        with self.lock:
            if s.pending is not None and time.monotonic() - s.pending['posted'] >= REQUEST_LIFE_S:
                s.pending = None  # expired in our own UI: ask anew
            if s.pending is None:
                if time.monotonic() < s.ask_at:
                    return
                s.pending = self.new_request(s)
            p = s.pending
            if p['confirmed']:
                return
        # Unconfirmed (never sent, or the connection failed): send it again; an identical update is fine (OT-127).
        reply = self.api.call(chan, 'POST', f'{ROUTE}/sessions/{s.sid}', p['body'], token)
        with self.lock:
            if s.pending is not p:
                return
            if reply is not None and reply.status == 200:
                p['confirmed'] = True
                log(f'asked {p["kind"]} {p["id"]} on {s.sid}')
                return
            if reply is not None and reply.status == 400:
                s.pending, s.ask_at = None, time.monotonic() + 1.0  # refused: a fresh id next time
        self.trouble(reply, token, f'ask {p["id"]}')

    def control_loop(self):
        chan, next_register, next_heartbeat = Channel(), 0.0, 0.0
        while True:
            try:
                if not self.api.verify(chan):
                    continue
                with self.lock:
                    if self.token is not None and self.api.bearer() != self.lease_bearer:
                        log('discovery token changed: the lease has ended (OT-023)')
                        self.reset(None, None)
                    token, need_batch, sessions = self.token, self.need_batch, list(self.sessions.values())
                now = time.monotonic()
                if token is None or now >= next_register:
                    ok = self.register(chan, token)  # a failed re-registration does not hold up the heartbeats
                    next_register = now + (REREGISTER_S if ok else 1.0)
                    if not ok and token is None:
                        time.sleep(0.3)
                    continue
                if need_batch:
                    if self.batch(chan, token, sessions):
                        next_heartbeat = time.monotonic() + HEARTBEAT_S
                    continue
                if now >= next_heartbeat:
                    next_heartbeat = now + HEARTBEAT_S
                    for s in sessions:
                        self.heartbeat(chan, token, s)
                for s in sessions:
                    self.ask(chan, token, s)
                time.sleep(0.1)
            except Exception as e:  # never crash on a reply; the type only: a message could quote a header
                log(f'control loop: {type(e).__name__}')
                time.sleep(0.5)

    def handle(self, chan, token, ev):
        """One event. True when it was applied or deliberately discarded; False when applying it failed."""
        kind, sid, rid = ev.get('type'), ev.get('sessionId'), ev.get('requestId')
        with self.lock:
            s = self.sessions.get(sid) if isinstance(sid, str) else None
            p = s.pending if s is not None else None
        if kind not in ('tap', 'approval', 'question') or s is None:
            return discard(f'{kind} event for session {sid}')  # unknown type, or a session we do not run (OT-A30)
        if kind == 'tap':
            log(f'tap on {sid}')  # applied at once
            return True
        expires, decision, picks = ev.get('expiresAt'), ev.get('decision'), ev.get('picks')
        live = (p is not None and p['kind'] == kind and p['id'] == rid
                and time.monotonic() - p['posted'] < REQUEST_LIFE_S)
        if type(expires) not in (int, float) or time.time() >= expires or not live:
            return discard(f'stale {kind} {rid} on {sid}')  # OT-147, OT-A31: fractions of a second count
        if kind == 'approval':
            if decision not in ('allow', 'deny'):
                return discard(f'approval {rid}: unknown decision')
            update = ({'approval': None, 'activity': 'tool', 'toolKind': 'shell'} if decision == 'allow'
                      else {'approval': None, 'activity': 'thinking'})
        elif not valid_picks(picks, QUESTIONS):
            return discard(f'question {rid}: picks do not fit its questions')  # OT-148
        else:
            update = {'question': None, 'activity': 'thinking'}
        reply = self.api.call(chan, 'POST', f'{ROUTE}/sessions/{sid}', update, token)
        if reply is None or reply.status != 200:
            self.trouble(reply, token, f'apply {rid}')
            return False  # not applied: not acknowledged, delivered again after `after` (OT-139)
        with self.lock:
            if s.pending is p:
                s.pending, s.ask_at = None, time.monotonic() + 0.3  # the next request 300 ms later
        log(f'applied {kind} {rid} on {sid}: {decision or picks}')
        return True

    def poll_loop(self):
        """Exactly one events poll outstanding at any time (OT-134): this thread is the only one that polls."""
        chan, gen, after, ack = Channel(), None, 0, 0
        while True:
            try:
                with self.lock:
                    token, current = self.token, self.gen
                if token is None or self.need_batch or not self.api.is_verified():
                    time.sleep(0.1)
                    continue
                if gen != current:
                    gen, after, ack = current, 0, 0  # a new lease: its sequences start at 1 (OT-A23)
                started = time.monotonic()
                body = {'after': after, 'ack': ack, 'waitSeconds': 2}
                reply = self.api.call(chan, 'POST', ROUTE + '/events', body, token, timeout=15.0)
                with self.lock:
                    if self.gen != gen:
                        continue  # the lease changed while the poll was out: its reply is of no use
                if reply is None:
                    continue
                if reply.status == 200:
                    events = reply.body.get('events')
                    for ev in events if isinstance(events, list) else []:
                        seq = ev.get('sequence') if isinstance(ev, dict) else None
                        if type(seq) is not int or seq <= after:
                            continue
                        if not self.handle(chan, token, ev):
                            break
                        after = seq  # OT-138: the last handled sequence, never past the highest received
                    ack = after      # OT-139: only what was applied or deliberately discarded; never decreases
                    if not events and time.monotonic() - started < 1.0:
                        time.sleep(1.0)  # the server did not hold the poll: keep the rate far below 20/s
                elif reply.code == 'invalid_cursor':
                    log('invalid_cursor: starting over from 0')
                    after = ack = 0
                else:
                    self.trouble(reply, token, 'events')
            except Exception as e:  # never crash on a reply
                log(f'events loop: {type(e).__name__}')
                time.sleep(0.5)


def shutdown(api, adapter):
    """SIGTERM: best-effort DELETE of the registration (OT-A07) with a 500 ms timeout, then exit 0 at once."""
    with api.lock:
        api.closing = True  # the loops send nothing more
        pause = api.pause_until - time.monotonic()
    token = adapter.token
    if token is not None and api.is_verified() and pause < 0.5:
        reply = api.call(Channel(), 'DELETE', ROUTE, token=token, timeout=0.5, fail_pause=0, final=True)
        log('unregistered' if reply is not None and reply.status == 204 else 'unregister: no confirmation')
    os._exit(0)


def main():
    api = Api(os.environ.get('ORBTILE_DISCOVERY') or DEFAULT_DISCOVERY)
    adapter = Adapter(api)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    threading.Thread(target=adapter.control_loop, daemon=True, name='control').start()
    threading.Thread(target=adapter.poll_loop, daemon=True, name='events').start()
    log(f'{ADAPTER_ID} started; discovery file {api.discovery_path}')
    while not stop:
        time.sleep(0.05)
    log('stopping')
    shutdown(api, adapter)


if __name__ == '__main__':
    main()
