import { defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import { agent, mustPost, newSession, sessionState, type Agent } from '../../agent-sessions.js'
import { agentWith, expectAccepted, expectFieldRule, expectRefused, type Refusal } from './sessions-support.js'

/** A fresh adapter's session s1 created with a message of `text`, and the text the target kept (control API). */
async function storedText (ctx: CaseContext, id: string, text: string): Promise<{ a: Agent, kept: string }> {
  const a = await agent(ctx)
  await mustPost(a, 's1', newSession({ message: { id, text } }))
  return { a, kept: (await sessionState(ctx, a.id, 's1')).message?.text as string }
}

/**
 * The text fields of an update: null where not nullable, title, activity, cwd, project, model, tool, message,
 * statusDetail (OT-093..104).
 */
export const textFieldCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-093',
    title: 'null on a field that is not nullable is invalid_field',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} })
      await expectRefused(
        a,
        's1',
        ['title', 'activity', 'subagentCount', 'host', 'background', 'liveText', 'ttlSeconds'].map((key) => [
          { [key]: null }
        ])
      )
      expectError(
        await a.post('s2', { title: 'x', activity: null }),
        'invalid_field',
        'creating with activity null',
        'activity'
      )
    }
  }),
  defineCase({
    id: 'OT-094',
    title: 'title is 1 to 120 characters',
    level: 'required',
    async run (ctx) {
      const refused: Refusal[] = [[{ title: '' }], [{ title: 'x'.repeat(121) }], [{ title: 7 }]]
      const a = await expectFieldRule(ctx, [{ title: 'x' }], refused, { title: 'x'.repeat(120) })
      expectError(
        await a.post('s2', newSession({ title: '' })),
        'invalid_field',
        'creating with an empty title',
        'title'
      )
    }
  }),
  defineCase({
    id: 'OT-095',
    title: 'activity is one of the 11 values; "empty" and any other value are invalid_field',
    level: 'required',
    async run (ctx) {
      const activities = [
        'starting', 'idle', 'thinking', 'tool', 'streaming', 'waitingPermission', 'waitingQuestion', 'done', 'error',
        'compacting', 'offline'
      ]
      await expectFieldRule(ctx, activities.map((activity) => ({ activity })),
        [[{ activity: 'empty' }], [{ activity: 'napping' }], [{ activity: 'Idle' }], [{ activity: '' }]])
    }
  }),
  defineCase({
    id: 'OT-096',
    title: 'cwd is a string of at most 1024 characters, or null',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ cwd: 'x'.repeat(1024) }, { cwd: '' }, { cwd: null }],
        [[{ cwd: 'x'.repeat(1025) }], [{ cwd: 42 }]])
    }
  }),
  defineCase({
    id: 'OT-097',
    title:
      'project is cleaned and trimmed, then 1..128 scalars: "   " is invalid_field, "  My Project  " is stored as My Project',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} })
      await expectAccepted(a, 's1', [{ project: '  My Project  ' }])
      if (ctx.control !== undefined) {
        expectEqual((await sessionState(ctx, a.id, 's1')).project, 'My Project', 'the stored project')
      }
      await expectAccepted(a, 's1', [
        { project: 'x'.repeat(128) },
        { project: `   ${'p'.repeat(128)}   ` },
        { project: null }
      ])
      if (ctx.control !== undefined) {
        expectEqual((await sessionState(ctx, a.id, 's1')).project, null, 'null restores the cwd fallback')
      }
      await expectRefused(a, 's1', [[{ project: '   ' }], [{ project: '' }], [{ project: 'x'.repeat(129) }]])
    }
  }),
  defineCase({
    id: 'OT-098',
    title: 'model is a string of at most 64 characters, or null',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ model: 'x'.repeat(64) }, { model: null }],
        [[{ model: 'x'.repeat(65) }], [{ model: false }]])
    }
  }),
  defineCase({
    id: 'OT-099',
    title: 'toolLabel is a string of at most 80 characters, or null',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ toolLabel: 'x'.repeat(80) }, { toolLabel: null }],
        [[{ toolLabel: 'x'.repeat(81) }]], { activity: 'tool' })
    }
  }),
  defineCase({
    id: 'OT-100',
    title: 'toolKind is at most 32 characters or null; an unknown value is accepted with a warning',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { activity: 'tool' } })
      const unknown = await a.post('s1', { toolKind: 'banana' })
      expectStatus(unknown, 200, 'toolKind "banana"')
      expectThat(
        Array.isArray(unknown.json.warnings) && unknown.json.warnings.length > 0,
        'an unknown toolKind adds a warning',
        'a non-empty warnings array',
        unknown.json.warnings
      )
      for (const toolKind of ['shell', 'edit', 'read', 'web', 'delegate', 'plan', 'integration', 'other']) {
        const known = await a.post('s1', { toolKind })
        expectStatus(known, 200, `toolKind ${toolKind}`)
        const count = ((known.json.warnings ?? []) as string[]).length
        expectThat(count < unknown.json.warnings.length, `a known toolKind (${toolKind})`, `fewer warnings than "banana" (${unknown.json.warnings.length})`, known.json.warnings)
      }
      await expectAccepted(a, 's1', [{ toolKind: 'x'.repeat(32) }, { toolKind: null }])
      await expectRefused(a, 's1', [[{ toolKind: 'x'.repeat(33) }]])
    }
  }),
  defineCase({
    id: 'OT-101',
    title: 'message is {id 1..128, text up to 16384} or null; both required',
    level: 'required',
    async run (ctx) {
      const longest = { id: 'x'.repeat(128), text: 'x'.repeat(16384) }
      await expectFieldRule(ctx, [{ message: { id: 'm', text: '' } }, { message: longest }, { message: null }], [
        [{ message: { id: 'm' } }, 'message.text'],
        [{ message: { text: 'x' } }, 'message.id'],
        [{ message: { id: '', text: 'x' } }, 'message.id'],
        [{ message: { id: 'x'.repeat(129), text: 'x' } }, 'message.id'],
        [{ message: { id: 'm', text: 'x'.repeat(16385) } }, 'message.text'],
        [{ message: 'hello' }, 'message']
      ])
    }
  }),
  defineCase({
    id: 'OT-102',
    title: 'the server keeps only the last 4096 bytes of message.text',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const text = `${'a'.repeat(5000)}${'z'.repeat(3000)}`
      const { a, kept } = await storedText(ctx, 'm1', text)
      expectEqual(kept, text.slice(-4096), 'the stored text of 8000 ASCII bytes')
      await mustPost(a, 's1', { message: { id: 'm2', text: 'short' } })
      expectEqual(
        (await sessionState(ctx, a.id, 's1')).message,
        { id: 'm2', text: 'short' },
        'a short text is kept whole'
      )
    }
  }),
  defineCase({
    id: 'OT-104',
    title: 'statusDetail is a string of at most 120 characters, or null',
    level: 'required',
    async run (ctx) {
      await expectFieldRule(ctx, [{ statusDetail: 'x'.repeat(120) }, { statusDetail: null }],
        [[{ statusDetail: 'x'.repeat(121) }]])
    }
  })
]

