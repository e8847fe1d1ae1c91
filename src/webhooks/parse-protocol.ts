/** Messages between the HTTP thread and the webhook parse thread (parse-worker.ts). */
import type { DocumentVerdict } from './document.js';

export interface ParseRequest {
  readonly id: number;
  /** The body's bytes, transferred (the HTTP thread keeps no reference). */
  readonly bytes: ArrayBuffer;
  readonly typeField: string | undefined;
}

export interface ParseReply {
  readonly id: number;
  readonly verdict: DocumentVerdict;
}
