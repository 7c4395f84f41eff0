// Loaded into every test process (tap's `node-arg` in package.json): the processes a test starts (the CLI, the fakes,
// the clients it judges) run as a user runs them, without the process tracker tap puts in NODE_OPTIONS.
//
// tap records every Node process its tests start, through an `--import` of @tapjs/processinfo that it adds to each
// child's NODE_OPTIONS with a listener of process-on-spawn. With coverage off (npm test), nothing reads that record;
// on Node 20 the tracker costs each child a module-loader thread, about 0.4 CPU seconds a CLI run, and a judged
// client would start slower than it does for its author. This listener runs after tap's and takes the tracker back
// out. With coverage on (`npm run coverage`), the children stay tracked, as their coverage needs.
import processOnSpawn from 'process-on-spawn'

/** tap's `--import` (or `--loader`) of the tracker, quoted as tap writes it or not (its path is a file URL). */
const TRACKER = /(^|\s)"?--(?:import|loader|experimental-loader)[= ][^\s"]*@tapjs[\\/]processinfo[^\s"]*"?/g

/** NODE_OPTIONS without tap's process tracker; undefined when nothing is left. */
export function untracked (options: string | undefined): string | undefined {
  const rest = (options ?? '').replace(TRACKER, ' ').trim().replace(/\s+/g, ' ')
  return rest === '' ? undefined : rest
}

if (process.env.TAP_DISABLE_COVERAGE === '1') {
  processOnSpawn.addListener((opts) => {
    const env: Record<string, string | undefined> = { ...opts.env }
    env.NODE_OPTIONS = untracked(env.NODE_OPTIONS)
    if (env.NODE_OPTIONS === undefined) delete env.NODE_OPTIONS
    for (const key of Object.keys(env)) if (key.startsWith('_TAPJS_PROCESSINFO_')) delete env[key]
    opts.env = env as NodeJS.ProcessEnv
  })
}
