#!/usr/bin/env python3
"""An Orb chat bot in webhook mode, written from the Orb bot API's OpenAPI document alone.

Python 3.11, standard library only. Orb POSTs each event to this endpoint; the bot

* checks X-Orb-Signature over the raw body bytes before it reads anything else
  (HMAC-SHA256, key = sha256(token) as lowercase hex, message = "<t>.<raw body>",
  constant-time comparison, any matching v1, t within 5 minutes of our clock);
  a failed check is answered 401 and nothing else happens;
* acts at most once per event id (kept in an SQLite file under $HOME, so a restart
  remembers too); a retried delivery gets 2xx again and no second action;
* answers a typed command inline, well within four seconds: 200 {"notice": "..."};
* answers a mention with a message, posted from a background thread through
  POST $ORB_URL/api/bot/v1/messages, so that the webhook reply stays fast;
* stops on SIGTERM: no new connections, requests in flight and queued posts finish, exit 0.

Run:  PORT=3000 ORB_URL=http://127.0.0.1:8787 ORB_TOKEN=... python3 bot.py
The token is only ever used as an HMAC key and in the Authorization header.
"""

import email.utils
import hashlib
import hmac
import http.server
import json
import os
import queue
import re
import signal
import sqlite3
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000   # docs/decisions.md (ORB-A12): t more than 5 minutes off is refused
NOTICE_BUDGET_S = 3.0                    # the spec gives four seconds; keep a margin
MAX_BODY = 1024 * 1024
POSTS_PER_MINUTE = 25                    # the spec: 30 a minute ...
POSTS_PER_CHANNEL_MINUTE = 10            # ... and 12 a minute per channel
NOTICE_MAX = 1800
MESSAGE_MAX = 2000
ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
TIMESTAMP = re.compile(r"[0-9]{1,16}")
EVERYONE = re.compile(r"@everyone", re.IGNORECASE)
CARD_LINE = re.compile(r"^(\s*)/(trade|signal|market)", re.IGNORECASE | re.MULTILINE)


def log(msg):
    sys.stdout.write(time.strftime("%H:%M:%S ") + msg + "\n")
    sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


def sanitize(text, limit):
    """No @everyone, no line that Orb would take for a trade/signal/market card, within the length."""
    text = EVERYONE.sub("everyone", text)
    text = CARD_LINE.sub(lambda m: m.group(1) + "\u203a /" + m.group(2), text)
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text if text.strip() else "(nothing)"


# ---------------------------------------------------------------------------------------------
# signature check
# ---------------------------------------------------------------------------------------------

class SignatureChecker:
    def __init__(self, token):
        # The key is sha256(token) as a lowercase hex string (its ASCII bytes), not the raw digest.
        self._key = hashlib.sha256(token.encode("utf-8")).hexdigest().encode("ascii")

    @staticmethod
    def parse(header):
        """`t=<ms>,v1=<hex>`: pairs in any order, spaces and unknown keys ignored, several v1 allowed."""
        if header is None:
            return None
        t = None
        v1 = []
        for part in header.split(","):
            part = part.strip()
            if not part or "=" not in part:
                continue
            k, v = part.split("=", 1)
            k, v = k.strip(), v.strip()
            if k == "t":
                if t is not None:
                    return None        # two timestamps: which one was signed? refuse
                t = v
            elif k == "v1":
                v1.append(v)
        if t is None or not TIMESTAMP.fullmatch(t) or not v1:
            return None
        return t, v1

    def check(self, header, raw_body, clock_ms):
        """Returns None when the delivery is genuine, else why it is refused."""
        parsed = self.parse(header)
        if parsed is None:
            return "missing or malformed X-Orb-Signature"
        t, candidates = parsed
        if abs(clock_ms - int(t)) > SIGNATURE_TOLERANCE_MS:
            return "signature timestamp too far from now"
        expected = hmac.new(self._key, t.encode("ascii") + b"." + raw_body, hashlib.sha256).hexdigest()
        expected_b = expected.encode("ascii")
        ok = False
        for v in candidates:                   # compare every candidate, in constant time each
            given = v.lower().encode("latin-1", "replace")
            if hmac.compare_digest(expected_b, given):
                ok = True
        return None if ok else "signature does not match"


# ---------------------------------------------------------------------------------------------
# at most once per event id
# ---------------------------------------------------------------------------------------------

