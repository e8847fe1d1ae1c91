/**
 * Entry of the webhook parse thread: reads each posted body (document.ts) away from the thread that answers
 * HTTP, so a large or hostile body never delays /metrics or /-/healthy. It answers with the verdict only.
 */
import { parentPort } from 'node:worker_threads';
import { readDocument } from './document.js';
import type { ParseReply, ParseRequest } from './parse-protocol.js';

const port = parentPort;
if (port === null) throw new Error('src/webhooks/parse-worker.ts runs only as a worker thread');

port.on('message', (m: ParseRequest) => {
  const reply: ParseReply = { id: m.id, verdict: readDocument(new Uint8Array(m.bytes), m.typeField) };
  port.postMessage(reply);
});
