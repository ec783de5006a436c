// Loaded before a process's main module (`node --require`): on exit, writes the path of every
// module the process loaded to the file named in LOADED_MODULES_FILE, one a line
// (test/cli/modules.e2e-spec.ts). It sees what CommonJS resolves: our code and every CommonJS
// package, whoever loads it; an ES module package only where CommonJS requires it (Node 20 has no
// synchronous hooks into the ES module loader).
const { writeFileSync } = require('node:fs');
const Module = require('node:module');

const loaded = new Set();
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const path = resolveFilename.apply(this, args);
  loaded.add(path);
  return path;
};
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, [...loaded].join('\n')));
