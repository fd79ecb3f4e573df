/**
 * Headless Chromium for the page tests: Debian's `chromium` (`CHROMIUM_PATH`, default `/usr/bin/chromium`; `.ci/run`
 * installs it when missing) driven by `playwright-core`. Each page is checked with axe-core (no serious or critical
 * violation) and photographed at desktop and phone widths into `test-results/screenshots/` (not committed).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS_DIR = path.resolve(import.meta.dirname, '../../test-results/screenshots');

export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (none expected). */
export const seriousViolations = async (page: Page): Promise<string[]> => {
  // Evaluated through the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(async () => {
    const scope = globalThis as unknown as {
      axe: { run: (context: unknown) => Promise<{ violations: unknown[] }> };
      document: unknown;
    };
    return (await scope.axe.run(scope.document)).violations;
  })) as AxeViolation[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
};

/**
 * The page at both widths: a screenshot of each (`<name>-desktop.png`, `<name>-phone.png`) and no serious axe
 * violation at either; the viewport is left at desktop.
 */
export const checkPage = async (page: Page, name: string): Promise<void> => {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `${name}-${label}.png`), fullPage: true });
    expect(await seriousViolations(page), `${name} at ${label} width`).toEqual([]);
  }
  await page.setViewportSize(VIEWPORTS.desktop);
};
