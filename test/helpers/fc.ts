import fc from 'fast-check'

/**
 * fast-check parameters for every property in the suite. Under CI (or with FC_SEED) the seed is fixed, so a run
 * is repeatable; elsewhere it is random, and fast-check's failure report carries the seed and path to replay
 * (`FC_SEED=<seed> FC_PATH=<path> npm test`).
 */
export function fcParams<T> (overrides: fc.Parameters<T> = {}): fc.Parameters<T> {
  const seedText = process.env.FC_SEED ?? (process.env.CI ? '20261130' : undefined)
  const params: fc.Parameters<T> = { ...overrides, numRuns: Number(process.env.FC_RUNS ?? overrides.numRuns ?? 100) }
  if (seedText !== undefined) params.seed = Number(seedText)
  if (process.env.FC_PATH !== undefined) params.path = process.env.FC_PATH
  return params
}
