// Sandbox (/console/sandbox, sandbox mode only; docs/sandbox.md): the test helpers of
// /v1/test_helpers in a browser. This page runs checkouts and moves the account clock; its
// sub-pages (./sandbox/) reset and snapshot the data, set up faults and show the mailbox. Each
// action calls exactly what its /v1/test_helpers route calls, with the session's principal:
// runCheckout (src/sandbox/checkouts.ts), readAdvanceDocument and advanceAccountClock (the
// clock), the snapshot domain functions, createFault and deleteFault, and the engine's lists. In
// production mode the page has no nav entry and no routes (404), as /v1/test_helpers has none.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { advanceAccountClock, readAccountClock, type AdvanceResult } from '../../domain/account-clock.js';
import { COUPON_DISCOUNTS } from '../../domain/coupons.js';
import type { CheckoutResult } from '../../domain/checkouts.js';
import { MAX_QUANTITY } from '../../domain/checkouts.js';
import type { ResourceObject } from '../../jsonapi/document.js';
import { formatMoney } from '../../resources/money.js';
import { reachesWholeAccount, requireWholeAccount } from '../../sandbox/account-wide.js';
import { runCheckout } from '../../sandbox/checkouts.js';
import { readAdvanceDocument } from '../../sandbox/clock.js';
import { leaseMs } from '../../webhooks/delivery-queue.js';
import { html, type Html } from '../html.js';
import { withSite } from '../layout.js';
import { CONSOLE_ROUTE, formOf, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import { attempt, csrfField, givenAttributes, numberField, readableSpan, readableTime, SANDBOX_PATH, sendSandboxPage, type Refusal, type SandboxContext } from './sandbox/common.js';
import { faultRoutes } from './sandbox/faults.js';
import { mailboxRoutes } from './sandbox/mailbox.js';
import { snapshotRoutes } from './sandbox/snapshots.js';

const TITLE = 'Sandbox: checkout and clock';

/** The checkout form as typed (kept when the form comes back with problems). */
interface CheckoutFields {
  offer: string;
  email: string;
  name: string;
  quantity: string;
  coupon_code: string;
  payment_outcome: string;
  order_bumps: string[];
}

const EMPTY_CHECKOUT: CheckoutFields = { offer: '', email: '', name: '', quantity: '1', coupon_code: '', payment_outcome: 'succeeded', order_bumps: [] };

/** What the main page shows besides its two forms. */
interface MainPageState {
  checkout?: CheckoutFields;
  checkoutRefusal?: Refusal;
  checkoutResult?: Html;
  clock?: { advance_by: string; advance_to: string };
  clockRefusal?: Refusal;
  advanced?: Html;
  notice?: string;
}

export function sandboxPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: SANDBOX_PATH,
    title: 'Sandbox',
    visible: (_session, deps) => deps.config.mode === 'sandbox',
    register(app: FastifyInstance, deps: ConsoleDeps) {
      // Production mode serves no test helpers: no routes at all, so every sandbox path is a 404.
      if (deps.config.mode !== 'sandbox') return;
      const ctx: SandboxContext = { renderer, deps };

      app.get('/sandbox', CONSOLE_ROUTE, async (request, reply) => mainPage(ctx, request, reply, {}));

      app.post('/sandbox/checkout', CONSOLE_ROUTE, async (request, reply) => {
        const form = formOf(request);
        const fields: CheckoutFields = {
          ...form.texts('offer', 'email', 'name', 'quantity', 'coupon_code'),
          payment_outcome: form.get('payment_outcome') ?? 'succeeded',
          order_bumps: form.all('order_bumps').filter((id) => id !== ''),
        };
        const principal = sessionOf(request).principal;
        const outcome = await attempt(() => runCheckout(deps.engine, deps.database, principal, checkoutDocument(fields)));
        if ('refused' in outcome) return mainPage(ctx, request, reply, { checkout: fields, checkoutRefusal: outcome.refused });
        const result = outcome.ok;
        return mainPage(ctx, request, reply, {
          checkout: fields,
          checkoutResult: await checkoutResult(ctx, request, result),
          notice: result.declined
            ? `The card was declined, as asked: no purchase was made, and the failed payment is recorded (transaction ${result.transactionIds.join(', ')}).`
            : `Checkout done: purchase ${result.purchaseIds.join(', ')}${result.orderId === null ? '' : `, order ${result.orderId}`}.`,
        });
      });

      app.post('/sandbox/clock', CONSOLE_ROUTE, async (request, reply) => {
        const form = formOf(request);
        const fields = { advance_by: form.get('advance_by')?.trim() ?? '', advance_to: form.get('advance_to')?.trim() ?? '' };
        const principal = sessionOf(request).principal;
        const outcome = await attempt(async () => {
          await requireWholeAccount(deps.database, principal, 'Advancing the account clock');
          // The route's own reading of {"data":{"type":"clocks","attributes":{...}}}: the same checks, the same messages.
          const target = readAdvanceDocument({ data: { type: 'clocks', attributes: givenAttributes(fields) } });
          return advanceAccountClock(deps.engine, deps.database, principal, target, { realNow: deps.now, leaseMs: leaseMs(deps.config.webhookTimeoutMs) });
        });
        if ('refused' in outcome) return mainPage(ctx, request, reply, { clock: fields, clockRefusal: outcome.refused });
        const moved = outcome.ok;
        return mainPage(ctx, request, reply, {
          advanced: await fellDue(ctx, request, moved),
          notice: `The clock moved ${readableSpan(moved.now.getTime() - moved.from.getTime())} forward, from ${readableTime(moved.from)} to ${readableTime(moved.now)}.`,
        });
      });

      snapshotRoutes(app, ctx);
      faultRoutes(app, ctx);
      mailboxRoutes(app, ctx);
    },
  };
}

