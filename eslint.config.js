// ESLint for the whole tree: neostandard (the style fastify uses) with its TypeScript rules, and lines of at most
// 120 characters. `npm run lint` runs it with zero warnings allowed; `npm test` runs it first.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'node_modules/**', 'bench/results/**']
  }),
  {
    rules: {
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }]
    }
  }
]
