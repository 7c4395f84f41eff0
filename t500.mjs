const r = JSON.parse(require('fs').readFileSync('/tmp/r/ready.json','utf8'))
