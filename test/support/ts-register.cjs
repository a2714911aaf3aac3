/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS preload (`node -r`) */
// Lets a test run an app's main.ts as its own process (`node -r test/support/ts-register.cjs
// apps/mcp-edge/src/main.ts`): each .ts file is compiled by SWC as it is required (decorator
// metadata included, as tools/build does) and `@tollgate/*` resolve through tsconfig's paths.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const ROOT = path.resolve(__dirname, '../..');
const PATHS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.base.json'), 'utf8')).compilerOptions.paths;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const alias = PATHS[request];
  return resolve.call(this, alias ? path.join(ROOT, alias[0]) : request, ...rest);
};

Module._extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs', ignoreDynamic: true },
  });
  module._compile(code, filename);
};
