// The console's pages, in the navigation's order. A page is one module: its routes and whether
// the signed-in user sees it (src/console/plugin.ts ConsolePage).
import type { ConsolePage, ConsoleRenderer } from '../plugin.js';
import { auditPage } from './audit.js';
import { dataPage } from './data.js';
import { eventsPage } from './events.js';
import { keysPage } from './keys.js';
import { overviewPage } from './overview.js';
import { requestsPage } from './requests.js';
import { sandboxPage } from './sandbox.js';
import { webhooksPage } from './webhooks.js';

export function consolePages(renderer: ConsoleRenderer): ConsolePage[] {
  return [
    overviewPage(renderer),
    keysPage(renderer),
    webhooksPage(renderer),
    eventsPage(renderer),
    sandboxPage(renderer),
    requestsPage(renderer),
    dataPage(renderer),
    auditPage(renderer),
  ];
}