/** The request document of POST /v1/test_helpers/checkouts for the form's fields. */
function checkoutDocument(fields: CheckoutFields) {
  return {
    data: {
      type: 'checkouts',
      attributes: givenAttributes({
        email: fields.email.trim(),
        name: fields.name.trim(),
        coupon_code: fields.coupon_code.trim(),
        quantity: numberField(fields.quantity),
        payment_outcome: fields.payment_outcome,
      }),
      relationships: {
        ...(fields.offer ? { offer: { data: { type: 'offers', id: fields.offer } } } : {}),
        ...(fields.order_bumps.length > 0 ? { order_bumps: { data: fields.order_bumps.map((id) => ({ type: 'offers', id })) } } : {}),
      },
    },
  };
}

async function mainPage(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply, state: MainPageState): Promise<FastifyReply> {
  const { deps, renderer } = ctx;
  const session = sessionOf(request);
  const siteId = await renderer.siteOf(request);
  const offers = siteId === null ? [] : (await deps.engine.list(deps.engine.registry.get('offers'), `filter[site_id]=${siteId}&sort=title&page[size]=100`, session.principal)).data;
  const clock = await readAccountClock(deps.database, session.user.accountId, deps.now());
  // Moving the clock is account-wide (src/sandbox/account-wide.ts): its forms only for those who may.
  const mayMoveClock = await reachesWholeAccount(deps.database, session.principal);
  const refusal = state.checkoutRefusal ?? state.clockRefusal;
  const body = html`${state.checkoutResult ?? ''}${state.advanced ?? ''}
${checkoutSection(request, siteId, offers, state.checkout ?? EMPTY_CHECKOUT)}
<section aria-labelledby="clock-heading">
  <h2 id="clock-heading">Account clock</h2>
  <p class="hint">The clock of the whole account (every site). It only moves forward; moving it charges the renewals and payment plan installments that fall due in between, each at its due time, and sends webhook retries that fall due.</p>
  <dl class="facts">
    <dt>Account time</dt><dd><time datetime="${clock.now.toISOString()}">${readableTime(clock.now)}</time></dd>
    <dt>Real time</dt><dd><time datetime="${clock.realTime.toISOString()}">${readableTime(clock.realTime)}</time></dd>
    <dt>Ahead by</dt><dd>${clock.offsetMs === 0 ? 'nothing: the clock reads real time' : `${readableSpan(clock.offsetMs)} (${(clock.offsetMs / 1000).toLocaleString('en-US')} seconds)`}</dd>
  </dl>
  ${mayMoveClock ? clockForms(request, siteId, state) : html`<p id="clock-not-allowed">Moving the clock acts on every site of the account, so it needs the owner or a user given every site; you reach ${session.principal.siteIds.length === 0 ? 'no site' : `only site ${session.principal.siteIds.join(', ')}`}.</p>`}
</section>`;
  return sendSandboxPage(ctx, request, reply, {
    title: TITLE,
    section: SANDBOX_PATH,
    body,
    notice: state.notice,
    refusal: refusal,
  });
}

