// `npm run cli -- …` (README.md, "The CLI"): runs the built CLI, dist/src/cli/main.js, building it first only when
// it is missing (a fresh clone) or older than what it is built from. Rebuilding on every call cost seconds a call;
// looking costs a few milliseconds (the modification times of src/, migrations/ and the build's settings). Plain
// JavaScript, run by Node as it is: it must work before anything is built.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const main = path.join(root, 'dist/src/cli/main.js');
// Written by this launcher after a build it ran, dated when that build began: a source saved during it is newer.
const stamp = path.join(root, 'dist/.cli-built');

function modifiedAt(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    // Absent: as old as can be (a missing build is stale; a missing setting file changes nothing).
    return -Infinity;
  }
}

/** The newest modification under a folder, the folder's own included (a file deleted or renamed in it dates it). */
function newestUnder(dir) {
  let newest = modifiedAt(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(entryPath) : modifiedAt(entryPath));
  }
  return newest;
}

const sources = Math.max(
  newestUnder(path.join(root, 'src')),
  newestUnder(path.join(root, 'migrations')),
  ...['package.json', 'package-lock.json', '.swcrc', 'tsconfig.json'].map((file) => modifiedAt(path.join(root, file))),
);
const built = modifiedAt(main) === -Infinity ? -Infinity : Math.max(modifiedAt(main), modifiedAt(stamp));
if (built < sources) {
  const began = new Date();
  process.stderr.write('Building the CLI (no build yet, or its sources changed since)…\n');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  writeFileSync(stamp, '');
  utimesSync(stamp, began, began);
}
// In this process: the CLI reads its arguments from process.argv, which are this script's.
await import(pathToFileURL(main).href);
