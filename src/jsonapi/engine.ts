// The JSON:API engine: parse → plan → execute → render, for any declared resource.
import type { Kysely } from 'kysely';
import { accountNow, noteTouchedSites, withoutSiteNote, type Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { DialectTraits } from '../db/dialect-traits.js';
import type { ReadSource } from '../db/replicas.js';
import { lockSiteWrites } from '../db/site-counters.js';
import { DocumentRenderer, resourcePath, type ResourceIdentifier, type ResourceObject } from './document.js';
import { badRequest, forbidden, invalidParameter, notFound } from './errors.js';
import { answerFollowsVersions, Executor, versionText, type LinkedRow } from './executor.js';
import type { CachedAnswer } from './list-caches.js';
import { entityTag } from './entity-tags.js';
import { CursorCodec } from './cursors.js';
import { cursorLinks, pageLinks, queryString, type CursorLinks, type PageLinks } from './links.js';
import { parseIdValue, planList, planShow, type ListPlan, type PlanOptions, type ReadPlan } from './planner.js';
import { parseQueryString, type ParsedQuery } from './query-parser.js';
import type { Registry } from './registry.js';
import { queryContext, RequestTime, visibleValues, type AnyEB, type ResourceDefinition, type WriteContext, type WriteDef, type WriteInput, type WriteServices, type WriteTarget } from './resource.js';
import { readRelationshipDocument, readResourceDocument } from './write-document.js';

export interface EngineOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
  traits: DialectTraits;
  registry: Registry;
  publicUrl: string;
  ignoreUnknownFilters: boolean;
  /** Bytes of whole answers each executor keeps (AnswerCache); 0: none. */
  answerCacheBytes?: number;
  now: () => Date;
  /** Signs paging cursors; the same in every process that serves the database. */
  cursorSigningKey: Buffer;
  /** Runs reads straight on the driver (DatabaseHandle.runSelect). */
  runSelect?: DatabaseHandle['runSelect'];
  /**
   * Where reads may go instead of the primary for a principal with `replicaReadsAfter` (a read
   * replica that has replayed that far, src/db/replicas.ts); undefined: the primary.
   */
  replicaReads?: (after: number) => ReadSource | undefined;
  /** Handed to writes' beforeTransaction steps (see WriteServices). */
  services: WriteServices;
}

/** What `transact` hands its operation besides the WriteContext (see there). */
export interface RecordAccess {
  find(type: string, rawId: string | number, pointer?: string): Promise<WriteTarget>;
  lockSites(siteIds: readonly number[]): Promise<void>;
}

export interface ListDocument {
  data: ResourceObject[];
  included?: ResourceObject[];
  links: PageLinks | CursorLinks;
  /** Cursor pages carry no page numbers: only the total. */
  meta: { total_pages: number; total_count: number; current_page: number } | { total_count: number };
}

export interface RelationshipDocument {
  data: ResourceIdentifier | ResourceIdentifier[] | null;
  links: { self: string; related?: string };
}

export interface ShowDocument {
  data: ResourceObject;
  included?: ResourceObject[];
  links: { self: string; current: string };
}

export class JsonApiEngine {
  readonly registry: Registry;
  private readonly executor: Executor;
  /** One executor per read replica, made on its first use (each keeps its compiled shapes). */
  private readonly replicaExecutors = new Map<object, Executor>();
  private readonly renderer: DocumentRenderer;
  private readonly cursors: CursorCodec;

  constructor(private readonly options: EngineOptions) {
    this.registry = options.registry;
    this.cursors = new CursorCodec(options.cursorSigningKey);
    this.executor = new Executor(options.db, options.traits, options.runSelect, options.answerCacheBytes);
    this.renderer = new DocumentRenderer(options.publicUrl, options.traits);
  }

  /**
   * The executor of a principal's reads: a read replica's when the request only reads and a
   * replica has the account's last write, the primary's otherwise (and for every write).
   */
  private readerFor(principal: Principal): Executor {
    const after = principal.replicaReadsAfter;
    const source = after === undefined ? undefined : this.options.replicaReads?.(after);
    if (!source) return this.executor;
    let executor = this.replicaExecutors.get(source);
    if (!executor) {
      executor = new Executor(source.db, this.options.traits, source.runSelect, this.options.answerCacheBytes);
      this.replicaExecutors.set(source, executor);
    }
    return executor;
  }

