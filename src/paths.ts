import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root, from src/ (tests) or dist/ (installed) alike. */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
