import fc from 'fast-check'
import { BOT, DIRECTORY, globalCommands, type OrbContext } from '../../orb-case.js'
import type { OrbReply, Speaker } from '../../transport.js'
import { NOT_A_TOKEN, SOME_ADDRESS, deleteIfPosted, readApp } from './access-support.js'
import { MUSIC_ACTIONS, VOICE_ACTIONS } from '../features/features-support.js'
import { featureFamilies } from './bad-requests-features.js'
import { messageFamilies } from './bad-requests-messages.js'
import type { BadRequest, BadRequestTarget } from './bad-request.js'

// Bad requests across routes, as a property for ORB-101, ORB-102 and ORB-A01.

export type { BadRequest } from './bad-request.js'

/** Who sends a request of the property: the app with every scope, one with few, one with none, or no app at all. */
interface Speaking {
  who: 'full' | 'few' | 'none' | 'bogus'
}

/** Every family of bad request, for a target whose text, voice channels and community are known. */
function badRequests (t: BadRequestTarget): fc.Arbitrary<BadRequest> {
  return fc.oneof(...messageFamilies(t), ...featureFamilies(t))
}

/** The voice and music actions that change something (the spec's enums less `roster` and `state`). */
const CHANGING_ACTIONS = new Set([...VOICE_ACTIONS, ...MUSIC_ACTIONS].filter((a) => a !== 'roster' && a !== 'state'))

/**
 * Whether a bad request would change the target if a server accepted it after all: posting, deleting, syncing,
 * responding, and voice or music actions other than the roster and the player's state. A read-only run sends none.
 */
function changesTarget (request: BadRequest): boolean {
  if (request.method === 'PUT' || request.method === 'DELETE') return true
  if (request.method !== 'POST') return false
  if (request.path === `${BOT}/voice` || request.path === `${BOT}/music`) {
    const action = (request.body as { action?: unknown } | null)?.action
    return typeof action === 'string' && CHANGING_ACTIONS.has(action)
  }
  return request.path !== DIRECTORY
}

const speakers: fc.Arbitrary<Speaking> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Speaking>({ who: 'full' }) },
  { weight: 2, arbitrary: fc.constant<Speaking>({ who: 'few' }) },
  { weight: 1, arbitrary: fc.constant<Speaking>({ who: 'none' }) },
  { weight: 1, arbitrary: fc.constant<Speaking>({ who: 'bogus' }) }
)

/** What the spec allows a bad request sent as `who`: 401 without a valid token; a missing scope adds 403 (ORB-006). */
function allowedFor (
  request: BadRequest,
  who: Speaking['who'],
  fewScopes: ReadonlySet<string>
): { statuses: number[]; decided: boolean } {
  if (who === 'none' || who === 'bogus') return { statuses: [401], decided: false }
  const statuses = [...request.statuses]
  if (who === 'few' && request.scope !== undefined && !fewScopes.has(request.scope)) statuses.push(403)
  return { statuses, decided: request.decided === true }
}

function speakerOf (who: Speaking['who']): Speaker {
  if (who === 'full') return 'full'
  if (who === 'few') return 'few'
  if (who === 'none') return null
  return NOT_A_TOKEN
}

/** Runs the bad-request property with `check` for each reply. */
export async function badRequestProperty (
  ctx: OrbContext,
  check: (
    reply: OrbReply,
    request: BadRequest,
    allowed: { statuses: number[]; decided: boolean },
    what: string
  ) => void,
  runs?: number
): Promise<void> {
  const target = ctx.client.target
  const haveFew = target.few !== undefined
  // The few app's scopes, as it says itself (messages:read with orbtest's control API).
  const fewScopes = new Set<string>(haveFew ? ((await readApp(ctx, 'few')).app?.scopes ?? []) : [])
  const all = badRequests({
    text: target.channels.text,
    voice: target.channels.voice,
    community: target.community,
    address: target.passport?.address ?? SOME_ADDRESS,
    kind: target.passport?.kind ?? 'human'
  })
  let arb = all
  if (ctx.readOnly) {
    arb = all.filter((request) => !changesTarget(request))
    ctx.note('read-only: only bad requests that could change nothing were sent (no posts, deletes, syncs, responses, voice or music actions)')
  } else {
    // A refused sync that was accepted all the same must not leave the apps' commands changed.
    await restoreCommandsIfChanged(ctx, 'full')
    if (haveFew) await restoreCommandsIfChanged(ctx, 'few')
  }
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(arb, speakers), { minLength: 1, maxLength: 6 }), async (requests) => {
      for (const [request, speaking] of requests) {
        const who = speaking.who === 'few' && !haveFew ? 'full' : speaking.who
        const as = speakerOf(who)
        const reply = await ctx.client.request({
          method: request.method,
          path: request.path,
          query: request.query,
          body: request.body,
          as,
          retryThrottled: false
        })
        // A bad request that was accepted all the same must not leave a post behind.
        if (request.method === 'POST' && request.path === `${BOT}/messages`) deleteIfPosted(ctx, reply, as)
        check(reply, request, allowedFor(request, who, fewScopes), `${request.label} as ${who}`)
      }
    }),
    ctx.fc(runs === undefined ? {} : { numRuns: Math.min(runs, ctx.fc().numRuns ?? runs) })
  )
}

/**
 * The case ends with `as`'s global commands as they are now, if they changed (support's keepCommands always syncs
 * back; this syncs only when a request the case expected refused was accepted, so no sync is spent otherwise).
 */
async function restoreCommandsIfChanged (ctx: OrbContext, as: Speaker): Promise<void> {
  const key = (commands: Array<Record<string, unknown>>): string =>
    JSON.stringify([...commands].sort((a, b) => String(a.name).localeCompare(String(b.name))))
  const before = await globalCommands(ctx, as)
  ctx.cleanup(async () => {
    if (key(await globalCommands(ctx, as)) !== key(before)) {
      await ctx.client.request({ method: 'PUT', path: `${BOT}/commands`, body: { commands: before }, as })
    }
  })
}
