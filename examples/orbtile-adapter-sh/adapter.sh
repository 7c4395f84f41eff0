#!/usr/bin/env bash
# A third Orbtile adapter, in bash with curl --unix-socket and jq, written the way a shell author might, and unlike
# the reference adapters (examples/orbtile-adapter-node, -python) in these conforming choices:
#  - no GET /info at all, so no nonce and no proof check (OT-039 binds only adapters that check; OTC-16);
#  - by default no event capabilities, so no events polls (OT-010: all of v1.1/v1.2 is optional);
#    with --poll: capability "approvals" only, and a waitSeconds 0 poll on a 1 s timer instead of long polls;
#  - one session, made and heartbeaten with the batch route (PUT .../sessions), not per-session POSTs (OT-A18);
#  - ttlSeconds 30 and a heartbeat every 10 s (OT-113: more often than every ttlSeconds);
#  - a new connection for every request (curl per call), the discovery file read before every request (OT-005);
#  - registers once, and again only when the lease is gone (OT-A06); no periodic re-registration.
set -u
ID=dev.orbtest.example-sh
DISC=${ORBTILE_DISCOVERY:-$HOME/Library/Application Support/Orbtile/adapter-api.json}
TTL=30; BEAT_MS=${ORBSH_BEAT_MS:-10000}; POLL=0
[ "${1:-}" = --poll ] && POLL=1
TOKEN=''          # OT-022: the adapterToken lives in this unexported variable only; never printed nor written
SESSIONS=0        # whether the session exists under the current lease
BLOCK=0           # OT-027, OT-A20: no request before this time (epoch ms), after a 429's Retry-After
NEXT_BEAT=0; NEXT_POLL=0; NEXT_ASK=0
AFTER=0; ACK=0    # OT-138: the events cursor; ack <= after, neither goes down within a lease
PENDING=''        # the approval id our own "UI" shows as pending (OT-147)
EXPIRED=0         # our pending approval turned out expired: cleared once the discard has been acknowledged
N=0; PREFIX=$RANDOM$RANDOM   # OT-128: request ids <prefix>-<n>, never reused
ACTIVITY=thinking

log () { printf 'orbtile-adapter-sh: %s\n' "$*" >&2; }   # short lines, never a token
# pause SECONDS: a read that times out on a FIFO no one writes to (opened read-write, so it never sees an end). No
# process per pause (a loop that runs ten times a second would otherwise start `sleep` ten times a second), and a
# trapped SIGTERM still ends it at once. Where no FIFO can be made, `sleep` in the background.
PAUSE_FD=''
if PAUSE_DIR=$(mktemp -d 2>/dev/null) && mkfifo "$PAUSE_DIR/p" 2>/dev/null; then exec {PAUSE_FD}<>"$PAUSE_DIR/p"; fi
rm -rf "${PAUSE_DIR:-}"
pause () { if [ -n "$PAUSE_FD" ]; then read -rt "$1" -u "$PAUSE_FD" || :; else sleep "$1" & wait $!; fi; }
now () { local t=${EPOCHREALTIME/./}; NOW=$(( t / 1000 )); }