/** The clock's advance forms. */
function clockForms(request: FastifyRequest, siteId: number | null, state: MainPageState): Html {
  return html`<form method="post" action="${withSite(`${SANDBOX_PATH}/clock`, siteId)}" class="row">
    ${csrfField(request)}
    <label for="advance-by">Advance by (ISO 8601 duration)
      <input id="advance-by" name="advance_by" value="${state.clock?.advance_by ?? ''}" placeholder="P1M" aria-describedby="advance-by-hint" autocomplete="off"></label>
    <button type="submit">Advance by</button>
  </form>
  <p class="hint" id="advance-by-hint">For example PT2H (two hours), P32D, P2W, P1M (a calendar month), P1Y2M3DT4H.</p>
  <form method="post" action="${withSite(`${SANDBOX_PATH}/clock`, siteId)}" class="row">
    ${csrfField(request)}
    <label for="advance-to">Advance to (a time, UTC unless it says otherwise)
      <input id="advance-to" name="advance_to" value="${state.clock?.advance_to ?? ''}" placeholder="2027-01-01T00:00:00Z" autocomplete="off"></label>
    <button type="submit">Advance to</button>
  </form>
  <form method="post" action="${withSite(`${SANDBOX_PATH}/clock`, siteId)}" class="row quick-advance" aria-label="Advance the clock by a set amount">
    ${csrfField(request)}
    <span>Quick:</span>
    <button type="submit" class="secondary" name="advance_by" value="PT1H">+1 hour</button>
    <button type="submit" class="secondary" name="advance_by" value="P1D">+1 day</button>
    <button type="submit" class="secondary" name="advance_by" value="P1M">+1 month</button>
    <button type="submit" class="secondary" name="advance_by" value="P1Y">+1 year</button>
  </form>`;
}

const offerLabel = (offer: ResourceObject) => {
  const a = offer.attributes;
  if (a.payment_type === 'free') return `${String(a.title)}: free (id ${offer.id})`;
  const price = String(a.price_description ?? formatMoney(Number(a.price_in_cents), String(a.currency)));
  return `${String(a.title)}: ${price} (${String(a.payment_type).replace('_', ' ')}, ${String(a.currency)}; id ${offer.id})`;
};

function checkoutSection(request: FastifyRequest, siteId: number | null, offers: readonly ResourceObject[], fields: CheckoutFields): Html {
  const intro = html`<h2 id="checkout-heading">Checkout</h2>
  <p class="hint">A person buys an offer as on its checkout page: the contact and customer, the purchases, the charges, the order, access, the welcome and receipt emails and the webhook events, by the same code as <code>POST /v1/test_helpers/checkouts</code>.</p>`;
  if (siteId === null) return html`<section aria-labelledby="checkout-heading">${intro}<p>You reach no site, so there is no offer to buy.</p></section>`;
  if (offers.length === 0) return html`<section aria-labelledby="checkout-heading">${intro}<p>This site has no offers yet.</p></section>`;
  const outcome = fields.payment_outcome === 'declined' ? 'declined' : 'succeeded';
  return html`<section aria-labelledby="checkout-heading">${intro}
  <form method="post" action="${withSite(`${SANDBOX_PATH}/checkout`, siteId)}" class="stack sandbox-form">
    ${csrfField(request)}
    <label for="checkout-offer">Offer</label>
    <select id="checkout-offer" name="offer" required>
      ${offers.map((o) => html`<option value="${o.id}"${o.id === fields.offer ? html` selected` : ''}>${offerLabel(o)}</option>`)}
    </select>
    <label for="checkout-email">Email</label>
    <input id="checkout-email" name="email" type="email" value="${fields.email}" required autocomplete="off" placeholder="ada@example.com">
    <label for="checkout-name">Name <span class="muted">(optional)</span></label>
    <input id="checkout-name" name="name" value="${fields.name}" autocomplete="off">
    <label for="checkout-quantity">Quantity of the offer</label>
    <input id="checkout-quantity" name="quantity" type="number" min="1" max="${MAX_QUANTITY}" value="${fields.quantity}">
    <label for="checkout-coupon">Coupon code <span class="muted">(optional)</span></label>
    <input id="checkout-coupon" name="coupon_code" value="${fields.coupon_code}" list="coupon-codes" autocomplete="off" aria-describedby="coupon-hint">
    <datalist id="coupon-codes">${Object.keys(COUPON_DISCOUNTS).map((code) => html`<option value="${code}"></option>`)}</datalist>
    <p class="hint" id="coupon-hint">The sandbox knows ${Object.entries(COUPON_DISCOUNTS).map(([code, share], i) => html`${i > 0 ? ', ' : ''}<code>${code}</code> (${Math.round(share * 100)}% off)`)}.</p>
    <fieldset>
      <legend>Payment</legend>
      <label class="check"><input type="radio" name="payment_outcome" value="succeeded"${outcome === 'succeeded' ? html` checked` : ''}> Approved</label>
      <label class="check"><input type="radio" name="payment_outcome" value="declined"${outcome === 'declined' ? html` checked` : ''}> Declined (the failed payment is recorded; no purchase)</label>
    </fieldset>
    <fieldset>
      <legend>Order bumps <span class="muted">(optional)</span></legend>
      <p class="hint">Other offers of this site in the offer's currency, bought with it.</p>
      ${offers.map(
        (o) => html`<label class="check"><input type="checkbox" name="order_bumps" value="${o.id}"${fields.order_bumps.includes(o.id) ? html` checked` : ''}> ${offerLabel(o)}</label>`,
      )}
    </fieldset>
    <div><button type="submit">Run the checkout</button></div>
  </form>
</section>`;
}

