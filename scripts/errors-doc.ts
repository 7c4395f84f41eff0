// Writes the tables of docs/errors.md from the error registries: `npx tsx scripts/errors-doc.ts`.
// test/errors-doc.test.ts fails whenever the page and the registries differ.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BEGIN, END, errorTables } from '../test/helpers/errors-doc.js'

const file = join(import.meta.dirname, '..', 'docs', 'errors.md')
const page = readFileSync(file, 'utf8')
const start = page.indexOf(BEGIN)
const end = page.indexOf(END)
if (start < 0 || end < start) throw new Error(`docs/errors.md has no ${BEGIN} … ${END} markers`)
writeFileSync(file, `${page.slice(0, start + BEGIN.length)}\n\n${errorTables()}\n${page.slice(end)}`)