  /** How often queries were compiled and how often a compiled shape was reused (query-shapes.ts). */
  get queryShapeStats(): Readonly<{ reused: number; compiled: number; unpredictable: number }> {
    return { ...this.executor.shapes.stats };
  }

  /** `GET /v1/<type>`; `rawQuery` is the request's query string without `?`. */
  async list(resource: ResourceDefinition, rawQuery: string, principal: Principal): Promise<ListDocument> {
    const query = parseQueryString(rawQuery);
    const plan = planList(resource, query, this.planOptions(principal));
    noteRead(principal, plan);
    return this.listDocument(this.readerFor(principal), resource, query, plan, this.listUrl(resource));
  }

  /**
   * `GET /v1/<type>` as sent (list's document, serialized, with its entity tag): from the answer
   * cache when the same principal asked the same before and nothing it read has changed since.
   */
  async listAnswer(resource: ResourceDefinition, rawQuery: string, principal: Principal): Promise<CachedAnswer> {
    const time = new RequestTime(this.now(principal));
    const query = parseQueryString(rawQuery);
    const plan = planList(resource, query, this.planOptions(principal, time));
    noteRead(principal, plan);
    const executor = this.readerFor(principal);
    return this.answer(executor, plan, principal, time, `list\u0000${resource.type}\u0000${rawQuery}`, () =>
      this.listDocument(executor, resource, query, plan, this.listUrl(resource)),
    );
  }

  /** `GET /v1/<type>/<id>` as sent, as listAnswer is for lists. */
  async showAnswer(resource: ResourceDefinition, rawId: string, rawQuery: string, principal: Principal, path?: string): Promise<CachedAnswer> {
    const time = new RequestTime(this.now(principal));
    const query = parseQueryString(rawQuery);
    const plan = planShow(resource, query, this.planOptions(principal, time));
    noteRead(principal, plan);
    const executor = this.readerFor(principal);
    return this.answer(executor, plan, principal, time, `show\u0000${resource.type}\u0000${rawId}\u0000${rawQuery}\u0000${path ?? ''}`, () =>
      this.showDocument(executor, resource, rawId, query, plan, path),
    );
  }

  /**
   * The answer cache's rule (the one the count cache follows, list-caches.ts): an answer is kept
   * under the data version of its sites read before it was, and used only while that is still
   * the version, so no write through any process can leave it served. Kept only when everything
   * it read moves that version (answerFollowsVersions) and nothing read the time. The version
   * comes from the token's own statement on the primary (Principal.siteVersions), or from the
   * replica the request reads from, never one for the other: a replica behind the primary's
   * version would otherwise have its older answer kept under the newer version.
   */
  private async answer(
    executor: Executor,
    plan: ReadPlan,
    principal: Principal,
    time: RequestTime,
    request: string,
    read: () => Promise<object>,
  ): Promise<CachedAnswer> {
    let version: string | undefined;
    if (executor.answers.enabled && plan.siteIds.length > 0 && answerFollowsVersions(plan.resource, plan.includes, this.registry)) {
      version =
        executor === this.executor && principal.siteVersions ? versionText(plan.siteIds, principal.siteVersions) : await executor.dataVersion(plan.siteIds);
    }
    // Who asks matters as much as what: the account, and the permissions that decide which
    // records and types exist for the key (the sites are in the version).
    const key = version === undefined ? undefined : `${request}\u0000${principal.accountId}\u0000${[...principal.permissions].join(' ')}\u0000${plan.upstreamOnly}`;
    const cached = key === undefined ? undefined : executor.answers.get(key, version!);
    if (cached) return cached;
    const body = Buffer.from(JSON.stringify(await read()));
    const answer = { body, etag: entityTag(body) };
    if (key !== undefined && !time.read) executor.answers.set(key, version!, answer);
    return answer;
  }

  private listUrl(resource: ResourceDefinition): string {
    return `${this.options.publicUrl}/v1/${resourcePath(resource)}`;
  }

