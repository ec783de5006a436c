// Loaded before a process's main module (`node --import`): on exit, writes the path of every
// module the process loaded to the file named in LOADED_MODULES_FILE, one a line
// (apps/control-plane/src/cli.built-spec.ts). It sees what CommonJS resolves: the built code and
// every CommonJS package, whoever loads it; an ES module package only where CommonJS requires it
// (Node 20 has no synchronous hooks into the ES module loader).
import { writeFileSync } from 'node:fs';
import Module from 'node:module';

const loaded = new Set();
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const path = resolveFilename.apply(this, args);
  loaded.add(path);
  return path;
};
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, [...loaded].join('\n')));
