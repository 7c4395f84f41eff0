// The client suites' own tests whose verdicts hang on timing: the reference bots and adapters under five seeds,
// every deliberate fault, the long voice tour. One file, so that they never run beside one another: each group
// starts its runs when it begins, one group after another, while the voice tour's three runs (93 s, almost no CPU)
// wait from the start. Its name sorts first, so it starts with the first files of the run, and every other test
// file yields the CPU to it (test/helpers/priority.ts): a loaded machine must not blur what these judge.
import t from 'tap'
import { enter } from './timed/group.js'
import { voiceTests } from './timed/voice.js'
import { markTimedRunning } from './helpers/timed-marker.js'

// The browser's tests wait for this file to end (test/helpers/timed-marker.ts).
t.teardown(markTimedRunning())

for (const [name, part] of [
  ['the bot suite on the reference bots', './timed/bot-suite.js'],
  ['the deliberate faults of the Node adapter', './timed/client-faults.js'],
  ['the reference adapters under five seeds', './timed/client-reference.js']
] as const) {
  t.test(name, async (t) => {
    enter(t)
    await import(part)
  })
}
t.test('the voice tour', async (t) => { voiceTests(t) })
