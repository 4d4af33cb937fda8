import { sql } from 'kysely';
import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';

/** Positions are integers in the database and strings in the upstream schema. */
const position = attr.computed('string', ['position'], (row) => (row.position === null ? null : String(row.position)), {
  nullable: true,
  description: 'Order within the parent, as a string',
  store: (value) => ({ position: value === null || value === undefined ? 0 : Number(value) }),
});

export const courses = defineResource({
  type: 'courses',
  table: 'courses',
  description: 'Courses: a product made of modules (chapters) and lessons, each lesson with media.',
  readPermission: 'view:products',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont'], upstream: { sort: true, filter: ['cont'] } }),
    description: attr.string({ nullable: true, filter: ['cont'], upstream: { filter: ['cont'] } }),
    created_at: attr.datetime({ sort: true }),
    thumbnail_url: attr.string({ nullable: true }),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    // The offers that give access to the course's product.
    offers: rel.toManyThrough('offers', { table: 'offer_products', sourceKey: 'product_id', targetKey: 'offer_id', sourceColumn: 'product_id' }),
    modules: rel.toMany('modules', 'course_id'),
    lessons: rel.toMany('lessons', 'course_id'),
  },
  upstream: { show: ['include'] },
  filters: {
    // publish_status filters but is not rendered: the upstream schema has no such attribute.
    publish_status_eq: namedFilter('string', 'Courses whose publish status equals the value (published or draft)', (eb, value) =>
      eb('courses.publish_status', '=', value),
    ),
  },
});

export const modules = defineResource({
  type: 'modules',
  table: 'modules',
  description: 'A chapter of a course. Reached through courses?include=modules.',
  readPermission: 'view:products',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'position',
  routes: { list: false, show: false },
  attributes: {
    title: attr.string(),
    description: attr.string({ nullable: true }),
    position,
    poster_image_url: attr.string({ nullable: true }),
    publishing_option: attr.string({ enum: ['published', 'draft', 'drip'] }),
  },
  sorts: { position: (eb) => eb.ref('modules.position') },
  relationships: {
    course: rel.toOne('courses', 'course_id'),
    lessons: rel.toMany('lessons', 'module_id', { linkage: false }),
  },
});

export const lessons = defineResource({
  type: 'lessons',
  table: 'lessons',
  description: 'A lesson of a course, within a module. Reached through courses?include=lessons.',
  readPermission: 'view:products',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'position',
  routes: { list: false, show: false },
  attributes: {
    title: attr.string(),
    position,
    // Upstream: the lesson's processing state, and its visibility.
    status: attr.string({ enum: ['ready', 'duplicating', 'failed'] }),
    publishing_option: attr.string({ enum: ['published', 'draft', 'drip', 'locked'] }),
  },
  sorts: {
    // Course outline order: a lesson's position counts within its module (as upstream documents),
    // so a course's lessons go by their module's position first. One expression, for positions
    // below a million.
    position: (eb) =>
      sql<number>`cast(${eb
        .selectFrom('modules as lesson_module')
        .select('lesson_module.position')
        .whereRef('lesson_module.id', '=', 'lessons.module_id')} as bigint) * 1000000 + ${eb.ref('lessons.position')}`,
  },
  relationships: {
    course: rel.toOne('courses', 'course_id'),
    module: rel.toOne('modules', 'module_id'),
    media: rel.toMany('media', 'lesson_id', { linkage: false }),
  },
});

export const media = defineResource({
  type: 'media',
  table: 'media',
  nouns: { singular: 'media item', plural: 'media' },
  description: 'A video, audio file or download of a lesson. Reached through courses?include=lessons.media.',
  readPermission: 'view:products',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'id',
  routes: { list: false, show: false },
  attributes: {
    kind: attr.string({ enum: ['video', 'audio', 'download'] }),
    title: attr.string(),
    url: attr.string(),
    duration_seconds: attr.integer({ nullable: true }),
    // Upstream's one documented media attribute (and its fields[media] example).
    duration_in_minutes: attr.computed(
      'number',
      ['duration_seconds'],
      (row) => (row.duration_seconds === null || row.duration_seconds === undefined ? null : Number(row.duration_seconds) / 60),
      { nullable: true, description: 'Length of a video or audio file in minutes, such as 1.5' },
    ),
  },
  relationships: { lesson: rel.toOne('lessons', 'lesson_id') },
});
