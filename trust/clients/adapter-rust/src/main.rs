//! A clean-room Orbtile Adapter Protocol v1.2 adapter, standard library only.
//!
//! Threads: the main thread registers and plays the agent (it asks for an approval now and
//! then); one thread per session heartbeats it; one thread runs the events poll and applies or
//! discards keypad decisions. Every request goes on a new Unix-socket connection
//! (`Connection: close`). The adapter token lives in memory only and is never printed.
//!
//! SIGTERM keeps its default action: the process ends at once.

mod http;
mod json;

use json::{n, obj, s, Json};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ADAPTER_ID: &str = "dev.cleanroom.rust-std";
/// The spec's smallest allowed session TTL (SessionUpdate.ttlSeconds minimum is 10).
const TTL_SECONDS: u64 = 10;
/// A heartbeat at 80% of the TTL.
const HEARTBEAT_EVERY: Duration = Duration::from_millis(TTL_SECONDS * 800);
const POLL_WAIT_SECONDS: u64 = 2;
/// Two sessions; approvals are asked on the first.
const SESSIONS: [(&str, &str); 2] = [("rs-main", "Rust agent: build"), ("rs-side", "Rust agent: docs")];
const APPROVAL_SESSION: &str = "rs-main";
const ADAPTER_TOKEN_HEADER: &str = "X-Orbtile-Adapter-Token";

// ---------------------------------------------------------------------------------------------
// Small helpers

fn log(message: &str) {
    eprintln!("[rust-adapter] {}", message);
}

fn epoch_seconds() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// Locks a mutex, carrying on if another thread panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The error code of an error reply, if it has one.
fn error_code(body: &Json) -> &str {
    body.get("error").and_then(|e| e.get("code")).and_then(Json::as_str).unwrap_or("")
}

fn error_field(body: &Json) -> &str {
    body.get("error").and_then(|e| e.get("field")).and_then(Json::as_str).unwrap_or("")
}

// ---------------------------------------------------------------------------------------------
// Discovery

#[derive(Clone)]
struct Discovery {
    socket_path: String,
    base_path: String,
    token: String,
}

fn discovery_path() -> PathBuf {
    if let Some(path) = std::env::var_os("ORBTILE_DISCOVERY").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home).join("Library/Application Support/Orbtile/adapter-api.json")
}

fn read_discovery() -> Result<Discovery, String> {
    let path = discovery_path();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read the discovery file: {}", e))?;
    let value = Json::parse(&text).map_err(|e| format!("the discovery file is not JSON: {}", e))?;
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Json::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("the discovery file has no {}", name))
    };
    Ok(Discovery {
        socket_path: field("socketPath")?,
        base_path: field("basePath")?.trim_end_matches('/').to_string(),
        token: field("token")?,
    })
}

// ---------------------------------------------------------------------------------------------
// Shared state

/// The ownership lease. `generation` goes up each time a registration hands out a new token,
/// so a thread can tell that the lease it used is gone (cursor back to 0, sessions re-created,
/// pending requests retired).
struct Lease {
    token: Option<String>,
    generation: u64,
}

struct Pending {
    id: String,
    generation: u64,
    posted: Instant,
}

/// The agent's own view of its approval request: the authority on what is pending.
struct Agent {
    pending: Option<Pending>,
    next_ask: Instant,
}

struct Shared {
    discovery: Mutex<Option<Discovery>>,
    lease: Mutex<Lease>,
    /// No request on the adapter's bucket before this instant (a 429's Retry-After).
    not_before: Mutex<Instant>,
    agent: Mutex<Agent>,
    id_prefix: String,
    id_counter: AtomicU64,
}

/// Which adapter token a request carries.
enum Auth<'a> {
    /// The live lease's token, read afresh at every attempt (a retry after a 429 or a
    /// connection error must not carry the token of a lease that has since been replaced).
    Lease,
    /// Registration: the token it is given (the current one, if any), or none.
    Registration(Option<&'a str>),
}

/// What `send` came to.
enum Sent {
    /// A reply; `generation` is the lease whose token the request carried.
    Reply { status: u16, body: Json, generation: u64 },
    /// `Auth::Lease` while no lease is held.
    NoLease { generation: u64 },
}