  private async listDocument(executor: Executor, resource: ResourceDefinition, query: ParsedQuery, plan: ListPlan, base: string): Promise<ListDocument> {
    const result = await executor.list(plan);
    const fields = plan.fields.get(resource.type);
    const data = result.rows.map((row) => this.renderer.resourceObject(resource, row, fields, plan.upstreamOnly));
    let doc: ListDocument;
    if (plan.page.cursor && result.positions && result.more) {
      const scope = { type: resource.type, sort: `${plan.sort.descending ? '-' : ''}${plan.sort.name}`, siteIds: plan.siteIds };
      const first = result.positions[0];
      const last = result.positions[result.positions.length - 1];
      const cursors = {
        before: result.more.before && first ? this.cursors.encode(scope, first) : null,
        after: result.more.after && last ? this.cursors.encode(scope, last) : null,
      };
      doc = { data, links: cursorLinks(base, query, plan.page.size, cursors), meta: { total_count: result.totalCount } };
    } else {
      const totalPages = Math.ceil(result.totalCount / plan.page.size);
      doc = {
        data,
        links: pageLinks(base, query, plan.page, totalPages),
        meta: { total_pages: totalPages, total_count: result.totalCount, current_page: plan.page.number },
      };
    }
    if (plan.includes.length > 0) doc.included = this.renderer.includedObjects(result.included, plan.fields, plan.upstreamOnly);
    return doc;
  }

  /**
   * `GET /v1/<type>/<id>`. Records outside the principal's tenancy answer 404 exactly like
   * records that do not exist. `path` is the URL path the document was asked for, for `current`.
   */
  async show(resource: ResourceDefinition, rawId: string, rawQuery: string, principal: Principal, path?: string): Promise<ShowDocument> {
    const query = parseQueryString(rawQuery);
    const plan = planShow(resource, query, this.planOptions(principal));
    noteRead(principal, plan);
    return this.showDocument(this.readerFor(principal), resource, rawId, query, plan, path);
  }

  private async showDocument(executor: Executor, resource: ResourceDefinition, rawId: string, query: ParsedQuery, plan: ReadPlan, path?: string): Promise<ShowDocument> {
    const id = parseIdValue(rawId);
    const result = id === undefined ? undefined : await executor.show(plan, id);
    const row = result?.rows[0];
    if (!result || !row) throw notFound(`No ${resource.type} record with id ${JSON.stringify(rawId)}`);
    const data = this.renderer.resourceObject(resource, row, plan.fields.get(resource.type), plan.upstreamOnly);
    const self = path ? `${this.options.publicUrl}${path}` : this.renderer.resourceUrl(resource, data.id);
    const doc: ShowDocument = { data, links: { self, current: `${self}${queryString(query.pairs)}` } };
    if (plan.includes.length > 0) doc.included = this.renderer.includedObjects(result.included, plan.fields, plan.upstreamOnly);
    return doc;
  }

  /**
   * `GET /v1/<type>/<id>/<name>`: the related records of a to-many relationship, as a list with
   * every list parameter (paging, sort, fields, include, filters).
   */
  async related(resource: ResourceDefinition, rawId: string, name: string, rawQuery: string, principal: Principal): Promise<ListDocument> {
    const relationship = resource.relationships[name];
    if (!relationship) throw notFound(`${resource.type} has no relationship ${name}`);
    const executor = this.readerFor(principal);
    const parentPlan = planShow(resource, parseQueryString(''), this.planOptions(principal));
    noteRead(principal, parentPlan);
    const id = parseIdValue(rawId);
    const target = this.registry.get(relationship.type);
    const query = parseQueryString(rawQuery);
    const base = `${this.renderer.resourceUrl(resource, String(id))}/${name}`;
    if (relationship.kind === 'to-many') {
      // The target holds the parent's id: the list query itself selects by it, so a parent with
      // very many related records (a hook's deliveries) costs one page, not a list of every id.
      const parent = id === undefined ? undefined : await executor.show(parentPlan, id);
      if (!parent?.rows[0] || id === undefined) throw notFound(`No ${resource.type} record with id ${JSON.stringify(rawId)}`);
      const ctx = queryContext({ traits: this.options.traits, now: this.now(principal) }, target.table);
      const key = `${target.table}.${relationship.foreignKey}`;
      const where = relationship.where;
      const within = (eb: AnyEB) => (where ? eb.and([eb(key, '=', id), where(eb, ctx)]) : eb(key, '=', id));
      const plan = planList(target, query, this.planOptions(principal, undefined, { within }));
      return this.listDocument(executor, target, query, plan, base);
    }
    const ids = id === undefined ? undefined : await executor.relationshipIds(parentPlan, id, name);
    if (!ids) throw notFound(`No ${resource.type} record with id ${JSON.stringify(rawId)}`);
    const plan = planList(target, query, this.planOptions(principal, undefined, { onlyIds: ids.map(Number) }));
    return this.listDocument(executor, target, query, plan, base);
  }

