// The accessibility check of the browser tests: axe-core run inside the page under test.
//
// axe is injected with page.evaluate, which goes through the DevTools protocol: the page's
// Content-Security-Policy does not apply to it, so the console keeps its strict policy
// (script-src 'self', no inline scripts) while it is checked. A <script> tag added to the page
// (page.addScriptTag) would be refused by that policy, and `bypassCSP` would test a page the
// user never gets. test/browser-harness.test.ts proves both halves on a page served with
// `script-src 'self'`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { NodeResult, Result } from 'axe-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The impacts the console must have none of (the issue: "no serious or critical violation"). */
const BLOCKING_IMPACTS = new Set(['serious', 'critical']);

export interface AxeViolation {
  /** The axe rule, e.g. `image-alt`. */
  rule: string;
  impact: string;
  /** What the rule asks for, e.g. "Images must have alternative text". */
  help: string;
  helpUrl: string;
  /** One CSS selector per offending element. */
  targets: string[];
}

/** Every violation axe finds in the page as it is now, of any impact, with axe's default rules. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Injected per document: a navigation drops it.
  const present = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe === 'object');
  if (!present) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(() => {
    const page = globalThis as unknown as { document: unknown; axe: { run(context: unknown, options: object): Promise<{ violations: Result[] }> } };
    // Only the violations: the passes' node lists are large and unused here.
    return page.axe.run(page.document, { resultTypes: ['violations'] }).then((results) => results.violations);
  });
  return violations.map((v) => ({
    rule: v.id,
    impact: v.impact ?? 'unknown',
    help: v.help,
    helpUrl: v.helpUrl,
    targets: v.nodes.map(selectorOf),
  }));
}

/** The violations of impact serious or critical. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((v) => BLOCKING_IMPACTS.has(v.impact));
}

/** Fails, listing each one (rule, impact, help, elements), if the page has a serious or critical violation. */
export async function expectNoSeriousAxeViolations(page: Page): Promise<void> {
  const serious = await seriousAxeViolations(page);
  assert.ok(serious.length === 0, `axe: ${serious.length} serious or critical violation(s) on ${page.url()}:\n${formatViolations(serious)}`);
}

export function formatViolations(violations: readonly AxeViolation[]): string {
  return violations
    .map((v) => [`- ${v.rule} (${v.impact}): ${v.help}`, ...v.targets.map((t) => `    ${t}`), `    ${v.helpUrl}`].join('\n'))
    .join('\n');
}

/** axe's selector path: frames and shadow roots are steps, shown as `a >>> b`. */
function selectorOf(node: NodeResult): string {
  return node.target.map((step) => (Array.isArray(step) ? step.flat(Infinity).join(' >>> ') : step)).join(' >>> ');
}
