// Every entity of Kiln's database: the exports of each `*.entity.ts` file directly inside an area's folder
// (this folder's `base.entity.ts` included), found by that name, so an area's new entity file needs no line
// anywhere. The worker opens the database through this list, so an entity file imports entity files, the
// catalog and lib/ only, never an area's routes or services (test/architecture/worker-imports.test.ts).
import { EntitySchema } from '@mikro-orm/core';
import { globSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const CONTROL_PLANE = join(import.meta.dirname, '..');

/** The entity files, as paths from control-plane/, in a stable order. */
export const ENTITY_FILES: readonly string[] = globSync('*/*.entity.ts', { cwd: CONTROL_PLANE }).sort();

const modules = await Promise.all(ENTITY_FILES.map((file) => import(pathToFileURL(join(CONTROL_PLANE, file)).href) as Promise<Record<string, unknown>>));

/** Every entity schema the entity files export (beside them: their constants and helpers), as the ORM takes them. */
export const ENTITIES: EntitySchema[] = modules.flatMap((exports) => Object.values(exports).filter((value) => value instanceof EntitySchema));
