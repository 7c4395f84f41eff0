// An Orb chat bot that fetches its events (events mode), written from the Orb bot API's
// OpenAPI document alone. Java 17, JDK only: java.net.http.HttpClient, a poller thread and a
// small worker pool, a hand-written JSON reader/writer, state in files under $HOME.
//
// Build:  javac -d out Bot.java
// Run:    ORB_URL=http://127.0.0.1:8787 ORB_TOKEN=... ORB_APP_ID=... java -cp out Bot
//
// The token is read from ORB_TOKEN and only ever placed in the Authorization header.

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

public final class Bot {

    // ---- limits taken from the spec -------------------------------------------------------
    /** GET /events: `wait` has maximum 25 (seconds). We always ask for the longest poll. */
    static final int LONG_POLL_WAIT_S = 25;
    /** GET /events: `limit` has maximum 100. */
    static final int EVENTS_LIMIT = 100;
    /** POST /messages: 30 a minute, 12 a minute per channel. We stay well under both. */
    static final int POSTS_PER_MINUTE = 25;
    static final int POSTS_PER_CHANNEL_MINUTE = 10;
    /** /respond content maxLength 1800; message content maxLength 2000. */
    static final int RESPOND_MAX = 1800;
    static final int MESSAGE_MAX = 2000;
    /** The member waits "about six seconds" for /respond. */
    static final long COMMAND_WINDOW_MS = 6000;
    /** Voice: "heartbeat (every minute or so)", and a seat is dropped after ninety seconds without one. */
    static final long HEARTBEAT_EVERY_S = 40;
    static final Pattern ADDRESS = Pattern.compile("^0x[0-9a-fA-F]{40}$");
    static final Pattern EVERYONE = Pattern.compile("(?i)@everyone");
    static final Pattern CARD_LINE = Pattern.compile("(?im)^(\\s*)/(trade|signal|market)");

    // ---- configuration ----------------------------------------------------------------------
    final String api;          // ORB_URL + /api/bot/v1
    final String token;        // never logged, never written
    final String appId;
    final Path stateDir;
    final Path cursorFile;
    final Path handledFile;

    final HttpClient http;
    final ExecutorService workers;
    final ScheduledExecutorService timers;
    final CountDownLatch stopLatch = new CountDownLatch(1);
    final Object pollLock = new Object();
    volatile boolean stopping = false;
    CompletableFuture<HttpResponse<String>> currentPoll; // guarded by pollLock
    Thread poller;

    long cursor; // only the poller thread writes it
    final Set<String> claimed = ConcurrentHashMap.newKeySet();
    final Map<String, Long> notBefore = new ConcurrentHashMap<>(); // "METHOD /path" -> epoch ms
    final RateLimiter limiter = new RateLimiter();
    final Map<String, ChannelCache> channels = new ConcurrentHashMap<>(); // server id -> channels

    // voice: at most one seat at a time
    final Object voiceLock = new Object();
    String seatCall;     // guarded by voiceLock
    String seatChannel;  // guarded by voiceLock
    ScheduledFuture<?> heartbeatTask; // guarded by voiceLock

    Bot(String orbUrl, String token, String appId, Path home) {
        String base = orbUrl.endsWith("/") ? orbUrl.substring(0, orbUrl.length() - 1) : orbUrl;
        this.api = base + "/api/bot/v1";
        this.token = token;
        this.appId = appId == null ? "" : appId;
        this.stateDir = home.resolve(".orb-bot-java");
        this.cursorFile = stateDir.resolve("cursor");
        this.handledFile = stateDir.resolve("handled-events");
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        this.workers = Executors.newFixedThreadPool(4, named("worker", false));
        this.timers = Executors.newSingleThreadScheduledExecutor(named("timer", true));
    }

    public static void main(String[] args) throws Exception {
        String url = System.getenv("ORB_URL");
        String token = System.getenv("ORB_TOKEN");
        if (url == null || url.isBlank() || token == null || token.isBlank()) {
            System.err.println("ORB_URL and ORB_TOKEN must be set");
            System.exit(2);
        }
        String home = System.getenv("HOME");
        Path homeDir = Paths.get(home != null && !home.isBlank() ? home : System.getProperty("user.home"));
        Bot bot = new Bot(url, token, System.getenv("ORB_APP_ID"), homeDir);
        bot.start();
    }

    // =========================================================================================
    // life cycle
    // =========================================================================================

