// Compiles apps/, libs/, tools/ and bench/ to dist/ with SWC (decorator metadata included, which
// tsx/esbuild cannot emit). Type checking is `npm run typecheck`; this only transpiles, in about
// a second. `@tollgate/*` imports are rewritten to relative paths so plain `node` runs the output.
// Lua scripts (`*.lua`, read at load time from beside their module) are copied as they are.
import { transformFile } from '@swc/core';
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'dist');
const SOURCE_DIRS = ['apps', 'libs', 'tools', 'bench', 'test/fixtures'];
// The web console is a browser app built by Vite (below), not transpiled for Node.
const SKIP_DIRS = new Set([path.join(ROOT, 'apps', 'console')]);

async function* sourceFiles(dir) {
  if (SKIP_DIRS.has(dir)) return;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (entry.name.endsWith('.lua')) yield full;
    else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.d.ts') &&
      !entry.name.endsWith('.spec.ts') &&
      !entry.name.endsWith('.test.ts')
    )
      yield full;
  }
}

// SWC's helper for `export * from './x'` (a lib's barrel, index.ts) gives every re-export a getter
// that looks the name up in the module: `get: function() { return from[k]; }`. All of a barrel's
// getters are closures of that one function, so V8 sees every name at `from[k]` and the lookup goes
// megamorphic, on every `lib.fn()` a caller makes through `@tollgate/x` (about 5 us of an edge's CPU
// per governed call under the profiler, 2026-11-27, issue 22). The module's own export is a getter
// of its own (SWC's `_export`: `function() { return fn; }`, the live binding), so the barrel hands
// that one on: the same value, still live, read by a getter V8 can inline. A re-export without one
// (a plain data property) keeps SWC's lookup.
const SWC_EXPORT_STAR_GETTER = `            Object.defineProperty(to, k, {
                enumerable: true,
                get: function() {
                    return from[k];
                }
            });`;
const EXPORT_STAR_OWN_GETTER = `            const own = Object.getOwnPropertyDescriptor(from, k);
            Object.defineProperty(to, k, {
                enumerable: true,
                get: own && own.get ? own.get : function() {
                    return from[k];
                }
            });`;

function reExportOwnGetters(code, rel) {
  if (!code.includes('function _export_star(from, to) {')) return code;
  if (!code.includes(SWC_EXPORT_STAR_GETTER))
    throw new Error(`${rel}: SWC's _export_star helper changed; update build.mjs`);
  return code.replace(SWC_EXPORT_STAR_GETTER, EXPORT_STAR_OWN_GETTER);
}

function rewriteAliases(code, fileOut) {
  return code.replace(/require\("@tollgate\/([a-z-]+)"\)/g, (_m, lib) => {
    const target = path.join(OUT, 'libs', lib, 'src', 'index.js');
    let rel = path.relative(path.dirname(fileOut), target);
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `require(${JSON.stringify(rel)})`;
  });
}

await rm(OUT, { recursive: true, force: true });
let count = 0;
let scripts = 0;
for (const dir of SOURCE_DIRS) {
  for await (const file of sourceFiles(path.join(ROOT, dir))) {
    const rel = path.relative(ROOT, file);
    if (rel.endsWith('.lua')) {
      await mkdir(path.dirname(path.join(OUT, rel)), { recursive: true });
      await copyFile(file, path.join(OUT, rel));
      scripts++;
      continue;
    }
    const out = path.join(OUT, rel.replace(/\.ts$/, '.js'));
    const { code, map } = await transformFile(file, {
      sourceMaps: true,
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        target: 'es2022',
        keepClassNames: true,
      },
      module: { type: 'commonjs', ignoreDynamic: true },
    });
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(
      out,
      `${rewriteAliases(reExportOwnGetters(code, rel), out)}\n//# sourceMappingURL=${path.basename(out)}.map`,
    );
    if (map) await writeFile(`${out}.map`, map);
    count++;
  }
}
console.log(`built ${count} files and copied ${scripts} Lua scripts into dist/`);

// The console (apps/console): React + Vite into dist/console, served by the admin API at /console/.
const { build: viteBuild } = await import('vite');
await viteBuild({ configFile: path.join(ROOT, 'apps/console/vite.config.mts'), logLevel: 'warn' });
console.log('built the console into dist/console/');
