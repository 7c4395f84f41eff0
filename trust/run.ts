// `npm run trust`: the trust campaign (trust/campaign.ts) from the command line.
import { main } from './campaign.js'

process.exitCode = await main(process.argv.slice(2))
