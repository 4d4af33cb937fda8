// Every resource of the API, by name. Adding a resource means adding its file and a line here;
// nothing scans directories.
import type { ResourceDefinition } from '../jsonapi/resource.js';
import { sites } from './sites.js';
import { users } from './users.js';

export const RESOURCES: readonly ResourceDefinition[] = [sites, users];
