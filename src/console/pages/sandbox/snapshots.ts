// Sandbox: reset and snapshots (/console/sandbox/snapshots): the account's data back to the seed,
// and named snapshots to save, restore and delete, through the domain functions that
// /v1/test_helpers/reset and /v1/test_helpers/snapshots call (src/domain/snapshots.ts), with the
// route's reading of the name and its errors. Reset, restore and delete each ask first.
import { auditActorOf } from '../../../audit/audit-events.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_DATA_TABLES, KEPT_TABLES } from '../../../db/account-data.js';
import { checkSnapshotName, deleteSnapshot, listSnapshots, resetAccount, restoreSnapshot, saveSnapshot, SEED_SNAPSHOT, type RestoreResult, type SnapshotSummary } from '../../../domain/snapshots.js';
import { notFound } from '../../../jsonapi/errors.js';
import { requireWholeAccount } from '../../../sandbox/account-wide.js';
import { readSnapshotCreateDocument, withSnapshotErrors } from '../../../sandbox/snapshot-routes.js';
import { html, type Html } from '../../html.js';
import { withSite } from '../../layout.js';
import { CONSOLE_ROUTE, formOf, queryOf, sessionOf } from '../../plugin.js';
import { attempt, csrfField, readableSpan, readableTime, SANDBOX_PATH, sendSandboxPage, type Refusal, type SandboxContext } from './common.js';

const PATH = `${SANDBOX_PATH}/snapshots`;
const TITLE = 'Sandbox: reset and snapshots';

/** ?done= codes of the redirects after a change, and what the page says then. */
const DONE: Record<string, string> = {
  saved: 'The snapshot is saved.',
  deleted: 'The snapshot is deleted; the data stays as it is.',
};

const snapshotPath = (name: string, action: 'restore' | 'delete') => `${PATH}/${encodeURIComponent(name)}/${action}`;

