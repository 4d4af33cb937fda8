// Request documents of writes, checked whole before anything is written: the document's shape,
// its type and id, every attribute (known, writable, of the right type) and every relationship
// (known, of the right type). All problems are reported at once, each with a source.pointer.
import { ApiError, type ErrorObject } from './errors.js';
import { INTEGER_RANGES, parseTimestamp } from './predicates.js';
import type { AttributeDef, ResourceDefinition } from './resource.js';

/** Which attributes a write may set, and which a create must have. */
export interface WriteRules {
  /** Attribute names that may be written; the others are read-only. */
  writable: readonly string[];
  /** Attribute names a create must include (non-null). */
  required?: readonly string[];
  /** Relationship names that may be written, and which of them a create must include. */
  relationships?: Record<string, { required: boolean }>;
  /** Extra attribute names accepted besides the resource's attributes (with their types). */
  extraAttributes?: Record<string, AttributeDef['type']>;
}

export interface ResourceWrite {
  /** Attribute values coerced to API types: strings, numbers, booleans, Date, JSON, null. */
  attributes: Record<string, unknown>;
  /** Relationship name → target id(s) as numbers (null for an emptied to-one). */
  relationships: Record<string, number | number[] | null>;
  meta: Record<string, unknown>;
}

type Problem = Omit<ErrorObject, 'status'> & { status: number };