/// What a request on an adapter route came to.
enum Outcome {
    /// A reply from the app; `generation` is the lease it was sent under.
    Reply { status: u16, body: Json, generation: u64 },
    /// The lease is gone (401 naming the adapter token, 404 adapter_not_registered, or none
    /// held); register again with `ensure_lease(generation)`.
    LeaseLost { generation: u64 },
}

impl Shared {
    fn new() -> Shared {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let seed = (nanos as u64) ^ ((std::process::id() as u64) << 32);
        Shared {
            discovery: Mutex::new(None),
            lease: Mutex::new(Lease { token: None, generation: 0 }),
            not_before: Mutex::new(Instant::now()),
            agent: Mutex::new(Agent { pending: None, next_ask: Instant::now() }),
            id_prefix: format!("{:012x}", seed & 0xffff_ffff_ffff),
            id_counter: AtomicU64::new(0),
        }
    }

    /// A request id never used before by this process, so never within a registration.
    fn fresh_request_id(&self) -> String {
        let count = self.id_counter.fetch_add(1, Ordering::SeqCst) + 1;
        format!("rs-{}-{}", self.id_prefix, count)
    }

    /// The discovery file's content, read afresh when it was forgotten.
    fn discovery(&self) -> Result<Discovery, String> {
        let mut slot = lock(&self.discovery);
        if slot.is_none() {
            *slot = Some(read_discovery()?);
        }
        Ok(slot.clone().unwrap())
    }

    fn forget_discovery(&self) {
        *lock(&self.discovery) = None;
    }

    /// Re-reads the file; true when its token differs from the one `used`.
    fn reread_discovery(&self, used: &Discovery) -> bool {
        self.forget_discovery();
        match self.discovery() {
            Ok(fresh) => fresh.token != used.token || fresh.socket_path != used.socket_path,
            Err(_) => false,
        }
    }

    fn lease_snapshot(&self) -> (Option<String>, u64) {
        let lease = lock(&self.lease);
        (lease.token.clone(), lease.generation)
    }

    fn current_generation(&self) -> u64 {
        lock(&self.lease).generation
    }

    fn wait_for_bucket(&self) {
        loop {
            let until = *lock(&self.not_before);
            let now = Instant::now();
            if until <= now {
                return;
            }
            thread::sleep(until - now);
        }
    }

    fn close_bucket(&self, seconds: f64) {
        let until = Instant::now() + Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
        let mut not_before = lock(&self.not_before);
        if until > *not_before {
            *not_before = until;
        }
    }