/** The decisions on lengths in code points and bytes (OT-A24). */
export const textDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A24',
    title:
      'lengths count code points; project is cleaned (controls, format characters, whitespace runs) before 1..128 is counted',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ title: '🛰'.repeat(120) }), 'a title of 120 astral code points')
      await expectRefused(a, 's1', [
        [{ title: '🛰'.repeat(121) }],
        [{ project: '\u200e\u0000' }],
        [{ project: ' \n\t ' }],
        [{ project: '\u200f'.repeat(3) }]
      ])
      await expectAccepted(a, 's1', [
        { project: `  ${'🛰'.repeat(128)}  ` },
        { project: `${'p'.repeat(128)}\u200f\u0007` },
        { model: '🛰'.repeat(64) }
      ])
      await expectRefused(a, 's1', [[{ model: '🛰'.repeat(65) }]])
      if (ctx.control === undefined) return
      await mustPost(a, 's1', { project: 'a\n\n b\u200f\u0007c' })
      expectEqual(
        (await sessionState(ctx, a.id, 's1')).project,
        'a bc',
        'the stored project of "a\\n\\n b\\u200f\\u0007c"'
      )
    }
  }),
  defineCase({
    id: 'OT-A24.b',
    title: 'message.text keeps its last 4096 UTF-8 bytes, cut at a whole code point',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const text = `${'a'.repeat(5000)}${'é'.repeat(3000)}`
      const { kept } = await storedText(ctx, 'm', text)
      const bytes = Buffer.byteLength(kept ?? '')
      expectThat(typeof kept === 'string' && text.endsWith(kept) && bytes <= 4096 && bytes >= 4093 && !kept.includes('\ufffd'), 'the stored text',
        'a suffix of the text, 4093..4096 bytes, no broken code point', `${bytes} bytes: ${String(kept).slice(0, 40)}…`)
      expectEqual(kept, 'é'.repeat(2048), 'the last 4096 bytes of 3000 two-byte code points')
    }
  })
]