  /** `GET /v1/<type>/<id>/relationships/<name>`: the linkage of one relationship. */
  async relationship(
    resource: ResourceDefinition,
    rawId: string,
    name: string,
    rawQuery: string,
    principal: Principal,
  ): Promise<RelationshipDocument> {
    const query = parseQueryString(rawQuery);
    const first = query.pairs[0];
    if (first) throw invalidParameter(first[0], `${first[0]} does not apply to a relationship endpoint`);
    const relationship = resource.relationships[name];
    if (!relationship) throw notFound(`${resource.type} has no relationship ${name}`);
    const plan = planShow(resource, query, this.planOptions(principal));
    noteRead(principal, plan);
    const target = this.registry.get(relationship.type);
    if (target.readPermission !== null && !principal.permissions.has(target.readPermission)) {
      throw forbidden(`Reading ${target.type} needs the ${target.readPermission} permission, which this API key does not have`);
    }
    const id = parseIdValue(rawId);
    const ids = id === undefined ? undefined : await this.readerFor(principal).relationshipIds(plan, id, name);
    if (!ids) throw notFound(`No ${resource.type} record with id ${JSON.stringify(rawId)}`);
    const self = `${this.renderer.resourceUrl(resource, String(id))}/relationships/${name}`;
    const toOne = relationship.kind === 'to-one' || relationship.kind === 'has-one';
    const identifiers = ids.map((target) => ({ type: relationship.type, id: target }));
    // `related` is the related-records route, a sitebiz extension: not in UPSTREAM_STRICT answers.
    const toMany = relationship.kind === 'to-many' || relationship.kind === 'to-many-through';
    const links = toMany && !plan.upstreamOnly ? { self, related: `${this.renderer.resourceUrl(resource, String(id))}/${name}` } : { self };
    return { data: toOne ? (identifiers[0] ?? null) : identifiers, links };
  }

  /**
   * One record's resource object, as `show` renders it without a fieldset, from a row as the
   * executor reads it (webhook payloads: src/webhooks/payloads.ts).
   */
  renderRecord(resource: ResourceDefinition, row: LinkedRow): ResourceObject {
    return this.renderer.resourceObject(resource, row, undefined);
  }

  /** `POST /v1/<type>`: the new record, as `show` renders it. */
  async create(resource: ResourceDefinition, body: unknown, principal: Principal): Promise<ShowDocument> {
    const write = this.writeOf(resource, principal, 'create');
    const document = readResourceDocument(resource, body, write.rules, { create: true });
    await write.beforeTransaction?.({ principal, now: this.now(principal), services: this.options.services }, document);
    const id = await this.inTransaction(principal, async (ctx) => {
      const found = await this.findTargets(ctx.handle.db, resource, document.relationships, principal);
      await this.lockSites(ctx, Object.values(found).map((target) => target.siteId));
      // Found again under the lock: a target deleted meanwhile is a 404, not a broken reference.
      const targets = await this.findTargets(ctx.handle.db, resource, document.relationships, principal);
      return write.create!(ctx, { ...document, targets });
    });
    const created = typeof id === 'number' ? { id, meta: undefined } : id;
    // The record's site is noted already (its targets were found); the show's scope is wider.
    const doc = await this.show(resource, String(created.id), '', withoutSiteNote(principal));
    // data.meta of a write's answer (a hook's signing secret) is a sitebiz extension: none in UPSTREAM_STRICT.
    if (created.meta && !principal.upstreamOnly) doc.data.meta = created.meta;
    return doc;
  }

  /** `PATCH /v1/<type>/<id>`: the updated record, as `show` renders it. */
  async update(resource: ResourceDefinition, rawId: string, body: unknown, principal: Principal): Promise<ShowDocument> {
    const write = this.writeOf(resource, principal, 'update');
    const document = readResourceDocument(resource, body, write.updateRules ?? write.rules, { create: false, id: rawId });
    await this.inTransaction(principal, async (ctx) => {
      const record = await this.findLockedRecord(ctx, resource, rawId, principal);
      const targets = await this.findTargets(ctx.handle.db, resource, document.relationships, principal);
      await write.update!(ctx, record, { ...document, targets });
    });
    return this.show(resource, rawId, '', withoutSiteNote(principal));
  }