class EventLedger:
    """Event ids the bot acted on, in SQLite under $HOME; with the notice given, for retries."""

    def __init__(self, path):
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS acted (id TEXT PRIMARY KEY, type TEXT, notice TEXT, at INTEGER)")
        # events live a day on Orb; keep two
        self._db.execute("DELETE FROM acted WHERE at < ?", (now_ms() - 2 * 86400 * 1000,))
        self._pending = {}   # id -> threading.Event, while its notice is being worked out

    def claim(self, event_id, event_type):
        """True the first time an id is seen (and records it); False for every later delivery."""
        with self._lock:
            cur = self._db.execute("INSERT OR IGNORE INTO acted (id, type, notice, at) VALUES (?, ?, NULL, ?)",
                                   (event_id, event_type, now_ms()))
            first = cur.rowcount == 1
            if first:
                self._pending[event_id] = threading.Event()
            return first

    def set_notice(self, event_id, notice):
        with self._lock:
            self._db.execute("UPDATE acted SET notice = ? WHERE id = ?", (notice, event_id))
            done = self._pending.pop(event_id, None)
        if done:
            done.set()

    def notice_of(self, event_id, wait_s):
        with self._lock:
            pending = self._pending.get(event_id)
        if pending:
            pending.wait(wait_s)
        with self._lock:
            row = self._db.execute("SELECT notice FROM acted WHERE id = ?", (event_id,)).fetchone()
        return row[0] if row else None

    def close(self):
        with self._lock:
            self._db.close()


# ---------------------------------------------------------------------------------------------
# the Orb API client (our own calls)
# ---------------------------------------------------------------------------------------------

class Throttled(Exception):
    pass


class OrbClient:
    def __init__(self, orb_url, token):
        self._api = orb_url.rstrip("/") + "/api/bot/v1"
        self._token = token
        self._not_before = {}            # "METHOD /path" -> epoch seconds, after a 429
        self._lock = threading.Lock()
        self._channels = {}              # server id -> (fetched at, [channel])

    def call(self, method, path, query=None, body=None, timeout=10.0, deadline=None):
        """Returns (status, parsed JSON or None). Waits out Retry-After for the same method and path."""
        key = method + " " + path
        status, data = None, None
        for _ in range(4):
            with self._lock:
                until = self._not_before.get(key, 0)
            wait = until - time.time()
            if wait > 0:
                if deadline is not None and until > deadline:
                    raise Throttled(key)
                time.sleep(wait)
            url = self._api + path + ("?" + urllib.parse.urlencode(query) if query else "")
            headers = {"Authorization": "Bearer " + self._token, "Accept": "application/json"}
            payload = None
            if body is not None:
                payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
                headers["Content-Type"] = "application/json"
            req = urllib.request.Request(url, data=payload, method=method, headers=headers)
            retry_after = None
            try:
                with urllib.request.urlopen(req, timeout=timeout) as resp:
                    status, raw = resp.status, resp.read()
            except urllib.error.HTTPError as e:
                status, raw = e.code, e.read()
                retry_after = e.headers.get("Retry-After")
                e.close()
            try:
                data = json.loads(raw.decode("utf-8")) if raw else None
            except ValueError:
                data = None
            if status != 429:
                return status, data
            pause = retry_after_seconds(retry_after)
            with self._lock:
                self._not_before[key] = max(self._not_before.get(key, 0), time.time() + pause)
            log("429 on %s; not again for %.2f s" % (key, pause))
        return status, data

    def channels(self, server, max_age=15.0):
        cached = self._channels.get(server)
        if cached and time.time() - cached[0] < max_age:
            return cached[1]
        status, data = self.call("GET", "/app", {"server": server}, timeout=4.0)
        if status != 200 or not isinstance(data, dict):
            self._channels.pop(server, None)
            return []
        chans = [c for c in data.get("channels") or [] if isinstance(c, dict)]
        self._channels[server] = (time.time(), chans)
        return chans

    def forget_channels(self, server):
        self._channels.pop(server, None)


def retry_after_seconds(value):
    margin = 0.25
    if value is None or not value.strip():
        return 5.0 + margin
    value = value.strip()
    try:
        return max(0.0, float(value)) + margin
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) + margin
    except (TypeError, ValueError):
        return 5.0 + margin


class PostLimiter:
    """Sliding 60 s windows: under 30 posts a minute, and 12 a minute in one channel."""

    def __init__(self):
        self._lock = threading.Lock()
        self._all = []
        self._per_channel = {}

    def acquire(self, channel, max_wait):
        give_up = time.time() + max_wait
        while True:
            with self._lock:
                now = time.time()
                self._all = [t for t in self._all if t > now - 60]
                mine = [t for t in self._per_channel.get(channel, []) if t > now - 60]
                self._per_channel[channel] = mine
                if len(self._all) < POSTS_PER_MINUTE and len(mine) < POSTS_PER_CHANNEL_MINUTE:
                    self._all.append(now)
                    mine.append(now)
                    return True
                free_at = now
                if len(self._all) >= POSTS_PER_MINUTE:
                    free_at = max(free_at, self._all[0] + 60.001)
                if len(mine) >= POSTS_PER_CHANNEL_MINUTE:
                    free_at = max(free_at, mine[0] + 60.001)
            if free_at > give_up:
                return False
            time.sleep(max(0.001, free_at - time.time()))


