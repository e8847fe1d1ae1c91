/**
 * Shared by the generators: a generated file set (path relative to the package root → content) and the
 * helpers that write it or compare it with what is checked in.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Path relative to the package root (forward slashes) → file content. */
export type Files = Record<string, string>;

/** Write every file whose content differs; returns the paths written. */
export function writeFiles(root: string, files: Files): string[] {
  const written: string[] = [];
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel);
    if (existsSync(abs) && readFileSync(abs, 'utf8') === content) continue;
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    written.push(rel);
  }
  return written;
}

/** The paths whose checked-in content differs from the generated one (missing files included). */
export function staleFiles(root: string, files: Files): string[] {
  return Object.entries(files)
    .filter(([rel, content]) => {
      const abs = join(root, rel);
      return !existsSync(abs) || readFileSync(abs, 'utf8') !== content;
    })
    .map(([rel]) => rel);
}
