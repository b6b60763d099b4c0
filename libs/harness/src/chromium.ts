import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Flags for a browser in a test: no window, no sandbox (containers run as root), and none of
 * the background traffic (updates, sync, safe-browsing lists) a machine offline cannot serve.
 */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * The path of a runnable Chromium: `CHROMIUM_BIN` when set, else Debian's, installed here
 * with apt-get when it is missing and this user is root (as .ci/run installs it). Throws,
 * saying how to install it, when there is none and none can be installed: a browser test
 * must fail, not pass without a browser.
 */
export function findOrInstallChromium(): string {
  const wanted = process.env['CHROMIUM_BIN'] ?? CHROMIUM_PATH;
  if (runs(wanted)) return wanted;
  if (wanted === CHROMIUM_PATH && process.getuid?.() === 0) {
    try {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', timeout: 300_000 });
      execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    } catch (error) {
      throw new Error(`Chromium is missing at ${CHROMIUM_PATH} and apt-get install -y chromium failed: ${(error as Error).message}`);
    }
    if (runs(wanted)) return wanted;
  }
  throw new Error(`no Chromium at ${wanted}: install it (apt-get install -y chromium, as root) or set CHROMIUM_BIN to a Chromium binary`);
}

function runs(path: string): boolean {
  return existsSync(path) && spawnSync(path, ['--headless', '--no-sandbox', '--version'], { encoding: 'utf8', timeout: 30_000 }).status === 0;
}