class Poster(threading.Thread):
    """Posts replies in the background; drains its queue before the bot exits."""

    def __init__(self, orb):
        super().__init__(name="poster", daemon=False)
        self.orb = orb
        self.jobs = queue.Queue()
        self.limiter = PostLimiter()

    def run(self):
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                self.post(**job)
            except Exception as e:                     # noqa: BLE001 - one bad post must not stop the rest
                log("post failed: %s" % type(e).__name__)

    def submit(self, **job):
        self.jobs.put(job)

    def stop(self):
        self.jobs.put(None)

    def may_post(self, server, channel):
        for c in self.orb.channels(server):
            if c.get("id") == channel:
                return (c.get("type") == "text" and not c.get("readOnly")
                        and "send_messages" in (c.get("rights") or []))
        return False

    def post(self, server, channel, content, reply_to=None, event_id=""):
        if not self.may_post(server, channel):
            log("not replying to %s: %s is not a text channel I may write in" % (event_id, channel))
            return
        if not self.limiter.acquire(channel, 30):
            log("not replying to %s: the posting limits are reached" % event_id)
            return
        body = {"channel": channel, "content": sanitize(content, MESSAGE_MAX)}
        if reply_to is not None:
            body["reply_to"] = reply_to
        status, data = self.orb.call("POST", "/messages", body=body)
        if status == 400 and reply_to is not None:
            # the message may be gone by now: say it without the reply link
            body.pop("reply_to")
            if not self.limiter.acquire(channel, 30):
                return
            status, data = self.orb.call("POST", "/messages", body=body)
        if status == 200:
            log("replied to %s in %s" % (event_id, channel))
        else:
            log("reply to %s answered %s" % (event_id, status))
            if status in (403, 404):
                self.orb.forget_channels(server)


# ---------------------------------------------------------------------------------------------
# what the bot does with an event
# ---------------------------------------------------------------------------------------------

class Brain:
    def __init__(self, orb, poster, app_id):
        self.orb = orb
        self.poster = poster
        self.app_id = app_id

    def command_notice(self, event, received):
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        command = data.get("command") if isinstance(data.get("command"), dict) else {}
        options = command.get("options") if isinstance(command.get("options"), dict) else {}
        name = command.get("name")
        if name == "echo":
            text = options.get("text", next(iter(options.values()), None)) if options else None
            text = "" if text is None else str(text)
            return text if text.strip() else "You gave me nothing to echo."
        if name == "verify":
            address = options.get("address", next(iter(options.values()), None)) if options else None
            return self.verify(event.get("server"), address, received + NOTICE_BUDGET_S)
        if name == "ping":
            return "Pong."
        if name == "help":
            return "I answer /echo TEXT and /verify ADDRESS, and I reply when you mention me."
        return "I do not know /%s. I answer /echo and /verify." % (name or "?")

    def verify(self, server, address, deadline):
        """holds is three-valued: true verified, false not verified, null (or no answer) cannot tell yet."""
        if not isinstance(address, str) or not ADDRESS.fullmatch(address.strip()):
            return "Give me a wallet address: 0x followed by 40 hex digits."
        address = address.strip()
        if not server:
            return "I can only check a passport inside a community."
        budget = max(0.5, deadline - time.time())
        try:
            status, data = self.orb.call("GET", "/passport",
                                         {"server": server, "address": address, "kind": "human", "minimum": 1},
                                         timeout=budget, deadline=deadline)
        except (Throttled, OSError):
            status, data = None, None
        if status == 403:
            return "I am not allowed to check passports here, so I cannot say whether %s is verified." % address
        if status == 200 and isinstance(data, dict):
            holds = data.get("holds")
            if holds is True:
                return "%s is verified: it holds human passport evidence." % address
            if holds is False:
                return "%s is not verified: it holds no human passport evidence." % address
        return "I cannot tell yet whether %s is verified: the registry could not be consulted. Try again later." % (
            address)

    def on_mention(self, event):
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        author = message.get("author") if isinstance(message.get("author"), dict) else {}
        if author.get("bot") is True or (self.app_id and author.get("id") == self.app_id):
            return                                     # never answer another bot (no loops)
        server = event.get("server")
        channel = message.get("channel") or event.get("channel")
        if not server or not channel:
            return
        name = author.get("name") or "there"
        body = message.get("body")
        if not isinstance(body, str):
            content = "I cannot read encrypted messages."      # body null: encrypted, not empty text
        elif data.get("reason") == "reply":
            content = "Thanks for your reply, %s." % name
        else:
            content = "Hello %s, I got your mention. Try /echo or /verify." % name
        reply_to = message.get("id") if isinstance(message.get("id"), int) else None
        self.poster.submit(server=server, channel=channel, content=content, reply_to=reply_to,
                           event_id=str(event.get("id")))


