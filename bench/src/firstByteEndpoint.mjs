/**
 * The loopback OpenAI-compatible endpoint of the `firstbyte` group: a process of its own (the bench
 * waits on its children with spawnSync, so it cannot serve them). It listens on 127.0.0.1 on a free
 * port, prints `{"port": N}` once ready, and for every request writes the monotonic clock (the same
 * clock in every process of the machine: `process.hrtime`) at the moment the request's first byte
 * arrives, as one line of OUT, then answers a short streamed text so the resume completes.
 * `node firstByteEndpoint.mjs OUT`
 */
import { appendFileSync } from 'node:fs'
import { createServer } from 'node:http'

const out = process.argv[2]
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const chunk = (delta, finish = null) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-bench',
        object: 'chat.completion.chunk',
        created: 1_767_225_600,
        model: 'm',
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.end(`${chunk({ role: 'assistant', content: 'Resumed.' })}${chunk({}, 'stop')}data: [DONE]\n\n`)
  })
})
// The first byte of a request is its connection's first data: the clock is read there, before
// node parses the headers.
server.on('connection', (socket) => {
  socket.once('data', () => appendFileSync(out, `${process.hrtime.bigint()}\n`))
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
