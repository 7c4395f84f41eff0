#!/usr/bin/env node
import { main } from './main.js'

const code = await main(process.argv.slice(2))
// Exit at once: a stopped fake must not linger on a keep-alive socket a client left open.
process.exit(code)