  /** `DELETE /v1/<type>/<id>`: answers `{"data": {}}` as upstream does. */
  async delete(resource: ResourceDefinition, rawId: string, principal: Principal): Promise<{ data: Record<string, never> }> {
    const write = this.writeOf(resource, principal, 'delete');
    await this.inTransaction(principal, async (ctx) => {
      const record = await this.findLockedRecord(ctx, resource, rawId, principal);
      await write.delete!(ctx, record);
    });
    return { data: {} };
  }

  /**
   * `POST|PATCH|DELETE /v1/<type>/<id>/relationships/<name>`: add, replace or remove members of
   * a to-many relationship; answers with its linkage afterwards.
   */
  async writeRelationship(
    resource: ResourceDefinition,
    rawId: string,
    name: string,
    operation: 'add' | 'replace' | 'remove',
    body: unknown,
    principal: Principal,
  ): Promise<RelationshipDocument> {
    const relationship = resource.relationships[name];
    const write = relationship?.write;
    const run = write?.[operation];
    if (!relationship || !write || !run) throw new Error(`${resource.type}.${name} does not declare ${operation}`);
    const target = this.registry.get(relationship.type);
    requirePermissions(principal, [write.permission, resource.readPermission, target.readPermission], `Changing ${resource.type} ${name}`);
    const { ids, meta } = readRelationshipDocument(body, relationship.type);
    await this.inTransaction(principal, async (ctx) => {
      const record = await this.findLockedRecord(ctx, resource, rawId, principal);
      const targets: WriteTarget[] = [];
      for (const [i, id] of ids.entries()) {
        const found = await this.findAccessible(ctx.handle.db, target, id, principal);
        // A target of another site of the account is as unknown to this record as a missing one.
        if (!found || found.siteId !== record.siteId) {
          throw notFound(`No ${target.type} record with id "${id}" in the site of this ${resource.type} record`, { pointer: `/data/${i}/id` });
        }
        targets.push(found);
      }
      await run(ctx, record, targets, meta);
    });
    return this.relationship(resource, rawId, name, '', withoutSiteNote(principal));
  }

  /** `POST /v1/<type>/<id>/<action>`: runs a declared action; answers with a record. */
  async action(
    resource: ResourceDefinition,
    rawId: string,
    name: string,
    body: unknown,
    principal: Principal,
  ): Promise<{ status: 200 | 201 | 202; document: ShowDocument }> {
    const action = resource.actions[name];
    if (!action) throw new Error(`${resource.type} does not declare action ${name}`);
    const bodyResource = action.body ? this.registry.get(action.body.type) : undefined;
    requirePermissions(principal, [action.permission, resource.readPermission, bodyResource?.readPermission ?? null], `${name} on ${resource.type}`);
    const document = action.body && bodyResource ? readResourceDocument(bodyResource, body, action.body.rules, { create: true }) : undefined;
    // Nothing, null or {} count as no body; anything else (an array too) is refused.
    if (!action.body && body !== undefined && body !== null && !(typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0)) {
      throw badRequest('unexpected_body', `${name} takes no request body`, { pointer: '' });
    }
    const answer = await this.inTransaction(principal, async (ctx) => {
      const record = await this.findLockedRecord(ctx, resource, rawId, principal);
      const targets = document && bodyResource ? await this.findTargets(ctx.handle.db, bodyResource, document.relationships, principal) : {};
      const result = await action.run(ctx, record, document ? { ...document, targets } : undefined);
      return result ?? { type: resource.type, id: record.id, created: false };
    });
    const answerResource = this.registry.get(answer.type);
    const shown = await this.show(answerResource, String(answer.id), '', withoutSiteNote(principal));
    if (answer.meta && !principal.upstreamOnly) shown.data.meta = answer.meta;
    return { status: answer.created ? 201 : action.accepted ? 202 : 200, document: shown };
  }

  private writeOf(resource: ResourceDefinition, principal: Principal, operation: 'create' | 'update' | 'delete'): WriteDef {
    const write = resource.write;
    if (!write?.[operation]) throw new Error(`${resource.type} does not declare ${operation}`);
    // The response shows the record, so writing needs the read permission as well; checked before
    // anything is written.
    for (const permission of [write.permission, resource.readPermission]) {
      if (permission !== null && !principal.permissions.has(permission)) {
        throw forbidden(`Writing ${resource.type} needs the ${write.permission} and ${resource.readPermission} permissions; this API key lacks ${permission}`);
      }
    }
    return write;
  }

