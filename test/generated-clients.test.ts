// Clients generated from the served document work (issue 22): the two generators TypeScript users
// reach for, openapi-typescript (types for openapi-fetch) and @hey-api/openapi-ts (an SDK on its
// own fetch client), are pointed at GET /v1/openapi.json of a listening server, as a user would
// point them; what they write is compiled with the project's TypeScript under `strict`, together
// with a usage file per client (test/generated-clients/*.usage.ts); then each usage runs against a
// server on every database: a list with a filter and a page size, a show with include, a create,
// and a create refused with 422, its error document read through the generated types. The
// document's named schemas (components.schemas: contacts_attributes, errors, ...) come out as
// named types, which the usage files use by name as a user's code would.
//
// Generating and compiling is the slow part (seconds), so it happens once per file, from a SQLite
// app; the servers the usages then talk to are one per database. Everything runs offline: both
// generators read the document over loopback HTTP and nothing else.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createClient as heyApiGenerate } from '@hey-api/openapi-ts';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { builders } from './support/builders.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from './support/harness.js';
import type { Usage, UsageInput, UsageResult } from './generated-clients/contract.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGES = fileURLToPath(new URL('./generated-clients/', import.meta.url));

/** The clients under test: the usage file of each, and what its generator writes. */
const CLIENTS = {
  'openapi-fetch': { usage: 'openapi-fetch.usage.ts', generated: 'openapi-typescript' },
  'hey-api': { usage: 'hey-api.usage.ts', generated: 'hey-api' },
} as const;
type ClientName = keyof typeof CLIENTS;

/**
 * Schemas the document declares once under components.schemas (the upstream's names), that the
 * contacts operations refer to: a generated client has a type of each name, not an inline literal
 * per operation, and the usage files use them by name.
 */
const NAMED_SCHEMAS = [
  'contacts_attributes',
  'contacts_resource',
  'contacts_index_response',
  'contacts_show_response',
  'contacts_create_request',
  'errors',
  'resource_identifier',
];