    /// Sends one request, riding out what is not the caller's business: connection errors and
    /// 503 (backoff, re-reading the discovery file), 429 (Retry-After for the whole adapter),
    /// a 401 on the bearer token (re-read the file, retry). Returns the first other reply.
    fn send(&self, method: &str, route: &str, body: Option<&Json>, auth: Auth) -> Sent {
        let payload = body.map(|b| b.to_string()).unwrap_or_default();
        let read_timeout = Duration::from_secs(POLL_WAIT_SECONDS + 20);
        let mut backoff = Duration::from_millis(200);
        let mut bearer_refusals = 0;
        loop {
            self.wait_for_bucket();
            let discovery = match self.discovery() {
                Ok(d) => d,
                Err(message) => {
                    log(&message);
                    thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            };
            let (adapter_token, generation) = match auth {
                Auth::Lease => match self.lease_snapshot() {
                    (Some(token), generation) => (Some(token), generation),
                    (None, generation) => return Sent::NoLease { generation },
                },
                // (ensure_lease holds the lease lock: do not take it again here)
                Auth::Registration(token) => (token.map(str::to_string), 0),
            };
            let target = format!("{}{}", discovery.base_path, route);
            let authorization = format!("Bearer {}", discovery.token);
            let mut headers: Vec<(&str, &str)> =
                vec![("Content-Type", "application/json"), ("Authorization", &authorization)];
            if let Some(token) = adapter_token.as_deref() {
                headers.push((ADAPTER_TOKEN_HEADER, token));
            }
            let reply = http::request(&discovery.socket_path, method, &target, &headers, payload.as_bytes(), read_timeout);
            let response = match reply {
                Ok(r) => r,
                Err(e) => {
                    log(&format!("{} {}: connection failed ({}); retrying", method, route, e.kind()));
                    self.forget_discovery(); // the app may have moved its socket
                    thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&response.body);
            let json = if text.trim().is_empty() { Json::Null } else { Json::parse(&text).unwrap_or(Json::Null) };
            match response.status {
                429 => {
                    let wait = response
                        .header("retry-after")
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .unwrap_or(1.0);
                    log(&format!("{} {}: 429, waiting {} s before any request", method, route, wait));
                    self.close_bucket(wait);
                }
                503 => {
                    log(&format!("{} {}: 503 {}; retrying", method, route, error_code(&json)));
                    thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
                401 if error_field(&json) != ADAPTER_TOKEN_HEADER && bearer_refusals < 3 => {
                    bearer_refusals += 1;
                    if self.reread_discovery(&discovery) {
                        log("the bearer token was refused; the discovery file changed, retrying");
                    } else {
                        log("the bearer token was refused; the discovery file is unchanged, retrying soon");
                        thread::sleep(Duration::from_millis(300));
                    }
                }
                status => return Sent::Reply { status, body: json, generation },
            }
        }
    }

    /// A request on an adapter route that needs the lease.
    fn call(&self, method: &str, route: &str, body: Option<&Json>) -> Outcome {
        let (status, body, generation) = match self.send(method, route, body, Auth::Lease) {
            Sent::Reply { status, body, generation } => (status, body, generation),
            Sent::NoLease { generation } => return Outcome::LeaseLost { generation },
        };
        let lost = status == 401 || (status == 404 && error_code(&body) == "adapter_not_registered");
        if lost {
            Outcome::LeaseLost { generation }
        } else {
            Outcome::Reply { status, body, generation }
        }
    }

    /// Registers again unless another thread already did since `seen_generation`.
    /// Holds the lease lock throughout, so only one registration is ever in flight.
    fn ensure_lease(&self, seen_generation: u64) {
        let mut lease = lock(&self.lease);
        if lease.generation != seen_generation && lease.token.is_some() {
            return;
        }
        let body = registration_body();
        loop {
            let route = format!("/adapters/{}", ADAPTER_ID);
            let (status, reply) = match self.send("PUT", &route, Some(&body), Auth::Registration(lease.token.as_deref())) {
                Sent::Reply { status, body, .. } => (status, body),
                Sent::NoLease { .. } => unreachable!("registration does not need a lease"),
            };
            if (200..300).contains(&status) {
                let enabled = reply.get("enabled").and_then(Json::as_bool).unwrap_or(false);
                let keypad = reply.get("keypadDecisions").and_then(Json::as_bool);
                let reason = reply.get("reason").and_then(Json::as_str).unwrap_or("-");
                match reply.get("adapterToken").and_then(Json::as_str) {
                    Some(token) => {
                        if lease.token.as_deref() != Some(token) {
                            lease.generation += 1;
                            lease.token = Some(token.to_string());
                            log(&format!(
                                "registered: a new lease (#{}), enabled={} reason={} keypadDecisions={:?}",
                                lease.generation, enabled, reason, keypad
                            ));
                        } else {
                            log("registered again: the same lease");
                            drop(lease);
                            // The lease was live after all: do not spin on whatever refused us.
                            thread::sleep(Duration::from_millis(500));
                        }
                        return;
                    }
                    None => {
                        log(&format!("registered without a lease (enabled={} reason={}); asking again soon", enabled, reason));
                        lease.token = None;
                        thread::sleep(Duration::from_secs(2));
                    }
                }
            } else if status == 401 {
                // Our adapter token is not the live lease's: forget it and try without.
                log("registration refused (401); retrying without the old adapter token");
                lease.token = None;
                thread::sleep(Duration::from_secs(1));
            } else {
                log(&format!("registration refused: {} {}; retrying", status, error_code(&reply)));
                thread::sleep(Duration::from_secs(2));
            }
        }
    }
}

fn registration_body() -> Json {
    obj(vec![
        ("name", s("Rust clean-room")),
        ("shortName", s("RustCR")),
        // Waiting colour derived 40 degrees toward the error hue: 330, in the alarm arc.
        ("palette", obj(vec![("baseHue", n(290))])),
        ("glyph", obj(vec![("symbol", s("hammer")), ("monogram", s("Rs"))])),
        ("version", s(env!("CARGO_PKG_VERSION"))),
        ("capabilities", Json::Arr(vec![s("approvals")])),
    ])
}

fn session_route(session_id: &str) -> String {
    format!("/adapters/{}/sessions/{}", ADAPTER_ID, session_id)
}

/// The whole session, as sent when it is created (or re-created after a new lease).
fn session_body(title: &str) -> Json {
    obj(vec![
        ("title", s(title)),
        ("activity", s("thinking")),
        ("ttlSeconds", n(TTL_SECONDS)),
        ("liveText", Json::Bool(false)),
    ])
}

// ---------------------------------------------------------------------------------------------
// Sessions: created by the main thread, then one heartbeat thread each

/// Creates (or re-creates) a session; returns when a 2xx came back, with the lease generation
/// it was sent under and the instant the request started.
fn create_session(shared: &Shared, session_id: &str, title: &str) -> (u64, Instant) {
    loop {
        let started = Instant::now();
        match shared.call("POST", &session_route(session_id), Some(&session_body(title))) {
            Outcome::Reply { status, generation, .. } if (200..300).contains(&status) => return (generation, started),
            Outcome::Reply { status, body, .. } => {
                log(&format!("creating {} refused: {} {}", session_id, status, error_code(&body)));
                thread::sleep(Duration::from_secs(1));
            }
            Outcome::LeaseLost { generation } => shared.ensure_lease(generation),
        }
    }
}

fn heartbeat_loop(shared: Arc<Shared>, session_id: &'static str, title: &'static str, mut created: u64, mut last: Instant) {
    let mut needs_whole_body = false;
    loop {
        let due = last + HEARTBEAT_EVERY;
        let now = Instant::now();
        if due > now {
            thread::sleep(due - now);
        }
        let generation = shared.current_generation();
        let whole = needs_whole_body || generation != created;
        let body = if whole { session_body(title) } else { obj(vec![]) };
        let started = Instant::now();
        match shared.call("POST", &session_route(session_id), Some(&body)) {
            Outcome::Reply { status, generation, .. } if (200..300).contains(&status) => {
                created = generation;
                last = started;
                needs_whole_body = false;
            }
            Outcome::Reply { status, body, .. } => {
                // E.g. the session was removed: an empty heartbeat cannot create it.
                log(&format!("heartbeat of {} refused: {} {}", session_id, status, error_code(&body)));
                needs_whole_body = true;
                thread::sleep(Duration::from_millis(200));
            }
            Outcome::LeaseLost { generation } => {
                shared.ensure_lease(generation);
                needs_whole_body = true;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Events: one poll at a time; decisions applied or discarded, then acknowledged

fn events_loop(shared: Arc<Shared>) {
    let route = format!("/adapters/{}/events", ADAPTER_ID);
    let mut cursor: u64 = 0; // the last sequence applied or discarded, in `cursor_generation`
    let mut cursor_generation = shared.current_generation();
    loop {
        let generation = shared.current_generation();
        if generation != cursor_generation {
            cursor = 0; // a new lease: its sequences start again at 1
            cursor_generation = generation;
        }
        let body = obj(vec![("after", n(cursor)), ("ack", n(cursor)), ("waitSeconds", n(POLL_WAIT_SECONDS))]);
        match shared.call("POST", &route, Some(&body)) {
            Outcome::LeaseLost { generation } => shared.ensure_lease(generation),
            Outcome::Reply { generation, .. } if generation != cursor_generation => {
                // Sent under another lease than the cursor's: start over with the new one.
            }
            Outcome::Reply { status: 200, body, generation } => {
                let events = body.get("events").and_then(Json::as_array).cloned().unwrap_or_default();
                for event in &events {
                    let Some(sequence) = event.get("sequence").and_then(Json::as_u64) else {
                        continue;
                    };
                    if sequence <= cursor {
                        continue; // already handled
                    }
                    handle_event(&shared, event, generation);
                    cursor = sequence; // applied or discarded: the next poll acknowledges it
                }
            }
            Outcome::Reply { status, body, .. } => match error_code(&body) {
                "invalid_cursor" => {
                    log("invalid_cursor: starting the cursor again from 0");
                    cursor = 0;
                }
                "poll_pending" | "limit_exceeded" => thread::sleep(Duration::from_millis(500)),
                code => {
                    log(&format!("events poll refused: {} {}", status, code));
                    thread::sleep(Duration::from_secs(1));
                }
            },
        }
    }
}

fn handle_event(shared: &Shared, event: &Json, generation: u64) {
    let kind = event.get("type").and_then(Json::as_str).unwrap_or("");
    let sequence = event.get("sequence").and_then(Json::as_u64).unwrap_or(0);
    if kind != "approval" {
        log(&format!("event {}: {:?} is not for this adapter's capabilities; discarded", sequence, kind));
        return;
    }
    let request_id = event.get("requestId").and_then(Json::as_str).unwrap_or("");
    let session_id = event.get("sessionId").and_then(Json::as_str).unwrap_or("");
    let decision = event.get("decision").and_then(Json::as_str).unwrap_or("");
    let expires_at = event.get("expiresAt").and_then(Json::as_f64).unwrap_or(0.0);

    let mut agent = lock(&shared.agent);
    let pending = agent.pending.as_ref().is_some_and(|p| {
        p.id == request_id && p.generation == generation && session_id == APPROVAL_SESSION
    });
    let fresh = epoch_seconds() < expires_at;
    if !pending || !fresh || (decision != "allow" && decision != "deny") {
        let why = if !pending { "not pending" } else if !fresh { "expired" } else { "not a decision" };
        log(&format!("event {}: decision on {} discarded ({})", sequence, request_id, why));
        return;
    }
    // Apply: the agent takes the user's answer, and the request leaves Orbtile's keypad.
    agent.pending = None;
    agent.next_ask = Instant::now() + Duration::from_millis(1200);
    let clear = obj(vec![("approval", Json::Null), ("activity", s(if decision == "allow" { "tool" } else { "thinking" }))]);
    loop {
        match shared.call("POST", &session_route(APPROVAL_SESSION), Some(&clear)) {
            Outcome::Reply { status, .. } if (200..300).contains(&status) => break,
            Outcome::Reply { status, body, .. } => {
                log(&format!("clearing {} refused: {} {}", request_id, status, error_code(&body)));
                break;
            }
            // The request retired with the lease: nothing left to clear.
            Outcome::LeaseLost { .. } => break,
        }
    }
    log(&format!("event {}: {} on {} applied", sequence, decision, request_id));
}

// ---------------------------------------------------------------------------------------------
// The agent (main thread): asks for an approval now and then

fn agent_loop(shared: &Shared) {
    let mut asked: u64 = 0;
    loop {
        thread::sleep(Duration::from_millis(250));
        let generation = shared.current_generation();
        let mut agent = lock(&shared.agent);
        if let Some(p) = &agent.pending {
            if p.generation != generation {
                // Pending requests retire with their lease.
                agent.pending = None;
                agent.next_ask = Instant::now() + Duration::from_millis(500);
            } else if p.posted.elapsed() > Duration::from_secs(590) {
                // About to expire (600 s): ask again with a new id, which replaces it.
                agent.pending = None;
            }
        }
        if agent.pending.is_some() || Instant::now() < agent.next_ask {
            continue;
        }
        asked += 1;
        let id = shared.fresh_request_id();
        let (_, title) = SESSIONS[0];
        let body = obj(vec![
            ("title", s(title)),
            ("activity", s("waitingPermission")),
            ("ttlSeconds", n(TTL_SECONDS)),
            (
                "approval",
                obj(vec![
                    ("id", s(&id)),
                    ("toolName", s("Bash")),
                    ("commandSummary", s(&format!("cargo test --workspace  # step {}", asked))),
                ]),
            ),
        ]);
        let started = Instant::now();
        match shared.call("POST", &session_route(APPROVAL_SESSION), Some(&body)) {
            Outcome::Reply { status, generation, .. } if (200..300).contains(&status) => {
                log(&format!("asked approval {}", id));
                agent.pending = Some(Pending { id, generation, posted: started });
            }
            Outcome::Reply { status, body, .. } => {
                log(&format!("asking approval {} refused: {} {}", id, status, error_code(&body)));
                agent.next_ask = Instant::now() + Duration::from_secs(2);
            }
            Outcome::LeaseLost { generation } => {
                drop(agent);
                shared.ensure_lease(generation);
            }
        }
    }
}

fn main() {
    let shared = Arc::new(Shared::new());
    log(&format!("starting; discovery file {}", discovery_path().display()));
    shared.ensure_lease(0);

    for (session_id, title) in SESSIONS {
        let (created, started) = create_session(&shared, session_id, title);
        let worker = Arc::clone(&shared);
        thread::spawn(move || heartbeat_loop(worker, session_id, title, created, started));
    }
    let worker = Arc::clone(&shared);
    thread::spawn(move || events_loop(worker));

    shared.agent.lock().unwrap().next_ask = Instant::now() + Duration::from_millis(300);
    agent_loop(&shared);
}
