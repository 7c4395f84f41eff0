import { existsSync, readFileSync } from 'node:fs'
import { defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError } from '../../expect.js'
import { controlOf, mustPost, newSession, sessionState } from '../../agent-sessions.js'
import { agentWith, expectAccepted, expectControl, expectFieldRule, expectRefused } from './sessions-support.js'

/** A pid that names no process here, or undefined. */
function deadPid (): number | undefined {
  for (const pid of [2 ** 22 + 12_345, 999_999, 2 ** 31 - 2]) {
    try {
      process.kill(pid, 0)
    } catch (err) {
      if ((err as { code?: string }).code === 'ESRCH') return pid
    }
  }
  return undefined
}

/** A live process of another user, or undefined (Linux only: /proc/1 belongs to root in most setups). */
function foreignPid (): number | undefined {
  const uid = process.getuid?.()
  if (uid === undefined || uid === 0 || !existsSync('/proc/1/status')) return undefined
  const owner = /^Uid:\s+(\d+)/m.exec(readFileSync('/proc/1/status', 'utf8'))?.[1]
  return owner !== undefined && Number(owner) !== uid ? 1 : undefined
}

/** The other fields of an update: subagentCount, host, openURL, pid, background, liveText, ttlSeconds (OT-105..111). */
export const otherFieldCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-105',
    title: 'subagentCount is an integer from 0 to 99',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ subagentCount: 0 }, { subagentCount: 99 }],
        [[{ subagentCount: 100 }], [{ subagentCount: -1 }], [{ subagentCount: 1.5 }], [{ subagentCount: '3' }]])
    }
  }),
  defineCase({
    id: 'OT-106',
    title: 'host is local or an ssh-style alias ^[A-Za-z0-9._-]{1,64}$',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx,
        [{ host: 'build-box.lan' }, { host: 'x'.repeat(64) }, { host: 'local' }, { host: 'A_1' }],
        [[{ host: 'user@host' }], [{ host: 'a b' }], [{ host: 'x'.repeat(65) }], [{ host: '' }]])
    }
  }),
  defineCase({
    id: 'OT-107',
    title: 'openURL needs a scheme the registration declared, never an always-refused one, at most 2048 characters',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} }, { urlSchemes: ['vscode', 'x-agent'] })
      await expectAccepted(a, 's1', [
        { openURL: 'vscode://file/tmp/x' },
        { openURL: 'x-agent://open?id=1' },
        { openURL: `vscode://${'x'.repeat(2039)}` },
        { openURL: null }
      ])
      await expectRefused(a, 's1', [
        [{ openURL: 'https://example.com' }],
        [{ openURL: 'file:///etc/passwd' }],
        [{ openURL: 'javascript:alert(1)' }],
        [{ openURL: 'data:text/plain,x' }],
        [{ openURL: `vscode://${'x'.repeat(2040)}` }]
      ])
      const none = await agentWith(ctx, { s1: {} }, { urlSchemes: [] })
      await expectRefused(none, 's1', [[{ openURL: 'vscode://file/tmp/x' }], [{ openURL: 'https://example.com' }]])
      expectError(
        await none.post('s2', newSession({ openURL: 'vscode://x' })),
        'invalid_field',
        'creating with an openURL and no urlSchemes',
        'openURL'
      )
    }
  }),
  defineCase({
    id: 'OT-107.b',
    title: 'the openURL is opened when the user taps the key (alsoOpen)',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { openURL: 'vscode://file/tmp/x' } }, { urlSchemes: ['vscode'] })
      const tap = await controlOf(ctx).tap(a.id, 's1')
      expectControl(tap, 200, 'the user taps s1')
      expectEqual(tap.json.opened, 'vscode://file/tmp/x', 'what the tap opened')
    }
  }),
  defineCase({
    id: 'OT-108',
    title: 'pid is an integer of at least 1 or null; the suite\'s own process is accepted',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ pid: process.pid }, { pid: null }],
        [[{ pid: 0 }], [{ pid: -5 }], [{ pid: 1.5 }], [{ pid: String(process.pid) }]])
    }
  }),
  defineCase({
    id: 'OT-109',
    title: 'background is a boolean',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ background: true }, { background: false }],
        [[{ background: 'yes' }], [{ background: 1 }]])
    }
  }),
  defineCase({
    id: 'OT-110',
    title: 'liveText is a boolean',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ liveText: false }, { liveText: true }],
        [[{ liveText: 1 }], [{ liveText: 'false' }]])
    }
  }),
  defineCase({
    id: 'OT-111',
    title: 'ttlSeconds is an integer from 10 to 3600',
    level: 'required',
    async run (ctx) {
      const a = await expectFieldRule(ctx, [{ ttlSeconds: 3600 }, { ttlSeconds: 120 }],
        [[{ ttlSeconds: 9 }], [{ ttlSeconds: 3601 }], [{ ttlSeconds: 60.5 }], [{ ttlSeconds: 0 }]], { ttlSeconds: 10 })
      if (ctx.control !== undefined) {
        await mustPost(a, 's2', newSession())
        expectEqual((await sessionState(ctx, a.id, 's2')).ttlSeconds, 120, 'the default ttlSeconds')
      }
    }
  })
]

/** The decision on pid (OT-A16). */
export const pidDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A16',
    title: "pid: a live process of the calling user is accepted; a dead one or another user's is invalid_field pid",
    level: 'decision',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { pid: process.pid } })
      let checked = 0
      for (const [pid, what] of [
        [deadPid(), 'a pid no process has'],
        [foreignPid(), 'a process of another user (pid 1)']
      ] as const) {
        if (pid === undefined) {
          ctx.note(`${what}: none found on this machine; not checked`)
          continue
        }
        const reply = await a.post('s1', { pid })
        if (reply.status === 200) {
          ctx.note(`${what} (${pid}) was accepted: the target's pid check is off or missing; cannot tell which from outside`)
          continue
        }
        expectError(reply, 'invalid_field', `${what} (${pid})`, 'pid')
        checked++
      }
      ctx.note(checked === 0 ? 'only the accepted side was checked' : `${checked} refusal(s) checked`)
    }
  })
]