/** contacts_index_response → ContactsIndexResponse, as @hey-api/openapi-ts names its types. */
const pascalCase = (name: string) => name.replace(/(?:^|_)([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * The text of the block that opens with the line `opening` (its indentation included) and ends
 * at the first line after it that closes at that same indentation: a member of generated code.
 */
function block(source: string, opening: string): string {
  const lines = source.split('\n');
  const start = lines.indexOf(opening);
  assert.ok(start >= 0, `the generated code has a line ${JSON.stringify(opening)}`);
  const indent = opening.length - opening.trimStart().length;
  const end = lines.findIndex((line, i) => i > start && line.length - line.trimStart().length === indent && /^\s*\}/.test(line));
  return lines.slice(start, end + 1).join('\n');
}

/**
 * The compiler options a user of these generated clients would have: strict, ES modules resolved
 * as Node resolves them (the generated SDK imports its own files with `.js`), and the browser's
 * libraries for fetch's types (Request, Response, BodyInit, URLSearchParams.entries): the same
 * clients serve front ends, and neither needs @types/node, which would only add a second of
 * parsing. skipLibCheck covers node_modules only: the generated files are .ts, checked in full.
 */
const COMPILER_OPTIONS = {
  strict: true,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2023', 'DOM', 'DOM.Iterable'],
  types: [],
  skipLibCheck: true,
  noEmit: true,
};

interface Generated {
  dir: string;
  /** What openapi-typescript wrote (one module). */
  openapiTypescript: string;
  /** The types module @hey-api/openapi-ts wrote. */
  heyApiTypes: string;
}

/**
 * Writes a directory a user's project could be: package.json (ES modules), tsconfig.json, a
 * node_modules that is the project's (openapi-fetch, typescript's lib files), the contract and
 * usage files; then both generators' output from the document at `documentUrl`.
 */
async function generate(documentUrl: string): Promise<Generated> {
  const dir = mkdtempSync(join(tmpdir(), 'sitebiz-generated-clients-'));
  try {
    return await generateInto(dir, documentUrl);
  } catch (error) {
    // The caller never learns the directory: it is removed here.
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function generateInto(dir: string, documentUrl: string): Promise<Generated> {
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  // @hey-api/openapi-ts reads the tsconfig above its output to choose the extension of its imports.
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: COMPILER_OPTIONS, include: ['**/*.ts'] }, null, 2));
  copyFileSync(join(USAGES, 'contract.ts'), join(dir, 'contract.ts'));
  for (const client of Object.values(CLIENTS)) copyFileSync(join(USAGES, client.usage), join(dir, client.usage));

  // As `npx openapi-typescript <url> -o openapi-typescript/schema.ts`.
  const openapiTypescript = astToString(await openapiTS(new URL(documentUrl)));
  mkdirSync(join(dir, 'openapi-typescript'));
  writeFileSync(join(dir, 'openapi-typescript', 'schema.ts'), openapiTypescript);

  // As `npx @hey-api/openapi-ts -i <url> -o hey-api`, with its default plugins (types, SDK, fetch
  // client). No log file: a failure throws, and the test shows it.
  await heyApiGenerate({
    input: documentUrl,
    output: join(dir, 'hey-api'),
    plugins: ['@hey-api/typescript', '@hey-api/sdk', '@hey-api/client-fetch'],
    logs: { level: 'silent', file: false },
  });
  return { dir, openapiTypescript, heyApiTypes: readFileSync(join(dir, 'hey-api', 'types.gen.ts'), 'utf8') };
}

/** `tsc --strict --noEmit` over the directory: the messages, empty when it compiles. */
function compile(dir: string): string[] {
  const config = ts.parseJsonConfigFileContent({ compilerOptions: COMPILER_OPTIONS, include: ['**/*.ts'], exclude: ['node_modules'] }, ts.sys, dir);
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : '';
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('clients generated from the served document', () => {
  let generated: Generated;
  let diagnostics: string[];

  before(async () => {
    const source = await createListeningTestApp('sqlite');
    try {
      generated = await generate(`${source.baseUrl}/v1/openapi.json`);
    } finally {
      await source.close();
    }
    diagnostics = compile(generated.dir);
  });
  after(() => {
    if (generated) rmSync(generated.dir, { recursive: true, force: true });
  });

  it('the generated code and both usage files compile with tsc --strict', () => {
    assert.deepEqual(diagnostics, [], `tsc --strict found:\n${diagnostics.slice(0, 30).join('\n')}`);
  });

  it('openapi-typescript declares the named schemas, and the contacts operations refer to them by name', () => {
    const source = generated.openapiTypescript;
    const schemas = block(source, '    schemas: {');
    for (const name of NAMED_SCHEMAS) assert.match(schemas, new RegExp(`^        ${name}: `, 'm'), `components["schemas"]["${name}"] is generated`);
    assert.match(block(schemas, '        contacts_resource: {'), /attributes: components\["schemas"\]\["contacts_attributes"\];/);
    const list = block(source, '    "/v1/contacts": {');
    const show = block(source, '    "/v1/contacts/{id}": {');
    assert.ok(list.includes('"application/vnd.api+json": components["schemas"]["contacts_index_response"];'), 'the list answers contacts_index_response');
    assert.ok(list.includes('"application/vnd.api+json": components["schemas"]["contacts_create_request"];'), 'the create takes contacts_create_request');
    assert.ok(show.includes('"application/vnd.api+json": components["schemas"]["contacts_show_response"];'), 'the show answers contacts_show_response');
    // The create's 422: the error document, inline or through a shared response.
    const post = block(list, '        post: {');
    const refused = post.split('\n').find((line) => line.startsWith('                422: '));
    assert.ok(refused, 'POST /v1/contacts documents a 422');
    const shared = /components\["responses"\]\["([^"]+)"\]/.exec(refused)?.[1];
    const key = shared && (/^[A-Za-z_$][\w$]*$/.test(shared) ? shared : JSON.stringify(shared));
    const answer = key ? block(block(source, '    responses: {'), `        ${key}: {`) : block(post, refused);
    assert.ok(answer.includes('components["schemas"]["errors"]'), `the 422 is the errors document: ${answer}`);
  });

  it('@hey-api/openapi-ts exports a type per named schema, and the contacts SDK functions use them', () => {
    const types = generated.heyApiTypes;
    for (const name of NAMED_SCHEMAS) assert.match(types, new RegExp(`^export type ${pascalCase(name)} = `, 'm'), `${pascalCase(name)} is exported`);
    assert.match(block(types, 'export type ContactsResource = {'), /^ {4}attributes: ContactsAttributes;$/m);
    assert.match(block(types, 'export type GetV1ContactsResponses = {'), /^ {4}200: ContactsIndexResponse;$/m);
    assert.match(block(types, 'export type GetV1ContactsByIdResponses = {'), /^ {4}200: ContactsShowResponse;$/m);
    assert.match(block(types, 'export type PostV1ContactsData = {'), /^ {4}body: ContactsCreateRequest;$/m);
    assert.match(block(types, 'export type PostV1ContactsErrors = {'), /^ {4}422: Errors;$/m);
    const sdk = readFileSync(join(generated.dir, 'hey-api', 'sdk.gen.ts'), 'utf8');
    for (const name of ['getV1Contacts', 'getV1ContactsById', 'postV1Contacts']) assert.match(sdk, new RegExp(`^export const ${name} = `, 'm'));
  });

  for (const dialect of DIALECTS) {
    describe(`against a server [${dialect}]`, () => {
      let t: ListeningTestApp;
      let input: Omit<UsageInput, 'newEmail'>;
      let tagId: string;

      before(async () => {
        t = await createListeningTestApp(dialect);
        const b = builders(t);
        const tag = await b.tag('VIP');
        const ada = await b.contact({ name: 'Ada Lovelace', email: 'ada@analytical.example' });
        await b.contact({ name: 'Charles Babbage', email: 'charles@analytical.example' });
        await b.contact({ name: 'Grace Hopper', email: 'grace@navy.example' });
        await b.tagging(ada, tag);
        tagId = String(tag);
        input = {
          baseUrl: t.baseUrl,
          token: await t.token(),
          siteId: String(t.tenant.siteId),
          taggedContactId: String(ada),
          tagName: 'VIP',
          emailFragment: '@analytical.',
        };
      });
      after(() => t?.close());

      for (const name of Object.keys(CLIENTS) as ClientName[]) {
        it(`${name}: a filtered list, a show with include, a create and a 422, through the generated types`, async () => {
          const usage = (await import(pathToFileURL(join(generated.dir, CLIENTS[name].usage)).href)) as { run: Usage };
          const newEmail = `katherine.${name}@nasa.example`;
          const result: UsageResult = await usage.run({ ...input, newEmail });

          assert.deepEqual(result.list, { status: 200, emails: ['ada@analytical.example'], totalCount: 2, hasNext: true });
          assert.deepEqual(result.show, {
            status: 200,
            id: input.taggedContactId,
            tagIds: [tagId],
            includedTypes: ['contact_tags'],
            includedTagName: 'VIP',
          });
          assert.equal(result.create.status, 201);
          assert.equal(result.create.email, newEmail);
          assert.equal(result.create.siteId, input.siteId);
          const stored = await t.handle.db.selectFrom('contacts').select('email').where('id', '=', Number(result.create.id)).executeTakeFirst();
          assert.equal(stored?.email, newEmail, 'the create was stored');
          assert.deepEqual(
            { status: result.invalid.status, code: result.invalid.code, pointer: result.invalid.pointer },
            { status: 422, code: 'invalid_email', pointer: '/data/attributes/email' },
          );
          assert.match(result.invalid.detail, /not-an-email/);
        });
      }
    });
  }
});
