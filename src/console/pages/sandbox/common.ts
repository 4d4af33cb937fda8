// What the Sandbox pages share (src/console/pages/sandbox.ts and this folder): the sub-pages'
// navigation, the page frame with it, form helpers, and running an action so that a refusal of
// the engine or the domain code re-renders the form with its problems and its 4xx.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../jsonapi/errors.js';
import { html, type Html, type HtmlValue } from '../../html.js';
import { withSite } from '../../layout.js';
import { utcText } from '../../when.js';
import { ConsoleProblem, problemsOf, sessionOf, type ConsoleDeps, type ConsoleRenderer } from '../../plugin.js';

export const SANDBOX_PATH = '/console/sandbox';

export interface SandboxContext {
  renderer: ConsoleRenderer;
  deps: ConsoleDeps;
}

/** The sandbox's sub-pages, in the order of their navigation (one console nav entry: Sandbox). */
const SECTIONS = [
  { path: SANDBOX_PATH, title: 'Checkout and clock' },
  { path: `${SANDBOX_PATH}/snapshots`, title: 'Reset and snapshots' },
  { path: `${SANDBOX_PATH}/faults`, title: 'Faults' },
  { path: `${SANDBOX_PATH}/mailbox`, title: 'Mailbox' },
] as const;

export type SandboxSection = (typeof SECTIONS)[number]['path'];

export interface SandboxFrame {
  title: string;
  section: SandboxSection;
  body: HtmlValue;
  notice?: string | undefined;
  /** A refused action: its problems above the form, and its 4xx as the page's status. */
  refusal?: Refusal | undefined;
}

/** Sends a sandbox page: the console's frame, the sub-pages' navigation, then the body. */
export async function sendSandboxPage(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply, frame: SandboxFrame): Promise<FastifyReply> {
  const siteId = await ctx.renderer.siteOf(request);
  const nav = html`<nav aria-label="Sandbox" class="subnav">
  <ul>${SECTIONS.map(
    (s) => html`<li><a href="${withSite(s.path, siteId)}"${s.path === frame.section ? html` aria-current="page"` : ''}>${s.title}</a></li>`,
  )}</ul>
</nav>`;
  return ctx.renderer.page(request, reply, {
    title: frame.title,
    active: SANDBOX_PATH,
    body: html`${nav}${frame.body}`,
    ...(frame.notice ? { notice: frame.notice } : {}),
    ...(frame.refusal ? { problems: frame.refusal.problems, status: frame.refusal.status } : {}),
  });
}

/** The session's CSRF token, for every POST form. */
export function csrfField(request: FastifyRequest): Html {
  return html`<input type="hidden" name="_csrf" value="${sessionOf(request).csrfToken}">`;
}

/** A refusal to show on the form: its lines and its status (always a 4xx). */
export interface Refusal {
  problems: string[];
  status: number;
}

/**
 * Runs an action; a refusal (the engine's ApiError, a ConsoleProblem) comes back as a Refusal for
 * the form to show, anything else is thrown on (a 500 page).
 */
export async function attempt<T>(work: () => Promise<T>): Promise<{ ok: T } | { refused: Refusal }> {
  try {
    return { ok: await work() };
  } catch (error) {
    const problems = problemsOf(error);
    if (problems === null) throw error;
    const status = error instanceof ApiError || error instanceof ConsoleProblem ? error.status : 422;
    return { refused: { problems, status: status >= 400 && status < 500 ? status : 422 } };
  }
}

/** An ISO 8601 time as people read it: 2026-06-01 12:00:00 UTC (the console's one format, ../../when.ts). */
export function readableTime(value: unknown): string {
  return typeof value === 'string' || value instanceof Date ? utcText(value) : '';
}

/** A length of time in words, to the minute: "32 days 4 hours", "5 minutes", "less than a minute". */
export function readableSpan(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes === 0) return 'less than a minute';
  const parts: string[] = [];
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  if (days) parts.push(`${days.toLocaleString('en-US')} day${days === 1 ? '' : 's'}`);
  if (hours) parts.push(`${hours} hour${hours === 1 ? '' : 's'}`);
  if (mins && days < 10) parts.push(`${mins} minute${mins === 1 ? '' : 's'}`);
  return parts.join(' ') || `${days} days`;
}

/**
 * A form field as a number for a JSON:API document when it is one, else the text as typed (so
 * the engine's own check names the problem), or undefined when left empty.
 */
export function numberField(value: string | undefined): number | string | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/** The attributes of a document, without the fields left empty. */
export function givenAttributes(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== ''));
}
