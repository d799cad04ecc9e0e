/**
 * Namespace routes of `floe catalog serve`: list (with optional pagination), create, load, exists,
 * drop, and properties (`{updated, removed, missing}`, 422 when a key is both updated and removed).
 */
import { asArray, asObject } from '../../iceberg/spec/schema-json.js';
import { isFloeError } from '../../util/errors.js';
import { namespaceFromQuery } from '../rest/rest-paths.js';
import { namespaceFromJson, stringMapFromJson } from '../rest/rest-json.js';
import { errorModelFor, HttpError } from './error-response.js';
import { namespaceNotFound, NO_CONTENT, parseOr400, type HandlerContext, type Reply } from './handler-context.js';
import { paginate } from './pagination.js';

export async function listNamespaces(ctx: HandlerContext): Promise<Reply> {
  const parentText = ctx.query.get('parent');
  const parent = parentText === null || parentText === '' ? [] : namespaceFromQuery(parentText);
  const all = await ctx.catalog.listNamespaces(parent).catch(namespaceNotFound);
  const page = paginate(all, ctx.query);
  return { status: 200, body: { namespaces: page.items, 'next-page-token': page.next } };
}

export async function createNamespace(ctx: HandlerContext): Promise<Reply> {
  const body = await ctx.body();
  const { namespace, properties } = parseOr400('create namespace request', () => {
    const o = asObject(body, 'create namespace request');
    return { namespace: namespaceFromJson(o.namespace), properties: stringMapFromJson(o.properties, 'properties') };
  });
  await ctx.catalog.createNamespace(namespace, properties);
  return { status: 200, body: { namespace, properties } };
}

export async function loadNamespace(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  const properties = await ctx.catalog.loadNamespaceProperties(namespace).catch(namespaceNotFound);
  return { status: 200, body: { namespace, properties } };
}

export async function namespaceExists(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  if (!(await ctx.catalog.namespaceExists(namespace))) throw new HttpError(404, 'NoSuchNamespaceException', `namespace ${namespace.join('.')} does not exist`);
  return NO_CONTENT;
}

export async function dropNamespace(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  try {
    await ctx.catalog.dropNamespace(namespace);
  } catch (e) {
    if (isFloeError(e, 'not-found')) namespaceNotFound(e);
    // The catalogs refuse a non-empty namespace with invalid-argument: 409 NamespaceNotEmpty.
    const model = errorModelFor(e, { dropNamespace: true });
    throw new HttpError(model.code, model.type, model.message);
  }
  return NO_CONTENT;
}

export async function updateNamespaceProperties(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  const body = await ctx.body();
  const { removals, updates } = parseOr400('update namespace properties request', () => {
    const o = asObject(body ?? {}, 'update namespace properties request');
    return {
      removals: o.removals == null ? [] : asArray(o.removals, 'removals').map((r, i) => {
        if (typeof r !== 'string') throw new Error(`removals[${i}]: expected a string`);
        return r;
      }),
      updates: stringMapFromJson(o.updates, 'updates'),
    };
  });
  const both = removals.filter((k) => k in updates);
  if (both.length > 0) throw new HttpError(422, 'UnprocessableEntityException', `properties ${both.join(', ')} are both updated and removed; name each property once`);
  const before = await ctx.catalog.loadNamespaceProperties(namespace).catch(namespaceNotFound);
  await ctx.catalog.updateNamespaceProperties(namespace, removals, updates).catch(namespaceNotFound);
  return {
    status: 200,
    body: {
      updated: Object.keys(updates),
      removed: removals.filter((k) => k in before),
      missing: removals.filter((k) => !(k in before)),
    },
  };
}