/** What a checkout made (or, declined, the failed payment it recorded), read back through the engine. */
async function checkoutResult(ctx: SandboxContext, request: FastifyRequest, result: CheckoutResult): Promise<Html> {
  const { engine } = ctx.deps;
  const principal = sessionOf(request).principal;
  const show = (type: string, id: number, query = '') => engine.show(engine.registry.get(type), String(id), query, principal);
  const transactions = await Promise.all(result.transactionIds.map((id) => show('transactions', id)));
  const customer = (await show('customers', result.customerId)).data;
  const c = customer.attributes;
  const transactionTable = html`<div class="table-scroll" tabindex="0" role="region" aria-label="${result.declined ? 'The failed payment' : 'Transactions'}"><table>
    <caption>${result.declined ? 'The failed payment' : 'Transactions'}</caption>
    <thead><tr><th scope="col">Transaction</th><th scope="col">Action</th><th scope="col">State</th><th scope="col" class="num">Amount</th><th scope="col">At (account time)</th></tr></thead>
    <tbody>${transactions.map((doc) => {
      const a = doc.data.attributes;
      return html`<tr><th scope="row">${doc.data.id}</th><td>${String(a.action)}</td><td class="${a.state === 'succeeded' ? 'status-ok' : 'status-failed'}">${String(a.state)}</td><td class="num">${String(a.formatted_amount)}</td><td>${readableTime(a.created_at)}</td></tr>`;
    })}</tbody>
  </table></div>`;
  const who = html`<p>Customer ${customer.id}: ${String(c.name ?? '')} &lt;${String(c.email ?? '')}&gt;.</p>`;
  if (result.declined) {
    return html`<section aria-labelledby="result-heading" class="result">
  <h2 id="result-heading">Declined</h2>
  <p>The card was declined. No purchase, access, order, email or webhook event was made; the API answers this checkout <code>402 payment_declined</code>. As the platform keeps failed payment attempts, the failed payment is recorded as a <code>failed</code> transaction, and the contact and customer are kept.</p>
  ${who}${transactionTable}
</section>`;
  }
  const purchases = await Promise.all(result.purchaseIds.map((id) => show('purchases', id, 'include=offer')));
  const order = result.orderId === null ? null : await show('orders', result.orderId, 'include=order_items');
  const o = order ? order.data.attributes : null;
  return html`<section aria-labelledby="result-heading" class="result">
  <h2 id="result-heading">The checkout's records</h2>
  ${who}
  <div class="table-scroll" tabindex="0" role="region" aria-label="Purchases"><table>
    <caption>Purchases</caption>
    <thead><tr><th scope="col">Purchase</th><th scope="col">Offer</th><th scope="col">Payment type</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Charged now</th><th scope="col">Coupon</th><th scope="col">API</th></tr></thead>
    <tbody>${purchases.map((doc) => {
      const a = doc.data.attributes;
      const offer = doc.included?.find((r) => r.type === 'offers');
      return html`<tr><th scope="row">${doc.data.id}</th><td>${String(offer?.attributes.title ?? '')}</td><td>${String(a.payment_type).replace('_', ' ')}</td><td class="num">${String(a.quantity)}</td><td class="num">${formatMoney(Number(a.amount_in_cents), String(a.currency))}</td><td>${String(a.coupon_code ?? '')}</td><td><code>${doc.links.self}</code></td></tr>`;
    })}</tbody>
  </table></div>
  ${transactions.length > 0 ? transactionTable : html`<p>Nothing was charged (free offers only), so there is no transaction and no order.</p>`}
  ${
    order && o
      ? html`<h3>Order ${String(o.order_number)}</h3>
  <p>Total ${String(o.formatted_total_price)}${Number(o.discount_amount_in_cents) > 0 ? ` (discount ${formatMoney(Number(o.discount_amount_in_cents), String(o.currency_code))})` : ''}, fulfilled ${readableTime(o.fulfilled_at)}. Items: ${(order.included ?? [])
          .filter((r) => r.type === 'order_items')
          .sort((x, y) => Number(x.id) - Number(y.id))
          .map((item, i) => {
            const ia = item.attributes;
            return `${i > 0 ? '; ' : ''}${String(ia.title)} × ${String(ia.quantity)}`;
          })
          .join('')}.</p>`
      : ''
  }
</section>`;
}