    void start() throws InterruptedException {
        loadState();
        Runtime.getRuntime().addShutdownHook(new Thread(this::shutdown, "shutdown"));
        poller = new Thread(this::pollLoop, "poller");
        poller.start();
        poller.join();
    }

    /** SIGTERM: abandon the long poll, let the handlers in flight finish, keep the cursor. */
    void shutdown() {
        log("stopping: finishing the work in flight");
        synchronized (pollLock) {
            stopping = true;
            if (currentPoll != null) currentPoll.cancel(true); // abandon the held poll; its events stay queued
        }
        stopLatch.countDown();
        try {
            poller.join(60_000); // the poller finishes its current batch and saves the cursor
        } catch (InterruptedException ignored) {
            Thread.currentThread().interrupt();
        }
        workers.shutdown();
        try {
            if (!workers.awaitTermination(30, TimeUnit.SECONDS)) log("handlers still busy after 30 s; leaving them");
        } catch (InterruptedException ignored) {
            Thread.currentThread().interrupt();
        }
        leaveSeat();
        timers.shutdownNow();
        log("stopped at cursor " + cursor);
    }

    void pollLoop() {
        syncCommands();
        while (!stopping) {
            try {
                pollOnce();
            } catch (RuntimeException e) {
                // never let one odd reply end the poller (the JVM would stay up doing nothing)
                log("poller error: " + describe(e));
                pause(1000);
            }
        }
        log("poller done");
    }

    long backoff = 250; // only the poller thread uses it

    /** One long poll and the handling of its events. */
    void pollOnce() {
        HttpResponse<String> resp;
        try {
            resp = poll();
        } catch (CancellationException e) {
            return; // abandoned by shutdown
        } catch (Exception e) {
            if (stopping) return;
            log("events poll failed (" + describe(e) + "); again in " + backoff + " ms");
            pause(backoff);
            backoff = Math.min(backoff * 2, 15_000);
            return;
        }
        if (resp == null) return; // stopping before the poll began
        int status = resp.statusCode();
        if (status == 429) return; // notBefore was set; the next poll waits it out
        if (status != 200) {
            log("events poll answered " + status + "; again in " + backoff + " ms");
            pause(backoff);
            backoff = Math.min(backoff * 2, status == 401 ? 30_000 : 15_000);
            return;
        }
        backoff = 250;
        Map<String, Object> body;
        try {
            body = Json.object(Json.parse(resp.body()));
        } catch (RuntimeException e) {
            log("events reply is not JSON; again shortly");
            pause(1000);
            return;
        }
        List<Object> events = Json.list(body.get("events"));
        long next = cursor;
        Object n = body.get("next");
        if (n instanceof Number) {
            next = ((Number) n).longValue();
        } else {
            for (Object ev : events) {
                Object c = Json.object(ev).get("cursor");
                if (c instanceof Number) next = Math.max(next, ((Number) c).longValue());
            }
        }
        handleBatch(events);
        // Every event of this reply is handled: only now does the cursor move, in memory and on disk.
        if (next != cursor) {
            cursor = next;
            saveCursor();
        }
        if ("webhook".equals(body.get("mode")) && events.isEmpty()) {
            // An endpoint URL is set: events go there, and this list stays empty. Look again later.
            pause(30_000);
        }
    }