# ---------------------------------------------------------------------------------------------
# the endpoint
# ---------------------------------------------------------------------------------------------

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "orb-bot-python"
    sys_version = ""
    timeout = 5                  # an idle connection is not held open for long

    # set on the class by main()
    checker = None
    ledger = None
    brain = None

    def log_message(self, fmt, *args):          # the default writes to stderr for every request
        pass

    def send_json(self, status, obj):
        raw = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(raw)
        self.close_connection = True

    def send_empty(self, status, extra=None):
        self.send_response(status)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if status != 204:                        # RFC 9110: no Content-Length on a 204
            self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def refuse(self, status, message):
        self.send_json(status, {"error": {"message": message, "code": status}})

    def do_GET(self):
        self.send_empty(405, {"Allow": "POST"})

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY:
                    raise ValueError("too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = int(self.headers.get("Content-Length") or "0")
        if length < 0 or length > MAX_BODY:
            raise ValueError("too large")
        return self.rfile.read(length)

    def do_POST(self):
        received = time.time()
        try:
            raw = self.read_body()
        except (ValueError, OSError):
            self.refuse(400, "unreadable body")
            return
        # 1. verify, over the bytes exactly as received, before anything else is read from them
        why = self.checker.check(self.headers.get("X-Orb-Signature"), raw, now_ms())
        if why is not None:
            log("refused a delivery (401): %s" % why)
            self.refuse(401, why)
            return
        # 2. only a genuine delivery is parsed
        try:
            event = json.loads(raw.decode("utf-8"))
            if not isinstance(event, dict):
                raise ValueError("not an object")
        except ValueError:
            self.refuse(400, "the body is not a JSON event")
            return
        event_id = event.get("id") if isinstance(event.get("id"), str) else self.headers.get("X-Orb-Event")
        event_type = event.get("type")
        if not event_id:
            self.refuse(400, "the event has no id")
            return
        first = self.ledger.claim(event_id, str(event_type))
        if event_type == "application_command":
            if first:
                try:
                    notice = self.brain.command_notice(event, received)
                except Exception as e:             # noqa: BLE001 - the member still gets an answer
                    log("command %s failed: %s" % (event_id, type(e).__name__))
                    notice = "Something went wrong on my side. Try again in a moment."
                notice = sanitize(notice, NOTICE_MAX)
                self.ledger.set_notice(event_id, notice)
                log("acted %s application_command" % event_id)
            else:
                # a retry: the same answer again, no new action
                notice = self.ledger.notice_of(event_id, max(0.0, received + NOTICE_BUDGET_S - time.time()))
                notice = notice or "I am still working on that."
                log("delivery of %s again: same notice, not acted on twice" % event_id)
            self.send_json(200, {"notice": notice})
            return
        if first:
            if event_type == "message.mention":
                self.brain.on_mention(event)
            elif event_type == "app.test":
                log("test event %s received" % event_id)
            self.ledger.set_notice(event_id, None)
            log("acted %s %s" % (event_id, event_type))
        else:
            log("delivery of %s again: not acted on twice" % event_id)
        self.send_empty(204)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = False      # requests in flight are joined by server_close()
    block_on_close = True
    allow_reuse_address = True


def main():
    token = os.environ.get("ORB_TOKEN")
    orb_url = os.environ.get("ORB_URL")
    port = os.environ.get("PORT")
    if not token or not orb_url or not port:
        sys.stderr.write("PORT, ORB_URL and ORB_TOKEN must be set\n")
        return 2
    home = os.environ.get("HOME") or os.path.expanduser("~")
    state = os.path.join(home, ".orb-bot-python")
    os.makedirs(state, mode=0o700, exist_ok=True)

    orb = OrbClient(orb_url, token)
    poster = Poster(orb)
    Handler.checker = SignatureChecker(token)
    Handler.ledger = EventLedger(os.path.join(state, "events.sqlite3"))
    Handler.brain = Brain(orb, poster, os.environ.get("ORB_APP_ID") or "")
    del token

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    server = Server(("127.0.0.1", int(port)), Handler)
    poster.start()
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="serve")
    serving.start()
    log("listening on 127.0.0.1:%s" % port)

    while not stop.wait(0.5):
        pass
    log("stopping: no new deliveries; finishing requests in flight and queued posts")
    server.shutdown()          # the accept loop ends
    serving.join()
    server.server_close()      # closes the socket and joins the request threads
    poster.stop()              # after every handler has queued what it had to
    poster.join()
    Handler.ledger.close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
