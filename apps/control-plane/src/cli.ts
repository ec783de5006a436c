import 'reflect-metadata';
import { runPriceBookCli } from './price-book-cli';

// The price book CLI's process (`npm run -s pricing -- <command>`): price-book-cli.ts on this
// process's arguments, environment and streams; it exits once stdout has gone out (writes to a
// pipe are asynchronous).
void runPriceBookCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => void process.stdout.write(text),
  stderr: process.stderr,
}).then((code) => process.stdout.write('', () => process.exit(code)));