export function snapshotRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { deps } = ctx;
  const accountOf = (request: FastifyRequest) => sessionOf(request).user.accountId;
  // The API's rule (src/sandbox/account-wide.ts): every page here acts on, or shows, every site.
  const wholeAccount = (action: string) => ({
    ...CONSOLE_ROUTE,
    preHandler: async (request: FastifyRequest) => requireWholeAccount(deps.database, sessionOf(request).principal, action),
  });

  app.get('/sandbox/snapshots', wholeAccount('Listing the snapshots'), async (request, reply) => {
    const done = queryOf(request).get('done');
    return listPage(ctx, request, reply, { ...(done && DONE[done] ? { notice: DONE[done] } : {}) });
  });

  app.post('/sandbox/snapshots', wholeAccount('Saving a snapshot'), async (request, reply) => {
    const name = formOf(request).get('name') ?? '';
    const outcome = await attempt(() =>
      // The route's reading of {"data":{"type":"snapshots","attributes":{"name":...}}} and its naming rules.
      withSnapshotErrors(() => saveSnapshot(deps.database, accountOf(request), checkSnapshotName(readSnapshotCreateDocument({ data: { type: 'snapshots', attributes: { name } } })), deps.now(), {
          actor: auditActorOf(sessionOf(request).principal),
        }),
      ),
    );
    if ('refused' in outcome) return listPage(ctx, request, reply, { name, refusal: outcome.refused });
    return reply.redirect(withSite(`${PATH}?done=saved`, await ctx.renderer.siteOf(request)), 303);
  });

  app.get('/sandbox/reset', wholeAccount('Resetting the account'), async (request, reply) =>
    confirmPage(ctx, request, reply, {
      title: 'Sandbox: reset to the seed',
      action: `${SANDBOX_PATH}/reset`,
      button: 'Reset the account',
      lead: html`<p>Reset puts the account's data back exactly as it was when the account was seeded (the reserved <code>${SEED_SNAPSHOT}</code> snapshot): the same records with the same ids, and the account clock back where it was then.</p>`,
    }),
  );
  app.post('/sandbox/reset', wholeAccount('Resetting the account'), async (request, reply) => {
    const outcome = await attempt(() => withSnapshotErrors(() => resetAccount(deps.database, accountOf(request), deps.now(), auditActorOf(sessionOf(request).principal))));
    if ('refused' in outcome) return listPage(ctx, request, reply, { refusal: outcome.refused });
    return listPage(ctx, request, reply, { restored: outcome.ok, notice: `Reset done: the data is as it was seeded. ${restoredText(outcome.ok)}` });
  });

  app.get<{ Params: { name: string } }>('/sandbox/snapshots/:name/restore', wholeAccount('Restoring a snapshot'), async (request, reply) => {
    const snapshot = await findSnapshot(ctx, request, request.params.name);
    return confirmPage(ctx, request, reply, {
      title: `Sandbox: restore snapshot ${snapshot.name}`,
      action: snapshotPath(snapshot.name, 'restore'),
      button: `Restore ${snapshot.name}`,
      lead: html`<p>Restoring <strong>${snapshot.name}</strong> puts the account's data back exactly as it was saved ${readableTime(snapshot.createdAt)} (${snapshot.totalRows.toLocaleString('en-US')} rows), and the account clock back to ${clockOf(snapshot)}. The snapshot stays, to restore again.</p>`,
    });
  });
  app.post<{ Params: { name: string } }>('/sandbox/snapshots/:name/restore', wholeAccount('Restoring a snapshot'), async (request, reply) => {
    const outcome = await attempt(() => withSnapshotErrors(() => restoreSnapshot(deps.database, accountOf(request), request.params.name, deps.now(), auditActorOf(sessionOf(request).principal))));
    if ('refused' in outcome) return listPage(ctx, request, reply, { refusal: outcome.refused });
    return listPage(ctx, request, reply, { restored: outcome.ok, notice: `Restored snapshot ${outcome.ok.snapshot.name}. ${restoredText(outcome.ok)}` });
  });

  app.get<{ Params: { name: string } }>('/sandbox/snapshots/:name/delete', wholeAccount('Deleting a snapshot'), async (request, reply) => {
    const snapshot = await findSnapshot(ctx, request, request.params.name);
    return confirmPage(ctx, request, reply, {
      title: `Sandbox: delete snapshot ${snapshot.name}`,
      action: snapshotPath(snapshot.name, 'delete'),
      button: `Delete ${snapshot.name}`,
      lead: html`<p>Deleting <strong>${snapshot.name}</strong> (saved ${readableTime(snapshot.createdAt)}, ${snapshot.totalRows.toLocaleString('en-US')} rows) means it can no longer be restored. The account's data stays as it is now.</p>`,
      keeps: false,
    });
  });
  app.post<{ Params: { name: string } }>('/sandbox/snapshots/:name/delete', wholeAccount('Deleting a snapshot'), async (request, reply) => {
    const outcome = await attempt(() => withSnapshotErrors(() => deleteSnapshot(deps.database, accountOf(request), request.params.name, deps.now(), auditActorOf(sessionOf(request).principal))));
    if ('refused' in outcome) return listPage(ctx, request, reply, { refusal: outcome.refused });
    return reply.redirect(withSite(`${PATH}?done=deleted`, await ctx.renderer.siteOf(request)), 303);
  });
}

/** The account's clock at a snapshot: real time then, moved by the offset it had. */
const clockOf = (s: SnapshotSummary) => readableTime(new Date(s.createdAt.getTime() + s.clockOffsetMs));

const restoredText = (result: RestoreResult) =>
  `${result.restoredRows.toLocaleString('en-US')} rows put back in ${result.milliseconds.toLocaleString('en-US')} ms; the account clock is ${
    result.snapshot.clockOffsetMs === 0 ? 'back on real time' : `${readableSpan(result.snapshot.clockOffsetMs)} ahead of real time again`
  }.`;

async function findSnapshot(ctx: SandboxContext, request: FastifyRequest, name: string): Promise<SnapshotSummary> {
  const found = (await listSnapshots(ctx.deps.database, sessionOf(request).user.accountId)).find((s) => s.name === name);
  if (!found) throw notFound(`The account has no snapshot named ${JSON.stringify(name)}`);
  return found;
}

interface ListState {
  name?: string;
  refusal?: Refusal;
  notice?: string;
  restored?: RestoreResult;
}