    HttpResponse<String> poll() throws Exception {
        String q = "after=" + cursor + "&wait=" + LONG_POLL_WAIT_S + "&limit=" + EVENTS_LIMIT;
        Long until = notBefore.get("GET /events");
        if (until != null && until > System.currentTimeMillis()) {
            pause(until - System.currentTimeMillis()); // a 429's Retry-After; SIGTERM cuts it short
            if (stopping) return null;
        }
        HttpRequest req = request("GET", "/events", q, null)
                .timeout(Duration.ofSeconds(LONG_POLL_WAIT_S + 15)).build();
        CompletableFuture<HttpResponse<String>> f;
        synchronized (pollLock) {
            if (stopping) return null;
            f = http.sendAsync(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            currentPoll = f;
        }
        try {
            HttpResponse<String> r = f.get();
            noteThrottle("GET /events", r);
            return r;
        } catch (ExecutionException e) {
            throw (e.getCause() instanceof Exception) ? (Exception) e.getCause() : e;
        } finally {
            synchronized (pollLock) {
                currentPoll = null;
            }
        }
    }

    void handleBatch(List<Object> events) {
        List<Future<?>> running = new ArrayList<>();
        for (Object o : events) {
            Map<String, Object> ev = Json.object(o);
            String id = Json.str(ev.get("id"));
            if (id == null) continue;
            if (!claimed.add(id)) {
                log("already handled " + id + "; not acting again");
                continue;
            }
            running.add(workers.submit(() -> handleEvent(ev, id)));
        }
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                log("handler failed: " + describe(e.getCause()));
            }
        }
    }

    void handleEvent(Map<String, Object> ev, String id) {
        long received = System.currentTimeMillis();
        String type = Json.str(ev.get("type"));
        try {
            if ("application_command".equals(type)) {
                onCommand(ev, id, received);
            } else if ("message.mention".equals(type)) {
                onMention(ev);
            } else if ("app.test".equals(type)) {
                log("test event " + id + " received");
            } else {
                log("ignoring event " + id + " of type " + type);
            }
            log("acted " + id + " " + type);
        } catch (Throwable t) {
            log("event " + id + " failed: " + describe(t));
        } finally {
            rememberHandled(id);
        }
    }

    // =========================================================================================
    // commands
    // =========================================================================================

    static List<Object> commandList() {
        List<Object> list = new ArrayList<>();
        list.add(Json.obj("name", "echo", "description", "Repeat your text back to you",
                "options", List.of(Json.obj("name", "text", "description", "What to repeat"))));
        list.add(Json.obj("name", "verify", "description", "Check whether a wallet holds human passport evidence",
                "options", List.of(Json.obj("name", "address", "description", "A wallet address, 0x and 40 hex"))));
        list.add(Json.obj("name", "join", "description", "Take a seat in a voice channel"));
        return list;
    }

    /** PUT /commands once with the whole list; retried (the same list) only if it did not go through. */
    void syncCommands() {
        Map<String, Object> body = Json.obj("commands", commandList());
        long backoff = 1000;
        for (int attempt = 0; attempt < 5 && !stopping; attempt++) {
            try {
                HttpResponse<String> r = call("PUT", "/commands", null, body, 10_000, Long.MAX_VALUE);
                if (r.statusCode() == 200) {
                    log("commands synced: /echo, /verify, /join");
                    return;
                }
                log("command sync answered " + r.statusCode() + " " + errorMessage(r));
                if (r.statusCode() == 400 || r.statusCode() == 403) return; // our list is wrong; retrying will not help
            } catch (Exception e) {
                log("command sync failed: " + describe(e));
            }
            pause(backoff);
            backoff *= 2;
        }
    }

    void onCommand(Map<String, Object> ev, String id, long received) throws Exception {
        Map<String, Object> data = Json.object(ev.get("data"));
        Map<String, Object> command = Json.object(data.get("command"));
        Map<String, Object> member = Json.object(data.get("member"));
        Map<String, Object> options = Json.object(command.get("options"));
        String name = Json.str(command.get("name"));
        String server = Json.str(ev.get("server"));
        String channel = Json.str(ev.get("channel"));
        long deadline = received + COMMAND_WINDOW_MS - 700;

        String answer;
        if ("echo".equals(name)) {
            String text = firstOption(options, "text");
            answer = (text == null || text.isBlank()) ? "You gave me nothing to echo." : text;
        } else if ("verify".equals(name)) {
            answer = verify(server, firstOption(options, "address"), deadline);
        } else if ("join".equals(name)) {
            answer = join(server, channel);
        } else {
            answer = "I know /echo, /verify and /join.";
        }
        answer = sanitize(answer, RESPOND_MAX);

        HttpResponse<String> r = null;
        int s;
        String path = "/interactions/" + enc(id) + "/respond";
        Map<String, Object> reply = Json.obj("content", answer);
        long until = received + COMMAND_WINDOW_MS + 2_000;
        try {
            try {
                r = call("POST", path, null, reply, 5_000, until);
            } catch (Throttled t) {
                throw t;
            } catch (IOException e) {
                log("respond to " + id + " failed (" + describe(e) + "); retrying once");
                r = call("POST", path, null, reply, 5_000, until);
            }
            s = r.statusCode();
        } catch (Throttled t) {
            s = 429; // still throttled when the member stops waiting: post instead
        }
        if (s == 200) {
            log("answered /" + name + " (" + id + ")");
        } else if (s == 409) {
            log("/" + name + " (" + id + ") was already answered");
        } else if (s == 410 || s == 429) {
            // The member stopped waiting: say it in the channel instead, as the spec asks.
            String who = Json.str(member.get("id"));
            String prefix = who != null ? "<@" + who + "> " : "";
            String content = prefix + "(answer to /" + (name == null ? "?" : name) + ") " + answer;
            if (channel != null && server != null) {
                post(server, channel, content, null, 4_000);
            } else {
                log("/" + name + " (" + id + ") came too late and has no channel to post in");
            }
        } else {
            log("respond to " + id + " answered " + s + " " + errorMessage(r));
        }
    }

    static String firstOption(Map<String, Object> options, String preferred) {
        Object v = options.get(preferred);
        if (v != null) return String.valueOf(v);
        for (Object o : options.values()) if (o != null) return String.valueOf(o);
        return null;
    }

    /** /verify: GET /passport. holds is three-valued; null is "cannot tell", never "no". */
    String verify(String server, String address, long deadline) {
        if (address == null || !ADDRESS.matcher(address.trim()).matches()) {
            return "Give me a wallet address: 0x followed by 40 hex digits.";
        }
        address = address.trim();
        if (server == null) return "I can only check passports inside a community.";
        String q = "server=" + enc(server) + "&address=" + enc(address) + "&kind=human&minimum=1";
        HttpResponse<String> r;
        try {
            long budget = Math.max(1000, Math.min(4000, deadline - System.currentTimeMillis()));
            r = call("GET", "/passport", q, null, budget, deadline);
        } catch (Exception e) {
            return "I cannot tell yet whether " + address + " is verified (the check did not answer). Try again later.";
        }
        if (r.statusCode() == 403) {
            return "I am not allowed to check passports here, so I cannot say whether " + address + " is verified.";
        }
        if (r.statusCode() != 200) {
            return "I cannot tell yet whether " + address + " is verified (the check answered "
                    + r.statusCode() + "). Try again later.";
        }
        Object holds;
        try {
            holds = Json.object(Json.parse(r.body())).get("holds");
        } catch (RuntimeException e) {
            holds = null;
        }
        if (Boolean.TRUE.equals(holds)) return address + " is verified: it holds human passport evidence.";
        if (Boolean.FALSE.equals(holds)) return address + " is not verified: it holds no human passport evidence.";
        return "I cannot tell yet whether " + address + " is verified: the registry could not be consulted. "
                + "Try again later.";
    }

    // =========================================================================================
    // voice
    // =========================================================================================

    String join(String server, String commandChannel) throws Exception {
        if (server == null) return "I can only join voice inside a community.";
        List<Map<String, Object>> list = channelsOf(server, true);
        String target = null;
        String targetName = null;
        // the channel the command was typed in, if it is a voice channel; else one where it may speak
        for (Map<String, Object> c : list) {
            if ("voice".equals(c.get("type")) && java.util.Objects.equals(Json.str(c.get("id")), commandChannel)
                    && Json.list(c.get("rights")).contains("connect")) {
                target = commandChannel;
                targetName = Json.str(c.get("name"));
            }
        }
        for (int pass = 0; pass < 2 && target == null; pass++) {
            for (Map<String, Object> c : list) {
                List<Object> rights = Json.list(c.get("rights"));
                if ("voice".equals(c.get("type")) && rights.contains("connect")
                        && (pass == 1 || rights.contains("speak"))) {
                    target = Json.str(c.get("id"));
                    targetName = Json.str(c.get("name"));
                    break;
                }
            }
        }
        if (target == null) return "I have no voice channel I may join here.";
        HttpResponse<String> r = call("POST", "/voice", null, Json.obj("action", "join", "channel", target),
                4_000, System.currentTimeMillis() + 4_000);
        if (r.statusCode() == 409) return "I cannot take a seat in " + targetName + " (it is full, or I sit elsewhere).";
        if (r.statusCode() != 200) return "I could not join " + targetName + " (" + r.statusCode() + ").";
        String call = Json.str(Json.object(Json.parse(r.body())).get("call"));
        if (call == null) return "I could not join " + targetName + ".";
        synchronized (voiceLock) {
            if (!call.equals(seatCall)) {
                if (heartbeatTask != null) heartbeatTask.cancel(false);
                seatCall = call;
                seatChannel = target;
                heartbeatTask = timers.scheduleWithFixedDelay(this::heartbeat,
                        HEARTBEAT_EVERY_S, HEARTBEAT_EVERY_S, TimeUnit.SECONDS);
            }
        }
        log("seated in " + target + " (" + call + ")");
        return "I took a seat in " + targetName + ".";
    }

    void heartbeat() {
        String call;
        synchronized (voiceLock) {
            call = seatCall;
        }
        if (call == null || stopping) return;
        for (int attempt = 0; attempt < 4; attempt++) {
            try {
                HttpResponse<String> r = call("POST", "/voice", null,
                        Json.obj("action", "heartbeat", "call", call, "speaking", Boolean.FALSE),
                        5_000, System.currentTimeMillis() + 20_000);
                int s = r.statusCode();
                if (s == 200) return;
                if (s == 404 || s == 410 || s == 403) {
                    log("seat in " + call + " is gone (" + s + ")");
                    dropSeat(call);
                    return;
                }
                log("heartbeat answered " + s);
            } catch (Exception e) {
                log("heartbeat failed: " + describe(e));
            }
            pause(3_000);
        }
    }

    void dropSeat(String call) {
        synchronized (voiceLock) {
            if (call.equals(seatCall)) {
                if (heartbeatTask != null) heartbeatTask.cancel(false);
                heartbeatTask = null;
                seatCall = null;
                seatChannel = null;
            }
        }
    }

    void leaveSeat() {
        String call;
        synchronized (voiceLock) {
            call = seatCall;
            if (heartbeatTask != null) heartbeatTask.cancel(false);
            heartbeatTask = null;
            seatCall = null;
            seatChannel = null;
        }
        if (call == null) return;
        try {
            call("POST", "/voice", null, Json.obj("action", "leave", "call", call), 3_000,
                    System.currentTimeMillis() + 3_000);
            log("left " + call);
        } catch (Exception e) {
            log("leaving " + call + " failed: " + describe(e));
        }
    }

    // =========================================================================================
    // mentions and posting
    // =========================================================================================

    void onMention(Map<String, Object> ev) throws Exception {
        Map<String, Object> data = Json.object(ev.get("data"));
        Map<String, Object> message = Json.object(data.get("message"));
        Map<String, Object> author = Json.object(message.get("author"));
        if (Boolean.TRUE.equals(author.get("bot")) || appId.equals(Json.str(author.get("id")))) return; // no bot loops
        String server = Json.str(ev.get("server"));
        String channel = Json.str(message.get("channel"));
        if (channel == null) channel = Json.str(ev.get("channel"));
        if (server == null || channel == null) return;
        Object body = message.get("body");
        String who = Json.str(author.get("name"));
        who = (who == null || who.isBlank()) ? "there" : who;
        String content;
        if (!(body instanceof String)) {
            content = "I cannot read encrypted messages.";        // body null: encrypted, not empty
        } else if ("reply".equals(data.get("reason"))) {
            content = "Thanks for the reply, " + who + ".";
        } else {
            content = "Hi " + who + ". Type /echo, /verify or /join to use me.";
        }
        Object mid = message.get("id");
        Long replyTo = mid instanceof Number ? ((Number) mid).longValue() : null;
        post(server, channel, sanitize(content, MESSAGE_MAX), replyTo, 30_000);
    }

    /** POST /messages, only to a text channel we may write in, under the limits, honouring Retry-After. */
    boolean post(String server, String channel, String content, Long replyTo, long maxQueueMs) throws Exception {
        if (!mayPost(server, channel)) {
            log("not posting in " + channel + ": not a text channel I may write in");
            return false;
        }
        if (!limiter.acquire(channel, maxQueueMs)) {
            log("not posting in " + channel + ": it would break the posting limits");
            return false;
        }
        Map<String, Object> body = Json.obj("channel", channel, "content", content);
        if (replyTo != null) body.put("reply_to", replyTo);
        long deadline = System.currentTimeMillis() + 60_000;
        HttpResponse<String> r = call("POST", "/messages", null, body, 10_000, deadline);
        if (r.statusCode() == 400 && replyTo != null) {
            // the message may have been removed meanwhile: say it without the reply link
            body.remove("reply_to");
            if (!limiter.acquire(channel, maxQueueMs)) return false;
            r = call("POST", "/messages", null, body, 10_000, deadline);
        }
        if (r.statusCode() == 200) return true;
        log("post in " + channel + " answered " + r.statusCode() + " " + errorMessage(r));
        if (r.statusCode() == 403 || r.statusCode() == 404) channels.remove(server);
        return false;
    }

    boolean mayPost(String server, String channel) {
        List<Map<String, Object>> list;
        try {
            list = channelsOf(server, false);
        } catch (Exception e) {
            log("cannot read the channels of " + server + ": " + describe(e));
            return false;
        }
        for (Map<String, Object> c : list) {
            if (channel.equals(c.get("id"))) {
                return "text".equals(c.get("type")) && !Boolean.TRUE.equals(c.get("readOnly"))
                        && Json.list(c.get("rights")).contains("send_messages");
            }
        }
        return false;
    }

    /** GET /app?server=: the channels as the app's role sees them, cached for 15 s. */
    List<Map<String, Object>> channelsOf(String server, boolean fresh) throws Exception {
        ChannelCache c = channels.get(server);
        long now = System.currentTimeMillis();
        if (c != null && !fresh && now - c.at < 15_000) return c.list;
        HttpResponse<String> r = call("GET", "/app", "server=" + enc(server), null, 4_000, now + 5_000);
        if (r.statusCode() != 200) {
            channels.remove(server);
            return Collections.emptyList();
        }
        List<Map<String, Object>> list = new ArrayList<>();
        for (Object o : Json.list(Json.object(Json.parse(r.body())).get("channels"))) list.add(Json.object(o));
        channels.put(server, new ChannelCache(now, list));
        return list;
    }

    record ChannelCache(long at, List<Map<String, Object>> list) { }

    /** No @everyone, no line that reads as a trade/signal/market card, within the length limit. */
    static String sanitize(String s, int max) {
        s = EVERYONE.matcher(s).replaceAll("everyone");
        s = CARD_LINE.matcher(s).replaceAll("$1› /$2");
        if (s.length() > max) {
            int end = max - 1;
            if (Character.isHighSurrogate(s.charAt(end - 1))) end--;
            s = s.substring(0, end) + "…";
        }
        if (s.isBlank()) s = "(nothing)";
        return s;
    }

    // =========================================================================================
    // HTTP
    // =========================================================================================

    HttpRequest.Builder request(String method, String path, String query, Object body) {
        URI uri = URI.create(api + path + (query == null ? "" : "?" + query));
        HttpRequest.Builder b = HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json");
        if (body != null) {
            b.header("Content-Type", "application/json");
            b.method(method, HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8));
        } else if ("GET".equals(method)) {
            b.GET();
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return b;
    }

    /**
     * One API call. After a 429 the same call (method and path) waits at least Retry-After seconds;
     * it is tried again while the wait ends before {@code deadline}.
     */
    HttpResponse<String> call(String method, String path, String query, Object body, long timeoutMs, long deadline)
            throws IOException, InterruptedException {
        String key = method + " " + path;
        HttpResponse<String> r = null;
        for (int attempt = 0; attempt < 4; attempt++) {
            if (!waitNotBefore(key, deadline)) {
                if (r != null) return r;
                throw new Throttled(key);
            }
            HttpRequest req = request(method, path, query, body).timeout(Duration.ofMillis(timeoutMs)).build();
            r = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (!noteThrottle(key, r)) return r;
        }
        return r;
    }

    /** Records a 429's Retry-After for this call; true when the reply was a 429. */
    boolean noteThrottle(String key, HttpResponse<String> r) {
        if (r.statusCode() != 429) return false;
        long waitMs = retryAfterMs(r.headers().firstValue("Retry-After").orElse(null));
        long until = System.currentTimeMillis() + waitMs;
        notBefore.merge(key, until, Math::max);
        log("429 on " + key + "; not again for " + waitMs + " ms");
        return true;
    }

    static long retryAfterMs(String v) {
        long margin = 250;
        if (v == null || v.isBlank()) return 5_000 + margin;
        v = v.trim();
        try {
            return (long) Math.ceil(Double.parseDouble(v) * 1000) + margin;
        } catch (NumberFormatException ignored) {
            // an HTTP-date
        }
        try {
            ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
            return Math.max(0, at.toInstant().toEpochMilli() - System.currentTimeMillis()) + margin;
        } catch (RuntimeException e) {
            return 5_000 + margin;
        }
    }

    /** Sleeps until the call may go again; false when that would be after {@code deadline}. */
    boolean waitNotBefore(String key, long deadline) throws InterruptedException {
        Long until = notBefore.get(key);
        if (until == null) return true;
        long now = System.currentTimeMillis();
        if (until <= now) return true;
        if (until > deadline) return false;
        Thread.sleep(until - now);
        return true;
    }

    /** A call still throttled (Retry-After) when its deadline comes. */
    static final class Throttled extends IOException {
        private static final long serialVersionUID = 1L;

        Throttled(String key) {
            super(key + " is throttled past its deadline");
        }
    }

    static String errorMessage(HttpResponse<String> r) {
        try {
            Object m = Json.object(Json.object(Json.parse(r.body())).get("error")).get("message");
            return m == null ? "" : String.valueOf(m);
        } catch (RuntimeException e) {
            return "";
        }
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    // =========================================================================================
    // state under $HOME
    // =========================================================================================

    void loadState() {
        try {
            Files.createDirectories(stateDir);
            if (Files.exists(cursorFile)) {
                String s = Files.readString(cursorFile, StandardCharsets.UTF_8).trim();
                if (!s.isEmpty()) cursor = Long.parseLong(s);
            }
            if (Files.exists(handledFile)) {
                List<String> lines = Files.readAllLines(handledFile, StandardCharsets.UTF_8);
                // keep the newest 5000 ids; events are kept a day and at most 500 per app
                Set<String> keep = new LinkedHashSet<>();
                for (int i = Math.max(0, lines.size() - 5000); i < lines.size(); i++) {
                    String id = lines.get(i).trim();
                    if (!id.isEmpty()) keep.add(id);
                }
                claimed.addAll(keep);
                if (lines.size() > 5000) {
                    writeAtomically(handledFile, String.join("\n", keep) + "\n");
                }
            }
            log("starting at cursor " + cursor + " with " + claimed.size() + " handled events remembered");
        } catch (IOException | RuntimeException e) {
            log("could not read the saved state (" + describe(e) + "); starting from the beginning");
            cursor = 0;
        }
    }

    synchronized void rememberHandled(String id) {
        try {
            Files.writeString(handledFile, id + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
        } catch (IOException e) {
            log("could not record " + id + ": " + describe(e));
        }
    }

    void saveCursor() {
        try {
            writeAtomically(cursorFile, Long.toString(cursor) + "\n");
        } catch (IOException e) {
            log("could not save the cursor: " + describe(e));
        }
    }

    static void writeAtomically(Path file, String content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    // =========================================================================================
    // helpers
    // =========================================================================================

    void pause(long ms) {
        try {
            stopLatch.await(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String describe(Throwable t) {
        if (t == null) return "unknown";
        if (t instanceof TimeoutException || t instanceof java.net.http.HttpTimeoutException) return "timed out";
        String m = t.getMessage();
        return t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    static synchronized void log(String s) {
        System.out.println(Instant.now() + " " + s);
        System.out.flush();
    }

    static java.util.concurrent.ThreadFactory named(String prefix, boolean daemon) {
        int[] n = {0};
        return r -> {
            Thread t = new Thread(r, prefix + "-" + (++n[0]));
            t.setDaemon(daemon);
            return t;
        };
    }

    /** Sliding 60 s windows, checked before each post: under 30 a minute, and 12 a minute per channel. */
    static final class RateLimiter {
        private final Deque<Long> all = new ArrayDeque<>();
        private final Map<String, Deque<Long>> perChannel = new HashMap<>();

        boolean acquire(String channel, long maxWaitMs) throws InterruptedException {
            long giveUp = System.currentTimeMillis() + maxWaitMs;
            while (true) {
                long wait;
                synchronized (this) {
                    long now = System.currentTimeMillis();
                    Deque<Long> ch = perChannel.computeIfAbsent(channel, k -> new ArrayDeque<>());
                    prune(all, now);
                    prune(ch, now);
                    if (all.size() < POSTS_PER_MINUTE && ch.size() < POSTS_PER_CHANNEL_MINUTE) {
                        all.addLast(now);
                        ch.addLast(now);
                        return true;
                    }
                    long freeAt = now;
                    if (all.size() >= POSTS_PER_MINUTE) freeAt = Math.max(freeAt, all.peekFirst() + 60_001);
                    if (ch.size() >= POSTS_PER_CHANNEL_MINUTE) freeAt = Math.max(freeAt, ch.peekFirst() + 60_001);
                    if (freeAt > giveUp) return false;
                    wait = freeAt - now;
                }
                Thread.sleep(Math.max(1, wait));
            }
        }

        private static void prune(Deque<Long> d, long now) {
            while (!d.isEmpty() && d.peekFirst() <= now - 60_000) d.removeFirst();
        }
    }

    // =========================================================================================
    // a small JSON reader and writer (the JDK has none)
    // =========================================================================================

    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json p = new Json(text);
            p.ws();
            Object v = p.value();
            p.ws();
            if (p.i != p.s.length()) throw new IllegalArgumentException("trailing characters");
            return v;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(Object o) {
            return o instanceof Map ? (Map<String, Object>) o : new LinkedHashMap<>();
        }

        @SuppressWarnings("unchecked")
        static List<Object> list(Object o) {
            return o instanceof List ? (List<Object>) o : new ArrayList<>();
        }

        static String str(Object o) {
            return o instanceof String ? (String) o : null;
        }

        static Map<String, Object> obj(Object... kv) {
            Map<String, Object> m = new LinkedHashMap<>();
            for (int k = 0; k < kv.length; k += 2) m.put((String) kv[k], kv[k + 1]);
            return m;
        }

        private void ws() {
            while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\n'
                    || s.charAt(i) == '\r')) i++;
        }

        private Object value() {
            if (i >= s.length()) throw new IllegalArgumentException("unexpected end");
            char c = s.charAt(i);
            switch (c) {
                case '{': return obj();
                case '[': return arr();
                case '"': return string();
                case 't': lit("true"); return Boolean.TRUE;
                case 'f': lit("false"); return Boolean.FALSE;
                case 'n': lit("null"); return null;
                default: return number();
            }
        }

        private void lit(String w) {
            if (!s.startsWith(w, i)) throw new IllegalArgumentException("bad literal at " + i);
            i += w.length();
        }

        private Map<String, Object> obj() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                if (peek() != '"') throw new IllegalArgumentException("expected a key at " + i);
                String k = string();
                ws();
                expect(':');
                ws();
                m.put(k, value());
                ws();
                char c = next();
                if (c == '}') return m;
                if (c != ',') throw new IllegalArgumentException("expected , or } at " + i);
            }
        }

        private List<Object> arr() {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (peek() == ']') {
                i++;
                return l;
            }
            while (true) {
                ws();
                l.add(value());
                ws();
                char c = next();
                if (c == ']') return l;
                if (c != ',') throw new IllegalArgumentException("expected , or ] at " + i);
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') return b.toString();
                if (c == '\\') {
                    char e = next();
                    switch (e) {
                        case '"': b.append('"'); break;
                        case '\\': b.append('\\'); break;
                        case '/': b.append('/'); break;
                        case 'b': b.append('\b'); break;
                        case 'f': b.append('\f'); break;
                        case 'n': b.append('\n'); break;
                        case 'r': b.append('\r'); break;
                        case 't': b.append('\t'); break;
                        case 'u':
                            if (i + 4 > s.length()) throw new IllegalArgumentException("bad escape");
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                            break;
                        default: throw new IllegalArgumentException("bad escape at " + i);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        private Object number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String n = s.substring(start, i);
            if (n.isEmpty()) throw new IllegalArgumentException("unexpected character at " + start);
            BigDecimal d = new BigDecimal(n);
            try {
                return d.longValueExact();
            } catch (ArithmeticException e) {
                return d.doubleValue();
            }
        }

        private char peek() {
            if (i >= s.length()) throw new IllegalArgumentException("unexpected end");
            return s.charAt(i);
        }

        private char next() {
            char c = peek();
            i++;
            return c;
        }

        private void expect(char c) {
            if (next() != c) throw new IllegalArgumentException("expected " + c + " at " + (i - 1));
        }

        static String write(Object o) {
            StringBuilder b = new StringBuilder();
            write(b, o);
            return b.toString();
        }

        private static void write(StringBuilder b, Object o) {
            if (o == null) {
                b.append("null");
            } else if (o instanceof String) {
                quote(b, (String) o);
            } else if (o instanceof Boolean || o instanceof Long || o instanceof Integer) {
                b.append(o);
            } else if (o instanceof Number) {
                double d = ((Number) o).doubleValue();
                b.append(Double.isFinite(d) ? BigDecimal.valueOf(d).toPlainString() : "null");
            } else if (o instanceof Map) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                    if (!first) b.append(',');
                    first = false;
                    quote(b, String.valueOf(e.getKey()));
                    b.append(':');
                    write(b, e.getValue());
                }
                b.append('}');
            } else if (o instanceof List) {
                b.append('[');
                boolean first = true;
                for (Object v : (List<?>) o) {
                    if (!first) b.append(',');
                    first = false;
                    write(b, v);
                }
                b.append(']');
            } else {
                quote(b, String.valueOf(o));
            }
        }

        private static void quote(StringBuilder b, String s) {
            b.append('"');
            for (int k = 0; k < s.length(); k++) {
                char c = s.charAt(k);
                switch (c) {
                    case '"': b.append("\\\""); break;
                    case '\\': b.append("\\\\"); break;
                    case '\n': b.append("\\n"); break;
                    case '\r': b.append("\\r"); break;
                    case '\t': b.append("\\t"); break;
                    default:
                        if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                }
            }
            b.append('"');
        }
    }
}
