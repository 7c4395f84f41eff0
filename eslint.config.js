// ESLint for the whole tree: neostandard (the style fastify uses) with its TypeScript rules, lines of at most 120
// columns, short and simple functions, no swallowed failure. `npm run lint` allows zero warnings; `npm test` runs
// it first.
import neostandard from 'neostandard'

// A line may pass 120 columns only for a string, template or URL of 60 characters or more: messages, case titles
// and test names are kept whole so that grep finds what a report printed (the Linux kernel's rule for its messages).
const LONG_LITERAL = String.raw`'[^']{60,}'|"[^"]{60,}"|` + '`[^`]{60,}`' + String.raw`|https?://`

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'node_modules/**', 'bench/results/**']
  }),
  {
    rules: {
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2, ignorePattern: LONG_LITERAL }],
      // A function is read at once: 80 lines of code at most, and few enough paths through it to follow.
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 20],
      // A failure is handled or reported, never swallowed.
      'no-empty': ['error', { allowEmptyCatch: false }]
    }
  }
]