async function listPage(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply, state: ListState): Promise<FastifyReply> {
  const siteId = await ctx.renderer.siteOf(request);
  const snapshots = await listSnapshots(ctx.deps.database, sessionOf(request).user.accountId);
  const hasSeed = snapshots.some((s) => s.reserved);
  const body = html`<section aria-labelledby="reset-heading">
  <h2 id="reset-heading">Reset</h2>
  ${
    hasSeed
      ? html`<p>Put the account's data back as it was seeded, and its clock back where it was then. Keys, hooks, the delivery log and the request journal are kept.</p>
  <p><a class="button danger" href="${withSite(`${SANDBOX_PATH}/reset`, siteId)}">Reset to the seed…</a></p>`
      : html`<p>This account has no seed snapshot (it was not seeded by sitebiz, or was seeded before snapshots existed), so there is nothing to reset to. Saved snapshots below can still be restored.</p>`
  }
</section>
<section aria-labelledby="snapshots-heading">
  <h2 id="snapshots-heading">Snapshots</h2>
  <p class="hint">A snapshot saves every record of the account's sites and its clock, to restore later. Oldest first.</p>
  ${
    snapshots.length === 0
      ? html`<p>No snapshots yet.</p>`
      : html`<div class="table-scroll" tabindex="0" role="region" aria-label="Snapshots of the account"><table>
    <caption>Snapshots of the account</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Saved (real time)</th><th scope="col">Account clock then</th><th scope="col" class="num">Rows</th><th scope="col">Actions</th></tr></thead>
    <tbody>${snapshots.map(
      (s) => html`<tr><th scope="row">${s.name}${s.reserved ? html` <span class="muted">(reserved: what reset restores)</span>` : ''}</th><td>${readableTime(s.createdAt)}</td><td>${clockOf(s)}</td><td class="num">${s.totalRows.toLocaleString('en-US')}</td>
        <td>${
          s.reserved
            ? html`<a href="${withSite(`${SANDBOX_PATH}/reset`, siteId)}">Reset to it…</a>`
            : html`<a href="${withSite(snapshotPath(s.name, 'restore'), siteId)}">Restore ${s.name}…</a> · <a href="${withSite(snapshotPath(s.name, 'delete'), siteId)}">Delete ${s.name}…</a>`
        }</td></tr>`,
    )}</tbody>
  </table></div>`
  }
  <h3 id="save-heading">Save a snapshot</h3>
  <form method="post" action="${withSite(PATH, siteId)}" class="row" aria-labelledby="save-heading">
    ${csrfField(request)}
    <label for="snapshot-name">Name
      <input id="snapshot-name" name="name" value="${state.name ?? ''}" required maxlength="64" aria-describedby="snapshot-name-hint" autocomplete="off"></label>
    <button type="submit">Save</button>
  </form>
  <p class="hint" id="snapshot-name-hint">A letter or digit, then letters, digits, ".", "_" or "-" (64 at most); not "${SEED_SNAPSHOT}". A name is never overwritten: delete the old one first.</p>
</section>`;
  return sendSandboxPage(ctx, request, reply, {
    title: TITLE,
    section: PATH,
    body,
    notice: state.notice,
    refusal: state.refusal,
  });
}

/** What a reset or restore replaces and keeps, from the tables' own classification (src/db/account-data.ts). */
function replacedAndKept(): Html {
  return html`<h3>What is replaced</h3>
<p>Every record of every site of the account, as the snapshot saved it (records made since are deleted, records deleted since come back): ${ACCOUNT_DATA_TABLES.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${t.table}</code>`)}. The account clock goes back to the snapshot's.</p>
<h3>What is kept</h3>
<ul>${Object.entries(KEPT_TABLES).map(([table, why]) => html`<li><code>${table}</code>: ${why}</li>`)}</ul>
<p>So API keys and their tokens, hooks, the webhook delivery log and the request journal keep working; other accounts are never touched.</p>`;
}

interface Confirmation {
  title: string;
  action: string;
  button: string;
  lead: Html;
  /** Whether to list what the action replaces and keeps (a restore or reset); default true. */
  keeps?: boolean;
}

async function confirmPage(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply, c: Confirmation): Promise<FastifyReply> {
  const siteId = await ctx.renderer.siteOf(request);
  const body = html`<section aria-labelledby="confirm-heading">
  <h2 id="confirm-heading">Are you sure?</h2>
  ${c.lead}
  ${c.keeps === false ? '' : replacedAndKept()}
  <form method="post" action="${withSite(c.action, siteId)}" class="row">
    ${csrfField(request)}
    <button type="submit" class="danger">${c.button}</button>
    <a href="${withSite(PATH, siteId)}">Cancel</a>
  </form>
</section>`;
  return sendSandboxPage(ctx, request, reply, { title: c.title, section: PATH, body });
}
