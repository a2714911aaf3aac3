// Adds lockfile entries for platform-specific optional packages that the registry this project
// installs from does not carry (it mirrors only the packages of the platforms it serves, e.g. no
// @swc/core-darwin-arm64). npm 11 leaves such packages out of package-lock.json and then `npm ci`
// rejects its own lockfile (npm/cli#9846). The entries carry the version and the os/cpu the
// package is for, so `npm ci` sees a complete lockfile and skips them on other platforms, exactly
// as it would with a full registry. Run after changing dependencies: `npm run lock:fill`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openbsd', 'sunos', 'aix', 'netbsd'];
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  arm: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean) ?? (parts.includes('gnueabihf') ? 'arm' : undefined);
  if (!os || !cpu) return null;
  const libc = parts.includes('musl')
    ? ['musl']
    : parts.includes('gnu') || parts.includes('gnueabihf')
      ? ['glibc']
      : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) };
}

let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = path === '' ? 'node_modules' : `${path}/node_modules`;
    if (packages[`${base}/${dep}`] || packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) continue;
    packages[`node_modules/${dep}`] = { version, ...(meta.dev ? { dev: true } : {}), optional: true, ...platform };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform-specific optional package entr${added === 1 ? 'y' : 'ies'}`);