# call METHOD ROUTE [BODY]: one HTTP/1.1 exchange on a new connection. Sets STATUS, REPLY, CODE, FIELD, RETRY.
call () {
  local method=$1 route=$2 body=${3-} sock base bearer out args
  (( STOPPING == 1 )) && stop                                         # a SIGTERM is acted on between exchanges
  now; while (( NOW < BLOCK )); do (( STOPPING == 1 )) && stop; pause 0.05; now; done  # OT-027: wait out Retry-After
  # OT-005, OT-A04: socketPath, basePath and the bearer token from the file, afresh for every request
  if ! IFS=$'\t' read -r sock base bearer < <(jq -r '[.socketPath,.basePath,.token]|@tsv' "$DISC" 2>/dev/null); then
    STATUS=000; REPLY=''; CODE=no-discovery; return                    # no file: the API is off (OT-A03)
  fi
  # A generous limit: on a busy machine a reply can be seconds late, and a registration's reply given up is its
  # adapter token lost until the lease ends (a new registration needs it while the lease lives).
  args=(-sS --max-time "${MAXT:-30}" --unix-socket "$sock" -X "$method"         # OT-002: the file's socket, HTTP/1.1
        -H 'Host: localhost' -H 'Content-Type: application/json'     # OT-011, OT-012 (GET and DELETE too)
        -H 'Accept:' -H 'User-Agent: orbtile-adapter-sh' -K -)       # OT-014: curl sends no Origin
  [ -n "$body" ] && args+=(--data-binary "$body")
  # The bearer (OT-013) and the adapter token (OT-019) go through curl's config on stdin, not on argv.
  out=$( { printf 'header = "Authorization: Bearer %s"\n' "$bearer"
           [ -n "$TOKEN" ] && printf 'header = "X-Orbtile-Adapter-Token: %s"\n' "$TOKEN"; } |
         curl "${args[@]}" -w '\n%{http_code} %header{retry-after}' "http://localhost$base$route" 2>/dev/null)
  local rc=$? tail=${out##*$'\n'}; REPLY=${out%$'\n'*}
  read -r STATUS RETRY <<<"$tail"; STATUS=${STATUS:-000}; RETRY=${RETRY:-1}  # OT-003: basePath + route above
  [ "$STATUS" = 000 ] && { CODE="curl exit $rc"; FIELD=''; return; }  # no reply: no socket, cut, or timed out
  # The error's code and field in one jq, split on a separator that is not white space (an empty code stays empty);
  # a 2xx has none, and its jq is saved (each one costs the CPU a curl does).
  CODE=''; FIELD=''
  [[ $STATUS == 2?? ]] && return
  IFS=$'\x1f' read -r CODE FIELD < <(jq -r '[.error.code // "", .error.field // ""] | join("\u001f")' <<<"$REPLY" 2>/dev/null)
}

# request METHOD ROUTE [BODY]: call() plus the protocol's policy on refusals. Returns 0 on 2xx.
request () {
  local tries=0
  while :; do
    call "$@"; tries=$((tries + 1))
    case $STATUS in
      2??) return 0 ;;
      429) now; [[ $RETRY =~ ^[0-9]+$ ]] || RETRY=1; BLOCK=$(( NOW + RETRY * 1000 )); continue ;;  # OT-027
      000) [ "$CODE" = no-discovery ] || log "$1 ${2%%\?*}: no reply ($CODE)"
           pause 0.3; return 1 ;;                                      # no socket: off, or moving (OT-A03)
      503) pause 0.5; return 1 ;;                                      # api_disabled
      401) if [ "$FIELD" != X-Orbtile-Adapter-Token ] && (( tries < 2 )); then continue; fi ;;  # OT-A04: once more
    esac
    if [ "$CODE" = adapter_not_registered ] || { [ "$STATUS" = 401 ] && [ "$FIELD" = X-Orbtile-Adapter-Token ]; }; then
      lost                                                             # OT-A06: register anew
    fi
    log "$1 ${2%%\?*}: $STATUS ${CODE:-}"
    return 1
  done
}

lost () { TOKEN=''; SESSIONS=0; AFTER=0; ACK=0; PENDING=''; log 'lease gone: registering anew'; }

register () {
  local caps='[]'; (( POLL )) && caps='["approvals"]'
  # OT-074: baseHue 160, clear of 205..215; no attentionHue (OT-081); no icon nor states, so OT-A28 holds anywhere
  request PUT "/adapters/$ID" "{\"name\":\"orbtest example (sh)\",\"shortName\":\"sh\",\"palette\":{\"baseHue\":160},\"capabilities\":$caps}" || return 1
  TOKEN=$(jq -r '.adapterToken // empty' <<<"$REPLY"); SESSIONS=0; AFTER=0; ACK=0; PENDING=''; PREFIX=$RANDOM$RANDOM; N=0
  log "registered (enabled: $(jq -r '.enabled' <<<"$REPLY"), keypadDecisions: $(jq -r '.keypadDecisions // false' <<<"$REPLY"))"
}