  /**
   * "Now" for the principal's requests: real time moved by its account's sandbox clock. Every
   * time a request reads or writes (timestamps, `*_in_last` filters) comes from here.
   */
  now(principal: Principal): Date {
    return accountNow(this.options.now(), principal);
  }

  /**
   * Runs a domain operation that is not a write of one declared resource (the sandbox's
   * checkouts, refunds and renewals) in one transaction, with the WriteContext writes get.
   * `records.find` finds a record of a declared type that the principal may reach, with its site
   * locked for the write, or answers 404 (pointing at `pointer` when given), as a write's targets
   * are found; `records.lockSites` locks sites the operation changes without naming a record.
   */
  async transact<T>(principal: Principal, fn: (ctx: WriteContext, records: RecordAccess) => Promise<T>): Promise<T> {
    return this.inTransaction(principal, (ctx) =>
      fn(ctx, {
        find: async (type, rawId, pointer) => {
          const resource = this.registry.get(type);
          const seen = await this.findAccessible(ctx.handle.db, resource, typeof rawId === 'number' ? rawId : (parseIdValue(rawId) ?? -1), principal);
          if (!seen) throw notFound(`No ${type} record with id ${JSON.stringify(String(rawId))}`, pointer === undefined ? undefined : { pointer });
          if (ctx.handle.traits.writeTransactionsSerialized) return seen;
          await this.lockSites(ctx, [seen.siteId]);
          const found = await this.findAccessible(ctx.handle.db, resource, seen.id, principal);
          if (!found) throw notFound(`No ${type} record with id ${JSON.stringify(String(rawId))}`, pointer === undefined ? undefined : { pointer });
          return found;
        },
        lockSites: (siteIds) => this.lockSites(ctx, siteIds),
      }),
    );
  }

  /**
   * Runs `fn` in one transaction: a request that fails changes nothing. What it asked to run
   * after the commit (waking the webhook worker) runs once the commit is done.
   */
  private async inTransaction<T>(principal: Principal, fn: (ctx: WriteContext) => Promise<T>): Promise<T> {
    const committed: Array<() => void> = [];
    const result = await this.options.db.transaction().execute((trx) => {
      // The engine's builder is untyped; the domain reads the typed schema. Its statements reach the
      // observers through the shared Kysely's driver.
      const handle: DatabaseHandle = { db: trx as unknown as DatabaseHandle['db'], traits: this.options.traits, description: 'transaction', close: async () => {} };
      // Reads inside the transaction go through Kysely on it: the compiled-statement path of the
      // shared executor would run on another connection (PostgreSQL) and miss the uncommitted rows.
      let reader: Executor | undefined;
      // Webhook payloads show every member, whoever's request made the event.
      const readAll: Principal = { ...principal, permissions: this.readPermissions, upstreamOnly: false };
      return fn({
        handle,
        principal,
        now: this.now(principal),
        render: async (type, id) => {
          const resource = this.registry.get(type);
          reader ??= new Executor(trx, this.options.traits);
          const found = await reader.show(planShow(resource, parseQueryString(''), this.planOptions(readAll)), id);
          const row = found?.rows[0];
          return row ? this.renderer.resourceObject(resource, row, undefined) : undefined;
        },
        afterCommit: (run) => committed.push(run),
      });
    });
    for (const run of committed) run();
    return result;
  }

  /** Every read permission of the registry (what the writing process may read for itself). */
  private get readPermissions(): ReadonlySet<string> {
    this.everyReadPermission ??= new Set(this.registry.all().flatMap((r) => (r.readPermission === null ? [] : [r.readPermission])));
    return this.everyReadPermission;
  }
  private everyReadPermission: ReadonlySet<string> | undefined;

  /**
   * Takes the write lock of each site a write changes, in id order, before the write reads what it
   * will change (see "Locking" in src/db/site-counters.ts): concurrent writes to one site then
   * behave as the same requests one after another would, and never deadlock on each other.
   */
  private async lockSites(ctx: WriteContext, siteIds: readonly number[]): Promise<void> {
    noteTouchedSites(ctx.principal, siteIds);
    for (const siteId of [...new Set(siteIds)].sort((a, b) => a - b)) await lockSiteWrites(ctx.handle.db, ctx.handle.traits, siteId);
  }

