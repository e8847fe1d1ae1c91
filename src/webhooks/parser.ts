/**
 * The HTTP thread's side of the webhook parse thread (parse-worker.ts): one worker, started on the first body
 * and stopped with the server. Bodies are copied into a fresh buffer and transferred, answers come back by id.
 * A worker that dies fails the bodies it held (the receiver answers 500: our failure, not the sender's) and the
 * next body starts a new one.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PACKAGE_ROOT } from '../paths.js';
import type { DocumentVerdict } from './document.js';
import type { ParseReply, ParseRequest } from './parse-protocol.js';

/** The parse thread runs the built bundle (scripts/bundle.mjs), from src/ (tests) and dist/ alike. */
export const PARSE_WORKER_FILE = join(PACKAGE_ROOT, 'dist', 'bundle', 'webhook-parse.js');

/**
 * A small young generation: the thread's garbage is one body's parse at a time. The old generation is left to
 * V8, so that a body within max_body_bytes never kills the thread.
 */
const PARSE_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 4 } as const;

export class DocumentParser {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: DocumentVerdict) => void; reject: (e: Error) => void }>();
  private closed = false;

  constructor(private readonly file: string = PARSE_WORKER_FILE) {}

  /** The parse thread's id while one runs (tests: the parse happens on another thread than this one). */
  get threadId(): number | undefined {
    return this.worker?.threadId;
  }

  parse(body: Uint8Array, typeField: string | undefined): Promise<DocumentVerdict> {
    if (this.closed) return Promise.reject(new Error('the webhook parser is closed'));
    const worker = this.start();
    const id = this.nextId++;
    const copy = new Uint8Array(body.byteLength);
    copy.set(body);
    return new Promise<DocumentVerdict>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const m: ParseRequest = { id, bytes: copy.buffer, typeField };
      worker.postMessage(m, [copy.buffer]);
      // Keep the process alive only while a body is being read.
      worker.ref();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = undefined;
    this.fail(new Error('the webhook parser is closed'));
    if (w) await w.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(this.file, { resourceLimits: PARSE_RESOURCE_LIMITS, stdout: false, stderr: false });
    w.unref();
    w.on('message', (m: ParseReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) w.unref();
      p.resolve(m.verdict);
    });
    const gone = (err: Error): void => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.fail(err);
    };
    w.on('error', gone);
    w.on('exit', (code) => gone(new Error(`the webhook parse thread exited (code ${code})`)));
    this.worker = w;
    return w;
  }

  private fail(err: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }
}