# The whole set in one batch: creation and every heartbeat (OT-114, OT-117: id, title, activity in each item).
beat () {
  request PUT "/adapters/$ID/sessions" "{\"sessions\":[{\"id\":\"main\",\"title\":\"bash agent\",\"activity\":\"$ACTIVITY\",\"ttlSeconds\":$TTL}]}" || return 1
  SESSIONS=1; now; NEXT_BEAT=$(( NOW + BEAT_MS ))
}

ask () {   # --poll: an approval, with an id fresh in the registration (OT-125, OT-128)
  local id="$PREFIX-$((++N))"
  if request POST "/adapters/$ID/sessions/main" "{\"activity\":\"waitingPermission\",\"approval\":{\"id\":\"$id\",\"toolName\":\"Bash\",\"commandSummary\":\"make test\"}}"; then
    PENDING=$id; ACTIVITY=waitingPermission; log "asked $id"
  else now; NEXT_ASK=$(( NOW + 1000 )); fi
}

poll () {  # OT-134: one poll at a time (the loop is single-threaded); waitSeconds 0
  local seq type rid exp decision events
  now; NEXT_POLL=$(( NOW + 1000 ))
  if ! request POST "/adapters/$ID/events" "{\"after\":$AFTER,\"ack\":$ACK,\"waitSeconds\":0}"; then
    [ "$CODE" = invalid_cursor ] && { AFTER=0; ACK=0; }                # OT-A23: a cursor of an older lease
    return
  fi
  events=$REPLY                                                        # the next request's reply replaces REPLY
  if (( EXPIRED )) && request POST "/adapters/$ID/sessions/main" '{"approval":null,"activity":"thinking"}'; then
    EXPIRED=0; PENDING=''; ACTIVITY=thinking; now; NEXT_ASK=$(( NOW + 1000 ))   # after the ack (OTC-01's limit)
  fi
  [[ $events == *'"events":[]'* ]] && return                         # nothing to handle, and no jq to start
  while IFS=$'\t' read -r seq type rid exp decision; do
    [ -z "$seq" ] && continue; (( seq <= AFTER )) && continue
    now
    if [ "$type" = approval ] && [ "$rid" = "$PENDING" ] && (( NOW < exp )); then   # OT-147, OT-A31
      local act=thinking; [ "$decision" = allow ] && act=tool
      # the authoritative commit: the request cleared in Orbtile (OTC-01) before the ack
      request POST "/adapters/$ID/sessions/main" "{\"approval\":null,\"activity\":\"$act\"}" || break
      PENDING=''; ACTIVITY=$act; now; NEXT_ASK=$(( NOW + 1000 )); log "applied $rid ($decision)"
    else
      log "discarded stale $type event $seq"                           # OT-147, OT-A30: acknowledged, not applied
      [ "$type" = approval ] && [ "$rid" = "$PENDING" ] && EXPIRED=1
    fi
    AFTER=$seq; ACK=$seq                                               # OT-139: ack only what was handled
  done < <(jq -r '.events[]? | [.sequence, .type, (.requestId // "-"), ((.expiresAt // 0) * 1000 | floor), (.decision // "-")] | @tsv' <<<"$events")
}

stop () {  # OT-A07: unregister, at most 1 s, then exit (OTC-05)
  trap '' TERM INT; STOPPING=2
  now; [ -n "$TOKEN" ] && (( NOW >= BLOCK )) && MAXT=1 call DELETE "/adapters/$ID" >/dev/null 2>&1
  exit 0
}
# The trap only notes the signal: run at once, it could come between a reply and the line that reads it, and the
# unregister would then not know of a 429 just received (OT-027). It is acted on between exchanges.
STOPPING=0
trap 'STOPPING=1' TERM INT

log "starting (discovery $DISC$( (( POLL )) && echo ', --poll'))"
while :; do
  now
  (( STOPPING == 1 )) && stop
  if [ -z "$TOKEN" ]; then register || pause 1
  elif (( ! SESSIONS || NOW >= NEXT_BEAT )); then beat
  elif (( POLL && NOW >= NEXT_POLL )); then poll
  elif (( POLL )) && [ -z "$PENDING" ] && (( NOW >= NEXT_ASK )); then ask
  fi
  pause 0.1
done