  /**
   * The record `rawId` names, with its site locked for the write. It is found again under the
   * lock, so that a record another request deleted while this one waited is a 404, as it would be
   * had the requests come one after the other.
   */
  private async findLockedRecord(ctx: WriteContext, resource: ResourceDefinition, rawId: string, principal: Principal): Promise<WriteTarget> {
    const seen = await this.findRecord(ctx.handle.db, resource, rawId, principal);
    // Where the transaction holds the database's write lock from its start, nothing changed since.
    if (ctx.handle.traits.writeTransactionsSerialized) return seen;
    await this.lockSites(ctx, [seen.siteId]);
    return this.findRecord(ctx.handle.db, resource, rawId, principal);
  }

  /** The record `rawId` names, if the principal may reach it; otherwise 404 like a missing one. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private async findRecord(db: Kysely<any>, resource: ResourceDefinition, rawId: string, principal: Principal): Promise<WriteTarget> {
    const id = parseIdValue(rawId);
    const found = id === undefined ? undefined : await this.findAccessible(db, resource, id, principal);
    if (!found) throw notFound(`No ${resource.type} record with id ${JSON.stringify(rawId)}`);
    return found;
  }

  /** Every named to-one target, found in the principal's sites; a target it cannot reach is 404. */
  private async findTargets(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    db: Kysely<any>,
    resource: ResourceDefinition,
    relationships: WriteInput['relationships'],
    principal: Principal,
  ): Promise<Record<string, WriteTarget>> {
    const targets: Record<string, WriteTarget> = {};
    for (const [name, ids] of Object.entries(relationships)) {
      if (typeof ids !== 'number') continue;
      const target = this.registry.get(resource.relationships[name]!.type);
      const found = await this.findAccessible(db, target, ids, principal);
      if (!found) {
        throw notFound(`No ${target.type} record with id "${ids}"`, { pointer: `/data/relationships/${name}/data/id` });
      }
      targets[name] = found;
    }
    return targets;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private async findAccessible(db: Kysely<any>, resource: ResourceDefinition, id: number, principal: Principal): Promise<WriteTarget | undefined> {
    const tenancy = resource.tenancy;
    const siteColumn = tenancy.kind === 'site' ? tenancy.column : tenancy.siteColumn;
    if (siteColumn === undefined) throw new Error(`${resource.type} records belong to no site; they cannot be written or named by a write`);
    if (principal.siteIds.length === 0) return undefined;
    let query = db
      .selectFrom(resource.table)
      .select(`${resource.table}.${siteColumn} as site_id`)
      .where(`${resource.table}.id`, '=', id)
      .where(`${resource.table}.${siteColumn}`, 'in', [...principal.siteIds]);
    if (tenancy.kind === 'account') query = query.where(`${resource.table}.${tenancy.column}`, '=', principal.accountId);
    const visible = visibleValues(resource, principal.permissions);
    if (visible) {
      if (visible.length === 0) return undefined;
      query = query.where(`${resource.table}.${resource.recordPermissions!.column}`, 'in', visible);
    }
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    noteTouchedSites(principal, [Number(row.site_id)]);
    return { id, siteId: Number(row.site_id) };
  }

  /** `time`: the request's "now", when whether it is read matters (the answer cache). */
  private planOptions(principal: Principal, time = new RequestTime(this.now(principal)), scope?: Pick<PlanOptions, 'within' | 'onlyIds'>): PlanOptions {
    return {
      registry: this.registry,
      traits: this.options.traits,
      get now() {
        return time.now;
      },
      principal,
      ignoreUnknownFilters: this.options.ignoreUnknownFilters,
      cursors: this.cursors,
      ...scope,
    };
  }
}

/** 403 unless the key has every permission named (null: none needed). */
function requirePermissions(principal: Principal, permissions: Array<string | null>, what: string): void {
  const needed = permissions.filter((p): p is string => p !== null);
  const missing = needed.find((p) => !principal.permissions.has(p));
  if (missing) throw forbidden(`${what} needs the ${[...new Set(needed)].join(' and ')} permissions; this API key lacks ${missing}`);
}

/**
 * Notes the sites a read reached (Principal.touchedSites): its site scope, when its records or
 * included records belong to sites. A single record's scope is every site of the user unless
 * filter[site_id] narrows it: the note says where the answer could come from.
 */
function noteRead(principal: Principal, plan: ReadPlan): void {
  const tenancy = plan.resource.tenancy;
  if (tenancy.kind === 'site' || tenancy.siteColumn !== undefined || plan.includes.length > 0) noteTouchedSites(principal, plan.siteIds);
}