const problem = (status: number, code: string, title: string, detail: string, pointer: string): Problem => ({
  status,
  code,
  title,
  detail,
  source: { pointer },
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A member of a declaration map by name; inherited names (constructor, __proto__) are not members. */
const own = <T>(map: Record<string, T> | undefined, name: string): T | undefined =>
  map !== undefined && Object.hasOwn(map, name) ? map[name] : undefined;

/**
 * Throws the collected problems as one ApiError: the response status is their common status, else
 * 400 (JSON:API: the most generally applicable one); each error keeps its own status.
 */
export function throwProblems(problems: Problem[]): void {
  if (problems.length === 0) return;
  const statuses = new Set(problems.map((p) => p.status));
  const status = statuses.size === 1 ? problems[0]!.status : 400;
  throw new ApiError(
    status,
    problems.map((p) => ({ ...p, status: String(p.status) })),
  );
}

/**
 * Reads `{"data": {"type", "id"?, "attributes", "relationships"}}` for a create (`id`
 * undefined: a client id is refused) or an update (`id` must match the path).
 */
export function readResourceDocument(
  resource: ResourceDefinition,
  body: unknown,
  rules: WriteRules,
  mode: { create: true } | { create: false; id: string },
): ResourceWrite {
  const problems: Problem[] = [];
  if (!isObject(body)) {
    throwProblems([problem(400, 'invalid_document', 'Bad Request', 'The request body must be a JSON object with a data member', '')]);
  }
  const doc = body as Record<string, unknown>;
  const data = doc.data;
  if (!isObject(data)) {
    throwProblems([problem(400, 'invalid_document', 'Bad Request', 'data must be a resource object', '/data')]);
  }
  const resourceObject = data as Record<string, unknown>;
  for (const key of Object.keys(doc)) {
    if (!['data', 'meta', 'jsonapi', 'links'].includes(key)) {
      problems.push(problem(400, 'invalid_document', 'Bad Request', `Unknown top-level member ${key}`, `/${key}`));
    }
  }
  for (const key of Object.keys(resourceObject)) {
    if (!['type', 'id', 'attributes', 'relationships', 'meta', 'links', 'lid'].includes(key)) {
      problems.push(problem(400, 'invalid_document', 'Bad Request', `Unknown member ${key} of data`, `/data/${key}`));
    }
  }

  const type = resourceObject.type;
  if (type === undefined) {
    problems.push(problem(400, 'missing_type', 'Bad Request', `data.type is required (${resource.type})`, '/data/type'));
  } else if (type !== resource.type) {
    problems.push(problem(409, 'type_mismatch', 'Conflict', `data.type must be ${resource.type}, got ${JSON.stringify(type)}`, '/data/type'));
  }

  const id = resourceObject.id;
  if (mode.create) {
    if (id !== undefined) {
      problems.push(problem(403, 'client_id_unsupported', 'Forbidden', 'Ids are assigned by the server; leave data.id out', '/data/id'));
    }
  } else if (id === undefined) {
    problems.push(problem(400, 'missing_id', 'Bad Request', 'data.id is required and must match the id in the path', '/data/id'));
  } else if (typeof id !== 'string') {
    problems.push(problem(400, 'invalid_id', 'Bad Request', 'data.id must be a string', '/data/id'));
  } else if (id !== mode.id) {
    problems.push(problem(409, 'id_mismatch', 'Conflict', `data.id ${JSON.stringify(id)} does not match the path id ${JSON.stringify(mode.id)}`, '/data/id'));
  }

  const attributes: Record<string, unknown> = {};
  const rawAttributes = resourceObject.attributes ?? {};
  if (!isObject(rawAttributes)) {
    problems.push(problem(400, 'invalid_document', 'Bad Request', 'data.attributes must be an object', '/data/attributes'));
  } else {
    for (const [name, value] of Object.entries(rawAttributes)) {
      const pointer = `/data/attributes/${name}`;
      const declared = own(resource.attributes, name);
      const extraType = own(rules.extraAttributes, name);
      if (!declared && !extraType) {
        problems.push(problem(422, 'unknown_attribute', 'Unprocessable Entity', `${resource.type} has no attribute ${name}`, pointer));
        continue;
      }
      if (declared && !rules.writable.includes(name)) {
        problems.push(problem(422, 'read_only_attribute', 'Unprocessable Entity', `${name} is read-only`, pointer));
        continue;
      }
      const type = declared?.type ?? extraType!;
      const nullable = declared ? declared.nullable : true;
      const digits = declared?.acceptsDigitString === true && typeof value === 'string' && /^\d{1,10}$/.test(value);
      const coerced = coerceAttribute(type, nullable, digits ? Number(value) : value);
      if (coerced.error) {
        problems.push(problem(422, 'invalid_attribute', 'Unprocessable Entity', `${name} ${coerced.error}`, pointer));
      } else attributes[name] = coerced.value;
    }
  }
  if (mode.create) {
    for (const name of rules.required ?? []) {
      const value = attributes[name];
      const blank = value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
      if (blank && !problems.some((p) => p.source?.pointer === `/data/attributes/${name}`)) {
        problems.push(problem(422, 'missing_attribute', 'Unprocessable Entity', `${name} is required`, `/data/attributes/${name}`));
      }
    }
  }

  const relationships: Record<string, number | number[] | null> = {};
  const rawRelationships = resourceObject.relationships ?? {};
  if (!isObject(rawRelationships)) {
    problems.push(problem(400, 'invalid_document', 'Bad Request', 'data.relationships must be an object', '/data/relationships'));
  } else {
    for (const [name, member] of Object.entries(rawRelationships)) {
      const pointer = `/data/relationships/${name}`;
      const relationship = own(resource.relationships, name);
      if (!relationship || !own(rules.relationships, name)) {
        const known = Object.keys(rules.relationships ?? {});
        problems.push(
          problem(422, 'unknown_relationship', 'Unprocessable Entity', `${name} cannot be set here${known.length ? `; relationships: ${known.join(', ')}` : ''}`, pointer),
        );
        continue;
      }
      const read = readLinkage(member, relationship.type, relationship.kind === 'to-one' || relationship.kind === 'has-one', pointer);
      if ('problem' in read) problems.push(read.problem);
      else relationships[name] = read.ids;
    }
    if (mode.create) {
      for (const [name, rule] of Object.entries(rules.relationships ?? {})) {
        // A required to-one emptied with `data: null` is as missing as one left out.
        const given = relationships[name] !== undefined && relationships[name] !== null;
        if (rule.required && !given && !problems.some((p) => p.source?.pointer?.startsWith(`/data/relationships/${name}`))) {
          // 400 as upstream documents for a create without its site relationship.
          problems.push(problem(400, 'missing_relationship', 'Bad Request', `relationships.${name} is required`, `/data/relationships/${name}`));
        }
      }
    }
  }

  throwProblems(problems);
  return { attributes, relationships, meta: isObject(doc.meta) ? doc.meta : {} };
}

/** `{"data": [{"type", "id"}, ...]}` of a relationship endpoint (POST, PATCH, DELETE). */
export function readRelationshipDocument(body: unknown, type: string): { ids: number[]; meta: Record<string, unknown> } {
  if (!isObject(body)) {
    throwProblems([problem(400, 'invalid_document', 'Bad Request', 'The request body must be a JSON object with a data array', '')]);
  }
  const doc = body as Record<string, unknown>;
  const read = readLinkage(doc, type, false, '');
  if ('problem' in read) throwProblems([read.problem]);
  const ids = (read as { ids: number[] }).ids;
  return { ids: [...new Set(ids)], meta: isObject(doc.meta) ? doc.meta : {} };
}

function readLinkage(
  member: unknown,
  type: string,
  toOne: boolean,
  pointer: string,
): { ids: number | number[] | null } | { problem: Problem } {
  if (!isObject(member) || !('data' in member)) {
    return { problem: problem(400, 'invalid_document', 'Bad Request', 'A relationship needs a data member', pointer) };
  }
  const data = member.data;
  const one = (identifier: unknown, at: string): number | Problem => {
    if (!isObject(identifier)) return problem(400, 'invalid_document', 'Bad Request', 'A resource identifier is an object with type and id', at);
    if (identifier.type !== type) {
      return problem(409, 'type_mismatch', 'Conflict', `type must be ${type}, got ${JSON.stringify(identifier.type)}`, `${at}/type`);
    }
    if (typeof identifier.id !== 'string' || !/^\d{1,15}$/.test(identifier.id)) {
      return problem(422, 'invalid_id', 'Unprocessable Entity', `id must be a ${type} id (a string of digits), got ${JSON.stringify(identifier.id)}`, `${at}/id`);
    }
    return Number(identifier.id);
  };
  if (toOne) {
    if (data === null) return { ids: null };
    const id = one(data, `${pointer}/data`);
    return typeof id === 'number' ? { ids: id } : { problem: id };
  }
  if (!Array.isArray(data)) {
    return { problem: problem(400, 'invalid_document', 'Bad Request', 'data must be an array of resource identifiers', `${pointer}/data`) };
  }
  if (data.length > 1000) {
    return { problem: problem(422, 'too_many', 'Unprocessable Entity', 'At most 1000 resource identifiers at once', `${pointer}/data`) };
  }
  const ids: number[] = [];
  for (const [i, identifier] of data.entries()) {
    const id = one(identifier, `${pointer}/data/${i}`);
    if (typeof id !== 'number') return { problem: id };
    ids.push(id);
  }
  return { ids };
}

function coerceAttribute(type: AttributeDef['type'], nullable: boolean, value: unknown): { value?: unknown; error?: string } {
  if (value === null) return nullable ? { value: null } : { error: 'cannot be null' };
  switch (type) {
    case 'string':
      if (typeof value !== 'string') return { error: 'must be a string' };
      if (value.includes('\0')) return { error: 'must not contain a NUL character' };
      if (value.length > 10_000) return { error: 'is longer than 10000 characters' };
      return { value };
    case 'integer': {
      const [min, max] = INTEGER_RANGES.integer;
      return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
        ? { value }
        : { error: `must be a whole number from ${min} to ${max}` };
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? { value } : { error: 'must be a number' };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { error: 'must be true or false' };
    case 'datetime': {
      const date = typeof value === 'string' ? parseTimestamp(value) : undefined;
      return date ? { value: date } : { error: 'must be an ISO 8601 date-time string' };
    }
    case 'id':
      return typeof value === 'string' && /^\d{1,15}$/.test(value) ? { value: Number(value) } : { error: 'must be an id (a string of digits)' };
    case 'json':
      return JSON.stringify(value).length > 65_536 ? { error: 'is larger than 64 KiB' } : { value };
  }
}