/** The payments the advance made (renewals and installments), in every site the session reaches. */
async function fellDue(ctx: SandboxContext, request: FastifyRequest, moved: AdvanceResult): Promise<Html> {
  const { engine } = ctx.deps;
  const session = sessionOf(request);
  const transactions = engine.registry.get('transactions');
  // The due work wrote each payment at its due time, after the clock's old time and up to its new one.
  const after = new Date(moved.from.getTime() + 1).toISOString();
  const until = moved.now.toISOString();
  const rows: Html[] = [];
  let total = 0;
  for (const site of await ctx.renderer.sites(session)) {
    const doc = await engine.list(
      transactions,
      `filter[site_id]=${site.id}&filter[action_in]=charge,subscription_charge&filter[start_date]=${encodeURIComponent(after)}&filter[end_date]=${encodeURIComponent(until)}&include=offer,customer&sort=created_at&page[size]=100`,
      session.principal,
    );
    total += doc.meta.total_count;
    const related = (record: ResourceObject, name: string) => {
      const ref = record.relationships?.[name]?.data;
      return ref && !Array.isArray(ref) ? doc.included?.find((r) => r.type === ref.type && r.id === ref.id)?.attributes : undefined;
    };
    for (const t of doc.data) {
      const a = t.attributes;
      const offer = related(t, 'offer');
      const customer = related(t, 'customer');
      rows.push(
        html`<tr><td>${site.title}</td><th scope="row">${t.id}</th><td>${String(a.action)}</td><td class="${a.state === 'succeeded' ? 'status-ok' : 'status-failed'}">${String(a.state)}</td><td class="num">${String(a.formatted_amount)}</td><td>${String(offer?.title ?? '')}</td><td>${String(customer?.email ?? '')}</td><td>${readableTime(a.created_at)}</td></tr>`,
      );
    }
  }
  if (total === 0) {
    return html`<section aria-labelledby="due-heading" class="result"><h2 id="due-heading">What fell due</h2><p>No renewal or installment fell due between ${readableTime(moved.from)} and ${readableTime(moved.now)}.</p></section>`;
  }
  return html`<section aria-labelledby="due-heading" class="result">
  <h2 id="due-heading">What fell due</h2>
  <p>${total} payment${total === 1 ? '' : 's'} (renewals and installments) between ${readableTime(moved.from)} and ${readableTime(moved.now)}${total > rows.length ? `; the first ${rows.length} are shown` : ''}.</p>
  <div class="table-scroll" tabindex="0" role="region" aria-label="Payments made by the advance"><table>
    <caption>Payments made by the advance</caption>
    <thead><tr><th scope="col">Site</th><th scope="col">Transaction</th><th scope="col">Action</th><th scope="col">State</th><th scope="col" class="num">Amount</th><th scope="col">Offer</th><th scope="col">Customer</th><th scope="col">Due at</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>
</section>`;
}
