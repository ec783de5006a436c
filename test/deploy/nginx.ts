import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@app/control-plane';
import { waitFor } from '../support/http';

// nginx with the shipped deploy/nginx/pricing.conf, rendered with the test's own values: a
// process of the test's own (not the system's service), on a free port of loopback, with its
// prefix, temporary files, logs and cache in a directory of its own, stopped by its PID.

/** The shipped file, as an operator includes it. */
export const PRICING_CONF = resolve(__dirname, '../../deploy/nginx/pricing.conf');

/** NGINX_PATH, else Debian's (/usr/sbin is not on every user's PATH), else `nginx` from PATH. */
export const NGINX = process.env.NGINX_PATH ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');

/** The lines of the shipped file marked CHANGE, exactly as it has them: what rendering replaces. */
const SHIPPED = {
  upstreams: '    server 10.0.0.11:3000;\n    server 10.0.0.12:3000;\n',
  listen: '    listen 80;\n',
  cacheDir: ' /var/cache/nginx/pricing ',
  // Where the test-only expiry goes, when asked for: in the location of /v1/pricing only.
  cache: '        proxy_cache_key $proxy_host/v1/pricing;\n',
};

export interface PricingConfValues {
  /** HOST:PORT of each instance. */
  readonly upstreams: readonly string[];
  /** ADDRESS:PORT to listen on. */
  readonly listen: string;
  readonly cacheDir: string;
  /**
   * TEST ONLY: copies of 200 expire after this many seconds instead of the service's
   * `max-age=300` (Cache-Control and Expires ignored), so that expiry can be seen in a test.
   * Never in the shipped file: the service's max-age is what a real deployment honours.
   */
  readonly testOnlyExpiryS?: number;
}

/**
 * The shipped file with the CHANGE values replaced (each must be found exactly once, so the file
 * tested is the file shipped, apart from those values), plus the test-only expiry when asked.
 */
export function renderPricingConf(values: PricingConfValues, shipped = readFileSync(PRICING_CONF, 'utf8')): string {
  let text = replaceOnce(shipped, SHIPPED.upstreams, values.upstreams.map((u) => `    server ${u};\n`).join(''));
  text = replaceOnce(text, SHIPPED.listen, `    listen ${values.listen};\n`);
  text = replaceOnce(text, SHIPPED.cacheDir, ` ${values.cacheDir} `);
  if (values.testOnlyExpiryS !== undefined) {
    text = replaceOnce(
      text,
      SHIPPED.cache,
      `${SHIPPED.cache}` +
        `        # TEST ONLY (test/deploy): copies expire after ${values.testOnlyExpiryS} s, not the service's max-age.\n` +
        '        proxy_ignore_headers Cache-Control Expires;\n' +
        `        proxy_cache_valid 200 ${values.testOnlyExpiryS}s;\n`,
    );
  }
  return text;
}

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error(`${PRICING_CONF} should have ${JSON.stringify(from)} exactly once`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** The main nginx.conf around the rendered file: everything nginx writes stays under `dir`. */
function mainConf(dir: string): string {
  return [
    'daemon off;',
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log notice;`,
    // As root, workers would run as nobody, who cannot enter the private temporary directory.
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'events { worker_connections 1024; }',
    'http {',
    `    access_log ${dir}/access.log;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `    ${t}_temp_path ${dir}/${t}_temp;`),
    `    include ${dir}/pricing.conf;`,
    '}',
    '',
  ].join('\n');
}

export interface Nginx {
  readonly port: number;
  /** The rendered pricing.conf it runs. */
  readonly conf: string;
  errorLog(): Promise<string>;
  /** SIGTERM (fast shutdown), then the directory is removed. */
  stop(): Promise<void>;
}

/** Starts nginx with the shipped file in front of `upstreams`; resolves once it accepts connections. */
export async function startNginx(options: { upstreams: readonly string[]; testOnlyExpiryS?: number }): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'pricing-nginx-'));
  const port = await freePort();
  const conf = renderPricingConf({
    upstreams: options.upstreams,
    listen: `127.0.0.1:${port}`,
    cacheDir: join(dir, 'cache'),
    testOnlyExpiryS: options.testOnlyExpiryS,
  });
  await writeFile(join(dir, 'pricing.conf'), conf);
  await writeFile(join(dir, 'nginx.conf'), mainConf(dir));
  const child = spawn(NGINX, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('close', () => done()));
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const errorLog = () => readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    if (!spawnError) await exited;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'nginx to accept connections',
      async () => {
        if (spawnError)
          throw new Error(`cannot run ${NGINX} (install nginx, or set NGINX_PATH): ${spawnError.message}`);
        if (child.exitCode !== null)
          throw new Error(`nginx exited with ${child.exitCode}: ${stderr}${await errorLog()}`);
        return accepts(port);
      },
      (ok) => ok,
      10_000,
      20,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, conf, errorLog, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      done(true);
    });
    socket.on('error', () => done(false));
  });
}
